//! What bounds each request: its body read whole, within the read timeout
//! and the size limit, before it takes a turn (a client sending slowly
//! holds its connection, never a turn another request could have); at
//! most so many handled at once (the next ones wait their turn), and a
//! timeout on each from arrival until its answer starts (a request still
//! waiting for its turn then gets 503, one being handled 504, and its
//! blocking work is told to stop). An event stream goes on after its
//! answer started: it ends with its run.

use crate::serve::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Why a body too large is refused.
pub const TOO_LARGE: &str = "read the request: its body is larger than the server's limit; send less, or start the server with a larger \
     --max-body-mb";

/// The per-request limits, shared by every request.
#[derive(Clone, Debug)]
pub struct RequestLimits {
    timeout: Duration,
    body_timeout: Duration,
    slots: Arc<Semaphore>,
    max_body_bytes: usize,
}

impl RequestLimits {
    /// At most `max_requests` at once, each within `timeout`, none with a
    /// body larger than `max_body_bytes` or slower to arrive than
    /// `body_timeout`.
    pub fn new(timeout: Duration, body_timeout: Duration, max_requests: usize, max_body_bytes: usize) -> RequestLimits {
        RequestLimits { timeout, body_timeout, slots: Arc::new(Semaphore::new(max_requests.max(1))), max_body_bytes }
    }
}

/// Handles `request` within the limits.
pub async fn bound(State(limits): State<RequestLimits>, request: Request, next: Next) -> Response {
    // A body announced too large is refused before it is waited for (the
    // body's own limit only stops one that arrives).
    let announced = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|length| length > limits.max_body_bytes as u64) {
        return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE).into_response();
    }
    let deadline = tokio::time::Instant::now() + limits.timeout;
    let request = match read_body(&limits, request, deadline).await {
        Ok(request) => request,
        Err(refusal) => return refusal.into_response(),
    };
    let Ok(slot) = tokio::time::timeout_at(deadline, limits.slots.acquire()).await else {
        let message = "get a turn: the server is handling as many requests as --max-requests allows; retry later";
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message).into_response();
    };
    let _slot = slot.expect("the semaphore is never closed");
    match tokio::time::timeout_at(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            let message =
                format!("answer within {:?}: the request took longer than --request-timeout allows", limits.timeout);
            ApiError::new(StatusCode::GATEWAY_TIMEOUT, message).into_response()
        }
    }
}

/// `request` with its body read whole, within the size limit, the body
/// timeout and the request's `deadline`.
async fn read_body(
    limits: &RequestLimits,
    request: Request,
    deadline: tokio::time::Instant,
) -> Result<Request, ApiError> {
    let (parts, body) = request.into_parts();
    let until = deadline.min(tokio::time::Instant::now() + limits.body_timeout);
    let read = tokio::time::timeout_at(until, axum::body::to_bytes(body, limits.max_body_bytes)).await;
    let bytes = match read {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(error)) => {
            let too_large = std::error::Error::source(&error)
                .is_some_and(|cause| cause.is::<http_body_util::LengthLimitError>())
                || error.into_inner().is::<http_body_util::LengthLimitError>();
            return Err(match too_large {
                true => ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE),
                false => ApiError::bad_request("read the request's body: the connection failed before its end"),
            });
        }
        Err(_) => {
            let message = format!(
                "read the request's body within {:?}: it arrived too slowly (the server's --read-timeout, and \
                 --request-timeout, bound it)",
                limits.body_timeout.min(limits.timeout)
            );
            return Err(ApiError::new(StatusCode::REQUEST_TIMEOUT, message));
        }
    };
    Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
}
