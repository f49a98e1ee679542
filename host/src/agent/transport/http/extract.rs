//! From the JSON values of a response (one body, or one per line or
//! event of a stream) to the [`AgentResponse`] checks see, by the
//! connection's JSONPath queries (RFC 9535, `serde_json_path`).
//!
//! How values combine, in order: `text` is every string its query selects,
//! concatenated (a stream of deltas reads as one answer; a lone body's
//! `$.content[*].text` too); `structure`, `sly_data` and `chat_context` are
//! the last value their query selects. A `null` selected counts as no
//! value. A query that selects nothing at all is an error verdict naming
//! it and showing what the response holds.

use crate::agent::message::ChatMessage;
use crate::agent::reduce::AgentResponse;
use crate::errors::AgentErrorKind;
use serde_json::{Map, Value};
use serde_json_path::JsonPath;

/// The most top-level keys a missing-path error lists.
const KEYS_SHOWN: usize = 20;

/// One configured query.
#[derive(Debug)]
struct Query {
    /// The setting it comes from: `text`, `structure`, ….
    setting: &'static str,
    /// As written.
    written: String,
    path: JsonPath,
}

/// A connection's queries into its responses.
#[derive(Debug)]
pub(crate) struct Queries {
    text: Query,
    structure: Option<Query>,
    sly_data: Option<Query>,
    chat_context: Option<Query>,
}

/// What the response's values came as, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    /// One JSON body.
    Body,
    /// JSON lines.
    Line,
    /// Server-sent events.
    Event,
}

impl Queries {
    /// Parses the queries; `text` is required. The error names the
    /// setting.
    pub(crate) fn parse(
        text: Option<&str>,
        structure: Option<&str>,
        sly_data: Option<&str>,
        chat_context: Option<&str>,
    ) -> Result<Queries, String> {
        let text = text.ok_or(
            "it has no `text`: a JSONPath to the answer's text in each response\n\nConsider text = \"$.answer\"",
        )?;
        let optional = |setting, written: Option<&str>| written.map(|w| Query::parse(setting, w)).transpose();
        Ok(Queries {
            text: Query::parse("text", text)?,
            structure: optional("structure", structure)?,
            sly_data: optional("sly_data", sly_data)?,
            chat_context: optional("chat_context", chat_context)?,
        })
    }

    /// The answer in `values`, which came as `unit`s.
    pub(crate) fn extract(&self, values: &[Value], unit: Unit) -> Result<AgentResponse, AgentErrorKind> {
        let mut selected_any = false;
        let mut text: Option<String> = None;
        for node in values.iter().flat_map(|value| self.text.path.query(value).all()) {
            selected_any = true;
            match node {
                Value::Null => {}
                Value::String(part) => text.get_or_insert_default().push_str(part),
                other => text.get_or_insert_default().push_str(&other.to_string()),
            }
        }
        if !selected_any {
            return Err(self.text.missing(values, unit));
        }
        let structure = self.object(self.structure.as_ref(), values, unit)?;
        let sly_data = self.object(self.sly_data.as_ref(), values, unit)?;
        let chat_context = match &self.chat_context {
            None => None,
            Some(query) => query.last(values, unit)?.filter(|v| !v.is_null()).cloned(),
        };
        // One message holds the answer, so that a MAXIMAL chat filter
        // records what was read.
        let message = ChatMessage {
            message_type: "AI".into(),
            text: text.clone(),
            structure: structure.clone(),
            sly_data: sly_data.clone(),
            chat_context: chat_context.clone(),
            origin: Vec::new(),
        };
        Ok(AgentResponse {
            text,
            structure,
            sly_data,
            chat_context,
            messages: vec![message],
            usage: None,
            cost: None,
            text_is_json: false,
        })
    }

    fn object(
        &self,
        query: Option<&Query>,
        values: &[Value],
        unit: Unit,
    ) -> Result<Option<Map<String, Value>>, AgentErrorKind> {
        let Some(query) = query else { return Ok(None) };
        match query.last(values, unit)? {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(map)) => Ok(Some(map.clone())),
            Some(other) => Err(AgentErrorKind::MalformedBody(format!(
                "`{} = \"{}\"` selects {}; {} must be a JSON object",
                query.setting,
                query.written,
                kind_of(other),
                query.setting
            ))),
        }
    }
}

impl Query {
    fn parse(setting: &'static str, written: &str) -> Result<Query, String> {
        let path = JsonPath::parse(written).map_err(|e| {
            let hint = if written.starts_with('$') {
                String::new()
            } else {
                format!("\n\nConsider `{setting} = \"$.{}\"`: a query starts at `$`, the response", written.trim())
            };
            format!("`{setting} = \"{written}\"` is not a JSONPath query (RFC 9535): {e}{hint}")
        })?;
        Ok(Query { setting, written: written.to_owned(), path })
    }

    /// The last value the query selects in any of `values`; an error if it
    /// selects none.
    fn last<'v>(&self, values: &'v [Value], unit: Unit) -> Result<Option<&'v Value>, AgentErrorKind> {
        let last = values.iter().rev().find_map(|value| self.path.query(value).last());
        match last {
            None => Err(self.missing(values, unit)),
            found => Ok(found),
        }
    }

    /// The error for a query that selects nothing: what the response holds
    /// instead.
    fn missing(&self, values: &[Value], unit: Unit) -> AgentErrorKind {
        AgentErrorKind::MissingPath { setting: self.setting, path: self.written.clone(), found: holdings(values, unit) }
    }
}

/// What the response holds, at its top level.
fn holdings(values: &[Value], unit: Unit) -> String {
    let (whose, none) = match unit {
        Unit::Body => ("its", "it is empty"),
        Unit::Line => ("its lines'", "it has no lines"),
        Unit::Event => ("its events'", "it has no events"),
    };
    if values.is_empty() {
        return none.to_owned();
    }
    let mut keys: Vec<&str> = Vec::new();
    for key in values.iter().filter_map(Value::as_object).flat_map(Map::keys) {
        if !keys.contains(&key.as_str()) {
            keys.push(key);
        }
    }
    if keys.is_empty() {
        let kinds: Vec<&str> = values.iter().map(kind_of).collect();
        return match unit {
            Unit::Body => format!("it is {}, not an object", kinds[0]),
            Unit::Line | Unit::Event => format!("{whose} values are not objects ({})", kinds[0]),
        };
    }
    let shown: Vec<String> = keys.iter().take(KEYS_SHOWN).map(|key| format!("`{key}`")).collect();
    let more = keys.len().saturating_sub(KEYS_SHOWN);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("{whose} top-level keys are {}{more}", shown.join(", "))
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn queries(text: &str, structure: Option<&str>, sly_data: Option<&str>, chat_context: Option<&str>) -> Queries {
        Queries::parse(Some(text), structure, sly_data, chat_context).unwrap()
    }

    #[test]
    fn a_body_gives_text_structure_and_state() {
        let queries = queries("$.answer", Some("$.data"), Some("$.state"), Some("$.session"));
        let body = json!({"answer": "42", "data": {"n": 42}, "state": {"user": "u"}, "session": "s-9"});
        let response = queries.extract(&[body], Unit::Body).unwrap();
        assert_eq!(response.text.as_deref(), Some("42"));
        assert_eq!(response.structure, json!({"n": 42}).as_object().cloned());
        assert_eq!(response.sly_data, json!({"user": "u"}).as_object().cloned());
        assert_eq!(response.chat_context, Some(json!("s-9")));
        assert_eq!(response.messages.len(), 1);
    }

    #[test]
    fn text_concatenates_and_the_rest_take_the_last_value() {
        let deltas = queries("$.delta", Some("$.data"), None, Some("$.session"));
        let lines = [
            json!({"delta": "Hel", "session": "a"}),
            json!({"delta": "lo", "data": {"n": 1}}),
            json!({"done": true, "data": {"n": 2}, "session": null}),
        ];
        let response = deltas.extract(&lines, Unit::Line).unwrap();
        assert_eq!(response.text.as_deref(), Some("Hello"));
        assert_eq!(response.structure, json!({"n": 2}).as_object().cloned());
        assert_eq!(response.chat_context, None, "the last value was null");
        let blocks = json!({"content": [{"text": "a"}, {"text": 1}, {"text": null}]});
        assert_eq!(
            queries("$.content[*].text", None, None, None).extract(&[blocks], Unit::Body).unwrap().text.as_deref(),
            Some("a1")
        );
    }

    #[test]
    fn a_missing_path_names_it_and_what_the_response_holds() {
        let queries = queries("$.answer", Some("$.data"), None, None);
        let error = queries.extract(&[json!({"reply": "x", "data": {}})], Unit::Body).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the response has nothing at `text = \"$.answer\"`: its top-level keys are `reply`, `data`\n\nConsider correcting `text` in the connection's [connections.NAME] of assay.toml"
        );
        let error = queries.extract(&[json!({"answer": "x"}), json!([1])], Unit::Line).unwrap_err();
        assert!(
            error.to_string().contains("nothing at `structure = \"$.data\"`: its lines' top-level keys are `answer`"),
            "{error}"
        );
        let error = queries.extract(&[], Unit::Event).unwrap_err();
        assert!(error.to_string().contains(": it has no events"), "{error}");
        let error = queries.extract(&[json!("text")], Unit::Body).unwrap_err();
        assert!(error.to_string().contains(": it is a string, not an object"), "{error}");
    }

    #[test]
    fn structure_must_be_an_object() {
        let error = queries("$.a", Some("$.data"), None, None).extract(&[json!({"a": "x", "data": [1]})], Unit::Body);
        assert_eq!(
            error.unwrap_err().to_string(),
            "the response is malformed: `structure = \"$.data\"` selects a list; structure must be a JSON object"
        );
    }

    #[test]
    fn a_bad_query_is_named_at_load() {
        let error = Queries::parse(Some("answer"), None, None, None).unwrap_err();
        assert!(error.starts_with("`text = \"answer\"` is not a JSONPath query (RFC 9535): "), "{error}");
        assert!(error.ends_with("Consider `text = \"$.answer\"`: a query starts at `$`, the response"), "{error}");
        assert!(Queries::parse(None, None, None, None).unwrap_err().starts_with("it has no `text`"));
        assert!(Queries::parse(Some("$.a"), Some("$.["), None, None).unwrap_err().starts_with("`structure = \"$.[\"`"));
    }
}
