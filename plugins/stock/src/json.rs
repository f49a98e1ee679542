//! JSON helpers for the stock matchers: equality where `5 == 5.0`, numeric
//! ordering across integer and float representations, and short renderings
//! for messages.

use assay_plugin_sdk::Json;
use serde_json::Number;
use std::cmp::Ordering;

/// The most characters of a value a message shows.
const SHOW_LIMIT: usize = 80;

/// JSON equality with numbers compared by value: `5 == 5.0`, but no
/// coercion between types (`"5" != 5`, `true != 1`).
pub fn values_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => compare_numbers(x, y) == Some(Ordering::Equal),
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_equal(a, b)),
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Orders two JSON numbers by value, exactly when both are integers.
pub fn compare_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_integer(a), as_integer(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn as_integer(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

/// The value as compact JSON, cut to a readable length.
pub fn show(value: &Json) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOW_LIMIT {
        return text;
    }
    let cut: String = text.chars().take(SHOW_LIMIT).collect();
    format!("{cut}…")
}

/// The value's JSON type followed by the value, e.g. `the string "5"`.
pub fn type_and_value(value: &Json) -> String {
    let kind = match value {
        Json::Null => return "null".to_owned(),
        Json::Bool(_) => "the boolean",
        Json::Number(_) => "the number",
        Json::String(_) => "the string",
        Json::Array(_) => "the list",
        Json::Object(_) => "the object",
    };
    format!("{kind} {}", show(value))
}
