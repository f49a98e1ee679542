//! The JSON Schema keywords `is-json` and `contains-json` schemas use in
//! practice, validated as Ajv (draft-07) validates them. A schema using any
//! other keyword is refused with its name, never half-checked.

use crate::js::deep_equal;
use regress::Regex;
use serde_json::{Map, Value as Json};

/// The keywords this validator understands (annotations included).
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "anyOf",
    "allOf",
    "oneOf",
    "not",
    "$schema",
    "$id",
    "title",
    "description",
    "default",
    "examples",
];

/// Checks that `schema` uses only supported keywords (recursively) and that
/// its patterns compile; the error names the first one that does not.
pub fn check(schema: &Json) -> Result<(), String> {
    let Json::Object(map) = schema else {
        return match schema {
            Json::Bool(_) => Ok(()),
            other => Err(format!("a JSON schema is an object, found {other}")),
        };
    };
    for (keyword, value) in map {
        if !KEYWORDS.contains(&keyword.as_str()) {
            return Err(format!(
                "the JSON schema keyword `{keyword}` is not supported; supported are {}",
                KEYWORDS.join(", ")
            ));
        }
        match keyword.as_str() {
            "properties" => {
                for sub in value.as_object().into_iter().flat_map(Map::values) {
                    check(sub)?;
                }
            }
            "additionalProperties" | "items" | "not" => check(value)?,
            "anyOf" | "allOf" | "oneOf" => {
                for sub in value.as_array().into_iter().flatten() {
                    check(sub)?;
                }
            }
            "pattern" => {
                let pattern = value.as_str().ok_or("a schema `pattern` is a string")?;
                Regex::with_flags(pattern, "u")
                    .map_err(|e| format!("the schema pattern {pattern:?} does not compile: {e}"))?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether `value` conforms to `schema` (already [`check`]ed).
pub fn valid(schema: &Json, value: &Json) -> bool {
    let map = match schema {
        Json::Bool(accept) => return *accept,
        Json::Object(map) => map,
        _ => return false,
    };
    map.iter().all(|(keyword, rule)| keyword_holds(keyword, rule, map, value))
}

fn number(rule: &Json) -> f64 {
    rule.as_f64().unwrap_or(f64::NAN)
}

fn keyword_holds(keyword: &str, rule: &Json, schema: &Map<String, Json>, value: &Json) -> bool {
    match keyword {
        "type" => match rule {
            Json::String(name) => has_type(name, value),
            Json::Array(names) => names.iter().filter_map(Json::as_str).any(|name| has_type(name, value)),
            _ => false,
        },
        "properties" => match (rule, value) {
            (Json::Object(properties), Json::Object(object)) => {
                properties.iter().all(|(name, sub)| object.get(name).is_none_or(|v| valid(sub, v)))
            }
            _ => true,
        },
        "required" => match value {
            Json::Object(object) => {
                rule.as_array().into_iter().flatten().filter_map(Json::as_str).all(|name| object.contains_key(name))
            }
            _ => true,
        },
        "additionalProperties" => match value {
            Json::Object(object) => {
                let declared = schema.get("properties").and_then(Json::as_object);
                object
                    .iter()
                    .filter(|(name, _)| declared.is_none_or(|d| !d.contains_key(*name)))
                    .all(|(_, v)| valid(rule, v))
            }
            _ => true,
        },
        "items" => match (rule, value) {
            (Json::Array(tuple), Json::Array(items)) => tuple.iter().zip(items).all(|(sub, v)| valid(sub, v)),
            (_, Json::Array(items)) => items.iter().all(|v| valid(rule, v)),
            _ => true,
        },
        "enum" => rule.as_array().is_some_and(|options| options.iter().any(|o| deep_equal(o, value))),
        "const" => deep_equal(rule, value),
        "minimum" => value.as_f64().is_none_or(|v| v >= number(rule)),
        "maximum" => value.as_f64().is_none_or(|v| v <= number(rule)),
        "exclusiveMinimum" => value.as_f64().is_none_or(|v| v > number(rule)),
        "exclusiveMaximum" => value.as_f64().is_none_or(|v| v < number(rule)),
        // Ajv counts string length in code points.
        "minLength" => value.as_str().is_none_or(|s| s.chars().count() as f64 >= number(rule)),
        "maxLength" => value.as_str().is_none_or(|s| s.chars().count() as f64 <= number(rule)),
        "pattern" => value.as_str().is_none_or(|s| {
            rule.as_str().and_then(|p| Regex::with_flags(p, "u").ok()).is_some_and(|regex| regex.find(s).is_some())
        }),
        "minItems" => value.as_array().is_none_or(|a| a.len() as f64 >= number(rule)),
        "maxItems" => value.as_array().is_none_or(|a| a.len() as f64 <= number(rule)),
        "uniqueItems" => value.as_array().is_none_or(|a| {
            rule != &Json::Bool(true) || a.iter().enumerate().all(|(i, x)| a[..i].iter().all(|y| !deep_equal(x, y)))
        }),
        "minProperties" => value.as_object().is_none_or(|o| o.len() as f64 >= number(rule)),
        "maxProperties" => value.as_object().is_none_or(|o| o.len() as f64 <= number(rule)),
        "anyOf" => rule.as_array().is_some_and(|subs| subs.iter().any(|sub| valid(sub, value))),
        "allOf" => rule.as_array().is_some_and(|subs| subs.iter().all(|sub| valid(sub, value))),
        "oneOf" => rule.as_array().is_some_and(|subs| subs.iter().filter(|sub| valid(sub, value)).count() == 1),
        "not" => !valid(rule, value),
        _ => true,
    }
}

fn has_type(name: &str, value: &Json) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_checked_by_type_required_and_properties() {
        let schema =
            json!({"type": "object", "required": ["name"], "properties": {"age": {"type": "integer", "minimum": 0}}});
        assert!(valid(&schema, &json!({"name": "x", "age": 3})));
        assert!(!valid(&schema, &json!({"age": 3})));
        assert!(!valid(&schema, &json!({"name": "x", "age": -1})));
        assert!(!valid(&schema, &json!([1])));
    }

    #[test]
    fn unsupported_keywords_are_named() {
        let error = check(&json!({"type": "object", "patternProperties": {}})).unwrap_err();
        assert!(error.contains("`patternProperties`"), "{error}");
    }
}
