//! The steps of promptfoo's `renderPrompt` around the template engine:
//! the vars as the template sees them (`resolveVariables`), each string of
//! a JSON prompt rendered (`renderVarsInObject`), and the second render of
//! a rendered prompt.

use crate::template::{NunjucksTemplate, is_template};
use serde_json::{Map, Value};

/// How many rounds `resolveVariables` makes.
const RESOLVE_ROUNDS: usize = 5;

/// The vars as a prompt sees them: a string's one trailing newline dropped,
/// then `{{name}}` (one word, spaces allowed inside the braces) in a string
/// replaced by the var `name`, the first such place of each var a round,
/// for up to five rounds, as promptfoo's `resolveVariables` does; an
/// unknown name is left for the template to fail on.
pub(super) fn prepared_vars(vars: &Map<String, Value>) -> Map<String, Value> {
    let mut vars = vars.clone();
    for value in vars.values_mut() {
        if let Value::String(text) = value
            && text.ends_with('\n')
        {
            text.pop();
        }
    }
    for _ in 0..RESOLVE_ROUNDS {
        let mut replaced = false;
        let names: Vec<String> = vars.keys().cloned().collect();
        for name in names {
            let Some(Value::String(text)) = vars.get(&name) else { continue };
            let Some((start, end, wanted)) = first_placeholder(text) else { continue };
            let Some(with) = vars.get(wanted).map(as_javascript_string) else { continue };
            let next = format!("{}{with}{}", &text[..start], &text[end..]);
            vars.insert(name, Value::String(next));
            replaced = true;
        }
        if !replaced {
            break;
        }
    }
    vars
}

/// The first `{{ name }}` of `text`: its start, its end and the name.
fn first_placeholder(text: &str) -> Option<(usize, usize, &str)> {
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| i + from) {
        let inner_start = open + 2;
        let rest = &text[inner_start..];
        let trimmed = rest.trim_start();
        let name_start = inner_start + (rest.len() - trimmed.len());
        let name_len = trimmed.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(trimmed.len());
        if name_len > 0 {
            let after = &text[name_start + name_len..];
            let spaces = after.len() - after.trim_start().len();
            if after.trim_start().starts_with("}}") {
                let end = name_start + name_len + spaces + 2;
                return Some((open, end, &text[name_start..name_start + name_len]));
            }
        }
        from = inner_start;
    }
    None
}

/// A value as JavaScript's `String()` writes it, for `resolveVariables`.
fn as_javascript_string(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => items.iter().map(as_javascript_string).collect::<Vec<_>>().join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// `value` with every string in it rendered with `vars`.
pub(super) fn strings_in(value: Value, vars: &Map<String, Value>) -> Result<Value, String> {
    Ok(match value {
        Value::String(text) => Value::String(render(&text, vars)?),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| strings_in(v, vars)).collect::<Result<_, _>>()?),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| Ok((k, strings_in(v, vars)?))).collect::<Result<_, String>>()?)
        }
        other => other,
    })
}

/// A rendered prompt rendered once more (promptfoo renders what it
/// rendered: a var that holds a template is filled too).
pub(super) fn again(rendered: String, vars: &Map<String, Value>) -> Result<String, String> {
    match is_template(&rendered) {
        true => render(&rendered, vars),
        false => Ok(rendered),
    }
}

fn render(text: &str, vars: &Map<String, Value>) -> Result<String, String> {
    NunjucksTemplate::parse(text)?.render(vars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn vars_lose_one_trailing_newline_and_fill_each_other_as_promptfoo_resolves_them() {
        let prepared = prepared_vars(&vars(json!({
            "topic": "owls\n\n", "ask": "tweet about {{ topic }} and {{topic}}", "n": 3, "count": "{{n}} times",
            "unknown": "{{ nobody }}", "filter": "{{ topic | upper }}",
        })));
        assert_eq!(prepared["topic"], "owls\n");
        // One place per round, five rounds.
        assert_eq!(prepared["ask"], "tweet about owls\n and owls\n");
        assert_eq!(prepared["count"], "3 times");
        assert_eq!(prepared["unknown"], "{{ nobody }}");
        assert_eq!(prepared["filter"], "{{ topic | upper }}");
    }

    #[test]
    fn a_rendered_prompt_is_rendered_again_and_json_strings_one_by_one() {
        let vars = vars(json!({"topic": "owls", "ask": "about {{ topic | upper }}"}));
        let first = render("Tweet {{ ask }}", &vars).unwrap();
        assert_eq!(first, "Tweet about {{ topic | upper }}");
        assert_eq!(again(first, &vars).unwrap(), "Tweet about OWLS");
        let chat = json!([{"role": "system", "content": "Be {{ topic }}"}, {"role": "user", "content": 5}]);
        assert_eq!(
            strings_in(chat, &vars).unwrap(),
            json!([{"role": "system", "content": "Be owls"}, {"role": "user", "content": 5}])
        );
    }
}
