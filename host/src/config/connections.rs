//! `[connections.NAME]`: the agents a case reaches by a name of the
//! project's, one table per connection, its `type` saying which kind:
//!
//! ```toml
//! [connections.gpt]
//! type = "openai"                      # openai | http | command | neuro-san
//! url = "http://localhost:11434/v1"
//! model = "llama3"
//!
//! [connections.orders]
//! type = "http"
//! url = "http://localhost:9000/chat"
//! body = '{"question": {{text}}}'
//! text = "$.answer"
//!
//! [connections.script]
//! type = "command"
//! command = ["python3", "agent.py"]
//!
//! [connections.staging]
//! type = "neuro-san"
//! url = "https://staging.example.com"
//! ```
//!
//! Each table is read by its type's own struct (unknown keys are errors
//! naming the connection and suggesting the nearest key), after the file's
//! other sections, so that one bad connection names itself.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The kinds of connection, by `type`.
pub const CONNECTION_TYPES: &[&str] = &["openai", "http", "command", "neuro-san"];

/// One `[connections.NAME]`, read by its `type`.
#[derive(Clone, Debug, PartialEq)]
pub enum ConnectionConfig {
    /// An OpenAI-compatible chat-completions endpoint.
    OpenAi(OpenAiConnection),
    /// Any JSON-over-HTTP API, by templates and JSONPath.
    Http(HttpConnection),
    /// A local command: one JSON request per line on stdin, one JSON
    /// response per line on stdout.
    Command(CommandConnection),
    /// A neuro-san server of its own.
    NeuroSan(NeuroSanConnection),
}

/// `type = "openai"`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiConnection {
    /// The API base: requests go to `{url}/chat/completions`.
    pub url: String,
    /// The model (a case's `agent` overrides it unless `model_from_agent =
    /// false`).
    pub model: Option<String>,
    /// Whether a case's `agent` names the model (default true).
    #[serde(default = "yes")]
    pub model_from_agent: bool,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// A system message that opens every conversation.
    pub system: Option<String>,
    /// Whether answers stream as server-sent events (default false).
    #[serde(default)]
    pub stream: bool,
    /// The sampling temperature.
    pub temperature: Option<f64>,
    /// The most tokens an answer may have.
    pub max_tokens: Option<u64>,
    /// Request JSON answers (`response_format = {"type": "json_object"}`).
    #[serde(default)]
    pub json_mode: bool,
    /// Retries after a 429 or 5xx answer (default 3), after a doubling
    /// backoff from 500 ms or the wait the server's `Retry-After` asks for
    /// (up to 60 s).
    pub retries: Option<u32>,
    /// The response size cap, in MiB (default 16).
    pub max_response_mb: Option<usize>,
    /// How long the answer may stay silent, in seconds (default 120): until
    /// its head arrives, then between any two pieces of its body.
    pub idle_timeout_secs: Option<f64>,
    /// A PEM file of CA certificates to trust for https (relative to the
    /// configuration file's folder).
    pub ca: Option<PathBuf>,
}

/// `type = "http"`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConnection {
    /// Where requests go.
    pub url: String,
    /// The HTTP method (default POST).
    pub method: Option<String>,
    /// Extra headers; values are templates.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The request body, a template: each `{{…}}` becomes JSON.
    pub body: Option<String>,
    /// A JSONPath into the response for the answer's text.
    pub text: Option<String>,
    /// A JSONPath into the response for the answer's structure.
    pub structure: Option<String>,
    /// A JSONPath into the response for the sly_data it returns (carried
    /// into the next turn's `{{sly_data…}}`, as neuro-san's is).
    pub sly_data: Option<String>,
    /// A JSONPath into the response for the conversation state it returns
    /// (the next turn's `{{chat_context}}`).
    pub chat_context: Option<String>,
    /// How the response is read: `json` (default), `json-lines`, `sse`.
    pub response: Option<String>,
    /// A PEM file of CA certificates to trust for https.
    pub ca: Option<PathBuf>,
    /// The response size cap, in MiB (default 16).
    pub max_response_mb: Option<usize>,
    /// How long the answer may stay silent, in seconds (default 120).
    pub idle_timeout_secs: Option<f64>,
}

/// `type = "command"`: a long-lived local process per request in flight,
/// one JSON request per line on its stdin, one JSON answer per line on its
/// stdout (the shapes are documented in `agent/transport/command.rs`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConnection {
    /// The program and its arguments: a bare program name is looked up in
    /// `PATH`, as a shell would; a relative program path starts from `dir`.
    pub command: Vec<String>,
    /// Environment variables the process gets, by name (those that are
    /// set). It gets no others, except a minimal `PATH`
    /// (`/usr/local/bin:/usr/bin:/bin`) unless `PATH` is listed here.
    #[serde(default)]
    pub env: Vec<String>,
    /// The folder it runs in, relative to the configuration file's
    /// (default: the configuration file's folder).
    pub dir: Option<PathBuf>,
    /// How long the process may stay silent while a request waits for its
    /// answer, in seconds (default 120).
    pub idle_timeout_secs: Option<f64>,
    /// The longest answer line, in MiB (default 16).
    pub max_response_mb: Option<usize>,
}

/// `type = "neuro-san"`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeuroSanConnection {
    /// The server's base URL, e.g. `https://staging.example.com`.
    pub url: String,
    /// A PEM file of CA certificates to trust for https.
    pub ca: Option<PathBuf>,
    /// The response size cap, in MiB (default 16).
    pub max_response_mb: Option<usize>,
    /// How long a stream may stay silent, in seconds (default 120).
    pub idle_timeout_secs: Option<f64>,
}

fn yes() -> bool {
    true
}

impl ConnectionConfig {
    /// Reads `[connections.NAME]` from its table: a message naming what is
    /// wrong (the caller names the file and the connection).
    pub(crate) fn from_table(table: &toml::Table) -> Result<ConnectionConfig, String> {
        let kind = match table.get("type") {
            Some(toml::Value::String(kind)) => kind.as_str(),
            Some(other) => return Err(format!("`type` is {}, not a string", other.type_str())),
            None => {
                return Err(format!(
                    "it has no `type`\n\nConsider `type = \"openai\"` (or {})",
                    CONNECTION_TYPES.join(", ")
                ));
            }
        };
        let mut rest = table.clone();
        rest.remove("type");
        let read = |text: String| text.trim_end().to_owned();
        match kind {
            "openai" => rest.try_into().map(ConnectionConfig::OpenAi).map_err(|e| read(e.to_string())),
            "http" => rest.try_into().map(ConnectionConfig::Http).map_err(|e| read(e.to_string())),
            "command" => rest.try_into().map(ConnectionConfig::Command).map_err(|e| read(e.to_string())),
            "neuro-san" => rest.try_into().map(ConnectionConfig::NeuroSan).map_err(|e| read(e.to_string())),
            other => {
                let hint = crate::suggest::nearest(other, CONNECTION_TYPES.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                Err(format!(
                    "`type = \"{other}\"` is no kind of connection{hint}; the kinds are {}",
                    CONNECTION_TYPES.join(", ")
                ))
            }
        }
    }

    /// The type as written.
    pub fn kind(&self) -> &'static str {
        match self {
            ConnectionConfig::OpenAi(_) => "openai",
            ConnectionConfig::Http(_) => "http",
            ConnectionConfig::Command(_) => "command",
            ConnectionConfig::NeuroSan(_) => "neuro-san",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ConnectionConfig, String> {
        ConnectionConfig::from_table(&text.parse::<toml::Table>().unwrap())
    }

    #[test]
    fn each_type_reads_its_own_keys() {
        let openai = read("type = \"openai\"\nurl = \"http://h/v1\"\nmodel = \"m\"\nstream = true\n").unwrap();
        let ConnectionConfig::OpenAi(openai) = openai else { panic!("{openai:?}") };
        assert_eq!((openai.url.as_str(), openai.model.as_deref(), openai.stream), ("http://h/v1", Some("m"), true));
        assert!(openai.model_from_agent);
        assert_eq!(read("type = \"command\"\ncommand = [\"python3\", \"a.py\"]\n").unwrap().kind(), "command");
        assert_eq!(read("type = \"neuro-san\"\nurl = \"http://h\"\n").unwrap().kind(), "neuro-san");
        let http = read("type = \"http\"\nurl = \"http://h\"\nbody = '{\"q\": {{text}}}'\ntext = \"$.a\"\n").unwrap();
        assert_eq!(http.kind(), "http");
    }

    #[test]
    fn a_bad_table_says_what_is_wrong() {
        assert!(read("url = \"x\"").unwrap_err().starts_with("it has no `type`"));
        assert_eq!(
            read("type = \"opneai\"").unwrap_err(),
            "`type = \"opneai\"` is no kind of connection (did you mean `openai`?); the kinds are openai, http, command, neuro-san"
        );
        let error = read("type = \"openai\"\nurl = \"x\"\nmodle = \"m\"\n").unwrap_err();
        assert!(error.contains("unknown field `modle`"), "{error}");
    }
}
