//! The `openai` connection: an OpenAI-compatible chat-completions endpoint
//! (vLLM, Ollama, LiteLLM, llama.cpp's server, the hosted APIs). One turn
//! is one `POST {url}/chat/completions`, answered as one JSON completion or,
//! with `stream`, as server-sent events read as they arrive
//! (`stream.rs`); what goes in and comes out is `wire.rs`.
//!
//! The caps are neuro-san's: the answer may stay silent for the idle
//! timeout (until its head arrives, then between any two pieces of its
//! body) and may not pass the size cap; the caller's timeout cancels the
//! request by dropping the future. A busy server (429, 5xx) is asked again
//! after a doubling backoff, or after the wait its `Retry-After` asks for.
//! The API key goes out as a bearer token and is never shown.

pub(crate) mod stream;
pub(crate) mod wire;

use crate::agent::message::ChatRequest;
use crate::agent::reduce::AgentResponse;
use crate::agent::transport::neuro_san::{base_url, classify_send_error, metadata_headers};
use crate::agent::transport::openai::stream::EventStream;
use crate::agent::transport::openai::wire::{Answer, request_messages};
use crate::agent::transport::{Reply, Transport};
use crate::credentials::{debug_key, redact_urls};
use crate::errors::AgentErrorKind;
use crate::net::{self, PREVIEW_BYTES, read_up_to};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How long the rest of a stream's body may take to end after its
/// `data: [DONE]`: reading it lets the connection be reused, and a server
/// that keeps the stream open after it must not cost an answer.
const END_OF_STREAM_GRACE: Duration = Duration::from_millis(100);

/// How to reach one OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct OpenAiSettings {
    /// The API base: requests go to `{url}/chat/completions` (default
    /// `http://localhost:11434/v1`, Ollama's).
    pub url: String,
    /// The model when a case's agent does not name it.
    pub model: Option<String>,
    /// Whether a case's `agent` names the model (default true).
    pub model_from_agent: bool,
    /// The API key, sent as a bearer token.
    pub api_key: Option<String>,
    /// The environment variable the key was read from, for messages.
    pub api_key_env: Option<String>,
    /// A system message that opens every request.
    pub system: Option<String>,
    /// Whether answers stream as server-sent events (default false).
    pub stream: bool,
    /// The sampling temperature.
    pub temperature: Option<f64>,
    /// The most tokens an answer may have.
    pub max_tokens: Option<u64>,
    /// Whether to ask for JSON answers (`response_format`
    /// `{"type": "json_object"}`).
    pub json_mode: bool,
    /// Retries after a 429 or 5xx answer (default 3).
    pub retries: u32,
    /// The first wait before a retry (default 500 ms), doubled after each.
    pub backoff: Duration,
    /// The largest answer accepted, in bytes (default 16 MiB).
    pub max_response_bytes: usize,
    /// How long the answer may stay silent (default 120 s).
    pub idle_timeout: Duration,
    /// How long connecting may take (default 10 s).
    pub connect_timeout: Duration,
    /// A PEM file of extra CA certificates to trust.
    pub ca_file: Option<PathBuf>,
    /// More parameters of every request's body (promptfoo's provider
    /// `config`: `seed`, `tools`, `passthrough`…); the body's own keys
    /// (`model`, `messages`, `stream`) are not overridden.
    pub body: Map<String, Value>,
    /// US dollars per prompt token and per completion token: with them, an
    /// answer's cost is its usage priced (promptfoo's `cost`).
    pub prices: Option<(f64, f64)>,
    /// Whether a request's text that is a list of chat messages (JSON, or
    /// YAML starting `- role:`) is sent as those messages, as promptfoo's
    /// openai provider sends a chat-format prompt (a new conversation only).
    pub chat_prompts: bool,
    /// Whether the answer's text is what promptfoo's openai provider makes
    /// of it ([`crate::agent::transport::openai::wire`]'s `promptfoo_output`: tool calls
    /// and function calls as JSON, a reasoning model's thinking before its
    /// content), for promptfoo's assertions; else the content, verbatim.
    pub promptfoo_output: bool,
}

impl Default for OpenAiSettings {
    fn default() -> Self {
        OpenAiSettings {
            url: "http://localhost:11434/v1".to_owned(),
            model: None,
            model_from_agent: true,
            api_key: None,
            api_key_env: None,
            system: None,
            stream: false,
            temperature: None,
            max_tokens: None,
            json_mode: false,
            retries: 3,
            backoff: Duration::from_millis(500),
            max_response_bytes: 16 << 20,
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            ca_file: None,
            body: Map::new(),
            prices: None,
            chat_prompts: false,
            promptfoo_output: false,
        }
    }
}

impl std::fmt::Debug for OpenAiSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiSettings")
            .field("url", &redact_urls(&self.url))
            .field("model", &self.model)
            .field("model_from_agent", &self.model_from_agent)
            .field("api_key", &debug_key(&self.api_key))
            .field("api_key_env", &self.api_key_env)
            .field("stream", &self.stream)
            .field("retries", &self.retries)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("idle_timeout", &self.idle_timeout)
            .field("body", &self.body.keys().collect::<Vec<_>>())
            .field("chat_prompts", &self.chat_prompts)
            .field("promptfoo_output", &self.promptfoo_output)
            .finish_non_exhaustive()
    }
}

/// A client for one OpenAI-compatible endpoint.
pub struct OpenAiAgents {
    client: reqwest::Client,
    completions_url: String,
    authorization: Option<HeaderValue>,
    settings: OpenAiSettings,
}

impl std::fmt::Debug for OpenAiAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiAgents").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// Why one attempt failed.
enum Failure {
    /// The server was busy: worth asking again, after `wait` if it said.
    Busy { error: AgentErrorKind, wait: Option<Duration> },
    /// Not worth asking again.
    Final(AgentErrorKind),
}

impl From<AgentErrorKind> for Failure {
    fn from(error: AgentErrorKind) -> Failure {
        Failure::Final(error)
    }
}

impl OpenAiAgents {
    /// Builds the client; fails on a bad URL, a key that cannot be a
    /// header, a missing model, or an unreadable CA file.
    pub fn new(settings: OpenAiSettings) -> Result<OpenAiAgents, String> {
        base_url(&settings.url, "http://localhost:11434/v1")?;
        if !settings.model_from_agent && settings.model.is_none() {
            return Err("it has no `model`, and `model_from_agent = false` says the case's agent is not one\n\n\
                        Consider `model = \"NAME\"`"
                .into());
        }
        if settings.temperature.is_some_and(|t| !t.is_finite()) {
            return Err("`temperature` is not a finite number".into());
        }
        let authorization = match &settings.api_key {
            None => None,
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    let variable = settings.api_key_env.as_deref().unwrap_or("api_key_env");
                    format!("the API key in `{variable}` cannot be sent: it holds characters an HTTP header may not")
                })?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        let client = net::client(net::ClientOptions {
            connect_timeout: settings.connect_timeout,
            ca_file: settings.ca_file.as_deref(),
            ..Default::default()
        })?;
        let completions_url = format!("{}/chat/completions", settings.url.trim_end_matches('/'));
        Ok(OpenAiAgents { client, completions_url, authorization, settings })
    }

    /// The model a request for `agent` asks for.
    pub fn model<'a>(&'a self, agent: &'a str) -> &'a str {
        match &self.settings.model {
            Some(model) if !self.settings.model_from_agent || agent.is_empty() => model,
            _ => agent,
        }
    }

    /// Sends one turn, asking again while the server is busy and retries
    /// are left, and reads the whole answer.
    pub async fn chat(&self, request: &ChatRequest) -> Result<AgentResponse, AgentErrorKind> {
        let model = self.model(&request.agent);
        let body = self.body(model, request)?.to_string();
        let mut headers = metadata_headers(&request.metadata)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(authorization) = &self.authorization {
            headers.insert(AUTHORIZATION, authorization.clone());
        }
        let mut backoff = self.settings.backoff;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.attempt(&headers, &body, model).await {
                Ok(answer) => {
                    let json_schema = self.settings.body.get("response_format").and_then(|f| f.get("type"))
                        == Some(&Value::String("json_schema".into()));
                    let promptfoo_text = match self.settings.promptfoo_output {
                        true => answer.promptfoo_output(json_schema),
                        false => None,
                    };
                    let mut response = answer.into_response(request)?;
                    if let Some((text, is_json)) = promptfoo_text {
                        response.text = Some(text);
                        response.text_is_json = is_json;
                    }
                    if let (Some((input, output)), Some(usage)) = (self.settings.prices, response.usage) {
                        response.cost =
                            Some(input * usage.prompt_tokens as f64 + output * usage.completion_tokens as f64);
                    }
                    return Ok(response);
                }
                Err(Failure::Busy { wait, .. }) if attempts <= self.settings.retries => {
                    tokio::time::sleep(wait.map_or(backoff, |w| w.min(MAX_RETRY_AFTER))).await;
                    backoff *= 2;
                }
                Err(Failure::Busy { error, .. }) if attempts > 1 => {
                    return Err(AgentErrorKind::Retried { attempts, last: Box::new(error) });
                }
                Err(Failure::Busy { error, .. } | Failure::Final(error)) => return Err(error),
            }
        }
    }

    /// The request's JSON body.
    fn body(&self, model: &str, request: &ChatRequest) -> Result<Value, AgentErrorKind> {
        let settings = &self.settings;
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        let chat = match (settings.chat_prompts, &request.chat_context) {
            (true, None) => chat_messages(&request.text)?,
            _ => None,
        };
        let messages = match chat {
            Some(mut messages) => {
                if let Some(system) = &settings.system {
                    messages.insert(0, json!({ "role": "system", "content": system }));
                }
                messages
            }
            None => request_messages(settings.system.as_deref(), request)?,
        };
        body.insert("messages".into(), Value::Array(messages));
        if let Some(temperature) = settings.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(max_tokens) = settings.max_tokens {
            body.insert("max_tokens".into(), json!(max_tokens));
        }
        if settings.json_mode {
            body.insert("response_format".into(), json!({ "type": "json_object" }));
        }
        if settings.stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({ "include_usage": true }));
        }
        for (key, value) in &settings.body {
            if !matches!(key.as_str(), "model" | "messages" | "stream" | "stream_options") {
                body.insert(key.clone(), value.clone());
            }
        }
        Ok(Value::Object(body))
    }

    /// One request and its answer.
    async fn attempt(&self, headers: &HeaderMap, body: &str, model: &str) -> Result<Answer, Failure> {
        let idle = self.settings.idle_timeout;
        let send = self.client.post(&self.completions_url).headers(headers.clone()).body(body.to_owned()).send();
        let response = match tokio::time::timeout(idle, send).await {
            Err(_) => return Err(AgentErrorKind::Stalled(idle).into()),
            Ok(Err(error)) => {
                return Err(match classify_send_error(error) {
                    AgentErrorKind::Unreachable(cause) => AgentErrorKind::ConnectionUnreachable(cause),
                    AgentErrorKind::Tls(cause) => AgentErrorKind::ConnectionTls(cause),
                    other => other,
                }
                .into());
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        if !response.status().is_success() {
            return Err(self.refusal(status, response, model).await);
        }
        // A server that ignores `stream` answers with one JSON body: read it
        // as such.
        let media_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(|v| {
            let media_type = v.split(';').next().unwrap_or_default();
            media_type.trim().to_ascii_lowercase()
        });
        let is_json = media_type.as_deref() == Some("application/json");
        let mut body = capped_body(response, &self.settings)?;
        if self.settings.stream && !is_json { read_events(&mut body).await } else { read_completion(&mut body).await }
            .map_err(Failure::Final)
    }

    /// What an error status means, with the start of its body.
    async fn refusal(&self, status: u16, response: reqwest::Response, model: &str) -> Failure {
        let wait = retry_after(response.headers());
        // Only its start is shown: the rest is not read.
        let body = match tokio::time::timeout(self.settings.idle_timeout, read_up_to(response, PREVIEW_BYTES)).await {
            Ok(Ok((body, _))) => String::from_utf8_lossy(&body).chars().take(300).collect(),
            _ => String::new(),
        };
        let error = match status {
            401 | 403 => AgentErrorKind::Unauthorized { status, body, hint: self.key_hint() },
            404 => AgentErrorKind::NoModel { model: model.to_owned(), body },
            _ => AgentErrorKind::Status { status, body },
        };
        if status == 429 || (500..600).contains(&status) {
            Failure::Busy { error, wait }
        } else {
            Failure::Final(error)
        }
    }

    /// What to check when the server refuses the credentials.
    fn key_hint(&self) -> String {
        match (&self.settings.api_key_env, &self.settings.api_key) {
            (None, _) => "Consider `api_key_env = \"NAME\"` in the connection's table of assay.toml, naming the \
                          environment variable that holds the key"
                .to_owned(),
            (Some(variable), None) => {
                format!("Consider setting `{variable}` (the connection's api_key_env): it is not set")
            }
            (Some(variable), Some(_)) => {
                format!("Consider checking the key in `{variable}` (the connection's api_key_env)")
            }
        }
    }
}

impl Transport for OpenAiAgents {
    fn endpoint(&self, agent: &str) -> String {
        let url = redact_urls(&self.completions_url).into_owned();
        match self.model(agent) {
            model if model == agent => url,
            model => format!("{url} (model `{model}`)"),
        }
    }

    fn chat<'a>(&'a self, request: &'a ChatRequest) -> Reply<'a> {
        Box::pin(OpenAiAgents::chat(self, request))
    }
}

/// A `Retry-After` in seconds (its date form is left to the backoff).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<f64>().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// A response's body, piece by piece, within the size cap and the idle
/// timeout.
struct CappedBody<S> {
    pieces: S,
    received: usize,
    cap: usize,
    idle: Duration,
}

/// The body of `response`; fails at once when the response says it is
/// larger than the cap.
fn capped_body(
    response: reqwest::Response,
    settings: &OpenAiSettings,
) -> Result<CappedBody<impl Stream<Item = reqwest::Result<Bytes>> + Unpin>, Failure> {
    let cap = settings.max_response_bytes;
    if response.content_length().is_some_and(|length| length > cap as u64) {
        return Err(AgentErrorKind::TooLarge(cap).into());
    }
    Ok(CappedBody { pieces: response.bytes_stream(), received: 0, cap, idle: settings.idle_timeout })
}

impl<S: Stream<Item = reqwest::Result<Bytes>> + Unpin> CappedBody<S> {
    /// The next piece; none at the end.
    async fn next(&mut self) -> Result<Option<Bytes>, AgentErrorKind> {
        match tokio::time::timeout(self.idle, self.pieces.next()).await {
            Err(_) => Err(AgentErrorKind::Stalled(self.idle)),
            Ok(None) => Ok(None),
            Ok(Some(Err(e))) => Err(AgentErrorKind::Truncated(net::error_chain(&e))),
            Ok(Some(Ok(piece))) => {
                self.received += piece.len();
                if self.received > self.cap {
                    return Err(AgentErrorKind::TooLarge(self.cap));
                }
                Ok(Some(piece))
            }
        }
    }
}

/// Reads one JSON chat completion.
async fn read_completion<S>(body: &mut CappedBody<S>) -> Result<Answer, AgentErrorKind>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    let mut bytes = Vec::new();
    while let Some(piece) = body.next().await? {
        bytes.extend_from_slice(&piece);
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        if e.is_eof() && !bytes.is_empty() {
            AgentErrorKind::Truncated(format!("the body ended in the middle of its JSON, after {} bytes", bytes.len()))
        } else {
            let preview: String = String::from_utf8_lossy(&bytes).chars().take(80).collect();
            AgentErrorKind::MalformedBody(format!("it is not JSON ({e}): `{preview}`"))
        }
    })?;
    Answer::from_completion(&value)
}

/// Reads a stream of chunks up to its `data: [DONE]`.
async fn read_events<S>(body: &mut CappedBody<S>) -> Result<Answer, AgentErrorKind>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    let mut events = EventStream::default();
    let mut answer = Answer::default();
    while let Some(piece) = body.next().await? {
        for event in events.feed(&piece)? {
            if event.data.trim() == "[DONE]" {
                let _ =
                    tokio::time::timeout(END_OF_STREAM_GRACE, async { while let Ok(Some(_)) = body.next().await {} })
                        .await;
                return Ok(answer);
            }
            let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
                let preview: String = event.data.chars().take(80).collect();
                AgentErrorKind::Malformed { line: event.line, cause: format!("{e} in `{preview}`") }
            })?;
            answer.add_chunk(&chunk, event.line)?;
        }
    }
    let cut = events.unfinished().unwrap_or_else(|| "the event stream ended before its `data: [DONE]`".to_owned());
    Err(AgentErrorKind::Truncated(cut))
}

/// The messages of a chat-format prompt, as promptfoo's `parseChatPrompt`
/// reads them: text that starts `- role:` is YAML, and text that is a JSON
/// list is the list; text that looks like JSON (`[…]`, `{…}`) but is not is
/// an error; anything else is not a chat prompt (`None`).
fn chat_messages(text: &str) -> Result<Option<Vec<Value>>, AgentErrorKind> {
    let trimmed = text.trim();
    let parsed: Result<Value, String> = match trimmed.starts_with("- role:") {
        true => yaml_serde::from_str(trimmed).map_err(|e| format!("it is not valid YAML: {e}")),
        false => serde_json::from_str(trimmed).map_err(|e| format!("it is not valid JSON: {e}")),
    };
    let looks_json =
        (trimmed.starts_with('[') && trimmed.ends_with(']')) || (trimmed.starts_with('{') && trimmed.ends_with('}'));
    match parsed {
        Ok(Value::Array(messages)) if messages.iter().all(|m| m.get("role").is_some_and(Value::is_string)) => {
            Ok(Some(messages))
        }
        Ok(Value::Array(_)) => Err(AgentErrorKind::BadRequest(
            "the chat-format prompt is a list whose items are not all messages (`{role, content}`)".into(),
        )),
        Err(why) if looks_json || trimmed.starts_with("- role:") => {
            Err(AgentErrorKind::BadRequest(format!("the chat-format prompt: {why}")))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_shows_no_key_and_no_url_password() {
        let settings = OpenAiSettings {
            url: "http://user:s3cret@127.0.0.1:9/v1".into(),
            api_key: Some("sk-live-0123".into()),
            api_key_env: Some("OPENAI_API_KEY".into()),
            ..OpenAiSettings::default()
        };
        let agents = OpenAiAgents::new(settings).unwrap();
        let debug = format!("{agents:?}");
        assert!(!debug.contains("s3cret") && !debug.contains("sk-live"), "{debug}");
        assert!(debug.contains("api_key: Some(\"[redacted]\")"), "{debug}");
        assert_eq!(agents.endpoint("m"), "http://[redacted]@127.0.0.1:9/v1/chat/completions");
    }

    #[test]
    fn the_model_is_the_agent_unless_the_connection_says_otherwise() {
        let fixed = OpenAiSettings { model: Some("llama3".into()), ..OpenAiSettings::default() };
        let agents = OpenAiAgents::new(fixed.clone()).unwrap();
        assert_eq!((agents.model("gpt-x"), agents.model("")), ("gpt-x", "llama3"));
        let agents = OpenAiAgents::new(OpenAiSettings { model_from_agent: false, ..fixed }).unwrap();
        assert_eq!(agents.model("gpt-x"), "llama3");
        assert_eq!(agents.endpoint("gpt-x"), "http://localhost:11434/v1/chat/completions (model `llama3`)");
    }
}
