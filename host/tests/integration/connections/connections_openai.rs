//! The `openai` connection (`type = "openai"` in `[connections.NAME]`),
//! through the `assay` binary: against a deterministic OpenAI-compatible
//! model on 127.0.0.1 that answers in the published chat-completions and
//! server-sent-event formats, streaming and not, with tool calls and token
//! usage; every fault of a server ending in a classified error verdict
//! while the run goes on; and `assay agent serve --protocol openai`
//! answering the connection end to end.

use crate::connections::named::{project, run};
use crate::fake_server::{FakeServer, Recorded, Reply};
use crate::util::{Served, assay_command, stderr, stdout};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A complete HTTP response with a JSON body.
pub(crate) fn json_reply(code: u16, extra_headers: &str, body: &Value) -> Reply {
    let body = body.to_string();
    Reply::Raw(
        format!(
            "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra_headers}connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// A 200 event stream of these bytes, ended by closing the connection.
pub(crate) fn event_stream(events: &str) -> Reply {
    Reply::Raw(
        format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n{events}")
            .into_bytes(),
    )
}

/// Server-sent events, one per chunk, then `data: [DONE]`.
pub(crate) fn events(chunks: &[Value]) -> String {
    let mut text: String = chunks.iter().map(|chunk| format!("data: {chunk}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    text
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The deterministic model's answer to a chat-completions request. To the
/// last user message TEXT, in the conversation's N-th user turn:
/// `turn N: TEXT`; to `weather in CITY`, a call of the tool `get_weather`
/// with `{"city": CITY}` and no content; in JSON mode, `{"turn": N,
/// "text": TEXT}`. Usage counts words. With `"stream": true` the answer
/// comes as chunks: the role, the content a word at a time (a tool call's
/// arguments in two pieces), the finish reason, the usage when
/// `stream_options.include_usage` asks, then `[DONE]`.
fn reference_reply(body: &Value) -> Reply {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = messages.last().and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned();
    let turn = messages.iter().filter(|m| m["role"] == "user").count();
    let prompt_tokens: usize = messages.iter().map(|m| words(m["content"].as_str().unwrap_or_default())).sum();
    let tool_call = text.strip_prefix("weather in ").map(|city| json!({ "city": city }).to_string());
    let content = match (&tool_call, body["response_format"]["type"].as_str()) {
        (Some(_), _) => None,
        (None, Some("json_object")) => Some(json!({ "turn": turn, "text": text }).to_string()),
        (None, _) => Some(format!("turn {turn}: {text}")),
    };
    let completion_tokens = words(content.as_deref().unwrap_or_default()) + 3 * usize::from(tool_call.is_some());
    let usage = json!({ "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens });
    let finish = if tool_call.is_some() { "tool_calls" } else { "stop" };
    let head = json!({ "id": "chatcmpl-7", "created": 1_700_000_000, "model": body["model"],
                       "system_fingerprint": "fp_reference" });
    let with = |object: &str, fields: Value| {
        let mut value = head.clone();
        value["object"] = json!(object);
        for (key, field) in fields.as_object().unwrap() {
            value[key] = field.clone();
        }
        value
    };
    if body["stream"] != json!(true) {
        let mut message = json!({ "role": "assistant", "content": content, "refusal": null });
        if let Some(arguments) = &tool_call {
            message["tool_calls"] = json!([{ "id": "call_1", "type": "function",
                "function": { "name": "get_weather", "arguments": arguments } }]);
        }
        let choice = json!({ "index": 0, "message": message, "logprobs": null, "finish_reason": finish });
        return json_reply(200, "", &with("chat.completion", json!({ "choices": [choice], "usage": usage })));
    }
    let delta =
        |delta: Value, finish: Value| json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
    let mut chunks = vec![delta(json!({ "role": "assistant", "content": "" }), Value::Null)];
    if let Some(arguments) = &tool_call {
        let (first, second) = arguments.split_at(arguments.len() / 2);
        chunks.push(delta(
            json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function",
                "function": { "name": "get_weather", "arguments": "" } }] }),
            Value::Null,
        ));
        for piece in [first, second] {
            chunks.push(delta(
                json!({ "tool_calls": [{ "index": 0, "function": { "arguments": piece } }] }),
                Value::Null,
            ));
        }
    }
    for piece in content.as_deref().unwrap_or_default().split_inclusive(' ') {
        chunks.push(delta(json!({ "content": piece }), Value::Null));
    }
    chunks.push(delta(json!({}), json!(finish)));
    if body["stream_options"]["include_usage"] == json!(true) {
        chunks.push(json!({ "choices": [], "usage": usage }));
    }
    let chunks: Vec<Value> = chunks.into_iter().map(|fields| with("chat.completion.chunk", fields)).collect();
    event_stream(&events(&chunks))
}

/// The deterministic model, serving.
fn reference_server() -> FakeServer {
    FakeServer::start(|request| reference_reply(&request.body))
}

/// `[connections.NAME]` of type openai at `url` (the server's API base),
/// with more lines.
fn connection(name: &str, url: &str, more: &str) -> String {
    format!("[connections.{name}]\ntype = \"openai\"\nurl = \"{url}/v1\"\n{more}\n")
}

/// The requests' bodies.
fn bodies(server: &FakeServer) -> Vec<Value> {
    server.requests.lock().unwrap().iter().map(|r| r.body.clone()).collect()
}

/// The first sample's interactions over its only connection.
fn interactions(line: &Value) -> &Vec<Value> {
    line["samples"][0]["runs"][0]["interactions"].as_array().unwrap()
}

const CONVERSATION: &str = r#"{ "agent": "reference-model", "connections": ["gpt"],
    "interactions": [
        { "text": "hello", "sly_data": { "user": "ann" },
          "response": { "text": { "keywords": "turn 1: hello" } } },
        { "text": "weather in Paris",
          "response": { "structure": { "get_weather": { "city": { "value": "Paris" } } } } },
        { "text": "again", "response": { "text": { "keywords": "turn 3: again" } } },
        { "text": "fresh", "continue_conversation": false, "response": { "text": { "keywords": "turn 1: fresh" } } }
    ] }"#;

#[test]
fn a_multi_turn_conversation_passes_over_an_openai_connection_streaming_and_not() {
    for stream in [false, true] {
        let server = reference_server();
        let config = connection("gpt", &server.url(), &format!("system = \"Be terse.\"\nstream = {stream}"));
        let dir = project(&config, &[("conversation.hocon", CONVERSATION)]);
        let (output, lines) = run(dir.path(), &[]);
        assert_eq!(output.status.code(), Some(0), "stream {stream}: {}{}", stdout(&output), stderr(&output));
        assert_eq!(lines[0]["status"], "passed", "stream {stream}: {}", lines[0]);

        let bodies = bodies(&server);
        assert_eq!(bodies.len(), 4, "one request per turn");
        assert_eq!(bodies[0]["model"], "reference-model", "the case's agent names the model");
        assert_eq!(bodies[0]["stream"] == json!(true), stream);
        let system = json!({ "role": "system", "content": "Be terse." });
        let sly_data = json!({ "role": "system", "content": "sly_data: {\"user\":\"ann\"}" });
        assert_eq!(
            bodies[2]["messages"],
            json!([system, sly_data,
                { "role": "user", "content": "hello" }, { "role": "assistant", "content": "turn 1: hello" },
                { "role": "user", "content": "weather in Paris" }, { "role": "assistant", "content": "" },
                { "role": "user", "content": "again" }]),
            "the third request carries the history and the carried sly_data"
        );
        assert_eq!(bodies[3]["messages"], json!([system, { "role": "user", "content": "fresh" }]), "a fresh start");
        let header = server.requests.lock().unwrap()[0].header("x-assay-sample").map(str::to_owned);
        assert_eq!(header.as_deref(), Some("0"), "metadata goes out as headers");

        let turns = interactions(&lines[0]);
        // Words: "Be terse.", the sly_data message and "hello"; "turn 1: hello".
        assert_eq!(turns[0]["usage"], json!({ "prompt_tokens": 5, "completion_tokens": 3 }), "stream {stream}");
        assert_eq!(
            turns[1]["response"]["structure"]["tool_calls"],
            json!([{ "id": "call_1", "name": "get_weather", "arguments": { "city": "Paris" } }])
        );
        let summed: u64 = turns.iter().map(|t| t["usage"]["prompt_tokens"].as_u64().unwrap()).sum();
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("results/summary.json")).unwrap()).unwrap();
        assert_eq!(summary["usage"]["prompt_tokens"], summed, "summary.json sums the usage");
        assert!(turns.iter().all(|t| t["agent_ms"].as_f64().unwrap() > 0.0));
    }
}

#[test]
fn json_mode_answers_become_the_structure_and_the_settings_go_out() {
    let server = reference_server();
    let more = "json_mode = true\ntemperature = 0\nmax_tokens = 64\nmodel = \"fixed\"\nmodel_from_agent = false";
    let case = r#"{ "agent": "the-agent", "connections": ["gpt"], "interactions": [
        { "text": "hi", "response": { "structure": { "turn": { "value": 1 }, "text": { "value": "hi" } } } } ] }"#;
    let dir = project(&connection("gpt", &server.url(), more), &[("json.hocon", case)]);
    let (output, lines) = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(lines[0]["status"], "passed");
    let body = &bodies(&server)[0];
    assert_eq!(
        (&body["model"], &body["response_format"], &body["temperature"], &body["max_tokens"]),
        (&json!("fixed"), &json!({ "type": "json_object" }), &json!(0.0), &json!(64))
    );
    assert_eq!(body.get("stream"), None, "no stream asked");
}

#[test]
fn the_api_key_goes_out_as_a_bearer_token_and_is_never_shown() {
    const KEY: &str = "sk-test-0123456789abcdef";
    // A careless server that repeats the credentials it was sent.
    let server = FakeServer::start(|request: &Recorded| {
        let authorization = request.header("authorization").unwrap_or("none").to_owned();
        let mut body = request.body.clone();
        body["messages"] = json!([{ "role": "user", "content": format!("you sent {authorization}") }]);
        reference_reply(&body)
    });
    let config = connection("gpt", &server.url(), "api_key_env = \"ASSAY_CASE_OPENAI_KEY\"");
    let case = r#"{ "agent": "m", "connections": ["gpt"], "interactions": [
        { "text": "hi", "response": { "text": { "keywords": "you sent Bearer" } } } ] }"#;
    let dir = project(&config, &[("key.hocon", case)]);
    let results = dir.path().join("results");
    let config_file = dir.path().join("assay.toml");
    let run_with_key = || {
        assay_command()
            .args(["run", dir.path().to_str().unwrap(), "--config", config_file.to_str().unwrap()])
            .args(["--results", results.to_str().unwrap()])
            .env("ASSAY_CASE_OPENAI_KEY", KEY)
            .output()
            .unwrap()
    };
    let output = run_with_key();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(server.requests.lock().unwrap()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let written = std::fs::read_to_string(results.join("results.jsonl")).unwrap();
    assert!(written.contains("you sent Bearer [REDACTED]"), "{written}");
    for text in [written, stdout(&output), stderr(&output)] {
        assert!(!text.contains(KEY), "the key shows in: {text}");
    }

    // Its variable holds a configured key: a case file may not read it,
    // even with the prefix case files may read.
    let reader =
        r#"{ "agent": "m", "connections": ["gpt"], "interactions": [ { "text": ${ASSAY_CASE_OPENAI_KEY} } ] }"#;
    std::fs::write(dir.path().join("key.hocon"), reader).unwrap();
    let output = run_with_key();
    let written = std::fs::read_to_string(results.join("results.jsonl")).unwrap();
    assert!(written.contains("is not allowed in case files"), "{written}");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(server.requests.lock().unwrap().len(), 1, "no request sent the key as text");
}

/// A server that answers the n-th request (from 0) with `reply(n)`, and
/// the rest as the deterministic model does.
fn scripted(first: usize, reply: impl Fn(usize) -> Reply + Send + Sync + 'static) -> FakeServer {
    let count = Arc::new(AtomicUsize::new(0));
    FakeServer::start(move |request| {
        let n = count.fetch_add(1, Ordering::SeqCst);
        if n < first { reply(n) } else { reference_reply(&request.body) }
    })
}

/// A port nothing listens on.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn every_fault_of_a_server_ends_in_a_classified_error_verdict_and_the_run_goes_on() {
    let chunk = json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": { "content": "tu" } }] });
    let huge = "x".repeat(2 << 20);
    let big_chunk = json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": { "content": "x".repeat(64 << 10) } }] });
    let (chunk_text, stall_chunk, big_text) = (chunk.to_string(), chunk.to_string(), big_chunk.to_string());
    let servers: Vec<(&str, FakeServer, &str)> = vec![
        ("fine", reference_server(), ""),
        (
            "unauthorized",
            scripted(usize::MAX, |_| {
                json_reply(
                    401,
                    "",
                    &json!({ "error": {
            "message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key" } }),
                )
            }),
            "api_key_env = \"ASSAY_TEST_UNSET_OPENAI_KEY\"",
        ),
        (
            "bad_request",
            scripted(usize::MAX, |_| json_reply(400, "", &json!({ "error": { "message": "messages: too long" } }))),
            "",
        ),
        (
            "no_model",
            scripted(usize::MAX, |_| json_reply(404, "", &json!({ "error": { "message": "model 'm' not found" } }))),
            "",
        ),
        ("flaky", scripted(1, |_| json_reply(503, "", &json!({ "error": { "message": "overloaded" } }))), ""),
        (
            "busy",
            scripted(1, |_| json_reply(429, "retry-after: 2\r\n", &json!({ "error": { "message": "rate limited" } }))),
            "",
        ),
        (
            "down",
            scripted(usize::MAX, |_| json_reply(502, "", &json!({ "error": { "message": "bad gateway" } }))),
            "retries = 1",
        ),
        (
            "malformed_json",
            scripted(usize::MAX, |_| {
                Reply::Raw(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 17\r\nconnection: close\r\n\r\n<html>oops</html>".to_vec())
            }),
            "",
        ),
        ("malformed_sse", scripted(usize::MAX, |_| event_stream("data: {\"choices\": [}\n\n")), "stream = true"),
        ("not_sse", scripted(usize::MAX, |_| event_stream("{\"response\": {\"type\": \"AI\"}}\n")), "stream = true"),
        (
            "cut_stream",
            scripted(usize::MAX, move |_| event_stream(&format!("data: {chunk_text}\n\n"))),
            "stream = true",
        ),
        ("cut_line", scripted(usize::MAX, |_| event_stream("data: {\"choices\": [{\"ind")), "stream = true"),
        (
            "refused_in_stream",
            scripted(usize::MAX, |_| event_stream("data: {\"error\": {\"message\": \"the model is overloaded\"}}\n\n")),
            "stream = true",
        ),
        (
            "stall",
            scripted(usize::MAX, |_| {
                Reply::Chunks(vec![(Duration::ZERO, "{\"choices\": ".into()), (Duration::from_secs(5), "[]}".into())])
            }),
            "idle_timeout_secs = 0.5",
        ),
        (
            "stall_stream",
            scripted(usize::MAX, move |_| {
                Reply::Chunks(vec![
                    (Duration::ZERO, format!("data: {stall_chunk}\n\n")),
                    (Duration::from_secs(5), "data: [DONE]\n\n".into()),
                ])
            }),
            "idle_timeout_secs = 0.5\nstream = true",
        ),
        (
            "oversize",
            scripted(usize::MAX, move |_| json_reply(200, "", &json!({ "padding": huge }))),
            "max_response_mb = 1",
        ),
        (
            "oversize_stream",
            scripted(usize::MAX, move |_| event_stream(&format!("data: {big_text}\n\n").repeat(20))),
            "max_response_mb = 1\nstream = true",
        ),
    ];
    let refused_port = dead_port();
    let mut config = connection("refused", &format!("http://127.0.0.1:{refused_port}"), "");
    // A server that takes the request and never answers it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().collect();
        drop(held);
    });
    config.push_str(&connection("silent", &format!("http://127.0.0.1:{silent_port}"), "idle_timeout_secs = 0.5"));
    let mut cases = Vec::new();
    for (name, server, more) in &servers {
        config.push_str(&connection(name, &server.url(), more));
        let case = format!(
            r#"{{ "agent": "m", "connections": ["{name}"], "interactions": [ {{ "text": "hello", "response": {{ "text": {{ "keywords": "turn 1: hello" }} }} }} ] }}"#
        );
        cases.push((format!("{name}.hocon"), case));
    }
    for name in ["refused", "silent"] {
        cases.push((format!("{name}.hocon"), cases[0].1.replace("[\"fine\"]", &format!("[\"{name}\"]"))));
    }
    let cases: Vec<(&str, &str)> = cases.iter().map(|(n, c)| (n.as_str(), c.as_str())).collect();
    let dir = project(&config, &cases);
    let (output, lines) = run(dir.path(), &["-j", "32"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let by_id: BTreeMap<&str, &Value> = lines.iter().map(|l| (l["id"].as_str().unwrap(), l)).collect();
    assert_eq!(by_id.len(), servers.len() + 2, "every case is reported: {lines:?}");
    for passing in ["fine", "flaky", "busy"] {
        assert_eq!(by_id[passing]["status"], "passed", "{}", by_id[passing]);
    }
    let requests = |name: &str| servers.iter().find(|(n, ..)| *n == name).unwrap().1.requests.lock().unwrap().len();
    assert_eq!((requests("flaky"), requests("busy"), requests("down")), (2, 2, 2), "retried, then given up");
    let waited = interactions(by_id["busy"])[0]["agent_ms"].as_f64().unwrap();
    assert!(waited >= 2000.0, "Retry-After: 2 was honoured (not the 500 ms backoff): {waited} ms");

    let url = |name: &str| {
        let port = match name {
            "refused" => refused_port,
            "silent" => silent_port,
            _ => servers.iter().find(|(n, ..)| *n == name).unwrap().1.port,
        };
        format!("agent `m` at http://127.0.0.1:{port}/v1/chat/completions: ")
    };
    let expected: &[(&str, &str, &str)] = &[
        ("refused", "unreachable", "cannot connect: "),
        (
            "unauthorized",
            "http-status",
            "the server refused the credentials (HTTP 401): {\"error\":{\"message\":\"Incorrect API key provided\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}\n\nConsider setting `ASSAY_TEST_UNSET_OPENAI_KEY` (the connection's api_key_env): it is not set",
        ),
        (
            "bad_request",
            "http-status",
            "the server answered HTTP 400: {\"error\":{\"message\":\"messages: too long\"}}",
        ),
        (
            "no_model",
            "not-found",
            "the server has no chat completions for model `m` at this URL (HTTP 404): {\"error\":{\"message\":\"model 'm' not found\"}}\n\nConsider a `url` that ends where the API starts",
        ),
        (
            "down",
            "http-status",
            "the server answered HTTP 502: {\"error\":{\"message\":\"bad gateway\"}} (gave up after 2 attempts)",
        ),
        (
            "malformed_json",
            "malformed",
            "the response is malformed: it is not JSON (expected value at line 1 column 1): `<html>oops</html>`",
        ),
        (
            "malformed_sse",
            "malformed",
            "line 1 of the response stream is malformed: expected value at line 1 column 14 in `{\"choices\": [}`",
        ),
        (
            "not_sse",
            "malformed",
            "line 1 of the response stream is malformed: `{\"response\": {\"type\": \"AI\"}}` is not a server-sent event line (`data: …`)",
        ),
        (
            "cut_stream",
            "truncated",
            "the response stream was cut off: the event stream ended before its `data: [DONE]`",
        ),
        ("cut_line", "truncated", "the response stream was cut off: the event stream ended in the middle of line 1"),
        ("refused_in_stream", "refused", "the agent refused the request: the model is overloaded"),
        ("silent", "stalled", "the agent stopped sending: nothing arrived for 0.5 s"),
        ("stall", "stalled", "the agent stopped sending: nothing arrived for 0.5 s"),
        ("stall_stream", "stalled", "the agent stopped sending: nothing arrived for 0.5 s"),
        ("oversize", "too-large", "the response exceeded the cap of 1 MiB and was abandoned"),
        ("oversize_stream", "too-large", "the response exceeded the cap of 1 MiB and was abandoned"),
    ];
    for (name, kind, message) in expected {
        let line = by_id[name];
        assert_eq!(line["status"], "error", "{name}: {line}");
        let error = &interactions(line)[0]["error"];
        assert_eq!(error["kind"], *kind, "{name}: {error}");
        let actual = error["message"].as_str().unwrap();
        let whole = format!("{}{message}", url(name));
        assert!(actual.starts_with(&whole), "{name}:\n{actual}\nshould start with\n{whole}");
    }
    let refused = interactions(by_id["refused"])[0]["error"]["message"].as_str().unwrap().to_owned();
    assert!(refused.ends_with("Consider starting the server, or correcting `url` in the connection's [connections.NAME] of assay.toml (`assay agent serve` serves the demo agents; `--protocol openai` makes it OpenAI-compatible)"), "{refused}");
}

#[test]
fn a_connection_table_that_cannot_work_names_itself() {
    for (table, expected) in [
        (
            "model_from_agent = false\n",
            "it has no `model`, and `model_from_agent = false` says the case's agent is not one",
        ),
        ("ca = \"missing.pem\"\n", "cannot read the CA file `"),
        ("idle_timeout_secs = 0\n", "`idle_timeout_secs = 0` is not a positive number of seconds"),
        ("strem = true\n", "unknown field `strem`"),
    ] {
        let dir = project(&connection("gpt", "http://127.0.0.1:9", table), &[("c.hocon", CONVERSATION)]);
        let (output, _) = run(dir.path(), &[]);
        assert_eq!(output.status.code(), Some(2), "{table}: {}", stderr(&output));
        let error = stderr(&output);
        assert!(error.contains("[connections.gpt] in `") && error.contains(expected), "{table}: {error}");
    }
}

const ECHO_TURNS: &str = r#"{ "agent": "echo", "connections": ["mock"],
    "interactions": [
        { "text": "hello", "sly_data": { "id": 7 },
          "response": { "text": { "keywords": "hello" }, "structure": { "turn": { "value": 1 } }, "sly_data": { "id": { "value": 7 } } } },
        { "text": "again", "response": { "text": { "keywords": "again" }, "structure": { "turn": { "value": 2 } } } },
        { "text": "anew", "continue_conversation": false, "response": { "structure": { "turn": { "value": 1 } } } }
    ] }"#;

#[test]
fn agent_serve_speaks_openai_to_an_openai_connection() {
    let served = Served::start(&["echo", "--protocol", "openai", "--latency-ms", "150"]);
    assert!(served.url.ends_with("/v1"), "it prints the API base: {}", served.url);
    for stream in [false, true] {
        let config = format!("[connections.mock]\ntype = \"openai\"\nurl = \"{}\"\nstream = {stream}\n", served.url);
        let unknown = ECHO_TURNS.replace("\"echo\"", "\"nobody\"");
        let dir = project(&config, &[("echo.hocon", ECHO_TURNS), ("unknown.hocon", &unknown)]);
        let (output, lines) = run(dir.path(), &[]);
        assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
        let by_id: BTreeMap<&str, &Value> = lines.iter().map(|l| (l["id"].as_str().unwrap(), l)).collect();
        assert_eq!(by_id["echo"]["status"], "passed", "stream {stream}: {}", by_id["echo"]);
        let turns = interactions(by_id["echo"]);
        assert!(turns.iter().all(|t| t["agent_ms"].as_f64().unwrap() >= 150.0), "--latency-ms is honoured");
        // Words: "hello" and the sly_data message; the answer "hello" (its
        // structure comes beside the content, as assay's extension).
        assert_eq!(turns[0]["usage"], json!({ "prompt_tokens": 3, "completion_tokens": 1 }), "stream {stream}");
        assert_eq!(turns[0]["response"]["text"], "hello", "stream {stream}: the text is the agent's, whole");
        let error = &interactions(by_id["unknown"])[0]["error"];
        assert_eq!(error["kind"], "not-found");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("(HTTP 404): {\"error\":{\"message\":\"the model `nobody` does not exist; this server has echo\",\"type\":\"invalid_request_error\",\"code\":\"model_not_found\"}}"), "{message}");
    }
}

#[test]
fn https_works_with_the_connections_ca_and_fails_clearly_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let (cert_arg, key_arg) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let served = Served::start(&["echo", "--protocol", "openai", "--tls-cert", cert_arg, "--tls-key", key_arg]);
    let url = served.url.replace("127.0.0.1", "localhost");
    assert!(url.starts_with("https://localhost:") && url.ends_with("/v1"), "{url}");
    let case = r#"{ "agent": "echo", "connections": ["secure"], "interactions": [
        { "text": "secure ping", "response": { "text": { "keywords": "secure ping" } } } ] }"#;
    let trusted = format!("[connections.secure]\ntype = \"openai\"\nurl = \"{url}\"\nca = \"cert.pem\"\n");
    let project_dir = project(&trusted, &[("tls.hocon", case)]);
    std::fs::copy(&cert, project_dir.path().join("cert.pem")).unwrap();
    let (output, lines) = run(project_dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(lines[0]["status"], "passed");

    let untrusted = project(&trusted.replace("ca = \"cert.pem\"\n", ""), &[("tls.hocon", case)]);
    let (output, lines) = run(untrusted.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let error = &interactions(&lines[0])[0]["error"];
    assert_eq!(error["kind"], "tls", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("TLS handshake failed: ") && message.ends_with("Consider `ca = \"FILE.pem\"` in the connection's [connections.NAME] of assay.toml if the server uses a private or self-signed certificate"), "{message}");
}
