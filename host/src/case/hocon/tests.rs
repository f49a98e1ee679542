//! The reader: every key of the format, its default, and the error for each
//! kind of bad input, naming the file and the line or key path.

use super::*;
use crate::case::model::{ChatFilter, Connection, SuccessRatio};
use serde_json::json;

fn env() -> HashMap<String, String> {
    HashMap::from([("API_KEY".to_owned(), "secret".to_owned())])
}

fn read(text: &str) -> Result<TestCase, CaseError> {
    parse_case(text, "case", Path::new("cases/case.hocon"), &env())
}

fn error(text: &str) -> String {
    read(text).unwrap_err().to_string()
}

#[test]
fn reads_every_key() {
    let case = read(
        r#"
        # A comment, as HOCON allows.
        {
            "agent": "music_nerd_pro",
            "connections": ["direct", "http", "https", "http"],
            "success_ratio": "2/3",
            "use_direct": true,
            "metadata": { "user_id": "alice", "tier": 3 },
            "timeout_in_seconds": 90,
            "interactions": [
                {
                    "text": "Who did Yellow Submarine?",
                    "sly_data": { "api_key": ${API_KEY} },
                    "timeout_in_seconds": 2.5,
                    "chat_filter": "maximal",
                    "continue_conversation": false,
                    "response": { "structure": { "answer": { "keywords": "Beatles" } } }
                },
                { "text": """Where were
they from?""" }
            ]
        }"#,
    )
    .unwrap();
    assert_eq!(case.id, "case");
    assert_eq!(case.agent, "music_nerd_pro");
    assert_eq!(case.connections, [Connection::Direct, Connection::Http, Connection::Https]);
    assert_eq!(case.success_ratio, SuccessRatio { required: 2, samples: 3 });
    assert!(case.use_direct);
    assert_eq!(case.metadata, [("user_id".to_owned(), "alice".to_owned()), ("tier".to_owned(), "3".to_owned())]);
    assert_eq!(case.timeout, Some(Duration::from_secs(90)));
    let first = &case.interactions[0];
    assert_eq!(first.text.as_deref(), Some("Who did Yellow Submarine?"));
    assert_eq!(Value::Object(first.sly_data.clone().unwrap()), json!({"api_key": "secret"}));
    assert_eq!(first.timeout, Some(Duration::from_millis(2500)));
    assert_eq!(first.chat_filter, ChatFilter::Maximal);
    assert!(!first.continue_conversation);
    assert_eq!(Value::Object(first.response.clone()), json!({"structure": {"answer": {"keywords": "Beatles"}}}));
    let second = &case.interactions[1];
    assert_eq!(second.text.as_deref(), Some("Where were\nthey from?"));
    assert!(second.continue_conversation);
    assert_eq!(second.chat_filter, ChatFilter::Minimal);
    assert!(second.response.is_empty());
}

#[test]
fn defaults() {
    let case = read(r#"agent = echo, interactions = [{ text = hi }]"#).unwrap();
    assert_eq!(case.connections, [Connection::Direct]);
    assert_eq!(case.success_ratio, SuccessRatio { required: 1, samples: 1 });
    assert!(!case.use_direct);
    assert!(case.metadata.is_empty());
    assert_eq!(case.timeout, None);
    assert_eq!(case.interactions[0].sly_data, None);
}

#[test]
fn a_single_connection_string_is_accepted() {
    let case = read(r#"agent = echo, connections = "http", interactions = [{ text = hi }]"#).unwrap();
    assert_eq!(case.connections, [Connection::Http]);
}

#[test]
fn keeps_the_stray_quote_of_a_four_quote_string_end() {
    // `""""` ends the string after its first quote, as in pyhocon.
    let case = read("agent = echo\ninteractions = [{ text = \"\"\"say \"hi\"\"\"\" }]").unwrap();
    assert_eq!(case.interactions[0].text.as_deref(), Some("say \"hi\""));
}

#[test]
fn syntax_errors_name_the_file_and_position() {
    let message = error("{\n  \"agent\": \"echo\",\n  \"interactions\": [ { \"text\": \"hi\" ]\n}");
    assert!(message.starts_with("`cases/case.hocon`: HOCON syntax error at 3:"), "{message}");
    assert!(error("x").starts_with("`cases/case.hocon`: HOCON syntax error at 1:"), "{}", error("x"));
    assert!(error("\"\"\"").starts_with("`cases/case.hocon`: HOCON syntax error at 1:"), "{}", error("\"\"\""));
}

#[test]
fn an_unset_variable_is_named_with_its_position() {
    assert_eq!(
        error("agent = echo\ninteractions = [{ text = ${NOPE_NOT_SET} }]"),
        "`cases/case.hocon`: the environment variable in ${NOPE_NOT_SET} at 2:26 is not set\n\nConsider exporting NOPE_NOT_SET, or writing ${?NOPE_NOT_SET} to leave the value out when it is unset"
    );
}

#[test]
fn unknown_keys_are_named_with_a_suggestion() {
    assert_eq!(
        error("agent = echo, interaction = []"),
        "`cases/case.hocon`: unknown key `interaction` at `interaction` (did you mean `interactions`?); the known ones are agent, connections, success_ratio, use_direct, metadata, timeout_in_seconds, interactions"
    );
    assert_eq!(
        error("agent = echo, interactions = [{ text = hi, respons = {} }]"),
        "`cases/case.hocon`: unknown key `respons` at `interactions[0].respons` (did you mean `response`?); the known ones are text, sly_data, timeout_in_seconds, chat_filter, continue_conversation, response"
    );
    assert_eq!(
        error("agent = echo, connections = [htp], interactions = [{ text = hi }]"),
        "`cases/case.hocon`: unknown connection `htp` at `connections[0]` (did you mean `http`?); the known ones are direct, http, https, grpc"
    );
}

#[test]
fn malformed_success_ratios() {
    let with =
        |ratio: &str| error(&format!("agent = echo, success_ratio = \"{ratio}\", interactions = [{{ text = hi }}]"));
    assert_eq!(
        with("3/2"),
        "`cases/case.hocon`: invalid `success_ratio`: `3/2`: 3 passing samples out of 2 can never happen"
    );
    assert_eq!(
        with("a/b"),
        "`cases/case.hocon`: invalid `success_ratio`: `a/b`: the numerator `a` is not a whole number"
    );
    assert_eq!(
        with("0/0"),
        "`cases/case.hocon`: invalid `success_ratio`: `0/0`: the denominator (the number of samples) must be at least 1"
    );
    assert_eq!(
        error("agent = echo, success_ratio = 0.5, interactions = [{ text = hi }]"),
        "`cases/case.hocon`: `success_ratio` must be a string such as \"3/5\", but it is the number 0.5"
    );
}

#[test]
fn wrong_types_name_the_key_path() {
    assert_eq!(
        error("agent = echo, interactions = { text = hi }"),
        "`cases/case.hocon`: `interactions` must be a list of dictionaries, but it is the dictionary {\"text\":\"hi\"}"
    );
    assert_eq!(
        error("agent = 5, interactions = [{}]"),
        "`cases/case.hocon`: `agent` must be a string, but it is the number 5"
    );
    assert_eq!(
        error("agent = echo, interactions = [{ text = hi }, { sly_data = [1] }]"),
        "`cases/case.hocon`: `interactions[1].sly_data` must be a dictionary, but it is the list [1]"
    );
    assert_eq!(
        error("agent = echo, interactions = [{ continue_conversation = yes }]"),
        "`cases/case.hocon`: `interactions[0].continue_conversation` must be true or false, but it is the string \"yes\""
    );
    assert_eq!(
        error("agent = echo, interactions = [{ chat_filter = FULL }]"),
        "`cases/case.hocon`: invalid `interactions[0].chat_filter`: `FULL` is not a chat filter: use MINIMAL or MAXIMAL"
    );
    assert_eq!(
        error("agent = echo, timeout_in_seconds = -1, interactions = [{}]"),
        "`cases/case.hocon`: invalid `timeout_in_seconds`: -1 is not a positive number of seconds"
    );
    assert_eq!(
        error("agent = echo, metadata = { token = [1] }, interactions = [{}]"),
        "`cases/case.hocon`: `metadata.token` must be a string (sent as an HTTP header), but it is the list [1]"
    );
}

#[test]
fn missing_and_empty_required_keys() {
    assert_eq!(error("interactions = [{}]"), "`cases/case.hocon`: missing `agent`: the name of the agent to test");
    assert_eq!(error("agent = echo"), "`cases/case.hocon`: missing `interactions`: the list of interactions");
    assert_eq!(
        error("agent = echo, interactions = []"),
        "`cases/case.hocon`: invalid `interactions`: the list is empty; a test case needs at least one interaction"
    );
    assert_eq!(
        error("agent = \"\", interactions = [{}]"),
        "`cases/case.hocon`: invalid `agent`: the agent name is empty"
    );
}

#[test]
fn an_unreadable_file_is_named() {
    let error = read_case_file(Path::new("no/such/file.hocon"), "x", &env()).unwrap_err().to_string();
    assert!(error.starts_with("`no/such/file.hocon`: cannot read it: "), "{error}");
}

#[test]
fn a_dotted_key_path_over_64_segments_is_refused_before_parsing() {
    let text = format!("{{ agent: x, interactions: [] }}\n{} = 1", vec!["a"; 65].join("."));
    let error = parse_case(&text, "deep", Path::new("deep.hocon"), &HashMap::new()).unwrap_err().to_string();
    assert_eq!(
        error,
        "`deep.hocon`: HOCON syntax error at 2:1: a dotted key path with more than 64 segments; nest objects instead"
    );
}

#[test]
fn dots_in_strings_and_comments_do_not_count_as_key_segments() {
    let dots = ".".repeat(200);
    let text = format!(
        "# {dots}\n{{ \"agent\": \"x{dots}\", \"interactions\": [ {{ \"text\": \"\"\"{dots}\"\"\" }} ] }} // {dots}"
    );
    let case = parse_case(&text, "dots", Path::new("dots.hocon"), &HashMap::new()).unwrap();
    assert_eq!(case.interactions[0].text.as_deref(), Some(dots.as_str()));
}
