//! The stock matchers of neuro-san's test-case format, as one built-in
//! component: `value`, `less`, `greater` and `keywords`. The host derives
//! every `not_` form by negating the verdict.
//!
//! Semantics (see the project README, "Semantics"):
//! - `value`: JSON equality where `5 == 5.0` but `"5" != 5` and `true != 1`.
//! - `less: v` / `greater: v`: the actual value is below / above `v`;
//!   numbers compare numerically, strings by code point; anything else is
//!   an error verdict, never a silent pass or fail.
//! - `keywords: k`: `k` occurs in a string (case-sensitive substring), is an
//!   element of a list, or is a key of an object.

mod json;

use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use json::{show, values_equal};
use std::cmp::Ordering;

/// The stock matchers.
pub struct Stock;

impl Matcher for Stock {
    fn describe() -> PluginInfo {
        PluginInfo::new("stock", env!("CARGO_PKG_VERSION"))
            .matcher("value", "the value equals the expected JSON value (5 == 5.0, no coercion)")
            .matcher("less", "the value is less than the expected number or string")
            .matcher("greater", "the value is greater than the expected number or string")
            .matcher("keywords", "the keyword occurs in the string, is an element of the list or a key of the object")
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        match key {
            "value" => value(actual, expected),
            "less" => order(actual, expected, Ordering::Less),
            "greater" => order(actual, expected, Ordering::Greater),
            "keywords" => keywords(actual, expected),
            other => Err(format!("the stock plugin has no matcher `{other}`")),
        }
    }
}

export_matcher!(Stock);

/// `value`: JSON equality.
fn value(actual: &Actual, expected: &Json) -> Result<Verdict, String> {
    let actual = actual.as_json()?;
    Ok(if values_equal(actual, expected) {
        Verdict::new(true, format!("{} equals {}", show(actual), show(expected)))
    } else {
        Verdict::new(false, format!("{} does not equal {}", show(actual), show(expected)))
    })
}

/// `less` and `greater`: compares the actual value with the bound.
fn order(actual: &Actual, bound: &Json, wanted: Ordering) -> Result<Verdict, String> {
    let actual = actual.as_json()?;
    let relation = if wanted == Ordering::Less { "less" } else { "greater" };
    let ordering = match (actual, bound) {
        (Json::Number(a), Json::Number(b)) => json::compare_numbers(a, b),
        (Json::String(a), Json::String(b)) => Some(a.as_str().cmp(b.as_str())),
        (Json::Number(_) | Json::String(_), Json::Number(_) | Json::String(_)) => {
            return Err(format!(
                "{relation} cannot compare {} with {}: compare numbers with numbers and strings with strings",
                json::type_and_value(actual),
                json::type_and_value(bound)
            ));
        }
        (Json::Number(_) | Json::String(_), _) => {
            return Err(format!(
                "{relation} needs a number or a string to compare with, found {}",
                json::type_and_value(bound)
            ));
        }
        _ => {
            return Err(format!("{relation} compares numbers or strings, found {}", json::type_and_value(actual)));
        }
    };
    let ordering = ordering.ok_or_else(|| format!("{relation} cannot order {} and {}", show(actual), show(bound)))?;
    let pass = ordering == wanted;
    let is = if pass { "is" } else { "is not" };
    Ok(Verdict::new(pass, format!("{} {is} {relation} than {}", show(actual), show(bound))))
}

/// `keywords`: substring of a string, element of a list, key of an object.
fn keywords(actual: &Actual, keyword: &Json) -> Result<Verdict, String> {
    if let Some(text) = actual.as_str() {
        let Json::String(keyword) = keyword else {
            return Err(format!(
                "keywords looks for strings in a string, but the keyword is {}",
                json::type_and_value(keyword)
            ));
        };
        let length = text.chars().count();
        return Ok(if text.contains(keyword.as_str()) {
            Verdict::new(true, format!("found {keyword:?} in a {length}-character string"))
        } else {
            Verdict::new(false, format!("{keyword:?} does not occur in a {length}-character string"))
        });
    }
    match actual.as_json()? {
        Json::Array(items) => {
            let found = items.iter().any(|item| values_equal(item, keyword));
            let does = if found { "contains" } else { "does not contain" };
            Ok(Verdict::new(found, format!("the list of {} elements {does} {}", items.len(), show(keyword))))
        }
        Json::Object(map) => {
            let Json::String(name) = keyword else {
                return Err(format!(
                    "keywords looks for keys in an object, but the keyword is {}",
                    json::type_and_value(keyword)
                ));
            };
            Ok(if map.contains_key(name) {
                Verdict::new(true, format!("the object has the key {name:?}"))
            } else {
                let keys: Vec<&str> = map.keys().map(String::as_str).take(10).collect();
                Verdict::new(false, format!("the object has no key {name:?} (its keys: {})", keys.join(", ")))
            })
        }
        other => Err(format!("keywords looks in a string, list or object, found {}", json::type_and_value(other))),
    }
}

#[cfg(test)]
mod tests;
