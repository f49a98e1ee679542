//! Suite templates ([`FieldTemplate`], [`ValueTemplate`]): a suite's
//! request `text`, `expected` values and setup `command`, filled from one
//! spec line (a JSON object).
//!
//! A field is put in as text when it is a string and as its JSON otherwise
//! (`{{tags}}` writes `["a"]`); filters and tags work on fields as
//! anywhere (`{{ question | trim }}`, `{% if hint %}…{% endif %}`). In an
//! expected value, a string that is exactly one `{{field}}` becomes the
//! field's value itself, whatever its type (so `expected =
//! "{{gold_rows}}"` hands a list or a table to a matcher). A field the
//! line does not have is an error naming it ([`FillError::Missing`]): a
//! field may be tested (`{% if hint is defined %}`), never printed unset.
//! Templates are parsed when the suite is read, so a stray `{{` is the
//! suite's error, not every line's.

use crate::template::engine::{self, Compiled};
use crate::template::value::{self, JsonStyle, Numbers};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// The fuel of one render: about four million instructions, or 256 MB of
/// values made and written (a field's text is written, not made).
const FUEL: u64 = 4_000_000;

/// The environment of every suite template, built once: a string is
/// written as its text, anything else as its JSON, and printing a value
/// that is not there is an error.
static ENVIRONMENT: LazyLock<Environment<'static>> = LazyLock::new(|| {
    engine::environment(UndefinedBehavior::SemiStrict, FUEL, |out, _, value| {
        if value.is_undefined() {
            return Err(Error::from(ErrorKind::UndefinedError));
        }
        if let Some(text) = value.as_str() {
            return out.write_str(text).map_err(Error::from);
        }
        let mut json = String::new();
        if !value::write_json(&mut json, value, &JsonStyle { numbers: Numbers::Json, indent: "" }, 0) {
            json.push_str("null");
        }
        out.write_str(&json).map_err(Error::from)
    })
});

/// Why a template could not be filled from a line.
#[derive(Clone, Debug, PartialEq)]
pub enum FillError {
    /// A field it uses that the line does not have.
    Missing(String),
    /// The template failed otherwise (a filter on the wrong type, a path
    /// into a field that is not there); the message says how.
    Failed(String),
}

/// A parsed template.
#[derive(Clone, Debug)]
pub struct FieldTemplate {
    body: Body,
}

#[derive(Clone, Debug)]
enum Body {
    /// Text without template syntax, as it is.
    Text(String),
    /// Exactly `{{field}}`: the field, looked up without the engine.
    Field(String),
    /// A template, with the fields it reads.
    Template { compiled: Compiled, variables: Vec<String> },
}

impl FieldTemplate {
    /// Parses `text`; the error says what is wrong and on which line.
    pub fn parse(text: &str) -> Result<FieldTemplate, String> {
        let body = if !engine::is_template(text) {
            Body::Text(text.to_owned())
        } else if let Some(field) = lone_field(text) {
            Body::Field(field.to_owned())
        } else {
            let compiled = Compiled::new(&ENVIRONMENT, text)?;
            let variables = compiled.variables(false);
            Body::Template { compiled, variables }
        };
        Ok(FieldTemplate { body })
    }

    /// The fields it uses, in the order it first uses them.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        let names: &[String] = match &self.body {
            Body::Text(_) => &[],
            Body::Field(name) => std::slice::from_ref(name),
            Body::Template { variables, .. } => variables,
        };
        names.iter().map(String::as_str).filter(move |name| match &self.body {
            Body::Template { compiled, .. } => !compiled.is_global(name),
            _ => true,
        })
    }

    /// The text with every field filled from `line`.
    pub fn fill(&self, line: &Map<String, Value>) -> Result<String, FillError> {
        match &self.body {
            Body::Text(text) => Ok(text.clone()),
            Body::Field(name) => match line.get(name) {
                Some(Value::String(text)) => Ok(text.clone()),
                Some(value) => Ok(value.to_string()),
                None => Err(FillError::Missing(name.clone())),
            },
            Body::Template { compiled, variables } => {
                let context = value::context(variables, |name| Some(value::from_json(line.get(name)?, Numbers::Json)));
                compiled.render(context).map_err(|error| {
                    let missing = match error.kind() {
                        ErrorKind::UndefinedError => self.fields().find(|field| !line.contains_key(*field)),
                        _ => None,
                    };
                    match missing {
                        Some(field) => FillError::Missing(field.to_owned()),
                        None => FillError::Failed(compiled.describe(&error)),
                    }
                })
            }
        }
    }

    /// The one field it is, when it is exactly `{{field}}`.
    fn single_field(&self) -> Option<&str> {
        match &self.body {
            Body::Field(name) => Some(name),
            _ => None,
        }
    }
}

/// The field `text` is when it is exactly `{{field}}` (spaces inside
/// allowed).
fn lone_field(text: &str) -> Option<&str> {
    let name = text.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_alphabetic() || first == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

/// A JSON value with a template in place of every string (keys are not
/// templated).
#[derive(Clone, Debug)]
pub enum ValueTemplate {
    /// A string, templated.
    Text(FieldTemplate),
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
            Value::String(text) => ValueTemplate::Text(FieldTemplate::parse(text).map_err(|e| format!("`{at}`: {e}"))?),
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
    pub fn fill(&self, line: &Map<String, Value>) -> Result<Value, FillError> {
        Ok(match self {
            ValueTemplate::Text(template) => match template.single_field() {
                Some(name) => line.get(name).cloned().ok_or_else(|| FillError::Missing(name.to_owned()))?,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn fields_fill_as_text_or_json() {
        let template = FieldTemplate::parse("Q: {{question}} ({{ n }}, {{tags}}, {{ x }})").unwrap();
        assert_eq!(template.fields().collect::<Vec<_>>(), ["question", "n", "tags", "x"]);
        let spec = line(json!({"question": "how many?", "n": 3, "tags": ["a", 1.0], "x": {"b": null, "a": true}}));
        assert_eq!(template.fill(&spec).unwrap(), r#"Q: how many? (3, ["a",1.0], {"b":null,"a":true})"#);
        assert_eq!(FieldTemplate::parse("{{ n }}").unwrap().fill(&spec).unwrap(), "3");
        assert_eq!(FieldTemplate::parse("no fields").unwrap().fill(&Map::new()).unwrap(), "no fields");
    }

    #[test]
    fn a_missing_field_is_an_error_naming_it() {
        let template = FieldTemplate::parse("Q: {{question}} ({{ n }})").unwrap();
        assert_eq!(template.fill(&line(json!({"question": "x"}))), Err(FillError::Missing("n".into())));
        assert_eq!(
            FieldTemplate::parse("{{ question }}").unwrap().fill(&Map::new()),
            Err(FillError::Missing("question".into()))
        );
        let filtered = FieldTemplate::parse("{{ question | upper }}!").unwrap();
        assert_eq!(filtered.fill(&Map::new()), Err(FillError::Missing("question".into())));
        // A field may be tested for, and a path into a field that is there
        // fails with where.
        let optional = FieldTemplate::parse("{{ q }}{% if hint is defined %} ({{ hint }}){% endif %}").unwrap();
        assert_eq!(optional.fill(&line(json!({"q": "a"}))).unwrap(), "a");
        assert_eq!(optional.fill(&line(json!({"q": "a", "hint": "b"}))).unwrap(), "a (b)");
        let error = FieldTemplate::parse("x {{ row.missing }}").unwrap().fill(&line(json!({"row": {}}))).unwrap_err();
        assert_eq!(error, FillError::Failed("undefined value (line 1: `x {{ row.missing }}`)".into()));
    }

    #[test]
    fn filters_and_tags_work_on_fields() {
        let spec = line(json!({"question": "  why?  ", "tags": ["a", "b"]}));
        let template = FieldTemplate::parse("{{ question | trim | upper }}{% for t in tags %} #{{ t }}{% endfor %}\n");
        assert_eq!(template.unwrap().fill(&spec).unwrap(), "WHY? #a #b\n");
        let ranged = FieldTemplate::parse("{% for i in range(2) %}{{ i }}{% endfor %}").unwrap();
        assert_eq!(ranged.fields().count(), 0);
    }

    #[test]
    fn unclosed_or_empty_fields_are_errors() {
        assert_eq!(
            FieldTemplate::parse("a {{b").unwrap_err(),
            "syntax error: unexpected end of input, expected end of variable block (line 1: `a {{b`)\n\n\
             Consider: every `{{` needs its `}}`, every `{%` its `%}` and every `{#` its `#}`; text that \
             holds them is written `{% raw %}…{% endraw %}`"
        );
        assert!(
            FieldTemplate::parse("a {{ }}").unwrap_err().starts_with("syntax error: unexpected end of variable block")
        );
    }

    #[test]
    fn an_expected_value_is_templated_in_every_string_and_a_lone_field_keeps_its_type() {
        let expected = json!({"reference": "{{answer}}", "rows": "{{ rows }}", "threshold": 0.8, "types": ["x {{n}}"]});
        let template = ValueTemplate::parse(&expected, "checks[0].expected").unwrap();
        let spec = line(json!({"answer": "four", "rows": [[1, 2.0]], "n": 2}));
        assert_eq!(
            template.fill(&spec).unwrap(),
            json!({"reference": "four", "rows": [[1, 2.0]], "threshold": 0.8, "types": ["x 2"]})
        );
        assert_eq!(template.fill(&line(json!({"answer": "four", "n": 2}))), Err(FillError::Missing("rows".into())));
        assert!(
            ValueTemplate::parse(&json!({"a": ["{{"]}), "expected")
                .unwrap_err()
                .starts_with("`expected.a[0]`: syntax error: unexpected end of input")
        );
    }
}
