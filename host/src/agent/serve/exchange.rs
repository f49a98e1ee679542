//! What both protocols do with a request: read its metadata and its JSON
//! body (within the read timeout and the size cap), ask the agent on a
//! blocking thread, and answer.

use crate::agent::message::{ChatMessage, ChatRequest};
use crate::agent::transport::direct::{AgentCallError, AgentComponent};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The largest request body accepted.
const MAX_REQUEST_BYTES: usize = 16 << 20;

/// Headers that are transport, not metadata.
const TRANSPORT_HEADERS: &[&str] = &[
    "host",
    "content-type",
    "content-length",
    "accept",
    "accept-encoding",
    "user-agent",
    "connection",
    "transfer-encoding",
];

/// A request's headers, other than the standard ones: its metadata.
pub(crate) fn metadata(request: &Request<Incoming>) -> Vec<(String, String)> {
    request
        .headers()
        .iter()
        .filter(|(header, _)| !TRANSPORT_HEADERS.contains(&header.as_str()))
        .filter_map(|(header, value)| Some((header.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect()
}

/// A request's JSON body, read within the read timeout and the size cap;
/// or the status and message to answer instead.
pub(crate) async fn json_body(
    request: Request<Incoming>,
    read_timeout: Duration,
) -> Result<Value, (StatusCode, String)> {
    let body = match tokio::time::timeout(read_timeout, Limited::new(request.into_body(), MAX_REQUEST_BYTES).collect())
        .await
    {
        Ok(Ok(body)) => body.to_bytes(),
        Ok(Err(e)) => return Err((StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}"))),
        Err(_) => {
            let late = format!("the request body did not arrive within {} s", read_timeout.as_secs_f64());
            return Err((StatusCode::REQUEST_TIMEOUT, late));
        }
    };
    serde_json::from_slice(&body).map_err(|e| (StatusCode::BAD_REQUEST, format!("the request body is not JSON: {e}")))
}

/// The agent's answer to one request, on a blocking thread; or what went
/// wrong, to answer as a server error.
pub(crate) async fn answer(agent: Arc<AgentComponent>, request: ChatRequest) -> Result<Vec<ChatMessage>, String> {
    match tokio::task::spawn_blocking(move || agent.chat(&request, None)).await {
        Ok(Ok(messages)) => Ok(messages),
        Ok(Err(AgentCallError::Refused(message))) => Err(message),
        Ok(Err(AgentCallError::Fault(fault))) => Err(format!("the agent component {fault}")),
        Err(e) => Err(format!("the agent call panicked: {e}")),
    }
}

/// A response with a status, a content type and a body.
pub(crate) fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(body.into()))
        .expect("a valid response")
}
