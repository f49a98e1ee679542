//! Who may talk to the server from a browser: a page on another origin can
//! send requests to a server on loopback (a "simple" `fetch` with
//! `mode: "no-cors"` and `Content-Type: text/plain` needs no preflight),
//! and a name it controls can be made to resolve to 127.0.0.1 (DNS
//! rebinding). So every request is checked before anything else:
//!
//! - a server bound to loopback answers only requests whose `Host` is a
//!   loopback name (`localhost`, `127.0.0.1`, `[::1]`, with any port): a
//!   rebound name is refused (421);
//! - a request carrying an `Origin` (a browser's) is answered only when
//!   that origin is the server's own (`http://` and the `Host` it was sent
//!   to) or one `--allow-origin` names (403 otherwise);
//! - a `POST` must say its body is JSON (`Content-Type:
//!   application/json`), which no page can send to another origin without
//!   a preflight the server never grants (415 otherwise); promptfoo's
//!   webhook, whose client assay does not control, is spared this one (the
//!   `Origin` check still keeps pages out).

use crate::serve::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// What the checks need to know of the server.
#[derive(Clone, Debug)]
pub struct OriginPolicy {
    /// Whether the server is bound to loopback (then `Host` is checked).
    loopback: bool,
    /// The origins allowed besides the server's own, as written
    /// (`https://app.example`), without a trailing `/`.
    allowed: Arc<[String]>,
}

impl OriginPolicy {
    /// The policy of a server bound to loopback (or not), allowing
    /// `allowed` origins besides its own.
    pub fn new(loopback: bool, allowed: &[String]) -> OriginPolicy {
        let allowed = allowed.iter().map(|origin| origin.trim_end_matches('/').to_owned()).collect();
        OriginPolicy { loopback, allowed }
    }

    /// Why `method` with `headers` is refused, if it is.
    fn refusal(&self, method: &Method, path: &str, headers: &HeaderMap) -> Option<ApiError> {
        let host = headers.get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or_default();
        if self.loopback && !is_loopback_host(host) {
            return Some(ApiError::new(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "answer a request for the host `{host}`: this server is bound to loopback and answers only \
                     `localhost`, `127.0.0.1` or `[::1]` (a name that resolves here may be DNS rebinding)"
                ),
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default().trim_end_matches('/');
            let own = format!("http://{host}");
            if origin != own && !self.allowed.iter().any(|allowed| allowed == origin) {
                return Some(ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "answer a request from the web page origin `{origin}`: only the server's own origin may \
                         call it from a browser; start it with --allow-origin {origin} to allow that page"
                    ),
                ));
            }
        }
        if method == Method::POST && path != WEBHOOK_PATH {
            let content_type = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok());
            let essence = content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim();
            if !essence.eq_ignore_ascii_case("application/json") {
                let sent = content_type.map_or("none".to_owned(), |t| format!("`{t}`"));
                return Some(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!("read the request's body: its Content-Type is {sent}; send `application/json`"),
                ));
            }
        }
        None
    }
}

/// The endpoint whose client (promptfoo) may not say its body is JSON.
const WEBHOOK_PATH: &str = "/v1/promptfoo/webhook";

/// Whether `host` (a `Host` header: a name or address, maybe a port) names
/// this machine's loopback.
fn is_loopback_host(host: &str) -> bool {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return ip.is_loopback();
    }
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host
            .rsplit_once(':')
            .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host }),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Answers a refused request with its error; lets the others through.
pub async fn check(State(policy): State<OriginPolicy>, request: Request, next: Next) -> Response {
    match policy.refusal(request.method(), request.uri().path(), request.headers()) {
        Some(error) => error.into_response(),
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn loopback_names_are_known_with_or_without_a_port() {
        for host in ["localhost", "LOCALHOST:7878", "127.0.0.1:80", "127.1.2.3", "[::1]:7878", "::1"] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["", "evil.example:7878", "localhost.evil.example", "10.0.0.1:7878", "[::2]:1", "0.0.0.0"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn foreign_hosts_origins_and_bodies_are_refused() {
        let policy = OriginPolicy::new(true, &["https://app.example/".into()]);
        let json = (header::CONTENT_TYPE, "application/json; charset=utf-8");
        let status = |method: Method, pairs: &[(header::HeaderName, &str)]| {
            policy.refusal(&method, "/v1/check", &headers(pairs)).map(|e| e.into_response().status())
        };
        assert_eq!(status(Method::POST, &[(header::HOST, "127.0.0.1:7878"), json.clone()]), None);
        assert_eq!(
            status(Method::GET, &[(header::HOST, "rebound.example:7878")]),
            Some(StatusCode::MISDIRECTED_REQUEST)
        );
        let foreign = (header::ORIGIN, "http://evil.example");
        assert_eq!(
            status(Method::POST, &[(header::HOST, "127.0.0.1:7878"), foreign, json.clone()]),
            Some(StatusCode::FORBIDDEN)
        );
        let own = (header::ORIGIN, "http://127.0.0.1:7878");
        assert_eq!(status(Method::POST, &[(header::HOST, "127.0.0.1:7878"), own, json.clone()]), None);
        let allowed = (header::ORIGIN, "https://app.example");
        assert_eq!(status(Method::POST, &[(header::HOST, "localhost:7878"), allowed, json]), None);
        let text = (header::CONTENT_TYPE, "text/plain");
        assert_eq!(
            status(Method::POST, &[(header::HOST, "127.0.0.1:7878"), text]),
            Some(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(status(Method::POST, &[(header::HOST, "127.0.0.1:7878")]), Some(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        // Beyond loopback the token guards it, and any name may reach it.
        let open = OriginPolicy::new(false, &[]);
        assert!(
            open.refusal(&Method::GET, "/v1/plugins", &headers(&[(header::HOST, "assay.internal:7878")])).is_none()
        );
        let webhook = headers(&[(header::HOST, "127.0.0.1:7878")]);
        assert!(policy.refusal(&Method::POST, WEBHOOK_PATH, &webhook).is_none());
    }
}
