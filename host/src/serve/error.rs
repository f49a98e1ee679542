//! The API's errors and JSON answers: every error is `{"error": "..."}`
//! with its status, the message a fragment that reads after "failed to";
//! every answer is redacted JSON, errors included ([`redact_errors`], a
//! layer over every route: an error is made where no redactor is at hand).

use crate::report::Redactor;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// An error with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    /// 400: the request is wrong.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// 500: the server failed.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message }).to_string();
        let mut response = (self.status, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response.extensions_mut().insert(ErrorMessage(self.message));
        response
    }
}

/// An error answer's message, kept beside its body for [`redact_errors`].
#[derive(Clone)]
struct ErrorMessage(String);

/// Writes every error answer again, redacted (secrets, and the served
/// root's path: see [`Redactor::hiding_folder`]).
pub(crate) async fn redact_errors(
    axum::extract::State(redactor): axum::extract::State<Redactor>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let mut response = next.run(request).await;
    if let Some(ErrorMessage(message)) = response.extensions_mut().remove::<ErrorMessage>() {
        let body = serde_json::json!({ "error": redactor.redact(&message) }).to_string();
        *response.body_mut() = axum::body::Body::from(body);
        response.headers_mut().remove(header::CONTENT_LENGTH);
    }
    response
}

/// `value` as a 200 JSON answer, with the project's secrets hidden.
pub fn json_response(redactor: &Redactor, value: &impl serde::Serialize) -> Result<Response, ApiError> {
    let body = redactor.to_json(value, false).map_err(|e| ApiError::internal(format!("write the answer: {e}")))?;
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response())
}

/// Runs blocking work (a guest call, the file system) on tokio's blocking
/// threads, so that it never holds up the runtime's.
pub async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ApiError::internal(format!("finish the request: {e}")))
}

/// [`blocking`] work that learns when its request is given up (answered
/// 504, or its client gone): the flag it is handed is set then, and work
/// of many steps checks it between steps and stops.
pub async fn blocking_while_wanted<T: Send + 'static>(
    work: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<T, ApiError> {
    /// Sets the flag when the request's future is dropped before the work
    /// is done.
    struct GivenUp(Arc<AtomicBool>);
    impl Drop for GivenUp {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let given_up = Arc::new(AtomicBool::new(false));
    let _guard = GivenUp(given_up.clone());
    blocking(move || work(&given_up)).await
}
