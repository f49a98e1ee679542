//! The neuro-san HTTP client: `POST {base}/api/v1/{agent}/streaming_chat`,
//! read as `application/json-lines`, one `{"response": ChatMessage}` per
//! line. Every failure becomes an [`AgentErrorKind`] naming its cause.

use crate::agent::message::{ChatMessage, ChatRequest, StreamLine};
use crate::agent::reduce::reduce;
use crate::case::Connection;
use crate::credentials::redact_urls;
use crate::errors::AgentErrorKind;
use crate::net::{self, PREVIEW_BYTES, error_chain, read_up_to};
use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use std::path::PathBuf;
use std::time::Duration;

/// Where the neuro-san server is when nothing says otherwise.
pub const DEFAULT_AGENT_URL: &str = "http://localhost:8080";

/// How to reach neuro-san servers.
#[derive(Clone)]
pub struct HttpSettings {
    /// The server's base URL (default `http://localhost:8080`). Its scheme
    /// is replaced by each case's connection: `http` or `https`.
    pub base_url: String,
    /// A PEM file of extra CA certificates to trust for `https`.
    pub ca_file: Option<PathBuf>,
    /// The largest response accepted, in bytes (default 16 MiB).
    pub max_response_bytes: usize,
    /// How long the stream may stay silent before the request is abandoned
    /// (default 120 s).
    pub idle_timeout: Duration,
    /// How long connecting may take (default 10 s).
    pub connect_timeout: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            base_url: DEFAULT_AGENT_URL.to_owned(),
            ca_file: None,
            max_response_bytes: 16 << 20,
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl std::fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSettings")
            .field("base_url", &redact_urls(&self.base_url))
            .field("ca_file", &self.ca_file)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

/// A client for neuro-san servers.
#[derive(Clone)]
pub struct HttpAgents {
    client: reqwest::Client,
    base: reqwest::Url,
    settings: HttpSettings,
}

impl std::fmt::Debug for HttpAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpAgents").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl HttpAgents {
    /// Builds the client; fails on a bad URL or an unreadable CA file.
    pub fn new(settings: HttpSettings) -> Result<HttpAgents, String> {
        let base = base_url(&settings.base_url, DEFAULT_AGENT_URL)?;
        let client = net::client(net::ClientOptions {
            connect_timeout: settings.connect_timeout,
            ca_file: settings.ca_file.as_deref(),
            ..Default::default()
        })?;
        Ok(HttpAgents { client, base, settings })
    }

    /// The streaming_chat URL of `agent` over `connection` (`http` or
    /// `https`).
    pub fn url(&self, connection: &Connection, agent: &str) -> String {
        let mut url = self.base.clone();
        // Both schemes are special, so switching between them cannot fail.
        let _ = url.set_scheme(connection.name());
        let base = url.as_str().trim_end_matches('/');
        format!("{base}/api/v1/{agent}/streaming_chat")
    }

    /// The streaming_chat URL of `agent` on the configured server, with its
    /// own scheme.
    pub fn agent_url(&self, agent: &str) -> String {
        let base = self.base.as_str().trim_end_matches('/');
        format!("{base}/api/v1/{agent}/streaming_chat")
    }

    /// Sends one request and reads the whole stream.
    pub async fn chat(&self, url: &str, request: &ChatRequest) -> Result<Vec<ChatMessage>, AgentErrorKind> {
        let mut headers = metadata_headers(&request.metadata)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let body = request.to_wire().to_string();
        let send = self.client.post(url).headers(headers).body(body).send();
        let response = match tokio::time::timeout(self.settings.idle_timeout, send).await {
            Err(_) => return Err(AgentErrorKind::Stalled(self.settings.idle_timeout)),
            Ok(result) => result.map_err(classify_send_error)?,
        };
        if !response.status().is_success() {
            return Err(status_error(response, self.settings.idle_timeout).await);
        }
        self.read_stream(response).await
    }

    async fn read_stream(&self, response: reqwest::Response) -> Result<Vec<ChatMessage>, AgentErrorKind> {
        let cap = self.settings.max_response_bytes;
        let mut stream = response.bytes_stream();
        // The bytes of lines not yet ended. Each chunk is searched for
        // newlines once (never the bytes before it again, however long a
        // line grows), and the ended lines leave the buffer together.
        let mut buffer: Vec<u8> = Vec::new();
        let mut messages = Vec::new();
        let mut line_number = 0;
        let mut received = 0usize;
        loop {
            let chunk = match tokio::time::timeout(self.settings.idle_timeout, stream.next()).await {
                Err(_) => return Err(AgentErrorKind::Stalled(self.settings.idle_timeout)),
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(AgentErrorKind::Truncated(error_chain(&e))),
                Ok(Some(Ok(chunk))) => chunk,
            };
            received += chunk.len();
            if received > cap {
                return Err(AgentErrorKind::TooLarge(cap));
            }
            let mut scanned = buffer.len();
            buffer.extend_from_slice(&chunk);
            let mut start = 0;
            while let Some(offset) = buffer[scanned..].iter().position(|&b| b == b'\n') {
                let end = scanned + offset;
                line_number += 1;
                if let Some(message) = parse_line(&buffer[start..end], line_number)? {
                    messages.push(message);
                }
                start = end + 1;
                scanned = start;
            }
            buffer.drain(..start);
        }
        if !buffer.iter().all(u8::is_ascii_whitespace) {
            line_number += 1;
            // A last line without a newline is fine if it is whole.
            return match parse_line(&buffer, line_number) {
                Ok(message) => Ok(messages.into_iter().chain(message).collect()),
                Err(AgentErrorKind::Malformed { cause, .. }) if cause.contains("EOF") => {
                    Err(AgentErrorKind::Truncated(format!("the stream ended in the middle of line {line_number}")))
                }
                Err(other) => Err(other),
            };
        }
        Ok(messages)
    }
}

/// A request's metadata as HTTP headers.
pub(crate) fn metadata_headers(metadata: &[(String, String)]) -> Result<HeaderMap, AgentErrorKind> {
    let mut headers = HeaderMap::new();
    for (name, value) in metadata {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            AgentErrorKind::BadRequest(format!("metadata key `{name}` is not a valid HTTP header name"))
        })?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            AgentErrorKind::BadRequest(format!("metadata `{name}` has a value that is not a valid HTTP header"))
        })?;
        headers.insert(header, value);
    }
    Ok(headers)
}

/// The error for a response whose status is not a success, with the start
/// of its body (the rest is not read).
pub(crate) async fn status_error(response: reqwest::Response, idle_timeout: Duration) -> AgentErrorKind {
    let status = response.status();
    let body = match tokio::time::timeout(idle_timeout, read_up_to(response, PREVIEW_BYTES)).await {
        Ok(Ok((body, _))) => String::from_utf8_lossy(&body).into_owned(),
        _ => String::new(),
    };
    let body: String = body.chars().take(300).collect();
    if status == reqwest::StatusCode::NOT_FOUND {
        AgentErrorKind::NotFound(body)
    } else {
        AgentErrorKind::Status { status: status.as_u16(), body }
    }
}

/// Parses one line; blank lines are skipped.
fn parse_line(line: &[u8], number: usize) -> Result<Option<ChatMessage>, AgentErrorKind> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice::<StreamLine>(line).map(|l| Some(l.response)).map_err(|e| {
        let preview: String = String::from_utf8_lossy(line).chars().take(80).collect();
        AgentErrorKind::Malformed { line: number, cause: format!("{e} in `{preview}`") }
    })
}

/// `text` as a base URL with a host; the error suggests `example`.
pub(crate) fn base_url(text: &str, example: &str) -> Result<reqwest::Url, String> {
    let shown = redact_urls(text);
    let url = reqwest::Url::parse(text).map_err(|e| format!("invalid agent URL `{shown}`: {e} (e.g. {example})"))?;
    if url.cannot_be_a_base() || url.host().is_none() {
        return Err(format!("invalid agent URL `{shown}`: it has no host (e.g. {example})"));
    }
    Ok(url)
}

/// Why a request got no answer: TLS, nothing listening, or a connection
/// that broke.
pub(crate) fn classify_send_error(error: reqwest::Error) -> AgentErrorKind {
    let chain = error_chain(&error);
    let lower = chain.to_lowercase();
    if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        AgentErrorKind::Tls(chain)
    } else if error.is_connect() || error.is_timeout() {
        AgentErrorKind::Unreachable(chain)
    } else {
        AgentErrorKind::Truncated(chain)
    }
}

/// The built-in `http` or `https` connection: the run's neuro-san server
/// (`--agent-url`, `[agent] url`) over that scheme.
pub struct NeuroSanScheme {
    /// The run's client.
    pub agents: HttpAgents,
    /// `http` or `https`.
    pub connection: Connection,
}

impl crate::agent::transport::Transport for NeuroSanScheme {
    fn endpoint(&self, agent: &str) -> String {
        redact_urls(&self.agents.url(&self.connection, agent)).into_owned()
    }

    fn chat<'a>(&'a self, request: &'a ChatRequest) -> crate::agent::transport::Reply<'a> {
        Box::pin(async move {
            let url = self.agents.url(&self.connection, &request.agent);
            self.agents.chat(&url, request).await.map(reduce)
        })
    }
}

/// A named connection of type `neuro-san`: a server of its own (its URL,
/// CA and caps from `[connections.NAME]`), spoken to as `http`/`https` are.
impl crate::agent::transport::Transport for HttpAgents {
    fn endpoint(&self, agent: &str) -> String {
        redact_urls(&self.agent_url(agent)).into_owned()
    }

    fn chat<'a>(&'a self, request: &'a ChatRequest) -> crate::agent::transport::Reply<'a> {
        Box::pin(async move {
            let answer = HttpAgents::chat(self, &self.agent_url(&request.agent), request).await;
            answer.map(reduce).map_err(|error| match error {
                // Its URL and CA are the table's, not --agent-url's.
                AgentErrorKind::Unreachable(cause) => AgentErrorKind::ConnectionUnreachable(cause),
                AgentErrorKind::Tls(cause) => AgentErrorKind::ConnectionTls(cause),
                other => other,
            })
        })
    }
}
