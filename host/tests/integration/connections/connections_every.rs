//! One multi-turn case over every kind of connection: `direct` (the echo
//! component), `http` (neuro-san's protocol, `assay agent serve`), `openai`
//! (an echo model on 127.0.0.1 in the published chat-completions format,
//! one JSON body and server-sent events, calling a tool each turn), a
//! templated `http` API and a `command`, all passing; then `--replay` of
//! each run's results passes again while no server sees a connection and no
//! process starts.

use crate::connections::connections_openai::{event_stream, events, json_reply};
use crate::connections::named::project;
use crate::fake_server::{CountingProxy, FakeServer, Reply};
use crate::util::{Served, assay_command, fixture, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

/// Counts the turns of a conversation, carries sly_data, and starts afresh
/// when asked: the echo agent's contract, which every connection below
/// keeps.
const CONVERSATION: &str = r#"{
    "agent": "echo",
    "interactions": [
        { "text": "one", "sly_data": { "user": "ann" },
          "response": { "text": { "keywords": "one" }, "structure": { "turn": { "value": 1 } } } },
        { "text": "two",
          "response": { "text": { "keywords": "two" }, "structure": { "turn": { "value": 2 } } } },
        { "text": "again", "continue_conversation": false,
          "response": { "text": { "keywords": "again" }, "structure": { "turn": { "value": 1 } } } }
    ]
}"#;

/// The echo model over OpenAI's protocol: to the last user message TEXT in
/// the conversation's N-th user turn, the content `TEXT {"turn": N}` and a
/// call of the tool `mirror` with `{"text": TEXT}`, in one body or as
/// chunks (the content a word at a time, the arguments in two pieces, the
/// usage last when asked), as the chat-completions reference describes.
fn echo_model(body: &Value) -> Reply {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = messages.last().and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned();
    let turn = messages.iter().filter(|m| m["role"] == "user").count();
    let content = format!("{text} {}", json!({ "turn": turn }));
    let arguments = json!({ "text": text }).to_string();
    let usage = json!({ "prompt_tokens": messages.len(), "completion_tokens": 2, "total_tokens": messages.len() + 2 });
    let head = |object: &str| json!({ "id": "chatcmpl-1", "object": object, "created": 1_700_000_000, "model": body["model"] });
    if body["stream"] != json!(true) {
        let mut completion = head("chat.completion");
        completion["choices"] = json!([{ "index": 0, "finish_reason": "tool_calls", "logprobs": null,
            "message": { "role": "assistant", "content": content, "refusal": null, "tool_calls": [
                { "id": "call_1", "type": "function", "function": { "name": "mirror", "arguments": arguments } } ] } }]);
        completion["usage"] = usage;
        return json_reply(200, "", &completion);
    }
    let chunk = |fields: Value| {
        let mut chunk = head("chat.completion.chunk");
        for (key, value) in fields.as_object().unwrap() {
            chunk[key] = value.clone();
        }
        chunk
    };
    let delta = |delta: Value, finish: Value| {
        chunk(json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] }))
    };
    let mut chunks = vec![delta(json!({ "role": "assistant", "content": "" }), Value::Null)];
    for piece in content.split_inclusive(' ') {
        chunks.push(delta(json!({ "content": piece }), Value::Null));
    }
    let (first, second) = arguments.split_at(arguments.len() / 2);
    chunks.push(delta(
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function",
                                 "function": { "name": "mirror", "arguments": first } }] }),
        Value::Null,
    ));
    chunks.push(delta(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": second } }] }), Value::Null));
    chunks.push(delta(json!({}), json!("tool_calls")));
    if body["stream_options"]["include_usage"] == json!(true) {
        chunks.push(chunk(json!({ "choices": [], "usage": usage })));
    }
    event_stream(&events(&chunks))
}

/// A bespoke JSON API keeping the echo contract: `{"question", "session"}`
/// in, `{"answer", "data": {"turn"}, "session": {"turns"}}` out.
fn echo_api(body: &Value) -> Reply {
    let turn = body["session"]["turns"].as_u64().unwrap_or(0) + 1;
    json_reply(200, "", &json!({ "answer": body["question"], "data": { "turn": turn }, "session": { "turns": turn } }))
}

/// `assay run` of the project over one connection, its results written to
/// `results-NAME` (or replayed from there into `replay-NAME`): the exit
/// code's output and the results' lines.
fn run(dir: &Path, connection: &str, agent_url: &str, replay: bool) -> (std::process::Output, Vec<Value>) {
    let recorded = dir.join(format!("results-{connection}"));
    let results = if replay { dir.join(format!("replay-{connection}")) } else { recorded.clone() };
    let config = dir.join("assay.toml");
    let mut command = assay_command();
    command.args(["run", dir.to_str().unwrap(), "--config", config.to_str().unwrap()]);
    command.args(["--connection", connection, "--agent-url", agent_url, "--results", results.to_str().unwrap()]);
    if replay {
        command.args(["--replay", recorded.to_str().unwrap()]);
    }
    let output = command.output().unwrap();
    let text = std::fs::read_to_string(results.join("results.jsonl")).unwrap_or_default();
    (output, text.lines().map(|line| serde_json::from_str(line).unwrap()).collect())
}

/// The interactions of a result line's first sample.
fn interactions(line: &Value) -> &Vec<Value> {
    line["samples"][0]["runs"][0]["interactions"].as_array().unwrap()
}

#[test]
fn one_conversation_passes_over_every_connection_and_replays_without_asking_any() {
    let neuro_san = Served::start(&["echo"]);
    let neuro_san = (CountingProxy::start(neuro_san.port()), neuro_san);
    let model = FakeServer::start(|request| echo_model(&request.body));
    let api = FakeServer::start(|request| echo_api(&request.body));
    let started = tempfile::tempdir().unwrap();
    let log = started.path().join("started");
    let agent_py = fixture("commands/agent.py");
    let config = format!(
        r#"
[connections.gpt]
type = "openai"
url = "{model}/v1"
[connections.gpt_sse]
type = "openai"
url = "{model}/v1"
stream = true
[connections.api]
type = "http"
url = "{api}/chat"
body = '{{"question": {{{{text}}}}, "session": {{{{chat_context}}}}}}'
text = "$.answer"
structure = "$.data"
chat_context = "$.session"
[connections.script]
type = "command"
command = ["sh", "-c", "echo started >> '{log}'; exec python3 '{agent_py}'"]
"#,
        model = model.url(),
        api = api.url(),
        log = log.display(),
        agent_py = agent_py.display(),
    );
    let dir = project(&config, &[("conversation.hocon", CONVERSATION)]);
    let agent_url = neuro_san.0.url();
    let connections = ["direct", "http", "gpt", "gpt_sse", "api", "script"];

    for connection in connections {
        let (output, lines) = run(dir.path(), connection, &agent_url, false);
        assert_eq!(output.status.code(), Some(0), "{connection}: {}{}", stdout(&output), stderr(&output));
        assert_eq!(lines.len(), 1, "{connection}");
        assert_eq!(lines[0]["status"], "passed", "{connection}: {}", lines[0]);
        let turns = interactions(&lines[0]);
        assert_eq!(turns.len(), 3, "{connection}");
        if connection.starts_with("gpt") {
            let structure = &turns[1]["response"]["structure"];
            assert_eq!(structure["mirror"], json!({ "text": "two" }), "{connection}: the tool call: {structure}");
            assert_eq!(turns[1]["usage"]["prompt_tokens"], 4, "{connection}: user, assistant, user and the sly_data");
        }
    }
    let counts = || {
        let processes = std::fs::read_to_string(&log).unwrap_or_default().lines().count();
        (neuro_san.0.count(), model.requests.lock().unwrap().len(), api.requests.lock().unwrap().len(), processes)
    };
    let asked = counts();
    assert!(asked.0 >= 1, "the neuro-san server was asked: {asked:?}");
    assert_eq!((asked.1, asked.2), (6, 3), "three turns over each openai connection, three over the API");
    assert!(asked.3 >= 1, "the command started: {asked:?}");

    for connection in connections {
        let (output, lines) = run(dir.path(), connection, &agent_url, true);
        assert_eq!(output.status.code(), Some(0), "replay {connection}: {}{}", stdout(&output), stderr(&output));
        assert_eq!(lines.len(), 1, "replay {connection}");
        assert_eq!(lines[0]["status"], "passed", "replay {connection}: {}", lines[0]);
        let recorded = std::fs::read_to_string(dir.path().join(format!("results-{connection}/results.jsonl"))).unwrap();
        let recorded: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
        let texts = |line: &Value| -> Vec<Value> { interactions(line).iter().map(|t| t["response"].clone()).collect() };
        assert_eq!(texts(&lines[0]), texts(&recorded), "replay {connection}: the recorded answers, whole");
    }
    assert_eq!(counts(), asked, "a replay asks no server and starts no process");
}
