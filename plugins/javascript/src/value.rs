//! `pf_js_value`: promptfoo's JavaScript that computes a value rather than
//! a verdict, run in the same sandbox as the assertions: a config or tests
//! file written in JavaScript (its module's value), a test generator (called
//! with the tests entry's `config`), `transformVars` (called with the vars)
//! and `transform` (called with the output). The value comes back in the
//! verdict's extras as `{"value": …}`; a value JSON cannot hold exactly (a
//! function, a cycle) is an error naming where it is, never a silent loss.
//!
//! The expected value is an object:
//!
//! - `mode`: `transform` (promptfoo's `transform()`: the function is
//!   called with the actual value and `args`, and must return something)
//!   or `import` (promptfoo's `importModule()`: the module's value, or its
//!   export `function`; called with `args` when it is a function);
//! - `code` and `input` (`output` or `vars`, the first parameter's name):
//!   an inline transform; or `file`: `{"name", "source", "function"}`, a
//!   module the host read;
//! - `args`: the arguments after the actual value (a transform's
//!   `context`; a generator's `config`).

use crate::engine::{self, ValueScript};
use assay_plugin_sdk::{Actual, Json, Verdict};
use serde_json::json;

/// The key, and what it computes.
pub const KEY: (&str, &str) = (
    "pf_js_value",
    "promptfoo JavaScript that computes a value (a JS config or tests file, a test generator, a transform), run \
     sandboxed; the value is in the extras",
);

/// Computes the value the expected value asks for, with `actual` as the
/// transform's input.
pub fn evaluate(actual: &Actual, expected: &Json) -> Result<Verdict, String> {
    let object = expected.as_object().ok_or_else(|| {
        format!("pf_js_value: the expected value is {expected}, not an object with `mode`; the host writes it")
    })?;
    let text = |key: &str| object.get(key).and_then(Json::as_str);
    let args = match object.get("args") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(args)) => args.clone(),
        Some(other) => return Err(format!("pf_js_value: `args` is {other}, not a list")),
    };
    let file = match object.get("file") {
        None | Some(Json::Null) => None,
        Some(Json::Object(file)) => {
            let text = |key: &str| file.get(key).and_then(Json::as_str);
            let (Some(name), Some(source)) = (text("name"), text("source")) else {
                return Err("pf_js_value: `file` needs `name` and `source`".to_owned());
            };
            Some((name, source, text("function")))
        }
        Some(other) => return Err(format!("pf_js_value: `file` is {other}, not a module")),
    };
    let mode = text("mode").unwrap_or_default();
    let (script, label) = match (mode, file, text("code")) {
        ("transform", Some((name, source, function)), _) => {
            (ValueScript::Transform { name, source, function }, "the transform's value")
        }
        ("transform", None, Some(code)) => {
            let input = text("input").unwrap_or("output");
            if !["output", "vars"].contains(&input) {
                return Err(format!("pf_js_value: `input` is {input:?}, not `output` or `vars`"));
            }
            (ValueScript::Inline { code, input }, "the transform's value")
        }
        ("import", Some((name, source, function)), _) => {
            (ValueScript::Import { name, source, function }, "the module's value")
        }
        ("transform", None, None) => return Err("pf_js_value: a transform needs `code` or `file`".to_owned()),
        ("import", None, _) => return Err("pf_js_value: an import needs `file`".to_owned()),
        (other, _, _) => return Err(format!("pf_js_value: `mode` is {other:?}, not `transform` or `import`")),
    };
    let input = match actual.as_str() {
        Some(text) => Json::String(text.to_owned()),
        None => actual.as_json()?.clone(),
    };
    match engine::value(script, &input, &args, label)? {
        Some(value) => {
            let described = describe(&value);
            Ok(Verdict::new(true, format!("computed {described}")).with_extras(json!({ "value": value })))
        }
        None if mode == "transform" => Err("Transform function did not return a value".to_owned()),
        None => Ok(Verdict::new(true, "computed undefined").with_extras(json!({}))),
    }
}

/// What a value is, in a few words.
fn describe(value: &Json) -> String {
    match value {
        Json::Null => "null".to_owned(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => format!("a string of {} characters", s.chars().count()),
        Json::Array(a) => format!("a list of {}", a.len()),
        Json::Object(o) => format!("an object with {} keys", o.len()),
    }
}
