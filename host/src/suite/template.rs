//! `{{field}}` templates: a suite's request text, expected values and setup
//! command, filled from one spec line. A field is put in as text when it is
//! a string and as its JSON otherwise; in an expected value, a string that
//! is exactly one `{{field}}` becomes the field's value itself (so that
//! `expected = "{{gold_rows}}"` can hand a list or a table to a matcher).
//! Templates are parsed when the suite is read, so that a stray `{{` is the
//! suite's error, not every line's.

use serde_json::{Map, Value};

/// A parsed template: text and the fields it names, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Field(String),
}

/// A field a template names that the spec line does not have.
#[derive(Clone, Debug, PartialEq)]
pub struct MissingField(pub String);

impl Template {
    /// Parses `text`: `{{name}}` (spaces around the name allowed) names a
    /// field; `{{` with no `}}` after it, or an empty name, is an error.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                parts.push(Part::Text(rest[..start].to_owned()));
            }
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| format!("`{{{{` at {:?} is not closed by `}}}}`", short(&rest[start..])))?;
            let name = after[..end].trim();
            if name.is_empty() || name.contains(['{', '}']) {
                return Err(format!("`{{{{{}}}}}` names no field; write `{{{{FIELD}}}}`", &after[..end]));
            }
            parts.push(Part::Field(name.to_owned()));
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Template { parts })
    }

    /// The fields it names.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Field(name) => Some(name.as_str()),
            Part::Text(_) => None,
        })
    }

    /// The text with every field filled from `line`.
    pub fn fill(&self, line: &Map<String, Value>) -> Result<String, MissingField> {
        let mut text = String::new();
        for part in &self.parts {
            match part {
                Part::Text(literal) => text.push_str(literal),
                Part::Field(name) => match line.get(name) {
                    Some(Value::String(value)) => text.push_str(value),
                    Some(value) => text.push_str(&value.to_string()),
                    None => return Err(MissingField(name.clone())),
                },
            }
        }
        Ok(text)
    }

    /// The one field it is, when it is exactly `{{field}}`.
    fn single_field(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Field(name)] => Some(name),
            _ => None,
        }
    }
}

/// A JSON value with a template in place of every string (keys are not
/// templated).
#[derive(Clone, Debug, PartialEq)]
pub enum ValueTemplate {
    /// A string, templated.
    Text(Template),
    /// A list.
    List(Vec<ValueTemplate>),
    /// A dictionary.
    Object(Vec<(String, ValueTemplate)>),
    /// A number, boolean or null, as it is.
    Plain(Value),
}

impl ValueTemplate {
    /// Parses every string of `value`; `at` names it in errors.
    pub fn parse(value: &Value, at: &str) -> Result<ValueTemplate, String> {
        Ok(match value {
            Value::String(text) => ValueTemplate::Text(Template::parse(text).map_err(|e| format!("`{at}`: {e}"))?),
            Value::Array(items) => ValueTemplate::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| ValueTemplate::parse(item, &format!("{at}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(entries) => ValueTemplate::Object(
                entries
                    .iter()
                    .map(|(key, item)| Ok((key.clone(), ValueTemplate::parse(item, &format!("{at}.{key}"))?)))
                    .collect::<Result<_, String>>()?,
            ),
            plain => ValueTemplate::Plain(plain.clone()),
        })
    }

    /// The value with every string filled from `line`; a string that is
    /// exactly one `{{field}}` becomes the field's value.
    pub fn fill(&self, line: &Map<String, Value>) -> Result<Value, MissingField> {
        Ok(match self {
            ValueTemplate::Text(template) => match template.single_field() {
                Some(name) => line.get(name).cloned().ok_or_else(|| MissingField(name.to_owned()))?,
                None => Value::String(template.fill(line)?),
            },
            ValueTemplate::List(items) => {
                Value::Array(items.iter().map(|item| item.fill(line)).collect::<Result<_, _>>()?)
            }
            ValueTemplate::Object(entries) => Value::Object(
                entries.iter().map(|(key, item)| Ok((key.clone(), item.fill(line)?))).collect::<Result<_, _>>()?,
            ),
            ValueTemplate::Plain(value) => value.clone(),
        })
    }
}

/// The start of `text`, for messages.
fn short(text: &str) -> String {
    let mut cut: String = text.chars().take(30).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn fields_fill_as_text_or_json() {
        let template = Template::parse("Q: {{question}} ({{ n }}, {{tags}})").unwrap();
        assert_eq!(template.fields().collect::<Vec<_>>(), ["question", "n", "tags"]);
        let spec = line(json!({"question": "how many?", "n": 3, "tags": ["a"]}));
        assert_eq!(template.fill(&spec).unwrap(), r#"Q: how many? (3, ["a"])"#);
        assert_eq!(template.fill(&line(json!({"question": "x"}))), Err(MissingField("n".into())));
    }

    #[test]
    fn unclosed_or_empty_fields_are_errors() {
        assert_eq!(Template::parse("a {{b").unwrap_err(), "`{{` at \"{{b\" is not closed by `}}`");
        assert_eq!(Template::parse("a {{ }}").unwrap_err(), "`{{ }}` names no field; write `{{FIELD}}`");
        assert_eq!(Template::parse("no fields").unwrap().fill(&Map::new()).unwrap(), "no fields");
    }

    #[test]
    fn an_expected_value_is_templated_in_every_string_and_a_lone_field_keeps_its_type() {
        let expected = json!({"reference": "{{answer}}", "rows": "{{rows}}", "threshold": 0.8, "types": ["x {{n}}"]});
        let template = ValueTemplate::parse(&expected, "checks[0].expected").unwrap();
        let spec = line(json!({"answer": "four", "rows": [[1, 2]], "n": 2}));
        assert_eq!(
            template.fill(&spec).unwrap(),
            json!({"reference": "four", "rows": [[1, 2]], "threshold": 0.8, "types": ["x 2"]})
        );
        assert_eq!(
            ValueTemplate::parse(&json!({"a": ["{{"]}), "expected").unwrap_err(),
            "`expected.a[0]`: `{{` at \"{{\" is not closed by `}}`"
        );
    }
}
