//! The reader: every key of the format, its default, and the error for each
//! kind of bad input, naming the file and the line or key path.

use super::*;
use crate::case::{ChatFilter, Connection, SuccessRatio};
use serde_json::json;
use std::fmt::Write as _;

fn env() -> CaseEnv {
    CaseEnv::new([("API_KEY", "secret"), ("ASSAY_CASE_NAME", "Ada"), ("HOME", "/home/ada")], ["API_KEY"], NONE)
}

/// No names.
const NONE: [&str; 0] = [];

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
        error("agent = echo\ninteractions = [{ text = ${ASSAY_CASE_NOPE} }]"),
        "`cases/case.hocon`: the environment variable in ${ASSAY_CASE_NOPE} at 2:26 is not set\n\nConsider exporting ASSAY_CASE_NOPE, or writing ${?ASSAY_CASE_NOPE} to leave the value out when it is unset"
    );
}

#[test]
fn unknown_keys_are_named_with_a_suggestion() {
    assert_eq!(
        error("agent = echo, interaction = []"),
        "`cases/case.hocon`: unknown key `interaction` at `interaction` (did you mean `interactions`?); the known ones are agent, connections, success_ratio, use_direct, metadata, timeout_in_seconds, interactions"
    );
    assert_eq!(
        error("agent = echo, interactions = [{ text = hi, respons = { text { value = 1 } } }]"),
        "`cases/case.hocon`: unknown key `respons` at `interactions[0].respons` (did you mean `response`?); the known ones are text, sly_data, timeout_in_seconds, chat_filter, continue_conversation, response"
    );
    // A connection's name is checked by the planner, which knows the
    // project's [connections.NAME]; the reader refuses what names nothing.
    assert_eq!(
        read("agent = echo, connections = [htp], interactions = [{ text = hi }]").unwrap().connections[0].name(),
        "htp"
    );
    assert_eq!(
        error("agent = echo, connections = [\"h t\"], interactions = [{ text = hi }]"),
        "`cases/case.hocon`: invalid `connections[0]`: \"h t\" cannot name a connection: use direct, http, https, or the name of a [connections.NAME] of assay.toml (letters, digits, `_`, `-`)"
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
    let error = parse_case(&text, "deep", Path::new("deep.hocon"), &CaseEnv::empty()).unwrap_err().to_string();
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
    let case = parse_case(&text, "dots", Path::new("dots.hocon"), &CaseEnv::empty()).unwrap();
    assert_eq!(case.interactions[0].text.as_deref(), Some(dots.as_str()));
}

// ---------------------------------------------------------------------------
// Case files are input, not code.
// ---------------------------------------------------------------------------

/// A case whose first interaction's text is `value` (HOCON).
fn with_text(value: &str) -> String {
    format!("agent = echo\ninteractions = [{{ text = {value} }}]")
}

#[test]
fn a_variable_that_is_not_allowed_is_an_error_saying_how_to_allow_it() {
    assert_eq!(
        error(&with_text("${HOME}")),
        "`cases/case.hocon`: the environment variable in ${HOME} at 2:26 is not allowed in case files (only ASSAY_CASE_* variables and those allowed by name are)\n\nConsider allowing it in assay.toml:\n[cases]\nallow_env = [\"HOME\"]\nor passing --allow-env HOME"
    );
}

#[test]
fn prefixed_and_allowed_variables_are_read() {
    let case = read(&with_text("${ASSAY_CASE_NAME}\" and \"${API_KEY}")).unwrap();
    assert_eq!(case.interactions[0].text.as_deref(), Some("Ada and secret"));
}

#[test]
fn an_optional_variable_that_is_not_allowed_reads_as_unset() {
    let case = read("agent = echo\ninteractions = [{ text = hi, sly_data { home = ${?HOME} } }]").unwrap();
    assert_eq!(Value::Object(case.interactions[0].sly_data.clone().unwrap()), json!({}));
}

#[test]
fn a_configured_api_key_needs_its_name_even_with_the_prefix() {
    let vars = [("ASSAY_JUDGE_API_KEY", "sk-judge"), ("ASSAY_CASE_KEY", "sk-case")];
    let protected = ["ASSAY_JUDGE_API_KEY", "ASSAY_CASE_KEY"];
    let refused = CaseEnv::new(vars, NONE, protected);
    let message = parse_case(&with_text("${ASSAY_CASE_KEY}"), "c", Path::new("c.hocon"), &refused).unwrap_err();
    assert_eq!(
        message.to_string(),
        "`c.hocon`: the environment variable in ${ASSAY_CASE_KEY} at 2:26 is not allowed in case files (it holds a configured API key, so only allowing it by name makes it visible)\n\nConsider allowing it in assay.toml:\n[cases]\nallow_env = [\"ASSAY_CASE_KEY\"]\nor passing --allow-env ASSAY_CASE_KEY"
    );
    let allowed = CaseEnv::new(vars, ["ASSAY_JUDGE_API_KEY"], protected);
    let case = parse_case(&with_text("${ASSAY_JUDGE_API_KEY}"), "c", Path::new("c.hocon"), &allowed).unwrap();
    assert_eq!(case.interactions[0].text.as_deref(), Some("sk-judge"));
}

#[test]
fn include_is_refused_with_its_position() {
    for include in ["include \"other.conf\"", "include file(\"/etc/hostname\")", "include required(\"x.conf\")"] {
        let message = error(&format!("agent = echo\n{include}\ninteractions = [{{ text = hi }}]"));
        assert!(message.starts_with("`cases/case.hocon`: refused at 2:"), "{message}");
        assert!(message.contains(": `include` of "), "{message}");
        assert!(message.contains("case files may not read other files"), "{message}");
    }
}

#[test]
fn substitutions_of_the_file_s_own_values_are_refused() {
    assert_eq!(
        error("agent = echo\na = x\nb = ${a}${a}\ninteractions = [{ text = ${b} }]"),
        "`cases/case.hocon`: refused at 3:5: ${a} refers to `a`, a value of this file: case files may substitute only environment variables, so that no file can copy its own values\n\nConsider writing the value out where it is needed"
    );
    assert!(error(&with_text("${?agent}")).contains("refused at 2:26: ${?agent} refers to `agent`"));
    assert!(error(&with_text("${interactions.0}")).contains("refers to `interactions`"));
    assert!(
        error("agent = echo\nl = [1]\nl += [2]\ninteractions = [{ text = hi }]")
            .starts_with("`cases/case.hocon`: refused at 3:1: `l += …` appends to a value of this file")
    );
    assert!(error(&with_text("${ASSAY_CASE_NAME[]}")).contains("reads a list of environment variables"));
}

#[test]
fn an_expansion_bomb_is_refused_before_it_expands() {
    // Each level doubles the one before: 64 levels would be 2^64 copies.
    let mut text = String::from("agent = echo\nl0 = \"0123456789\"\n");
    for level in 1..64 {
        let _ = writeln!(text, "l{level} = ${{l{}}}${{l{}}}", level - 1, level - 1);
    }
    text.push_str("interactions = [{ text = ${l63} }]");
    let started = std::time::Instant::now();
    let message = error(&text);
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert!(message.contains("refused at 3:6: ${l0} refers to `l0`, a value of this file"), "{message}");
}

#[test]
fn substituted_values_may_total_at_most_a_mebibyte() {
    let big = CaseEnv::new([("ASSAY_CASE_BIG", "x".repeat(300_000))], NONE, NONE);
    let four = with_text("[${ASSAY_CASE_BIG}, ${ASSAY_CASE_BIG}, ${ASSAY_CASE_BIG}, ${ASSAY_CASE_BIG}]");
    let message = parse_case(&four, "c", Path::new("c.hocon"), &big).unwrap_err().to_string();
    assert!(message.contains("add 1200000 bytes, over the cap of 1 MiB for one file"), "{message}");
    let three = with_text("[${ASSAY_CASE_BIG}, ${ASSAY_CASE_BIG}, ${ASSAY_CASE_BIG}]");
    // Three fit; the case is then wrong only in its text's type.
    let message = parse_case(&three, "c", Path::new("c.hocon"), &big).unwrap_err().to_string();
    assert!(message.contains("`interactions[0].text` must be a string"), "{message}");
}

#[test]
fn nesting_is_capped_counting_each_dotted_segment() {
    // 60 levels of 60-segment keys: each key passes the 64-segment check,
    // together they are 3,600 deep.
    let key = vec!["a"; 60].join(".");
    let text = format!(
        "agent = echo, interactions = [{{ text = hi }}]\n{}x = 1{}",
        format!("{key} {{ ").repeat(60),
        "}".repeat(60)
    );
    let message = error(&text);
    assert!(message.contains("nest more than 128 levels deep here"), "{message}");
    // 127 levels of lists in a JSON file read, 129 do not.
    let json = |depth: usize| {
        format!(
            r#"{{"agent": "echo", "interactions": [{{"text": "hi"}}], "x": {}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    assert!(error(&json(126)).contains("unknown key `x`"), "{}", error(&json(126)));
    assert!(
        error(&json(200)).contains("HOCON syntax error") || error(&json(200)).contains("refused"),
        "{}",
        error(&json(200))
    );
}

#[test]
fn merging_keys_given_again_is_bounded() {
    let mut text = String::from("agent = echo, interactions = [{ text = hi }]\n");
    for i in 0..3000 {
        let _ = writeln!(text, "a.x{i} = 1");
    }
    let started = std::time::Instant::now();
    let message = error(&text);
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(message.contains("the file gives 2999 keys again to be merged"), "{message}");
    // A few dotted keys, as people write them, are fine.
    let case = read(
        "agent = echo\ninteractions = [{ text = hi, response.text.keywords = a, response.text.not_keywords = b }]",
    );
    assert_eq!(
        Value::Object(case.unwrap().interactions[0].response.clone()),
        json!({"text": {"keywords": "a", "not_keywords": "b"}})
    );
}

#[test]
fn files_for_the_full_parser_are_capped_at_256_kib() {
    let text = format!("{}\n{}", with_text("hi"), "# padding\n".repeat(30_000));
    assert_eq!(
        error(&text),
        format!(
            "`cases/case.hocon`: the file is {} bytes, over the cap of 256 KiB for files that are not JSON with comments (they take the full HOCON parser)\n\nConsider splitting it into several files",
            text.len()
        )
    );
    // JSON with comments of the same size is read.
    let json =
        format!("{{\"agent\": \"echo\", \"interactions\": [{{\"text\": \"hi\"}}]}}\n{}", "# padding\n".repeat(30_000));
    assert!(read(&json).is_ok());
}

#[test]
fn case_files_are_capped_at_4_mib_and_must_be_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.hocon");
    std::fs::write(&big, " ".repeat((4 << 20) + 1)).unwrap();
    assert_eq!(
        read_case_file(&big, "big", &env()).unwrap_err().to_string(),
        format!(
            "`{}`: the file is 4194305 bytes, over the cap of 4 MiB for case files\n\nConsider splitting it into several files",
            big.display()
        )
    );
    let error = read_case_file(dir.path(), "dir", &env()).unwrap_err().to_string();
    assert!(error.ends_with(": cannot read it: it is not a regular file"), "{error}");
    let binary = dir.path().join("binary.hocon");
    std::fs::write(&binary, b"agent = \xff").unwrap();
    let error = read_case_file(&binary, "binary", &env()).unwrap_err().to_string();
    assert!(error.ends_with("it is not UTF-8 text (invalid byte at offset 8)"), "{error}");
}

#[cfg(unix)]
#[test]
fn a_fifo_named_like_a_case_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.hocon");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let error = read_case_file(&fifo, "fifo", &env()).unwrap_err().to_string();
    assert!(error.ends_with("it is not a regular file"), "{error}");
}

#[test]
fn an_empty_response_block_is_an_error() {
    assert_eq!(
        error("agent = echo, interactions = [{ text = hi, response {} }]"),
        "`cases/case.hocon`: invalid `interactions[0].response`: it is empty, so it checks nothing\n\nConsider a test, e.g. response { text { keywords: \"…\" } }, or leaving `response` out for an interaction that checks nothing"
    );
}

/// Found by the fuzzer (`host/tests/integration/hostile/fuzz.rs`): one object 118
/// levels deep took 30 ms to resolve, and the resolver's time grows with
/// every level of every object, so a file of a few hundred such objects
/// took seconds.
#[test]
fn many_deep_objects_are_refused_before_resolving() {
    let nest = |depth: usize| format!("{}x = 1{}", "a { ".repeat(depth), "}".repeat(depth));
    let one = format!("agent = echo, interactions = [{{ text = hi }}]\nk {{ {} }}", nest(118));
    assert!(error(&one).contains("unknown key `k`"), "{}", error(&one));
    let many: String = (0..200).map(|i| format!("k{i} {{ {} }}\n", nest(90))).collect();
    let started = std::time::Instant::now();
    let message = error(&many);
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert!(message.contains("the depths of the file's objects and lists add up to 837200"), "{message}");
}
