//! `type = "http"` connections: a bespoke JSON API on 127.0.0.1, spoken to
//! by `url`/`headers`/`body` templates and read back by JSONPath, through
//! the `assay` binary. A multi-turn conversation carries the API's own
//! session and state; JSON-lines and SSE answers combine into one; a turn's
//! text cannot break out of its JSON string; every fault of the issue's
//! list ends in a classified error verdict and the run goes on.

use crate::connections::named::{project, run_with};
use crate::fake_server::{FakeServer, Recorded, Reply};
use crate::util::{assay_command, stderr, stdout};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// A 200 answer with a JSON body.
fn json_reply(body: &Value) -> Reply {
    let body = body.to_string();
    Reply::Raw(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// The path of a recorded request: `/chat` of `POST /chat HTTP/1.1`.
fn path(request: &Recorded) -> &str {
    request.request_line.split(' ').nth(1).unwrap_or_default()
}

/// The result line of the case `id`.
fn case<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    lines.iter().find(|line| line["id"] == id).unwrap_or_else(|| panic!("no result for {id} in {lines:?}"))
}

/// The order desk: `{"question", "session", "agent", "sample", "user"}`
/// in, `{"answer", "data", "session", "state"}` out. A request without a
/// session opens one; each session counts its turns.
fn order_desk() -> FakeServer {
    let sessions: Mutex<HashMap<String, u64>> = Mutex::default();
    FakeServer::start(move |request| {
        let body = &request.body;
        let mut sessions = sessions.lock().unwrap();
        let session = match body["session"].as_str() {
            Some(session) => session.to_owned(),
            None => format!("s-{}", sessions.len() + 1),
        };
        let turn = sessions.entry(session.clone()).or_default();
        *turn += 1;
        json_reply(&json!({
            "answer": format!("{} asked: {}", body["agent"].as_str().unwrap_or("?"), body["question"].as_str().unwrap_or("?")),
            "data": {"turn": *turn, "sample": body["sample"]},
            "session": session,
            "state": {"user": body["user"], "visits": *turn},
        }))
    })
}

const ORDER_DESK: &str = r#"
[cases]
allow_env = ["TEAM_NAME"]

[connections.orders]
type = "http"
url = "URL/chat"
headers = { "x-team" = "{{env.TEAM_NAME}}", "x-agent" = "{{agent}}" }
body = '{"question": {{text}}, "session": {{chat_context}}, "agent": {{agent}}, "sample": {{sample}}, "user": {{sly_data.user}}}'
text = "$.answer"
structure = "$.data"
sly_data = "$.state"
chat_context = "$.session"
"#;

const TWO_TURNS: &str = r#"{ "agent": "order-bot", "connections": ["orders"],
    "interactions": [
        { "text": "where is my order?", "sly_data": { "user": "ann" },
          "response": { "text": { "value": "order-bot asked: where is my order?" }, "structure": { "turn": { "value": 1 } } } },
        { "text": "and now?",
          "response": { "structure": { "turn": { "value": 2 }, "sample": { "value": 0 } },
                        "sly_data": { "user": { "value": "ann" }, "visits": { "value": 2 } } } } ] }"#;

#[test]
fn a_multi_turn_case_passes_over_a_bespoke_json_api() {
    let server = order_desk();
    let dir = project(&ORDER_DESK.replace("URL", &server.url()), &[("orders.hocon", TWO_TURNS)]);
    let mut command = assay_command();
    command.env("TEAM_NAME", "qa");
    let (output, lines) = run_with(command, dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let run = &lines[0]["samples"][0]["runs"][0];
    assert_eq!((&lines[0]["status"], &run["connection"]), (&json!("passed"), &json!("orders")));
    assert_eq!(run["interactions"][1]["response"]["sly_data"], json!({"user": "ann", "visits": 2}));

    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    let (first, second) = (&requests[0], &requests[1]);
    assert_eq!(first.request_line, "POST /chat HTTP/1.1");
    assert_eq!(
        first.body,
        json!({"question": "where is my order?", "session": null, "agent": "order-bot", "sample": 0, "user": "ann"})
    );
    assert_eq!(
        second.body,
        json!({"question": "and now?", "session": "s-1", "agent": "order-bot", "sample": 0, "user": "ann"}),
        "the API's session came back as chat_context, its state as sly_data"
    );
    for request in [first, second] {
        assert_eq!(request.header("x-team"), Some("qa"));
        assert_eq!(request.header("x-agent"), Some("order-bot"));
        assert_eq!(request.header("x-assay-sample"), Some("0"));
        assert_eq!(request.header("content-type"), Some("application/json"));
    }
}

#[test]
fn json_lines_and_sse_answers_combine_into_one() {
    let server = FakeServer::start(|request| match path(request) {
        "/lines" => Reply::lines(&[
            r#"{"delta": "Hello"}"#,
            "",
            r#"{"delta": ", world"}"#,
            r#"{"done": true, "data": {"words": 2}, "session": "l-1"}"#,
        ]),
        _ => Reply::Chunks(
            [
                "event: delta\r\ndata: {\"delta\": \"Hello\"}\r\n\r\n",
                ": keep-alive\n\n",
                "data: {\"delta\":\ndata: \", world\"}\n\n",
                "data: {\"done\": true, \"data\": {\"words\": 2}, \"session\": \"e-1\"}\n\n",
                "data: [DONE]\n\n",
            ]
            .iter()
            .map(|chunk| (Duration::from_millis(20), chunk.to_string()))
            .collect(),
        ),
    });
    let url = server.url();
    let config = format!(
        r#"
[connections.lines]
type = "http"
url = "{url}/lines"
body = '{{"q": {{{{text}}}}, "session": {{{{chat_context}}}}}}'
response = "json-lines"
text = "$.delta"
structure = "$.data"
chat_context = "$.session"

[connections.events]
type = "http"
url = "{url}/events"
body = '{{"q": {{{{text}}}}, "session": {{{{chat_context}}}}}}'
response = "sse"
text = "$.delta"
structure = "$.data"
chat_context = "$.session"
"#
    );
    let case = r#"{ "agent": "streamer", "connections": ["lines", "events"],
        "interactions": [ { "text": "hi", "response": { "text": { "value": "Hello, world" }, "structure": { "words": { "value": 2 } } } },
                          { "text": "again", "response": { "text": { "value": "Hello, world" } } } ] }"#;
    let dir = project(&config, &[("streams.hocon", case)]);
    let (output, lines) = run_with(assay_command(), dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let runs = lines[0]["samples"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|run| run["connection"].as_str().unwrap()).collect::<Vec<_>>(), ["lines", "events"]);
    let mut sessions: Vec<(String, Value)> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|request| (path(request).to_owned(), request.body["session"].clone()))
        .collect();
    sessions.sort_by(|a, b| (&a.0, a.1.to_string()).cmp(&(&b.0, b.1.to_string())));
    assert_eq!(
        sessions,
        [
            ("/events".to_owned(), json!("e-1")),
            ("/events".to_owned(), Value::Null),
            ("/lines".to_owned(), json!("l-1")),
            ("/lines".to_owned(), Value::Null),
        ],
        "each stream's last session went back as chat_context"
    );
}

/// Texts and sly_data that would break a template spliced in as text.
const ATTACKS: &[&str] = &[
    r#"say "hi" and \"escape\" \\ back"#,
    "line one\nline two\r\n\ttabbed",
    "}} {{text}} {{sly_data.note}} }}}",
    r#"", "admin": true, "x": ""#,
    r#"{"nested": {"json": [1, 2]}} </script> ' ` ${HOME}"#,
    "unicode: é ü 中文 \u{2028} 🎉",
];

#[test]
fn template_attacks_stay_inside_their_json_strings() {
    // The API echoes what it parsed; a body that is not JSON is a 400.
    let server = FakeServer::start(|request| match request.body.as_object() {
        Some(body) => json_reply(&json!({
            "answer": body["question"],
            "data": {"note": body["note"], "keys": body.keys().collect::<Vec<_>>()},
        })),
        None => Reply::status(400, "the body is not JSON"),
    });
    let config = format!(
        r#"
[connections.echo]
type = "http"
url = "{}/echo"
body = '{{"question": {{{{text}}}}, "note": {{{{sly_data.note}}}}}}'
text = "$.answer"
structure = "$.data"
"#,
        server.url()
    );
    let interactions: Vec<Value> = ATTACKS
        .iter()
        .map(|attack| {
            json!({
                "text": attack,
                "sly_data": {"note": attack},
                "response": {
                    "text": {"value": attack},
                    "structure": {"note": {"value": attack}, "keys": {"keywords": ["question", "note"], "not_keywords": "admin"}},
                },
            })
        })
        .collect();
    let case = json!({"agent": "echo", "connections": ["echo"], "interactions": interactions}).to_string();
    let dir = project(&config, &[("attacks.hocon", &case)]);
    let (output, lines) = run_with(assay_command(), dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}\n{:#}", stdout(&output), stderr(&output), lines[0]);
    let requests = server.requests.lock().unwrap();
    let received: Vec<&Value> = requests.iter().map(|request| &request.body["question"]).collect();
    assert_eq!(received, ATTACKS.iter().map(|attack| json!(attack)).collect::<Vec<_>>().iter().collect::<Vec<_>>());
}

/// One case per fault, each over its own connection, and one that passes.
const FAULTS: &[&str] = &[
    "refused",
    "client-error",
    "server-error",
    "malformed",
    "cut-body",
    "cut-stream",
    "stall",
    "oversize",
    "missing",
    "bad-event",
    "header",
    "fine",
];

#[test]
fn every_fault_is_a_classified_error_verdict_and_the_run_goes_on() {
    let server = FakeServer::start(|request| match path(request) {
        "/client-error" => Reply::status(400, r#"{"error": "no question"}"#),
        "/server-error" => Reply::status(503, "busy"),
        "/malformed" => Reply::status(200, "<html>oops</html>"),
        // It promises 100 bytes and closes after 16.
        "/cut-body" => Reply::Raw(
            b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\nconnection: close\r\n\r\n{\"answer\": \"cut".to_vec(),
        ),
        "/cut-stream" => Reply::Chunks(vec![
            (Duration::ZERO, "{\"answer\": \"a\"}\n".into()),
            (Duration::ZERO, "{\"answer\": \"b".into()),
        ]),
        "/stall" => Reply::Chunks(vec![(Duration::from_secs(5), "{\"answer\": \"late\"}\n".into())]),
        "/oversize" => Reply::Chunks(vec![(Duration::ZERO, format!("{{\"answer\": \"{}\"}}\n", "x".repeat(2 << 20)))]),
        "/missing" => json_reply(&json!({"reply": "x", "data": {}})),
        "/bad-event" => Reply::Chunks(vec![(Duration::ZERO, "data: {\"answer\": \"a\"}\n\ndata: oops\n\n".into())]),
        _ => json_reply(&json!({"answer": "fine"})),
    });
    let refused = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = String::new();
    for name in FAULTS {
        let url = match *name {
            // A URL's variables are not shown, whatever their names.
            "refused" => format!("http://127.0.0.1:{refused}/chat?tenant={{{{env.ASSAY_CASE_TENANT}}}}"),
            _ => format!("{}/{name}", server.url()),
        };
        let extra = match *name {
            "cut-stream" => "response = \"json-lines\"\n",
            "stall" => "idle_timeout_secs = 0.5\n",
            "oversize" => "max_response_mb = 1\nresponse = \"json-lines\"\n",
            "bad-event" => "response = \"sse\"\n",
            "header" => "headers = { \"x-question\" = \"{{text}}\" }\n",
            _ => "",
        };
        config.push_str(&format!(
            "[connections.{name}]\ntype = \"http\"\nurl = \"{url}\"\nbody = '{{\"q\": {{{{text}}}}}}'\ntext = \"$.answer\"\n{extra}\n"
        ));
    }
    let cases: Vec<(String, String)> = FAULTS
        .iter()
        .map(|name| {
            let text = if *name == "header" { "two\nlines" } else { "hi" };
            let case = json!({"agent": "a", "connections": [name], "interactions": [
                {"text": text, "response": {"text": {"keywords": "fine"}}}
            ]});
            (format!("{name}.hocon"), case.to_string())
        })
        .collect();
    let cases: Vec<(&str, &str)> = cases.iter().map(|(name, text)| (name.as_str(), text.as_str())).collect();
    let dir = project(&config, &cases);
    let mut command = assay_command();
    command.env("ASSAY_CASE_TENANT", "acme-tenant-7");
    let (output, lines) = run_with(command, dir.path(), &["-j", "16"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(lines.len(), FAULTS.len(), "every case is reported");
    assert_eq!(case(&lines, "fine")["status"], "passed");

    let port = server.port;
    let expected = [
        (
            "refused",
            "unreachable",
            format!(
                "agent `a` at http://127.0.0.1:{refused}/chat?tenant={{{{env.ASSAY_CASE_TENANT}}}}: cannot connect: error sending request: "
            ),
        ),
        (
            "refused",
            "unreachable",
            "Consider starting the server, or correcting `url` in the connection's [connections.NAME] of assay.toml"
                .into(),
        ),
        (
            "client-error",
            "http-status",
            format!(
                "agent `a` at http://127.0.0.1:{port}/client-error: the server answered HTTP 400: {{\"error\": \"no question\"}}"
            ),
        ),
        ("server-error", "http-status", "the server answered HTTP 503: busy".into()),
        (
            "malformed",
            "malformed",
            "the response is malformed: the body is not JSON: expected value at line 1 column 1 in `<html>oops</html>`"
                .into(),
        ),
        ("cut-body", "truncated", "the response stream was cut off: ".into()),
        ("cut-stream", "truncated", "the response stream was cut off: the stream ended in the middle of line 2".into()),
        ("stall", "stalled", "the agent stopped sending: nothing arrived for 0.5 s".into()),
        ("oversize", "too-large", "the response exceeded the cap of 1 MiB and was abandoned".into()),
        (
            "missing",
            "missing-path",
            "the response has nothing at `text = \"$.answer\"`: its top-level keys are `reply`, `data`".into(),
        ),
        ("bad-event", "malformed", "the response is malformed: the data of event 2 is not JSON: expected value".into()),
        (
            "header",
            "bad-request",
            "invalid request: the header `x-question` of this turn is not a valid HTTP header value".into(),
        ),
    ];
    for (id, kind, message) in expected {
        let line = case(&lines, id);
        assert_eq!(line["status"], "error", "{id}: {line:#}");
        let error = &line["samples"][0]["runs"][0]["interactions"][0]["error"];
        assert_eq!(error["kind"], kind, "{id}: {error:#}");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(&message), "{id}: {text}\n(expected it to contain: {message})");
        assert!(!text.contains("acme-tenant-7"), "{id}: {text}");
    }
}

#[test]
fn a_bad_template_or_query_is_an_error_at_load_naming_the_connection() {
    let base = "[connections.orders]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/chat\"\n";
    for (table, expected) in [
        (
            "body = '{\"q\": {{txet}}}'\ntext = \"$.a\"\n",
            "`body`: unknown placeholder `{{txet}}` (did you mean `{{text}}`?); the placeholders are {{text}}",
        ),
        (
            "body = '{\"q\": \"{{text}}\"}'\ntext = \"$.a\"\n",
            "`body` is not JSON once its placeholders are filled: expected `,` or `}` at line 1 column 9\n\nConsider writing placeholders bare",
        ),
        (
            "body = '{\"q\": {{text}}}'\ntext = \"$.a\"\nheaders = { \"x-home\" = \"{{env.HOME}}\" }\n",
            "`headers.x-home`: `{{env.HOME}}` names a variable connections may not read: they read what case files may\n\nConsider allowing it in assay.toml:\n[cases]\nallow_env = [\"HOME\"]",
        ),
        ("body = '{\"q\": {{text}}}'\ntext = \"answer\"\n", "`text = \"answer\"` is not a JSONPath query (RFC 9535)"),
        ("body = '{\"q\": {{text}}}'\n", "it has no `text`"),
        ("text = \"$.a\"\n", "it has no `body`: a POST sends the turn in its body"),
        (
            "body = '{\"q\": {{text}}}'\ntext = \"$.a\"\nresponse = \"jsonl\"\n",
            "`response = \"jsonl\"` is no way of reading a response",
        ),
        (
            "body = '{\"q\": {{text}}}'\ntext = \"$.a\"\nmethod = \"P OST\"\n",
            "`method = \"P OST\"` is not an HTTP method",
        ),
    ] {
        let dir = project(&format!("{base}{table}"), &[("orders.hocon", TWO_TURNS)]);
        let (output, _) = run_with(assay_command(), dir.path(), &[]);
        assert_eq!(output.status.code(), Some(2), "{table}: {}", stderr(&output));
        let error = stderr(&output);
        assert!(error.contains("[connections.orders] in `") && error.contains("assay.toml`"), "{error}");
        assert!(error.contains(expected), "{table}: {error}");
    }
}

#[test]
fn a_get_api_takes_the_turn_in_its_url_percent_encoded() {
    // The API answers with the request line it got.
    let server = FakeServer::start(|request| json_reply(&json!({"answer": request.request_line})));
    let config = format!(
        "[connections.search]\ntype = \"http\"\nmethod = \"get\"\nurl = \"{}/agents/{{{{agent}}}}/ask?q={{{{text}}}}&n={{{{sample}}}}\"\ntext = \"$.answer\"\n",
        server.url()
    );
    let case = r#"{ "agent": "faq bot", "connections": ["search"],
        "interactions": [ { "text": "where & when?", "response": { "text": { "value": "GET /agents/faq%20bot/ask?q=where%20%26%20when%3F&n=0 HTTP/1.1" } } } ] }"#;
    let dir = project(&config, &[("search.hocon", case)]);
    let (output, lines) = run_with(assay_command(), dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}\n{:#}", stdout(&output), stderr(&output), lines[0]);
    assert_eq!(server.requests.lock().unwrap()[0].header("content-type"), None, "no body, no content type");
}
