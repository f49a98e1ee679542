//! Components at URLs: fetched over https (plain http only from this
//! machine), following at most five redirects and none that leaves https
//! for plain http elsewhere, at most [`MAX_COMPONENT_BYTES`] read.

use super::reference::is_this_machine;
use crate::errors::FetchError;
use crate::net::{self, error_chain};
use crate::sandbox::MAX_COMPONENT_BYTES;
use futures_util::StreamExt as _;
use std::time::Duration;

/// Whether `url` may be fetched: https, or http on this machine.
fn allowed(url: &reqwest::Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && is_this_machine(url.host_str().unwrap_or_default()))
}

/// The bytes at `url`.
pub(crate) async fn download(url: &reqwest::Url) -> Result<Vec<u8>, FetchError> {
    let network = |message: String| FetchError::Network { reference: url.to_string(), message };
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= 5 {
            attempt.error("more than 5 redirects")
        } else if !allowed(attempt.url()) {
            let to = attempt.url().to_string();
            attempt.error(format!("a redirect to {to}, which is plain http to another machine"))
        } else {
            attempt.follow()
        }
    });
    let client = net::client(net::ClientOptions {
        read_timeout: Some(Duration::from_secs(60)),
        redirect: Some(policy),
        purpose: "the download's",
        ..Default::default()
    })
    .map_err(network)?;
    let response = client.get(url.clone()).send().await.map_err(|e| network(error_chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(network(format!("the server answered {status}")));
    }
    let too_large = |size: u64| FetchError::TooLarge { reference: url.to_string(), size, max: MAX_COMPONENT_BYTES };
    if let Some(length) = response.content_length()
        && length > MAX_COMPONENT_BYTES
    {
        return Err(too_large(length));
    }
    let mut bytes = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| network(error_chain(&e)))?;
        if (bytes.len() + chunk.len()) as u64 > MAX_COMPONENT_BYTES {
            return Err(too_large((bytes.len() + chunk.len()) as u64));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}
