//! The Nunjucks subset promptfoo users write in prompts: `{{ name }}`,
//! dotted paths (`{{ user.name }}`, `{{ items.0 }}`) and the filters `dump`
//! (JSON) and `trim`, chained (`{{ doc | trim | dump }}`). Anything else
//! (`{% … %}` tags, `{# … #}` comments, other filters, expressions) is an
//! error naming the template and what is supported, never a prompt sent
//! half-rendered.
//!
//! Values render as Nunjucks renders them: a string as itself, a number as
//! JavaScript writes it (`1`, not `1.0`), `true`/`false`, a list as its
//! elements joined by `,`, an object as `[object Object]`, and a variable
//! that is not set (or `null`) as nothing.

use serde_json::{Map, Value};

/// The most output one template may render, in bytes: a variable holding a
/// long text is fine, a template that multiplies one is not.
pub const MAX_RENDERED_BYTES: usize = 4 << 20;

/// A template, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Var { path: Vec<String>, filters: Vec<Filter> },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Filter {
    Dump,
    Trim,
}

/// What the templates may hold, for error messages.
const SUPPORTED: &str = "`{{ name }}`, `{{ a.b.c }}`, and the filters `| dump` and `| trim`";

impl Template {
    /// Parses `text`; the error says what is not supported and where.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = find_open(rest) {
            let (open, kind) = start;
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_owned()));
            }
            let after = &rest[open + 2..];
            match kind {
                '{' => {
                    let close = after.find("}}").ok_or_else(|| {
                        format!("a `{{{{` at byte {open} is never closed with `}}}}`; templates may hold {SUPPORTED}")
                    })?;
                    parts.push(parse_expression(after[..close].trim())?);
                    rest = &after[close + 2..];
                }
                other => {
                    let closing = if other == '%' { "%}" } else { "#}" };
                    let what = after.find(closing).map_or(after, |end| &after[..end]).trim();
                    let what: String = what.chars().take(40).collect();
                    return Err(format!(
                        "`{{{other} {what} {other}}}` is a Nunjucks {}, which assay does not run; templates may hold \
                         {SUPPORTED}\n\nConsider writing the prompt out, or one prompt per variant",
                        if other == '%' { "tag" } else { "comment" }
                    ));
                }
            }
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Template { parts })
    }

    /// Renders it with `vars`; an error when the output would pass
    /// [`MAX_RENDERED_BYTES`].
    pub fn render(&self, vars: &Map<String, Value>) -> Result<String, String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Var { path, filters } => {
                    let value = lookup(vars, path);
                    let mut rendered: Option<String> = None;
                    for filter in filters {
                        match filter {
                            Filter::Dump => {
                                let current = match &rendered {
                                    Some(text) => Value::String(text.clone()),
                                    None => value.cloned().unwrap_or(Value::Null),
                                };
                                rendered = Some(current.to_string());
                            }
                            Filter::Trim => {
                                let text = rendered.take().unwrap_or_else(|| display(value));
                                rendered = Some(text.trim().to_owned());
                            }
                        }
                    }
                    out.push_str(&rendered.unwrap_or_else(|| display(value)));
                }
            }
            if out.len() > MAX_RENDERED_BYTES {
                return Err(format!(
                    "it renders to over {} MiB; a prompt that large is a mistake or an attack",
                    MAX_RENDERED_BYTES >> 20
                ));
            }
        }
        Ok(out)
    }
}

/// The next `{{`, `{%` or `{#`, and which.
fn find_open(text: &str) -> Option<(usize, char)> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(1)).find_map(|i| match (bytes[i], bytes[i + 1]) {
        (b'{', b'{') => Some((i, '{')),
        (b'{', b'%') => Some((i, '%')),
        (b'{', b'#') => Some((i, '#')),
        _ => None,
    })
}

/// `name.path | filter | filter`.
fn parse_expression(expression: &str) -> Result<Part, String> {
    let mut pieces = expression.split('|').map(str::trim);
    let name = pieces.next().unwrap_or_default();
    let valid_segment = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    let path: Vec<String> = name.split('.').map(str::to_owned).collect();
    if name.is_empty() || !path.iter().all(|s| valid_segment(s)) || path[0].starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "`{{{{ {expression} }}}}` is not a variable; templates may hold {SUPPORTED}\n\nConsider computing the \
             value into a test's `vars`"
        ));
    }
    let filters = pieces
        .map(|filter| match filter {
            "dump" => Ok(Filter::Dump),
            "trim" => Ok(Filter::Trim),
            other => Err(format!(
                "the filter `{other}` in `{{{{ {expression} }}}}` is not supported; templates may hold {SUPPORTED}"
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(Part::Var { path, filters })
}

/// The value at a dotted path (list elements by index), if any.
fn lookup<'a>(vars: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let mut value = vars.get(&path[0])?;
    for segment in &path[1..] {
        value = match value {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// A value as Nunjucks prints it.
pub fn display(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => js_number(number),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Array(items)) => items.iter().map(|item| display(Some(item))).collect::<Vec<_>>().join(","),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
    }
}

/// A number as JavaScript's `String(n)` writes it, for the ones YAML gives
/// (integers, and floats whose fraction is zero print without `.0`).
fn js_number(number: &serde_json::Number) -> String {
    match number.as_f64() {
        Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        _ => number.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(template: &str, vars: Value) -> Result<String, String> {
        Template::parse(template)?.render(vars.as_object().unwrap())
    }

    #[test]
    fn variables_paths_and_filters_render_as_nunjucks_does() {
        let vars = json!({"name": " Ann ", "user": {"age": 3.0, "tags": ["a", "b"]}, "n": null, "o": {"k": 1}});
        assert_eq!(render("Hi {{name}}!", vars.clone()).unwrap(), "Hi  Ann !");
        assert_eq!(render("{{ name | trim }}", vars.clone()).unwrap(), "Ann");
        assert_eq!(render("{{ name | trim | dump }}", vars.clone()).unwrap(), "\"Ann\"");
        assert_eq!(render("{{user.age}} {{user.tags}} {{user.tags.1}}", vars.clone()).unwrap(), "3 a,b b");
        assert_eq!(render("{{ user | dump }}", vars.clone()).unwrap(), r#"{"age":3.0,"tags":["a","b"]}"#);
        assert_eq!(render("[{{missing}}][{{n}}][{{o}}]", vars).unwrap(), "[][][[object Object]]");
    }

    #[test]
    fn anything_else_is_an_error_naming_what_is_supported() {
        for bad in ["{% if x %}a{% endif %}", "{# note #}", "{{ x | upper }}", "{{ x + 1 }}", "{{ a", "{{ }}"] {
            let error = Template::parse(bad).unwrap_err();
            assert!(error.contains("`{{ name }}`") || error.contains("never closed"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_template_bomb_stops_at_the_cap() {
        let big = "x".repeat(1 << 20);
        let template = "{{v}}".repeat(8);
        let error = render(&template, json!({ "v": big })).unwrap_err();
        assert!(error.contains("MiB"), "{error}");
    }
}
