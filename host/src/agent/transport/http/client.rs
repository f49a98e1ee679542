//! [`HttpApi`]: the transport of a `type = "http"` connection, built once
//! from its `[connections.NAME]` table (templates parsed, queries
//! compiled, the client made) and then asked one turn at a time.

use crate::agent::HttpSettings;
use crate::agent::message::ChatRequest;
use crate::agent::reduce::AgentResponse;
use crate::agent::transport::http::extract::Queries;
use crate::agent::transport::http::read::{Caps, Format, read};
use crate::agent::transport::neuro_san::{metadata_headers, status_error};
use crate::agent::transport::{Reply, Transport};
use crate::case::CaseEnv;
use crate::config::HttpConnection;
use crate::credentials::redact_urls;
use crate::errors::AgentErrorKind;
use crate::net;
use crate::template::{Encoding, RequestTemplate};
use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Method, Url};
use std::path::Path;
use std::time::Duration;

/// What the turn's placeholders read when a template is checked at load.
fn sample_request() -> ChatRequest {
    ChatRequest { agent: "agent".into(), ..ChatRequest::default() }
}

/// A connection to any JSON-over-HTTP API (`type = "http"`).
pub struct HttpApi {
    client: reqwest::Client,
    method: Method,
    url: RequestTemplate,
    headers: Vec<(HeaderName, RequestTemplate)>,
    body: Option<RequestTemplate>,
    queries: Queries,
    format: Format,
    caps: Caps,
}

impl std::fmt::Debug for HttpApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = redact_urls(&self.url.shown(&sample_request())).into_owned();
        f.debug_struct("HttpApi")
            .field("method", &self.method)
            .field("url", &url)
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl HttpApi {
    /// Builds the connection from its table: `env` is what `{{env.NAME}}`
    /// may read; `ca_file` and `idle_timeout` are the table's `ca` and
    /// `idle_timeout_secs`, read (default: no extra CA, 120 s). The error
    /// names the setting that is wrong.
    pub fn new(
        config: &HttpConnection,
        env: &CaseEnv,
        ca_file: Option<&Path>,
        idle_timeout: Option<Duration>,
    ) -> Result<HttpApi, String> {
        let defaults = HttpSettings::default();
        let template = |setting: &str, source: &str, encoding: Encoding| {
            RequestTemplate::parse(source, encoding, env).map_err(|message| format!("`{setting}`: {message}"))
        };
        let url = template("url", &config.url, Encoding::Url)?;
        check_url(&url)?;
        let method = match config.method.as_deref() {
            None => Method::POST,
            Some(written) => Method::from_bytes(written.to_ascii_uppercase().as_bytes())
                .map_err(|_| format!("`method = \"{written}\"` is not an HTTP method (e.g. POST, PUT, GET)"))?,
        };
        let body = config.body.as_deref().map(|body| template("body", body, Encoding::Json)).transpose()?;
        match &body {
            Some(body) => check_body(body, config.body.as_deref().unwrap_or_default())?,
            None if matches!(method, Method::POST | Method::PUT | Method::PATCH) => {
                return Err(format!(
                    "it has no `body`: a {method} sends the turn in its body, a template\n\nConsider body = '{{\"question\": {{{{text}}}}}}'"
                ));
            }
            None => {}
        }
        let mut headers = Vec::new();
        for (name, value) in &config.headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("`headers`: `{name}` is not a valid HTTP header name"))?;
            let setting = format!("headers.{name}");
            let value = template(&setting, value, Encoding::Text)?;
            let sample = value.render(&sample_request()).map_err(|e| format!("`{setting}`: {e}"))?;
            HeaderValue::from_str(&sample).map_err(|_| {
                format!("`headers.{name}` is not a valid HTTP header value (no newlines or control characters)")
            })?;
            headers.push((header, value));
        }
        let queries = Queries::parse(
            config.text.as_deref(),
            config.structure.as_deref(),
            config.sly_data.as_deref(),
            config.chat_context.as_deref(),
        )?;
        let format = Format::parse(config.response.as_deref())?;
        let idle = idle_timeout.unwrap_or(defaults.idle_timeout);
        let max_bytes = config.max_response_mb.map_or(defaults.max_response_bytes, |mb| mb << 20);
        let client = net::client(net::ClientOptions {
            connect_timeout: defaults.connect_timeout,
            ca_file,
            ..Default::default()
        })?;
        Ok(HttpApi { client, method, url, headers, body, queries, format, caps: Caps { max_bytes, idle } })
    }

    async fn ask(&self, request: &ChatRequest) -> Result<AgentResponse, AgentErrorKind> {
        let url = self.url.render(request).map_err(|e| bad_request("the url", e))?;
        let mut headers = metadata_headers(&request.metadata)?;
        if self.body.is_some() {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        for (name, template) in &self.headers {
            let rendered = template.render(request).map_err(|e| bad_request(&format!("the header `{name}`"), e))?;
            let mut value = HeaderValue::from_str(&rendered).map_err(|_| {
                AgentErrorKind::BadRequest(format!(
                    "the header `{name}` of this turn is not a valid HTTP header value (a newline or control character from a placeholder?)"
                ))
            })?;
            value.set_sensitive(template.reads_env());
            headers.insert(name.clone(), value);
        }
        let mut builder = self.client.request(self.method.clone(), url).headers(headers);
        if let Some(body) = &self.body {
            let rendered = body.render(request).map_err(|e| bad_request("the body", e))?;
            if body.has_tags()
                && let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&rendered)
            {
                return Err(bad_request("the body", format!("it is not JSON for this turn: {e}")));
            }
            builder = builder.body(rendered);
        }
        let response = match tokio::time::timeout(self.caps.idle, builder.send()).await {
            Err(_) => return Err(AgentErrorKind::Stalled(self.caps.idle)),
            Ok(result) => result.map_err(classify_send_error)?,
        };
        if !response.status().is_success() {
            return Err(status_error(response, self.caps.idle).await);
        }
        let values = read(response, self.format, self.caps).await?;
        self.queries.extract(&values, self.format.unit())
    }
}

impl Transport for HttpApi {
    fn endpoint(&self, agent: &str) -> String {
        let request = ChatRequest { agent: agent.to_owned(), ..ChatRequest::default() };
        redact_urls(&self.url.shown(&request)).into_owned()
    }

    fn chat<'a>(&'a self, request: &'a ChatRequest) -> Reply<'a> {
        Box::pin(self.ask(request))
    }
}

/// The URL must be http(s) with a host whatever its placeholders hold.
fn check_url(url: &RequestTemplate) -> Result<(), String> {
    let written = url.render(&sample_request()).map_err(|e| format!("`url`: {e}"))?;
    let shown = redact_urls(&url.shown(&sample_request())).into_owned();
    let parsed = Url::parse(&written)
        .map_err(|e| format!("`url`: `{shown}` is not a URL: {e} (e.g. http://localhost:9000/chat)"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(format!(
            "`url`: `{shown}` is not an http or https URL with a host (e.g. http://localhost:9000/chat)"
        ));
    }
    Ok(())
}

/// The body must be JSON once its placeholders are filled. Every
/// placeholder is one JSON value, so a body without tags that is JSON for
/// one turn is JSON for all (one with tags is checked again every turn).
fn check_body(body: &RequestTemplate, written: &str) -> Result<(), String> {
    let filled = body.render(&sample_request()).map_err(|e| format!("`body`: {e}"))?;
    serde_json::from_str::<serde_json::Value>(&filled).map(drop).map_err(|e| {
        let hint = if written.contains("\"{{") {
            "\n\nConsider writing placeholders bare: `{{text}}` becomes a quoted JSON string, so `\"{{text}}\"` is one string too many"
        } else {
            ""
        };
        format!("`body` is not JSON once its placeholders are filled: {e}{hint}")
    })
}

/// A turn's request that its templates could not be filled for: `what`
/// (the url, a header, the body) and why.
fn bad_request(what: &str, why: String) -> AgentErrorKind {
    AgentErrorKind::BadRequest(format!("{what} of this turn could not be filled: {why}"))
}

/// A failed send, as neuro-san's client classifies it, with this
/// connection's advice. The error loses its URL: the endpoint is shown
/// already, without the values of `{{env.NAME}}`.
fn classify_send_error(error: reqwest::Error) -> AgentErrorKind {
    match crate::agent::transport::neuro_san::classify_send_error(error.without_url()) {
        AgentErrorKind::Unreachable(cause) => AgentErrorKind::ConnectionUnreachable(cause),
        AgentErrorKind::Tls(cause) => AgentErrorKind::ConnectionTls(cause),
        other => other,
    }
}
