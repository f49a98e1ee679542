//! neuro-san's HTTP protocol: `GET /api/v1/list`, `GET
//! /api/v1/{agent}/function`, `POST /api/v1/{agent}/streaming_chat`
//! (answered as JSON lines). Request headers other than the standard ones
//! become the request's metadata.

use crate::agent::message::{ChatRequest, StreamLine};
use crate::agent::serve::exchange::{answer, json_body, metadata, respond};
use crate::agent::serve::options::{ServeOptions, ServedAgents};
use crate::agent::transport::direct::AgentComponent;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Answers one request.
pub(super) async fn handle(
    agents: &ServedAgents,
    request: Request<Incoming>,
    options: &ServeOptions,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().trim_end_matches('/').to_owned();
    let segments: Vec<&str> = path.split('/').collect();
    match (request.method(), segments.as_slice()) {
        (&Method::GET, ["", "api", "v1", "list"]) => {
            let list: Vec<Value> = agents
                .iter()
                .map(|(name, agent)| json!({ "agent_name": name, "description": agent.description() }))
                .collect();
            json_response(StatusCode::OK, &json!({ "agents": list }))
        }
        (&Method::GET, ["", "api", "v1", name, "function"]) => match agents.get(*name) {
            Some(agent) => {
                json_response(StatusCode::OK, &json!({ "function": { "description": agent.description() } }))
            }
            None => unknown_agent(name, agents),
        },
        (&Method::POST, ["", "api", "v1", name, "streaming_chat"]) => match agents.get(*name) {
            Some(agent) => {
                let (name, agent) = (name.to_string(), agent.clone());
                tokio::time::sleep(options.latency).await;
                streaming_chat(name, agent, request, options.read_timeout).await
            }
            None => unknown_agent(name, agents),
        },
        _ => json_response(StatusCode::NOT_FOUND, &json!({ "error": format!("no endpoint {path}") })),
    }
}

async fn streaming_chat(
    name: String,
    agent: Arc<AgentComponent>,
    request: Request<Incoming>,
    read_timeout: Duration,
) -> Response<Full<Bytes>> {
    let metadata = metadata(&request);
    let body = match json_body(request, read_timeout).await {
        Ok(body) => body,
        Err((status, message)) => return error_response(status, message),
    };
    let chat_request = match ChatRequest::from_wire(&name, &body, metadata) {
        Ok(request) => request,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, e),
    };
    match answer(agent, chat_request).await {
        Ok(messages) => {
            let mut lines = String::new();
            for message in messages {
                let line = serde_json::to_string(&StreamLine { response: message }).expect("messages serialize");
                lines.push_str(&line);
                lines.push('\n');
            }
            respond(StatusCode::OK, "application/json-lines", lines)
        }
        Err(message) => error_response(StatusCode::INTERNAL_SERVER_ERROR, message),
    }
}

fn unknown_agent(name: &str, agents: &ServedAgents) -> Response<Full<Bytes>> {
    let known: Vec<&str> = agents.keys().map(String::as_str).collect();
    error_response(StatusCode::NOT_FOUND, format!("no agent `{name}` here; this server has {}", known.join(", ")))
}

fn error_response(status: StatusCode, message: String) -> Response<Full<Bytes>> {
    json_response(status, &json!({ "error": message }))
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    respond(status, "application/json", body.to_string())
}
