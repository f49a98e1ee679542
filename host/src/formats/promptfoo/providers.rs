//! promptfoo providers onto assay's connections:
//!
//! | provider | connection |
//! |----------|------------|
//! | `echo` | `direct` to the `echo` demo agent (answers with the prompt) |
//! | `openai:chat:MODEL`, `openai:MODEL` | an `openai` connection: `config.apiBaseUrl` (or `apiHost`, `OPENAI_BASE_URL`), `apiKey` (or `apiKeyEnvar`, `OPENAI_API_KEY`); the body parameters promptfoo sends (`temperature`, `max_tokens`, `seed`, `tools`, `response_format`, … and `passthrough`'s) sent as they are; a chat-format prompt (a JSON list of messages, or YAML `- role:`) sent as its messages |
//! | `http`, `https`, `https://…` | a `type = "http"` connection: `url`, `method`, `headers`, `body` (`{{prompt}}` as a whole value), `transformResponse` as a JSONPath or a field path (`json.choices[0].message.content`) |
//! | `exec:COMMAND ARGS` | a program started per request, the prompt as its argument ([`ExecAgents`]) |
//! | `assay:NAME` | the `[connections.NAME]` of `assay.toml` |
//!
//! Anything else is an error naming the provider and the connection to use
//! instead. Secrets (an `apiKey`, the variable's value) are returned for
//! reports to hide.

use crate::agent::{ExecAgents, HttpApi, OpenAiAgents, OpenAiSettings, Transport};
use crate::case::{CaseEnv, Connection, FileTrust};
use crate::config::HttpConnection;
use crate::errors::{CaseErrorKind, describe_json};
use crate::formats::promptfoo::config::ProviderEntry;
use crate::formats::promptfoo::grader_spec::GraderSpec;
use crate::sandbox::Grader;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

/// A provider, mapped.
pub struct Provider {
    /// The connection its cases run over.
    pub connection: Connection,
    /// The agent its cases ask (the model, for `openai`).
    pub agent: String,
    /// The transport of its own connection, when it is not `direct` or a
    /// configured one.
    pub transport: Option<Arc<dyn Transport>>,
    /// Values reports must hide.
    pub secrets: Vec<String>,
    /// The http provider's JavaScript `transformResponse`, inline, which
    /// its cases run sandboxed on each answer before their checks
    /// ([`super::javascript::response_transform`]).
    pub transform_response: Option<String>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider").field("connection", &self.connection).field("agent", &self.agent).finish()
    }
}

/// What providers read besides their entry.
pub struct ProviderContext<'a> {
    /// The config's folder (`exec:` runs there; relative paths start there).
    pub folder: &'a Path,
    /// The project's environment (`OPENAI_API_KEY`, `apiKeyEnvar`, …).
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// What case files may read (`{{env.NAME}}` in http headers).
    pub case_env: &'a CaseEnv,
    /// Whether the config is trusted: a data file may not run `exec:`,
    /// name another variable for its key (`apiKeyEnvar`) or send a key
    /// from the environment to a URL it names (`apiBaseUrl`, `apiHost`).
    pub trust: &'a FileTrust<'a>,
    /// The grader of a grading provider (`graders.rs`): its backends, built
    /// by the project once per distinct spec.
    pub graders: &'a dyn Fn(&GraderSpec) -> Result<Grader, String>,
    /// The sandbox in which the config's JavaScript computes values (a
    /// config or tests module, `transformVars`).
    pub compute: crate::formats::promptfoo::javascript::ComputeValue<'a>,
}

/// Why a provider cannot be mapped.
#[derive(Debug)]
pub enum MapError {
    /// assay does not speak it, or its config is wrong: the cases over it
    /// are error cases.
    Unsupported(String),
    /// The config is data and the provider does what only a trusted file
    /// may: the whole config is one error case.
    Untrusted(CaseErrorKind),
}

impl From<String> for MapError {
    fn from(message: String) -> MapError {
        MapError::Unsupported(message)
    }
}

/// The supported providers, for messages.
const SUPPORTED: &str = "echo, openai:chat:MODEL (any OpenAI-compatible `config.apiBaseUrl`), http (or a URL), \
                         exec:COMMAND and assay:CONNECTION (a [connections.NAME] of assay.toml)";

/// Maps `entry` onto a connection named `name` (when it needs one of its
/// own).
pub fn map(entry: &ProviderEntry, name: &str, context: &ProviderContext<'_>) -> Result<Provider, MapError> {
    let id = entry.id.as_str();
    let own = |transport: Arc<dyn Transport>, agent: &str, secrets: Vec<String>| Provider {
        connection: Connection::Named(Arc::from(name)),
        agent: agent.to_owned(),
        transport: Some(transport),
        secrets,
        transform_response: None,
    };
    if id == "echo" {
        no_config(entry, "echo")?;
        return Ok(Provider {
            connection: Connection::Direct,
            agent: "echo".into(),
            transport: None,
            secrets: Vec::new(),
            transform_response: None,
        });
    }
    if let Some(connection) = id.strip_prefix("assay:") {
        no_config(entry, id)?;
        let connection = Connection::from_name(connection)
            .ok_or_else(|| format!("`{id}`: `{connection}` cannot name a connection"))?;
        return Ok(Provider {
            agent: connection.name().to_owned(),
            connection,
            transport: None,
            secrets: Vec::new(),
            transform_response: None,
        });
    }
    if let Some(command) = id.strip_prefix("exec:") {
        let command = script_parts(command.trim());
        context.trust.program(&crate::agent::shown_command(&command)).map_err(MapError::Untrusted)?;
        let dir = match entry.config.get("basePath").and_then(Value::as_str) {
            Some(base) => context.folder.join(base),
            None => context.folder.to_path_buf(),
        };
        let mut options = Map::new();
        options.insert("id".into(), Value::String(id.to_owned()));
        options.insert("config".into(), Value::Object(entry.config.clone()));
        let exec =
            ExecAgents::new(command, Value::Object(options).to_string(), dir).map_err(|e| format!("`{id}`: {e}"))?;
        return Ok(own(Arc::new(exec), id, Vec::new()));
    }
    if let Some(model) = openai_model(id)? {
        let (openai, secrets) = openai(entry, model, context)?;
        return Ok(own(Arc::new(openai), model, secrets));
    }
    if id == "http" || id == "https" || id.starts_with("http://") || id.starts_with("https://") {
        let (config, transform_response) = http_config(entry)?;
        context.trust.url(&config.url);
        let api = HttpApi::new(&config, context.case_env, None, None).map_err(|e| format!("`{id}`: {e}"))?;
        return Ok(Provider { transform_response, ..own(Arc::new(api), id, Vec::new()) });
    }
    Err(unsupported(id).into())
}

/// The error of a provider assay does not speak, with what to use.
fn unsupported(id: &str) -> String {
    let family = id.split(':').next().unwrap_or(id);
    let hint = match family {
        "ollama" => {
            "`openai:chat:MODEL` with `config.apiBaseUrl: http://localhost:11434/v1` (Ollama speaks OpenAI's API)"
                .to_owned()
        }
        "anthropic" | "bedrock" | "vertex" | "azure" | "azureopenai" | "mistral" | "groq" | "togetherai"
        | "openrouter" | "vllm" | "localai" | "litellm" => format!(
            "`openai:chat:MODEL` with the `config.apiBaseUrl` of an OpenAI-compatible endpoint for {family} (its own, \
             or a LiteLLM proxy), or `assay:NAME` for a [connections.NAME] of assay.toml"
        ),
        "python" | "file" | "js" | "golang" | "ruby" => "`exec:COMMAND` (the prompt as its argument, stdout the \
                                                          answer), or `assay:NAME` for a `type = \"command\"` \
                                                          connection of assay.toml"
            .to_owned(),
        _ => "`assay:NAME` for a [connections.NAME] of assay.toml (openai, http, command or neuro-san)".to_owned(),
    };
    format!("the provider `{id}` is not supported; assay maps {SUPPORTED}\n\nConsider {hint}")
}

fn no_config(entry: &ProviderEntry, what: &str) -> Result<(), String> {
    match entry.config.keys().next() {
        None => Ok(()),
        Some(key) => Err(format!("`{what}` takes no config (`config.{key}`)")),
    }
}

/// promptfoo's `parseScriptParts`: words, and `"…"` or `'…'` quoted ones.
fn script_parts(command: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut chars = command.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut part = String::new();
        if c == '"' || c == '\'' {
            chars.next();
            for next in chars.by_ref() {
                if next == c {
                    break;
                }
                part.push(next);
            }
        } else {
            while let Some(&next) = chars.peek() {
                if next.is_whitespace() || next == '"' || next == '\'' {
                    break;
                }
                part.push(next);
                chars.next();
            }
        }
        parts.push(part);
    }
    parts
}

/// The model of an `openai:` chat provider; `None` for other families.
fn openai_model(id: &str) -> Result<Option<&str>, String> {
    let Some(rest) = id.strip_prefix("openai:") else { return Ok(None) };
    let model = match rest.split_once(':') {
        Some(("chat", model)) => model,
        Some((
            kind @ ("completion" | "embedding" | "embeddings" | "responses" | "assistant" | "image" | "realtime"),
            _,
        )) => {
            return Err(format!(
                "the provider `{id}` is not supported: assay speaks OpenAI's chat completions only, not `{kind}`\n\n\
                 Consider `openai:chat:MODEL`"
            ));
        }
        _ => rest,
    };
    if model.is_empty() {
        return Err(format!("the provider `{id}` names no model\n\nConsider `openai:chat:gpt-4o-mini`"));
    }
    Ok(Some(model))
}

/// The `config` keys promptfoo's openai chat provider sends in the request
/// body (`getOpenAiBody`), sent so here too; `passthrough`'s keys are sent
/// as well.
const OPENAI_BODY_KEYS: &[&str] = &[
    "temperature",
    "max_tokens",
    "max_completion_tokens",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "stop",
    "seed",
    "n",
    "response_format",
    "tools",
    "tool_choice",
    "functions",
    "function_call",
    "parallel_tool_calls",
    "logprobs",
    "top_logprobs",
    "user",
    "reasoning_effort",
    "verbosity",
    "metadata",
    "store",
    "modalities",
    "audio",
    "prediction",
    "service_tier",
];

/// promptfoo's OpenAI prices (US dollars per token, by model), as
/// `plugins/promptfoo/differential/prices.mjs` extracted them from its own
/// table.
static OPENAI_PRICES: std::sync::LazyLock<HashMap<String, (f64, f64)>> = std::sync::LazyLock::new(|| {
    #[derive(serde::Deserialize)]
    struct Table {
        prices: Vec<(String, f64, f64)>,
    }
    let table: Table = serde_json::from_str(include_str!("openai_prices.json")).expect("the price table is JSON");
    table.prices.into_iter().map(|(model, input, output)| (model, (input, output))).collect()
});

/// What a token of `model` costs in and out, as promptfoo's
/// `calculateCost` prices it: `config.inputCost`/`outputCost`, else
/// `config.cost`, else its table's price for the model (none for a model
/// it does not know: a `cost` check then says the connection reports none).
fn prices(model: &str, config: &Map<String, Value>) -> Option<(f64, f64)> {
    let number = |key: &str| config.get(key).and_then(Value::as_f64);
    let table = OPENAI_PRICES.get(model).copied();
    let input = number("inputCost").or(number("cost")).or(table.map(|(input, _)| input))?;
    let output = number("outputCost").or(number("cost")).or(table.map(|(_, output)| output))?;
    Some((input, output))
}

/// An `openai` connection from the provider's config.
fn openai(
    entry: &ProviderEntry,
    model: &str,
    context: &ProviderContext<'_>,
) -> Result<(OpenAiAgents, Vec<String>), MapError> {
    let id = &entry.id;
    let config = &entry.config;
    const KNOWN: &[&str] = &[
        "apiBaseUrl",
        "apiHost",
        "apiKey",
        "apiKeyEnvar",
        "organization",
        "passthrough",
        "cost",
        "inputCost",
        "outputCost",
    ];
    if let Some(key) =
        config.keys().find(|key| !KNOWN.contains(&key.as_str()) && !OPENAI_BODY_KEYS.contains(&key.as_str()))
    {
        return Err(format!(
            "`{id}`: `config.{key}` is not a parameter promptfoo's openai provider sends; to send it in the \
             request body as it is, put it under `config.passthrough`"
        )
        .into());
    }
    let mut body: Map<String, Value> = config
        .iter()
        .filter(|(key, _)| OPENAI_BODY_KEYS.contains(&key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    match config.get("passthrough") {
        None | Some(Value::Null) => {}
        Some(Value::Object(more)) => body.extend(more.clone()),
        Some(other) => {
            return Err(format!("`{id}`: `config.passthrough` is {}, not a mapping", describe_json(other)).into());
        }
    }
    let (url, api_key, key_variable) = openai_endpoint(id, config, context)?;
    let defaults = OpenAiSettings::default();
    let settings = OpenAiSettings {
        url: url.trim_end_matches('/').to_owned(),
        model: Some(model.to_owned()),
        model_from_agent: false,
        api_key: api_key.clone(),
        api_key_env: Some(key_variable),
        body,
        prices: prices(model, config),
        chat_prompts: true,
        promptfoo_output: true,
        ..defaults
    };
    let agents = OpenAiAgents::new(settings).map_err(|e| format!("`{id}`: {e}"))?;
    Ok((agents, api_key.into_iter().collect()))
}

/// Where an openai provider sends requests, and with which key: the
/// config's `apiBaseUrl` (or `apiHost`), else `OPENAI_BASE_URL` (or
/// `OPENAI_API_BASE_URL`, else OpenAI's); the config's `apiKey`, else the
/// variable `apiKeyEnvar` names (default `OPENAI_API_KEY`). Returns the
/// URL, the key and the key's variable.
pub(super) fn openai_endpoint(
    id: &str,
    config: &Map<String, Value>,
    context: &ProviderContext<'_>,
) -> Result<(String, Option<String>, String), MapError> {
    let string = |key: &str| -> Result<Option<String>, String> {
        match config.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("`{id}`: `config.{key}` is not a string")),
        }
    };
    let (url, named_url) = match (string("apiBaseUrl")?, string("apiHost")?) {
        (Some(url), _) => (url, true),
        (None, Some(host)) => (format!("https://{host}/v1"), true),
        (None, None) => {
            let url = (context.var)("OPENAI_BASE_URL")
                .or_else(|| (context.var)("OPENAI_API_BASE_URL"))
                .unwrap_or_else(|| super::OPENAI_API_BASE.into());
            (url, false)
        }
    };
    // The key: written in the config, else from a variable. OpenAI's own
    // variable for OpenAI's endpoint (or the one the user set) is what any
    // openai provider reads; a variable the config names, or a key sent to
    // a URL the config names, only a trusted config (or an allowed
    // variable) may have.
    let named_variable = string("apiKeyEnvar")?;
    let key_variable = named_variable.clone().unwrap_or_else(|| "OPENAI_API_KEY".into());
    let written_key = string("apiKey")?;
    let from_environment = match &written_key {
        Some(_) => None,
        None => (context.var)(&key_variable),
    };
    let untrusted = MapError::Untrusted;
    if from_environment.is_some() {
        if named_url {
            context.trust.credential_to(&key_variable, &url, context.case_env).map_err(untrusted)?;
        } else if named_variable.is_some() {
            context.trust.variable(&key_variable, context.case_env).map_err(untrusted)?;
        }
    } else if named_variable.is_some() && written_key.is_none() {
        context.trust.variable(&key_variable, context.case_env).map_err(untrusted)?;
    }
    if named_url {
        context.trust.url(&url);
    }
    Ok((url, written_key.or(from_environment), key_variable))
}

/// A `type = "http"` connection from promptfoo's http provider, and its
/// `transformResponse` when that is JavaScript (the connection then
/// answers with the whole JSON body, which the JavaScript reads).
fn http_config(entry: &ProviderEntry) -> Result<(HttpConnection, Option<String>), String> {
    let id = &entry.id;
    let config = &entry.config;
    const KNOWN: &[&str] = &["url", "method", "headers", "body", "transformResponse", "responseParser"];
    if let Some(key) = config.keys().find(|key| !KNOWN.contains(&key.as_str())) {
        return Err(format!(
            "`{id}`: `config.{key}` is not supported; the http provider reads `url`, `method`, `headers`, `body` and \
             `transformResponse`"
        ));
    }
    let url = match config.get("url").and_then(Value::as_str) {
        Some(url) => url.to_owned(),
        None if id.starts_with("http://") || id.starts_with("https://") => id.clone(),
        None => return Err(format!("`{id}` has no `config.url`")),
    };
    let mut headers = BTreeMap::new();
    if let Some(written) = config.get("headers") {
        let Value::Object(written) = written else { return Err(format!("`{id}`: `config.headers` is not a mapping")) };
        for (name, value) in written {
            let value = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            headers.insert(name.clone(), prompt_placeholders(&value));
        }
    }
    let body = match config.get("body") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => {
            let parsed: Value = serde_json::from_str(text).map_err(|_| {
                format!("`{id}`: a `config.body` string must be JSON (a raw text body is not supported)")
            })?;
            Some(body_template(&parsed, id)?)
        }
        Some(body) => Some(body_template(body, id)?),
    };
    let transform = config.get("transformResponse").or_else(|| config.get("responseParser"));
    let (text, javascript) = match transform {
        None => ("$".to_owned(), None),
        Some(Value::String(expression)) => match json_path(expression.trim()) {
            Some(path) => (path, None),
            None => {
                ("$".to_owned(), Some(javascript_transform_response(expression).map_err(|e| format!("`{id}`: {e}"))?))
            }
        },
        Some(_) => return Err(format!("`{id}`: `config.transformResponse` is not a string")),
    };
    let connection = HttpConnection {
        url: prompt_placeholders(&url),
        method: config.get("method").and_then(Value::as_str).map(str::to_owned),
        headers,
        body,
        text: Some(text),
        structure: None,
        sly_data: None,
        chat_context: None,
        response: None,
        ca: None,
        max_response_mb: None,
        idle_timeout_secs: None,
    };
    Ok((connection, javascript))
}

/// A JavaScript `transformResponse` as assay runs it, or why it cannot:
/// inline code only (a `file://` module's function is not supported), and
/// without promptfoo's `context` (the response's status and headers, which
/// the checks do not see).
fn javascript_transform_response(expression: &str) -> Result<String, String> {
    let code = expression.trim();
    if code.starts_with("file://") {
        return Err(format!(
            "`transformResponse: {code}` is a module's function, which assay does not run for a provider; write the \
             JavaScript inline (`json.choices[0].message.content`, or `(json, text) => …`)"
        ));
    }
    let mentions_context = code.match_indices("context").any(|(at, word)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        !part(before) && !part(after)
    });
    if mentions_context {
        return Err(format!(
            "`transformResponse: {code}` reads `context` (the response's status and headers), which assay does not \
             give it; read `json` or `text` only"
        ));
    }
    Ok(code.to_owned())
}

/// `{{prompt}}` (with or without spaces) as assay's `{{text}}`.
fn prompt_placeholders(text: &str) -> String {
    text.replace("{{ prompt }}", "{{text}}").replace("{{prompt}}", "{{text}}")
}

/// A JSON body with `"{{prompt}}"` values as assay's body template, where
/// `{{text}}` stands for the JSON string of the prompt.
fn body_template(body: &Value, id: &str) -> Result<String, String> {
    const SENTINEL: &str = "\u{1}assay-prompt\u{1}";
    fn walk(value: &Value, id: &str) -> Result<Value, String> {
        Ok(match value {
            Value::String(text) if matches!(text.trim(), "{{prompt}}" | "{{ prompt }}") => {
                Value::String(SENTINEL.into())
            }
            Value::String(text) if text.contains("{{") || text.contains("{%") => {
                return Err(format!(
                    "`{id}`: the body value `{text}` is a template; assay fills only a whole `\"{{{{prompt}}}}\"` value"
                ));
            }
            Value::Array(items) => Value::Array(items.iter().map(|item| walk(item, id)).collect::<Result<_, _>>()?),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| Ok((k.clone(), walk(v, id)?))).collect::<Result<_, String>>()?)
            }
            other => other.clone(),
        })
    }
    let json = walk(body, id)?.to_string();
    Ok(json.replace(&Value::String(SENTINEL.into()).to_string(), "{{text}}"))
}

/// A JSONPath, or promptfoo's field path `json.a.b[0]["c"]` as one; `None`
/// for anything else (JavaScript).
fn json_path(expression: &str) -> Option<String> {
    if expression.starts_with('$') {
        return Some(expression.to_owned());
    }
    let rest = expression.strip_prefix("json")?;
    let mut path = String::from("$");
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let name: String =
                    std::iter::from_fn(|| chars.next_if(|c| c.is_alphanumeric() || *c == '_' || *c == '$')).collect();
                if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                    return None;
                }
                path.push('.');
                path.push_str(&name);
            }
            '[' => {
                let inside: String = std::iter::from_fn(|| chars.next_if(|c| *c != ']')).collect();
                chars.next()?;
                let quoted = |q: char| inside.len() >= 2 && inside.starts_with(q) && inside.ends_with(q);
                if inside.chars().all(|c| c.is_ascii_digit()) && !inside.is_empty() {
                    path.push_str(&format!("[{inside}]"));
                } else if quoted('"') || quoted('\'') {
                    let key = &inside[1..inside.len() - 1];
                    if key.contains(['\'', '"', '\\']) {
                        return None;
                    }
                    path.push_str(&format!("['{key}']"));
                } else {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_paths_become_json_paths_and_javascript_does_not() {
        assert_eq!(json_path("json.choices[0].message.content").unwrap(), "$.choices[0].message.content");
        assert_eq!(json_path("json[\"a b\"].c").unwrap(), "$['a b'].c");
        assert_eq!(json_path("json").unwrap(), "$");
        assert_eq!(json_path("$.x[*]").unwrap(), "$.x[*]");
        for js in ["json.a.map(x => x)", "(json) => json.a", "text", "json.a + 'x'", "json[i]"] {
            assert_eq!(json_path(js), None, "{js}");
        }
    }

    #[test]
    fn a_body_takes_the_prompt_as_a_whole_value() {
        let body = json!({"messages": [{"role": "user", "content": "{{prompt}}"}], "n": 1});
        assert_eq!(body_template(&body, "http").unwrap(), r#"{"messages":[{"role":"user","content":{{text}}}],"n":1}"#);
        let error = body_template(&json!({"q": "say {{prompt}}"}), "http").unwrap_err();
        assert!(error.contains("whole"), "{error}");
    }

    #[test]
    fn script_parts_split_as_promptfoo_does() {
        assert_eq!(script_parts(r#"python3 "my script.py" --x 'a b'"#), ["python3", "my script.py", "--x", "a b"]);
    }

    #[test]
    fn unsupported_providers_name_what_to_use() {
        let error = unsupported("anthropic:messages:claude-3");
        assert!(error.contains("`anthropic:messages:claude-3` is not supported") && error.contains("apiBaseUrl"));
        assert!(unsupported("ollama:chat:llama3").contains("11434"));
        assert!(unsupported("python:provider.py").contains("exec:"));
        assert!(openai_model("openai:embedding:x").unwrap_err().contains("chat completions only"));
        assert_eq!(openai_model("openai:gpt-4o").unwrap(), Some("gpt-4o"));
    }
}
