//! The deterministic text types: `equals`, the `contains` family,
//! `regex`, `is-json`, `contains-json` and `is-valid-openai-tools-call`.

use crate::{Expected, Graded, js, schema};
use assay_plugin_sdk::{Actual, Json};

/// `equals`: a JSON value (object, array or null) deep-equals the output
/// parsed as JSON; any other value equals the output as `String(value)`.
pub fn equals(e: &Expected, output: &str) -> Result<Graded, String> {
    let value = e.value("the text the output must equal")?;
    let pass = match value {
        Json::Object(_) | Json::Array(_) => {
            serde_json::from_str::<Json>(output).is_ok_and(|parsed| js::deep_equal(value, &parsed))
        }
        other => js::to_string(other) == output,
    };
    Ok(Graded::binary(pass, format!("output equals {value}")))
}

/// `contains` / `icontains`: a non-empty string or a number.
pub fn contains(e: &Expected, output: &str, ignore_case: bool) -> Result<Graded, String> {
    let needle = match e.value {
        Some(Json::String(text)) if !text.is_empty() => text.clone(),
        Some(Json::Number(n)) => js::to_string(&Json::Number(n.clone())),
        _ => return Err(format!("{} needs `value`: a non-empty string or a number", e.key)),
    };
    let found =
        if ignore_case { output.to_lowercase().contains(&needle.to_lowercase()) } else { output.contains(&needle) };
    Ok(Graded::binary(found, format!("output contains {needle:?}")))
}

/// `contains-any` / `contains-all` and their `i` forms: a list, or a
/// comma-separated string (double quotes keep commas).
pub fn contains_some(e: &Expected, output: &str, ignore_case: bool, all: bool) -> Result<Graded, String> {
    let what = "a list of strings, or a comma-separated string";
    let needles: Vec<String> = match e.value {
        Some(Json::String(text)) if !text.is_empty() => {
            comma_separated(text).map_err(|error| format!("{}'s value: {error}", e.key))?
        }
        Some(Json::Array(items)) => items.iter().map(js::to_string).collect(),
        _ => return Err(format!("{} needs `value`: {what}", e.key)),
    };
    let fold = |text: &str| if ignore_case { text.to_lowercase() } else { text.to_owned() };
    let haystack = fold(output);
    let found = |needle: &String| haystack.contains(&fold(needle));
    let pass = if all { needles.iter().all(found) } else { needles.iter().any(found) };
    let quantifier = if all { "all of" } else { "one of" };
    Ok(Graded::binary(pass, format!("output contains {quantifier} {needles:?}")))
}

/// promptfoo's `parseCommaSeparatedValues`: fields split at commas,
/// unquoted ones trimmed, double-quoted ones kept whole with `\"`, `\\` and
/// `""` as escapes.
fn comma_separated(value: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = value.chars().collect();
    let skip_spaces = |mut i: usize| {
        while i < chars.len() && js::is_space(chars[i]) {
            i += 1;
        }
        i
    };
    let mut fields = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        loop {
            i = skip_spaces(i);
            if i < chars.len() && chars[i] == ',' {
                i += 1;
            } else {
                break;
            }
        }
        if i >= chars.len() {
            break;
        }
        if chars[i] == '"' {
            let mut field = String::new();
            let mut j = i + 1;
            let mut terminated = false;
            while j < chars.len() {
                match (chars[j], chars.get(j + 1)) {
                    ('\\', Some(&next @ ('"' | '\\'))) | ('"', Some(&next @ '"')) => {
                        field.push(next);
                        j += 2;
                    }
                    ('"', _) => {
                        j += 1;
                        terminated = true;
                        break;
                    }
                    (c, _) => {
                        field.push(c);
                        j += 1;
                    }
                }
            }
            if !terminated {
                return Err("a quoted field is not terminated: close it with `\"`".to_owned());
            }
            fields.push(field);
            i = skip_spaces(j);
            if i < chars.len() && chars[i] != ',' {
                return Err("a quoted field must be followed by a comma".to_owned());
            }
        } else {
            let start = i;
            while i < chars.len() && chars[i] != ',' {
                i += 1;
            }
            fields.push(js::trim(&chars[start..i].iter().collect::<String>()).to_owned());
        }
    }
    Ok(fields)
}

/// `regex`: the JavaScript regular expression (no flags) matches somewhere.
/// A pattern that does not compile is an error (promptfoo fails the check).
pub fn regex(e: &Expected, output: &str) -> Result<Graded, String> {
    let pattern = e.string("the regular expression as a non-empty string")?;
    if pattern.is_empty() {
        return Err(format!("{} needs a non-empty `value`: the regular expression", e.key));
    }
    let regex = regress::Regex::with_flags(pattern, "")
        .map_err(|error| format!("{}'s regular expression {pattern:?} does not compile: {error}", e.key))?;
    Ok(Graded::binary(regex.find(output).is_some(), format!("output matches /{pattern}/")))
}

/// The schema in an `is-json`/`contains-json` value: an object, or a
/// string holding one as JSON; `None` when the value is absent or falsy.
fn schema_of(e: &Expected) -> Result<Option<Json>, String> {
    let schema = match e.value {
        None | Some(Json::Bool(false)) => return Ok(None),
        Some(Json::String(text)) if text.is_empty() => return Ok(None),
        Some(Json::Number(n)) if n.as_f64() == Some(0.0) => return Ok(None),
        Some(Json::String(text)) => serde_json::from_str(text).map_err(|error| {
            format!("{}'s schema string is not JSON ({error}): write the schema as an object", e.key)
        })?,
        Some(Json::Object(map)) => Json::Object(map.clone()),
        Some(other) => {
            return Err(format!(
                "{}'s value is a JSON schema object, found {}",
                e.key,
                assay_plugin_sdk::params::describe(other)
            ));
        }
    };
    schema::check(&schema).map_err(|error| format!("{}'s schema: {error}", e.key))?;
    Ok(Some(schema))
}

/// `is-json`: the output parses as JSON, conforming to the schema if any.
pub fn is_json(e: &Expected, output: &str) -> Result<Graded, String> {
    let schema = schema_of(e)?;
    let pass = match serde_json::from_str::<Json>(output) {
        Ok(parsed) => schema.as_ref().is_none_or(|schema| schema::valid(schema, &parsed)),
        Err(_) => false,
    };
    Ok(Graded::binary(
        pass,
        if schema.is_some() { "output is JSON conforming to the schema" } else { "output is JSON" },
    ))
}

/// `contains-json`: some JSON object in the output (conforming to the
/// schema, if any).
pub fn contains_json(e: &Expected, output: &str) -> Result<Graded, String> {
    let schema = schema_of(e)?;
    let objects = js::extract_json_objects(output);
    let pass = match &schema {
        None => !objects.is_empty(),
        Some(schema) => objects.iter().any(|object| schema::valid(schema, object)),
    };
    Ok(Graded::binary(pass, "output contains a JSON object"))
}

/// `is-valid-openai-tools-call`, shape only: the output (a JSON text or
/// value) is a non-empty list of tool calls, or an object whose `tool_calls`
/// is one, each with a string `function.name` and `function.arguments`.
/// promptfoo also validates each call against the provider's declared tools,
/// which assay does not see. An output naming an MCP tool result passes, an
/// MCP tool error fails. promptfoo ignores `not-` for this type: the `not-`
/// form gives the same verdict.
pub fn tools_call(actual: &Actual) -> Graded {
    let parsed = match actual.as_str() {
        Some(text) => {
            if text.contains("MCP Tool Error") {
                return same_when_negated(false, "an MCP tool call failed");
            }
            if text.contains("MCP Tool Result") {
                return same_when_negated(true, "an MCP tool call succeeded");
            }
            serde_json::from_str::<Json>(text).ok()
        }
        None => actual.as_json().ok().cloned(),
    };
    let calls = match &parsed {
        Some(Json::Object(object)) if object.contains_key("tool_calls") => object.get("tool_calls"),
        other => other.as_ref(),
    };
    let valid = match calls {
        Some(Json::Array(calls)) => {
            !calls.is_empty()
                && calls
                    .iter()
                    .all(|call| call["function"]["name"].is_string() && call["function"]["arguments"].is_string())
        }
        _ => false,
    };
    same_when_negated(
        valid,
        if valid {
            "output has the shape of OpenAI tool calls"
        } else {
            "output is not a valid-looking tools response"
        },
    )
}

/// `is-valid-openai-function-call`, as promptfoo's openai provider checks
/// it (`validateFunctionCall`): the output (or its `function_call`) is an
/// object with a string `name` and string `arguments`, which parse as
/// JSON and conform to the `parameters` of the provider's function of that
/// name. `functions` is the provider's (`false`: a provider that cannot
/// check calls). promptfoo ignores `not-` for this type.
pub fn function_call(actual: &Actual, functions: Option<&Json>) -> Graded {
    if functions == Some(&Json::Bool(false)) {
        return same_when_negated(false, "Provider does not have functionality for checking function call.");
    }
    let output = match actual.as_str() {
        Some(text) => Json::String(text.to_owned()),
        None => actual.as_json().cloned().unwrap_or(Json::Null),
    };
    let call = match &output {
        Json::Object(object) if object.contains_key("function_call") => object["function_call"].clone(),
        other => other.clone(),
    };
    let (Some(name), Some(arguments)) =
        (call.get("name").and_then(Json::as_str), call.get("arguments").and_then(Json::as_str))
    else {
        return same_when_negated(false, &format!("OpenAI did not return a valid-looking function call: {call}"));
    };
    let arguments: Json = match serde_json::from_str(arguments) {
        Ok(arguments) => arguments,
        Err(error) => return same_when_negated(false, &format!("the call's arguments are not JSON: {error}")),
    };
    let function = functions.and_then(Json::as_array).and_then(|list| list.iter().find(|f| f["name"] == name));
    let Some(parameters) = function.and_then(|f| f.get("parameters")).filter(|p| !p.is_null()) else {
        return same_when_negated(false, &format!("Called \"{name}\", but there is no function with that name"));
    };
    if let Err(error) = schema::check(parameters) {
        return same_when_negated(false, &format!("the function's parameters are not a schema assay reads: {error}"));
    }
    match schema::valid(parameters, &arguments) {
        true => same_when_negated(true, "Assertion passed"),
        false => same_when_negated(false, &format!("Call to \"{name}\" does not match schema")),
    }
}

fn same_when_negated(pass: bool, reason: &str) -> Graded {
    let score = f64::from(u8::from(pass));
    Graded { pass, score, reason: reason.to_owned(), negated: (pass, score) }
}

#[cfg(test)]
mod tests {
    use super::comma_separated;

    #[test]
    fn comma_separated_values_keep_quoted_commas() {
        assert_eq!(comma_separated(r#"a, "b, c" ,d"#).unwrap(), ["a", "b, c", "d"]);
        assert_eq!(comma_separated(r#""say ""hi""""#).unwrap(), [r#"say "hi""#]);
        assert!(comma_separated(r#""open"#).is_err());
    }
}
