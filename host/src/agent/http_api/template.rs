//! Request templates: a connection's `url`, header values and `body`, with
//! `{{…}}` placeholders filled from each turn's request.
//!
//! A template is parsed once, when the project builds the connection: an
//! unknown placeholder, or an `{{env.NAME}}` the case environment does not
//! allow, is an error then, not on the first request. Each placeholder
//! stands for one JSON value, and where it lands decides how the value is
//! written ([`Encoding`]): in a body as JSON (a string quoted and escaped,
//! so a turn's text can never break out of its place), in a header as its
//! text, in a URL percent-encoded.

use crate::agent::message::ChatRequest;
use crate::case::{CaseEnv, Lookup};
use serde_json::Value;
use std::borrow::Cow;

/// The placeholders a template may use, for messages.
const PLACEHOLDERS: &str =
    "{{text}}, {{sly_data}}, {{sly_data.KEY}}, {{agent}}, {{sample}}, {{chat_context}}, {{env.NAME}}";

/// The names a placeholder may start with, for "did you mean".
const HEADS: &[&str] = &["text", "sly_data", "agent", "sample", "chat_context", "env"];

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Literal(String),
    Value(Placeholder),
}

/// What one `{{…}}` stands for.
#[derive(Clone, Debug, PartialEq)]
enum Placeholder {
    /// The turn's text.
    Text,
    /// The agent the case names.
    Agent,
    /// The sample's 0-based index.
    Sample,
    /// The state the previous answer returned, or `null`.
    ChatContext,
    /// The turn's sly_data (carried and its own): the whole object for an
    /// empty path, else the value at the dotted path, or `null`.
    SlyData(Vec<String>),
    /// An environment variable's value, read once when the template was
    /// parsed.
    Env {
        /// The variable's name.
        name: String,
        /// Its value.
        value: String,
    },
}

/// How a value is written where its placeholder stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// As JSON: `"a \"quoted\" word"`, `{"k": 1}`, `null`.
    Json,
    /// A string as its text, anything else as JSON (for header values).
    Text,
    /// [`Encoding::Text`], percent-encoded (for URLs).
    Url,
}

impl Template {
    /// Parses `source`, reading `{{env.NAME}}` from `env`. The error says
    /// what is wrong with the placeholder; the caller names the setting.
    pub(crate) fn parse(source: &str, env: &CaseEnv) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut rest = source;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                pieces.push(Piece::Literal(rest[..start].to_owned()));
            }
            let inner = &rest[start + 2..];
            let end = inner.find("}}").ok_or_else(|| {
                format!("`{{{{` opens a placeholder that no `}}}}` closes; the placeholders are {PLACEHOLDERS}")
            })?;
            pieces.push(Piece::Value(Placeholder::parse(inner[..end].trim(), env)?));
            rest = &inner[end + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_owned()));
        }
        Ok(Template { pieces })
    }

    /// Whether the template reads an environment variable (its output is
    /// then a secret, e.g. an `authorization` header).
    pub(crate) fn reads_env(&self) -> bool {
        self.pieces.iter().any(|piece| matches!(piece, Piece::Value(Placeholder::Env { .. })))
    }

    /// The template filled from `request`, each value written by
    /// `encoding`.
    pub(crate) fn render(&self, request: &ChatRequest, encoding: Encoding) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Value(placeholder) => write_value(&mut out, &placeholder.value(request), encoding),
            }
        }
        out
    }

    /// [`Template::render`] for messages and results: an environment
    /// variable shows as its placeholder, never its value (a URL may carry
    /// a key).
    pub(crate) fn shown(&self, request: &ChatRequest, encoding: Encoding) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Value(Placeholder::Env { name, .. }) => out.push_str(&format!("{{{{env.{name}}}}}")),
                Piece::Value(placeholder) => write_value(&mut out, &placeholder.value(request), encoding),
            }
        }
        out
    }
}

impl Placeholder {
    fn parse(name: &str, env: &CaseEnv) -> Result<Placeholder, String> {
        let (head, path) = match name.split_once('.') {
            Some((head, path)) => (head, Some(path)),
            None => (name, None),
        };
        let placeholder = match (head, path) {
            ("text", None) => Placeholder::Text,
            ("agent", None) => Placeholder::Agent,
            ("sample", None) => Placeholder::Sample,
            ("chat_context", None) => Placeholder::ChatContext,
            ("sly_data", None) => Placeholder::SlyData(Vec::new()),
            ("sly_data", Some(path)) => {
                let keys: Vec<String> = path.split('.').map(str::to_owned).collect();
                if keys.iter().any(String::is_empty) {
                    return Err(format!("`{{{{{name}}}}}` has an empty key; write `{{{{sly_data.a.b}}}}`"));
                }
                Placeholder::SlyData(keys)
            }
            ("env", Some(variable)) if !variable.is_empty() => {
                Placeholder::Env { name: variable.to_owned(), value: env_value(variable, env)? }
            }
            ("env", _) => return Err(format!("`{{{{{name}}}}}` names no variable; write `{{{{env.NAME}}}}`")),
            ("text" | "agent" | "sample" | "chat_context", Some(_)) => {
                return Err(format!("`{{{{{name}}}}}`: `{{{{{head}}}}}` has no fields"));
            }
            _ => {
                let hint = crate::suggest::nearest(head, HEADS.iter().copied())
                    .map(|near| match path {
                        Some(path) => format!(" (did you mean `{{{{{near}.{path}}}}}`?)"),
                        None => format!(" (did you mean `{{{{{near}}}}}`?)"),
                    })
                    .unwrap_or_default();
                return Err(format!("unknown placeholder `{{{{{name}}}}}`{hint}; the placeholders are {PLACEHOLDERS}"));
            }
        };
        Ok(placeholder)
    }

    fn value<'r>(&self, request: &'r ChatRequest) -> Cow<'r, Value> {
        match self {
            Placeholder::Text => Cow::Owned(Value::String(request.text.clone())),
            Placeholder::Agent => Cow::Owned(Value::String(request.agent.clone())),
            Placeholder::Sample => Cow::Owned(sample_of(request)),
            Placeholder::ChatContext => request.chat_context.as_ref().map_or(Cow::Owned(Value::Null), Cow::Borrowed),
            Placeholder::SlyData(keys) if keys.is_empty() => {
                Cow::Owned(Value::Object(request.sly_data.clone().unwrap_or_default()))
            }
            Placeholder::SlyData(keys) => {
                let mut keys = keys.iter();
                let first = keys.next().and_then(|key| request.sly_data.as_ref()?.get(key));
                let found = keys.fold(first, |value, key| match value? {
                    Value::Object(map) => map.get(key),
                    Value::Array(items) => items.get(key.parse::<usize>().ok()?),
                    _ => None,
                });
                found.map_or(Cow::Owned(Value::Null), Cow::Borrowed)
            }
            Placeholder::Env { value, .. } => Cow::Owned(Value::String(value.clone())),
        }
    }
}

/// The sample's index, from the `x-assay-sample` metadata the runner sends
/// with every turn (`null` when a caller sends none).
fn sample_of(request: &ChatRequest) -> Value {
    request.sample().map_or(Value::Null, Value::from)
}

/// The value of `{{env.NAME}}`: only what case files may read.
fn env_value(name: &str, env: &CaseEnv) -> Result<String, String> {
    match env.lookup(name) {
        Lookup::Value(value) => Ok(value.to_owned()),
        Lookup::Unset => {
            Err(format!("`{{{{env.{name}}}}}` names a variable that is not set\n\nConsider exporting {name}"))
        }
        Lookup::NotAllowed { protected } => {
            let why = if protected { " (it holds a configured API key)" } else { "" };
            Err(format!(
                "`{{{{env.{name}}}}}` names a variable connections may not read{why}: they read what case files may\n\nConsider allowing it in assay.toml:\n[cases]\nallow_env = [\"{name}\"]\nor passing --allow-env {name}, or naming it {}{name}",
                crate::case::CASE_ENV_PREFIX
            ))
        }
    }
}

fn write_value(out: &mut String, value: &Value, encoding: Encoding) {
    let text = match (encoding, value) {
        (Encoding::Json, value) => return out.push_str(&value.to_string()),
        (Encoding::Text | Encoding::Url, Value::String(text)) => Cow::Borrowed(text.as_str()),
        (Encoding::Text | Encoding::Url, other) => Cow::Owned(other.to_string()),
    };
    if encoding == Encoding::Url {
        for byte in text.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                out.push(char::from(byte));
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    } else {
        out.push_str(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(source: &str) -> Result<Template, String> {
        Template::parse(
            source,
            &CaseEnv::new([("ASSAY_CASE_TEAM", "q\"a"), ("SECRET_KEY", "k")], ["SECRET_KEY"], None::<String>),
        )
    }

    fn request() -> ChatRequest {
        ChatRequest {
            agent: "orders".into(),
            text: "say \"hi\"\nthen }} {{text}}".into(),
            sly_data: json!({"session": "s-1", "user": {"id": 7, "tags": ["a", "b"]}}).as_object().cloned(),
            metadata: vec![("x-assay-sample".into(), "2".into())],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn every_placeholder_becomes_one_json_value() {
        let template = parse(
            r#"{"q": {{text}}, "s": {{ sly_data.session }}, "id": {{sly_data.user.id}}, "tag": {{sly_data.user.tags.1}},
               "none": {{sly_data.nothing.here}}, "all": {{sly_data}}, "agent": {{agent}}, "n": {{sample}},
               "ctx": {{chat_context}}, "team": {{env.ASSAY_CASE_TEAM}}}"#,
        )
        .unwrap();
        let body: Value = serde_json::from_str(&template.render(&request(), Encoding::Json)).unwrap();
        assert_eq!(
            body,
            json!({"q": "say \"hi\"\nthen }} {{text}}", "s": "s-1", "id": 7, "tag": "b", "none": null,
                   "all": {"session": "s-1", "user": {"id": 7, "tags": ["a", "b"]}}, "agent": "orders", "n": 2,
                   "ctx": null, "team": "q\"a"})
        );
        let later = ChatRequest { chat_context: Some(json!({"turn": 1})), sly_data: None, ..request() };
        let body: Value = serde_json::from_str(&template.render(&later, Encoding::Json)).unwrap();
        assert_eq!((&body["ctx"], &body["all"], &body["s"]), (&json!({"turn": 1}), &json!({}), &Value::Null));
    }

    #[test]
    fn headers_get_text_and_urls_get_percent_encoding() {
        let header = parse("Bearer {{sly_data.session}} #{{sample}}").unwrap();
        assert_eq!(header.render(&request(), Encoding::Text), "Bearer s-1 #2");
        let url = parse("http://h/agents/{{agent}}/ask?q={{text}}").unwrap();
        let asked = ChatRequest { text: "a b/c&d=é".into(), ..request() };
        assert_eq!(url.render(&asked, Encoding::Url), "http://h/agents/orders/ask?q=a%20b%2Fc%26d%3D%C3%A9");
        assert!(!url.reads_env());
        let keyed = parse("http://h/ask?team={{env.ASSAY_CASE_TEAM}}&q={{text}}").unwrap();
        assert_eq!(keyed.render(&asked, Encoding::Url), "http://h/ask?team=q%22a&q=a%20b%2Fc%26d%3D%C3%A9");
        assert_eq!(
            keyed.shown(&asked, Encoding::Url),
            "http://h/ask?team={{env.ASSAY_CASE_TEAM}}&q=a%20b%2Fc%26d%3D%C3%A9"
        );
    }

    #[test]
    fn a_bad_placeholder_is_named_with_the_nearest_one() {
        assert_eq!(
            parse("{\"q\": {{txet}}}").unwrap_err(),
            format!(
                "unknown placeholder `{{{{txet}}}}` (did you mean `{{{{text}}}}`?); the placeholders are {PLACEHOLDERS}"
            )
        );
        assert!(parse("{{slydata.session}}").unwrap_err().contains("(did you mean `{{sly_data.session}}`?)"));
        assert!(parse("{{text.length}}").unwrap_err().contains("`{{text}}` has no fields"));
        assert!(parse("{{sly_data..x}}").unwrap_err().contains("has an empty key"));
        assert!(parse("{{env}}").unwrap_err().contains("names no variable"));
        assert!(parse("{\"q\": {{text}").unwrap_err().starts_with("`{{` opens a placeholder that no `}}` closes"));
    }

    #[test]
    fn env_reads_only_what_case_files_may() {
        assert!(parse("{{env.SECRET_KEY}}").unwrap().reads_env());
        let error = parse("{{env.HOME}}").unwrap_err();
        assert!(error.starts_with("`{{env.HOME}}` names a variable connections may not read"), "{error}");
        assert!(error.contains("allow_env = [\"HOME\"]\nor passing --allow-env HOME"), "{error}");
        let error = parse("{{env.ASSAY_CASE_UNSET}}").unwrap_err();
        assert!(error.starts_with("`{{env.ASSAY_CASE_UNSET}}` names a variable that is not set"), "{error}");
    }
}
