//! Request templates ([`RequestTemplate`]): a `type = "http"` connection's
//! `url`, header values and `body`, filled from each turn's request.
//!
//! The placeholders: `{{text}}`, `{{agent}}`, `{{sample}}`,
//! `{{chat_context}}`, `{{sly_data}}` and its paths (`{{sly_data.a.b}}`,
//! `null` when absent), `{{env.NAME}}`; filters and tags work on them as
//! anywhere (`{{ text | trim }}`, `{% if sly_data.user %}…{% endif %}`).
//!
//! A template is parsed once, when the project builds the connection: an
//! unknown placeholder, or an `{{env.NAME}}` the case environment does not
//! allow, is an error then, not on the first request; an `{{env.NAME}}` is
//! read then too. Where a template lands decides how every value is
//! written ([`Encoding`]), by the environment's formatter, which the
//! template cannot turn off (`| safe` and `{% autoescape %}` change
//! nothing): in a body as JSON (a string quoted and escaped, so a turn's
//! text can never break out of its place), in a header as its text, in a
//! URL percent-encoded.

use crate::case::{CaseEnv, Lookup};
use crate::template::engine::{self, Compiled};
use crate::template::value::{self, JsonStyle, Numbers};
use minijinja::value::{Object, Value};
use minijinja::{Environment, Error, Output, UndefinedBehavior};
use std::sync::{Arc, LazyLock};

/// The placeholders a template may use, for messages.
const PLACEHOLDERS: &str =
    "{{text}}, {{sly_data}}, {{sly_data.KEY}}, {{agent}}, {{sample}}, {{chat_context}}, {{env.NAME}}";

/// The names a placeholder may start with, for "did you mean".
const HEADS: &[&str] = &["text", "sly_data", "agent", "sample", "chat_context", "env"];

/// The fuel of one render: about four million instructions, or 256 MB of
/// values made and written (a turn's text is written, not made).
const FUEL: u64 = 4_000_000;

/// How a value is written where its placeholder stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// As JSON: `"a \"quoted\" word"`, `{"k": 1}`, `null` (for bodies).
    Json,
    /// A string as its text, anything else as JSON (for header values).
    Text,
    /// [`Encoding::Text`], percent-encoded (for URLs).
    Url,
}

/// One environment per encoding, each built once.
fn environment(encoding: Encoding) -> &'static Environment<'static> {
    fn build(encoding: Encoding) -> Environment<'static> {
        engine::environment(UndefinedBehavior::Chainable, FUEL, move |out, _, value| write(out, value, encoding))
    }
    static JSON: LazyLock<Environment<'static>> = LazyLock::new(|| build(Encoding::Json));
    static TEXT: LazyLock<Environment<'static>> = LazyLock::new(|| build(Encoding::Text));
    static URL: LazyLock<Environment<'static>> = LazyLock::new(|| build(Encoding::Url));
    match encoding {
        Encoding::Json => &JSON,
        Encoding::Text => &TEXT,
        Encoding::Url => &URL,
    }
}

/// An `{{env.NAME}}` where the template is shown rather than sent: it
/// writes its placeholder, never the value.
#[derive(Debug)]
struct Hidden(String);

impl Object for Hidden {
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{{{env.{}}}}}", self.0)
    }
}

/// The formatter: every value written by `encoding`.
fn write(out: &mut Output, value: &Value, encoding: Encoding) -> Result<(), Error> {
    if let Some(hidden) = value.downcast_object_ref::<Hidden>() {
        return out.write_str(&format!("{{{{env.{}}}}}", hidden.0)).map_err(Error::from);
    }
    let mut json = String::new();
    let text = match (encoding, value.as_str()) {
        (Encoding::Text | Encoding::Url, Some(text)) => text,
        _ => {
            if !value::write_json(&mut json, value, &JsonStyle { numbers: Numbers::Json, indent: "" }, 0) {
                json.push_str("null");
            }
            &json
        }
    };
    if encoding == Encoding::Url {
        for byte in text.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                out.write_str(char::from(byte).encode_utf8(&mut [0; 4]))?;
            } else {
                out.write_fmt(format_args!("%{byte:02X}"))?;
            }
        }
        Ok(())
    } else {
        out.write_str(text).map_err(Error::from)
    }
}

/// A parsed request template.
#[derive(Clone, Debug)]
pub(crate) struct RequestTemplate {
    source: String,
    body: Body,
}

#[derive(Clone, Debug)]
enum Body {
    /// Text without placeholders, as it is.
    Text,
    Template {
        compiled: Compiled,
        /// The placeholders it reads (`text`, `sly_data`, `env`, …).
        heads: Vec<String>,
        /// `{{env.NAME}}`'s values, read when it was parsed, by name; none
        /// when it reads no variable.
        env: Option<Value>,
        /// The same names, each [`Hidden`].
        env_shown: Value,
    },
}

impl RequestTemplate {
    /// Parses `source`, to be written by `encoding`, reading `{{env.NAME}}`
    /// from `env`. The error says what is wrong with the placeholder; the
    /// caller names the setting.
    pub(crate) fn parse(source: &str, encoding: Encoding, env: &CaseEnv) -> Result<RequestTemplate, String> {
        if !engine::is_template(source) {
            return Ok(RequestTemplate { source: source.to_owned(), body: Body::Text });
        }
        let compiled = Compiled::new(environment(encoding), source)?;
        let mut heads: Vec<String> = Vec::new();
        let (mut values, mut shown) = (Vec::new(), Vec::new());
        for path in compiled.variables(true) {
            let (head, rest) = match path.split_once('.') {
                Some((head, rest)) => (head, Some(rest)),
                None => (path.as_str(), None),
            };
            match (head, rest) {
                ("text" | "agent" | "sample" | "chat_context" | "sly_data", None) | ("sly_data", Some(_)) => {}
                ("env", Some(name)) if !name.contains('.') => {
                    values.push((Value::from(name), Value::from(env_value(name, env)?)));
                    shown.push((Value::from(name), Value::from_object(Hidden(name.to_owned()))));
                }
                ("env", Some(path)) => {
                    let name = path.split('.').next().unwrap_or_default();
                    return Err(format!("`{{{{env.{path}}}}}`: `{{{{env.{name}}}}}` has no fields"));
                }
                ("env", None) => return Err("`{{env}}` names no variable; write `{{env.NAME}}`".to_owned()),
                ("text" | "agent" | "sample" | "chat_context", Some(_)) => {
                    return Err(format!("`{{{{{path}}}}}`: `{{{{{head}}}}}` has no fields"));
                }
                (head, _) if compiled.is_global(head) => continue,
                (head, rest) => {
                    let hint = crate::suggest::nearest(head, HEADS.iter().copied())
                        .map(|near| match rest {
                            Some(rest) => format!(" (did you mean `{{{{{near}.{rest}}}}}`?)"),
                            None => format!(" (did you mean `{{{{{near}}}}}`?)"),
                        })
                        .unwrap_or_default();
                    return Err(format!(
                        "unknown placeholder `{{{{{path}}}}}`{hint}; the placeholders are {PLACEHOLDERS}"
                    ));
                }
            }
            if !heads.iter().any(|known| known == head) {
                heads.push(head.to_owned());
            }
        }
        let env = (!values.is_empty()).then(|| value::object(values));
        let env_shown = value::object(shown);
        Ok(RequestTemplate { source: source.to_owned(), body: Body::Template { compiled, heads, env, env_shown } })
    }

    /// Whether the template reads an environment variable (its output is
    /// then a secret, e.g. an `authorization` header).
    pub(crate) fn reads_env(&self) -> bool {
        matches!(&self.body, Body::Template { env: Some(_), .. })
    }

    /// Whether it has tags (`{% if %}`, `{% for %}`): then what it writes
    /// may differ in shape from one turn to the next, not only in values.
    pub(crate) fn has_tags(&self) -> bool {
        self.source.contains("{%")
    }

    /// The template filled from `request`; the error says what failed.
    pub(crate) fn render(&self, request: &dyn RequestFields) -> Result<String, String> {
        self.fill(request, false)
    }

    /// [`RequestTemplate::render`] for messages and results: an environment
    /// variable shows as its placeholder, never its value (a URL may carry
    /// a key); a template that fails shows as written.
    pub(crate) fn shown(&self, request: &dyn RequestFields) -> String {
        self.fill(request, true).unwrap_or_else(|_| self.source.clone())
    }

    fn fill(&self, request: &dyn RequestFields, shown: bool) -> Result<String, String> {
        let Body::Template { compiled, heads, env, env_shown } = &self.body else {
            return Ok(self.source.clone());
        };
        let context = value::context(heads, |head| match head {
            "text" => Some(Value::from(request.text())),
            "agent" => Some(Value::from(request.agent())),
            "sample" => Some(request.sample().map_or(Value::from(()), Value::from)),
            "chat_context" => {
                Some(request.chat_context().map_or(Value::from(()), |v| value::from_json(v, Numbers::Json)))
            }
            "sly_data" => Some(value::from_map(request.sly_data(), Numbers::Json)),
            "env" if shown => Some(env_shown.clone()),
            "env" => env.clone(),
            _ => None,
        });
        compiled.render(context).map_err(|error| compiled.describe(&error))
    }
}

/// What a request template reads of one turn's request: the agent's chat
/// request implements it (`crate::agent`), so that the engine knows
/// nothing of agents.
pub trait RequestFields {
    /// The turn's text.
    fn text(&self) -> &str;
    /// The agent asked.
    fn agent(&self) -> &str;
    /// The sample's index, if the runner sent it.
    fn sample(&self) -> Option<u64>;
    /// The previous turn's `chat_context`.
    fn chat_context(&self) -> Option<&serde_json::Value>;
    /// The request's `sly_data`.
    fn sly_data(&self) -> Option<&serde_json::Map<String, serde_json::Value>>;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value as Json, json};

    fn parse(source: &str, encoding: Encoding) -> Result<RequestTemplate, String> {
        RequestTemplate::parse(
            source,
            encoding,
            &CaseEnv::new([("ASSAY_CASE_TEAM", "q\"a"), ("SECRET_KEY", "k")], ["SECRET_KEY"], None::<String>),
        )
    }

    /// A chat request as the agent's has it.
    #[derive(Clone, Default)]
    struct ChatRequest {
        agent: String,
        text: String,
        sly_data: Option<serde_json::Map<String, Json>>,
        chat_context: Option<Json>,
        metadata: Vec<(String, String)>,
    }

    impl RequestFields for ChatRequest {
        fn text(&self) -> &str {
            &self.text
        }
        fn agent(&self) -> &str {
            &self.agent
        }
        fn sample(&self) -> Option<u64> {
            self.metadata.iter().find(|(name, _)| name == "x-assay-sample")?.1.parse().ok()
        }
        fn chat_context(&self) -> Option<&Json> {
            self.chat_context.as_ref()
        }
        fn sly_data(&self) -> Option<&serde_json::Map<String, Json>> {
            self.sly_data.as_ref()
        }
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

    fn body(template: &RequestTemplate, request: &ChatRequest) -> Json {
        serde_json::from_str(&template.render(request).unwrap()).unwrap()
    }

    #[test]
    fn every_placeholder_becomes_one_json_value() {
        let template = parse(
            r#"{"q": {{text}}, "s": {{ sly_data.session }}, "id": {{sly_data.user.id}}, "tag": {{sly_data.user.tags.1}},
               "none": {{sly_data.nothing.here}}, "all": {{sly_data}}, "agent": {{agent}}, "n": {{sample}},
               "ctx": {{chat_context}}, "team": {{env.ASSAY_CASE_TEAM}}}"#,
            Encoding::Json,
        )
        .unwrap();
        assert_eq!(
            body(&template, &request()),
            json!({"q": "say \"hi\"\nthen }} {{text}}", "s": "s-1", "id": 7, "tag": "b", "none": null,
                   "all": {"session": "s-1", "user": {"id": 7, "tags": ["a", "b"]}}, "agent": "orders", "n": 2,
                   "ctx": null, "team": "q\"a"})
        );
        let later = ChatRequest { chat_context: Some(json!({"turn": 1.0})), sly_data: None, ..request() };
        let body = template.render(&later).unwrap();
        // A number goes as the JSON had it.
        assert!(body.contains(r#""ctx": {"turn":1.0}"#), "{body}");
        let body: Json = serde_json::from_str(&body).unwrap();
        assert_eq!((&body["all"], &body["s"]), (&json!({}), &Json::Null));
    }

    #[test]
    fn a_hostile_value_stays_one_json_string_whatever_the_template_does() {
        let hostile = "\"}, \"x\": 1, \"y\": \"\n{{ env.SECRET_KEY }}\\";
        let asked = ChatRequest { text: hostile.into(), ..request() };
        for source in [
            r#"{"q": {{text}}}"#,
            r#"{"q": {{text | safe}}}"#,
            r#"{"q": {% autoescape false %}{{text}}{% endautoescape %}}"#,
            r#"{"q": {{ text | replace("x", "x") }}}"#,
            r#"{"q": {% if text %}{{ text ~ "" }}{% endif %}}"#,
        ] {
            let template = parse(source, Encoding::Json).unwrap();
            assert_eq!(body(&template, &asked), json!({"q": hostile}), "{source}");
        }
        // A header gets the text (the client refuses a newline in it); a URL
        // gets it percent-encoded.
        assert_eq!(parse("{{text}}", Encoding::Text).unwrap().render(&asked).unwrap(), hostile);
        assert_eq!(
            parse("http://h/?q={{text}}", Encoding::Url).unwrap().render(&asked).unwrap(),
            "http://h/?q=%22%7D%2C%20%22x%22%3A%201%2C%20%22y%22%3A%20%22%0A%7B%7B%20env.SECRET_KEY%20%7D%7D%5C"
        );
    }

    #[test]
    fn headers_get_text_and_urls_get_percent_encoding() {
        let header = parse("Bearer {{sly_data.session}} #{{sample}} {{ sly_data.user }}", Encoding::Text).unwrap();
        assert_eq!(header.render(&request()).unwrap(), r#"Bearer s-1 #2 {"id":7,"tags":["a","b"]}"#);
        let url = parse("http://h/agents/{{agent}}/ask?q={{text}}", Encoding::Url).unwrap();
        let asked = ChatRequest { text: "a b/c&d=é".into(), ..request() };
        assert_eq!(url.render(&asked).unwrap(), "http://h/agents/orders/ask?q=a%20b%2Fc%26d%3D%C3%A9");
        assert!(!url.reads_env());
        let keyed = parse("http://h/ask?team={{env.ASSAY_CASE_TEAM}}&q={{text}}", Encoding::Url).unwrap();
        assert_eq!(keyed.render(&asked).unwrap(), "http://h/ask?team=q%22a&q=a%20b%2Fc%26d%3D%C3%A9");
        assert_eq!(keyed.shown(&asked), "http://h/ask?team={{env.ASSAY_CASE_TEAM}}&q=a%20b%2Fc%26d%3D%C3%A9");
        let plain = parse("http://h/chat", Encoding::Url).unwrap();
        assert_eq!(
            (plain.render(&asked).unwrap(), plain.shown(&asked)),
            ("http://h/chat".into(), "http://h/chat".into())
        );
    }

    #[test]
    fn filters_and_tags_work_on_placeholders() {
        let template = parse(
            r#"{"q": {{ text | upper }}, "tags": {{ sly_data.user.tags | join(",") }}{% if sly_data.session %}, "s": {{ sly_data.session }}{% endif %}}"#,
            Encoding::Json,
        )
        .unwrap();
        assert!(template.has_tags());
        let asked = ChatRequest { text: "hi".into(), ..request() };
        assert_eq!(body(&template, &asked), json!({"q": "HI", "tags": "a,b", "s": "s-1"}));
        let no_session = ChatRequest { sly_data: None, ..asked };
        assert_eq!(body(&template, &no_session), json!({"q": "HI", "tags": ""}));
    }

    #[test]
    fn a_bad_placeholder_is_named_with_the_nearest_one() {
        assert_eq!(
            parse("{\"q\": {{txet}}}", Encoding::Json).unwrap_err(),
            format!(
                "unknown placeholder `{{{{txet}}}}` (did you mean `{{{{text}}}}`?); the placeholders are {PLACEHOLDERS}"
            )
        );
        let error = |source: &str| parse(source, Encoding::Json).unwrap_err();
        assert!(error("{{slydata.session}}").contains("(did you mean `{{sly_data.session}}`?)"));
        assert!(error("{{text.length}}").contains("`{{text.length}}`: `{{text}}` has no fields"));
        assert!(error("{{env}}").contains("names no variable"));
        assert!(error("{{ env['HOME'] }}").contains("names no variable"));
        assert!(error("{{env.A.B}}").contains("`{{env.A}}` has no fields"));
        assert!(error("{\"q\": {{text}").starts_with("syntax error: unexpected `}`"), "{}", error("{\"q\": {{text}"));
        // A filter the engine lacks is the turn's error, named.
        let unknown = parse("{{ text | upperr }}", Encoding::Json).unwrap().render(&request()).unwrap_err();
        assert!(unknown.starts_with("unknown filter `upperr` (did you mean `upper`?)"), "{unknown}");
        // The engine's own globals are not placeholders.
        assert_eq!(
            parse("{% for i in range(2) %}{{ i }}{% endfor %}", Encoding::Text).unwrap().render(&request()).unwrap(),
            "01"
        );
    }

    #[test]
    fn env_reads_only_what_case_files_may() {
        assert!(parse("{{env.SECRET_KEY}}", Encoding::Text).unwrap().reads_env());
        let error = parse("{{env.HOME}}", Encoding::Text).unwrap_err();
        assert!(error.starts_with("`{{env.HOME}}` names a variable connections may not read"), "{error}");
        assert!(error.contains("allow_env = [\"HOME\"]\nor passing --allow-env HOME"), "{error}");
        let error = parse("{{env.ASSAY_CASE_UNSET}}", Encoding::Text).unwrap_err();
        assert!(error.starts_with("`{{env.ASSAY_CASE_UNSET}}` names a variable that is not set"), "{error}");
    }
}
