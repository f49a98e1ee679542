//! Request bodies: JSON read into a type, with a 400 that names where it
//! is wrong (`checks[2].key: missing field`) and a 413 that names the
//! limit.

use crate::serve::error::ApiError;
use crate::serve::limits::TOO_LARGE;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

/// A JSON body read into `T`.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE)
            } else {
                ApiError::bad_request(format!("read the request's body: {}", rejection.body_text()))
            }
        })?;
        parse(&bytes).map(JsonBody)
    }
}

/// `bytes` as JSON of `T`, or a 400 naming where it is wrong.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let not_json = |error: &dyn std::fmt::Display| {
        ApiError::bad_request(format!("read the request's body: it is not the JSON expected: {error}"))
    };
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut json).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path.is_empty() || path == "." || path == "?" {
            not_json(&inner)
        } else {
            ApiError::bad_request(format!("read the request's body: `{path}`: {inner}"))
        }
    })?;
    json.end().map_err(|e| not_json(&e))?;
    Ok(value)
}
