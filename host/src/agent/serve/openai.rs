//! `assay agent serve --protocol openai`: the served agents answer OpenAI's
//! chat completions, a local mock of an OpenAI-compatible endpoint.
//!
//! - `POST /v1/chat/completions`: the request's `model` names the agent;
//!   its last message, a user's, is the text; the user and assistant
//!   messages before it become the agent's `chat_context` (neuro-san's
//!   shape: the front man's history, the front man named as the agent); a
//!   system message `sly_data: {…}` is the sly_data (`agent/transport/openai/wire.rs`).
//!   The answer's content is the agent's text; its structure and sly_data
//!   come back as top-level `structure` and `sly_data` (assay's
//!   extensions, which assay's openai connection reads back). With `"stream": true` it is
//!   sent as server-sent events, the content a word at a time, then
//!   `data: [DONE]`; the token usage (whitespace-separated words) comes in
//!   the completion, or in a last chunk when `stream_options.include_usage`
//!   asks for it.
//! - `GET /v1/models`: the agents, as models.
//!
//! Errors are OpenAI's shape, `{"error": {"message", "type", "code"}}`.

use crate::agent::message::ChatRequest;
use crate::agent::reduce::reduce;
use crate::agent::serve::exchange::{answer, json_body, metadata, respond};
use crate::agent::serve::options::{ServeOptions, ServedAgents};
use crate::agent::transport::openai::wire::{content_text, sly_data_in};
use crate::case::ChatFilter;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};

/// Answers one request.
pub(super) async fn handle(
    agents: &ServedAgents,
    request: Request<Incoming>,
    options: &ServeOptions,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().trim_end_matches('/').to_owned();
    match (request.method(), path.as_str()) {
        (&Method::GET, "/v1/models") => {
            let models: Vec<Value> =
                agents.keys().map(|name| json!({ "id": name, "object": "model", "owned_by": "assay" })).collect();
            respond(StatusCode::OK, "application/json", json!({ "object": "list", "data": models }).to_string())
        }
        (&Method::POST, "/v1/chat/completions") => completions(agents, request, options).await,
        _ => error(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no endpoint {path}; this server answers POST /v1/chat/completions and GET /v1/models"),
        ),
    }
}

/// A request, read.
struct Asked {
    /// The agent's name.
    model: String,
    /// The turn, for the agent.
    request: ChatRequest,
    /// Whether to answer as server-sent events.
    stream: bool,
    /// Whether a stream ends with a usage chunk.
    include_usage: bool,
    /// The words of every message sent.
    prompt_tokens: u64,
}

async fn completions(
    agents: &ServedAgents,
    request: Request<Incoming>,
    options: &ServeOptions,
) -> Response<Full<Bytes>> {
    let metadata = metadata(&request).into_iter().filter(|(name, _)| name != "authorization").collect();
    let asked = match json_body(request, options.read_timeout)
        .await
        .and_then(|body| read_request(&body, metadata).map_err(|message| (StatusCode::BAD_REQUEST, message)))
    {
        Ok(asked) => asked,
        Err((status, message)) => return error(status, "invalid_request_error", message),
    };
    let Some(agent) = agents.get(&asked.model) else {
        let known: Vec<&str> = agents.keys().map(String::as_str).collect();
        let message = format!("the model `{}` does not exist; this server has {}", asked.model, known.join(", "));
        return error(StatusCode::NOT_FOUND, "model_not_found", message);
    };
    tokio::time::sleep(options.latency).await;
    let messages = match answer(agent.clone(), asked.request).await {
        Ok(messages) => messages,
        Err(message) => return error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", message),
    };
    let reduced = reduce(messages);
    let content = reduced.text.unwrap_or_default();
    let usage = json!({
        "prompt_tokens": asked.prompt_tokens,
        "completion_tokens": words(&content),
        "total_tokens": asked.prompt_tokens + words(&content),
    });
    let (id, created, model) =
        (format!("chatcmpl-assay-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed)), created(), &asked.model);
    let sly_data = reduced.sly_data.map(Value::Object);
    let structure = reduced.structure.map(Value::Object);
    if !asked.stream {
        let mut completion = json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
            "usage": usage,
        });
        if let Some(sly_data) = sly_data {
            completion["sly_data"] = sly_data;
        }
        if let Some(structure) = structure {
            completion["structure"] = structure;
        }
        return respond(StatusCode::OK, "application/json", completion.to_string());
    }
    let chunk = |choices: Value| json!({ "id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices });
    let delta = |delta: Value| chunk(json!([{ "index": 0, "delta": delta, "finish_reason": null }]));
    let mut chunks = vec![delta(json!({ "role": "assistant", "content": "" }))];
    chunks.extend(content.split_inclusive(char::is_whitespace).map(|piece| delta(json!({ "content": piece }))));
    let mut last = chunk(json!([{ "index": 0, "delta": {}, "finish_reason": "stop" }]));
    if let Some(sly_data) = sly_data {
        last["sly_data"] = sly_data;
    }
    if let Some(structure) = structure {
        last["structure"] = structure;
    }
    chunks.push(last);
    if asked.include_usage {
        let mut usage_chunk = chunk(json!([]));
        usage_chunk["usage"] = usage;
        chunks.push(usage_chunk);
    }
    let mut events: String = chunks.iter().map(|chunk| format!("data: {chunk}\n\n")).collect();
    events.push_str("data: [DONE]\n\n");
    respond(StatusCode::OK, "text/event-stream", events)
}

/// Reads a chat completions request: what the agent is asked, and how to
/// answer.
fn read_request(body: &Value, metadata: Vec<(String, String)>) -> Result<Asked, String> {
    let model = body.get("model").and_then(Value::as_str).ok_or("the request has no `model` string")?;
    let messages = body.get("messages").and_then(Value::as_array).ok_or("the request has no `messages` list")?;
    let (last, earlier) = messages.split_last().ok_or("`messages` is empty")?;
    let role = |message: &Value| message.get("role").and_then(Value::as_str).unwrap_or_default().to_owned();
    let text = match (role(last).as_str(), content_text(last.get("content"))) {
        ("user", Some(text)) => text,
        _ => return Err("the last message is not a user's with text content".into()),
    };
    let mut sly_data = None;
    let mut history = Vec::new();
    for message in earlier {
        let content = content_text(message.get("content")).unwrap_or_default();
        match role(message).as_str() {
            "system" => sly_data = sly_data_in(&content).or(sly_data),
            "user" => history.push(history_entry(model, "HUMAN", &content)),
            "assistant" => history.push(history_entry(model, "AI", &content)),
            _ => {}
        }
    }
    let chat_context = (!history.is_empty()).then(|| {
        json!({ "chat_histories": [{ "origin": [{ "tool": model, "instantiation_index": 1 }], "messages": history }] })
    });
    let prompt_tokens = messages.iter().map(|m| words(&content_text(m.get("content")).unwrap_or_default())).sum();
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let include_usage = body.pointer("/stream_options/include_usage").and_then(Value::as_bool).unwrap_or(false);
    let request = ChatRequest {
        agent: model.to_owned(),
        text,
        sly_data,
        chat_context,
        chat_filter: ChatFilter::Minimal,
        metadata,
    };
    Ok(Asked { model: model.to_owned(), request, stream, include_usage, prompt_tokens })
}

/// One message of the front man's history in a neuro-san chat_context.
fn history_entry(front_man: &str, message_type: &str, text: &str) -> Value {
    json!({ "type": message_type, "origin": [{ "tool": front_man, "instantiation_index": 1 }], "text": text })
}

/// The tokens of a text, as this server counts them: its words.
fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// The next completion's number, for its id.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Seconds since the Unix epoch.
fn created() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn error(status: StatusCode, code: &str, message: String) -> Response<Full<Bytes>> {
    let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
    let body = json!({ "error": { "message": message, "type": kind, "code": code } });
    respond(status, "application/json", body.to_string())
}
