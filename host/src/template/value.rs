//! Values in and out of templates: JSON (a spec line, a test's vars, a
//! turn's sly_data) into the engine's values, and the engine's values
//! written back as JSON or as promptfoo's Nunjucks prints them.
//!
//! Numbers have two styles ([`Numbers`]): promptfoo's are JavaScript's,
//! which has one number type (`3.0` is `3`, written as `String(n)` and
//! `JSON.stringify` write it); everywhere else a number stays what the
//! JSON said (`3.0` is written `3.0`), so a request carries it unchanged.

use indexmap::IndexMap;
use minijinja::value::{Value, ValueKind};
use serde_json::Value as Json;
use std::fmt::Write;

/// How numbers are read and written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Numbers {
    /// As JavaScript: a float with no fraction is an integer, and numbers
    /// are written as `String(n)` writes them (`1e+21`, `0.000001`).
    JavaScript,
    /// As the JSON had them: `3.0` stays a float and is written `3.0`.
    Json,
}

/// `value` as a template value; objects keep their keys' order.
pub(super) fn from_json(value: &Json, numbers: Numbers) -> Value {
    match value {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // Integral floats below 2^53 are exact integers in JavaScript.
                if numbers == Numbers::JavaScript && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
                    Value::from(f as i64)
                } else {
                    Value::from(f)
                }
            }
        }
        Json::String(text) => Value::from(text.as_str()),
        Json::Array(items) => Value::from(items.iter().map(|item| from_json(item, numbers)).collect::<Vec<_>>()),
        Json::Object(map) => from_map(Some(map), numbers),
    }
}

/// A JSON object (`None`: an empty one) as a template value.
pub(super) fn from_map(map: Option<&serde_json::Map<String, Json>>, numbers: Numbers) -> Value {
    object(map.into_iter().flatten().map(|(key, item)| (Value::from(key.as_str()), from_json(item, numbers))))
}

/// An object of `entries`, in their order.
pub(super) fn object(entries: impl IntoIterator<Item = (Value, Value)>) -> Value {
    Value::from(entries.into_iter().collect::<IndexMap<Value, Value>>())
}

/// The context of one render: each of `names` that `lookup` finds.
pub(super) fn context<'a>(names: &'a [String], lookup: impl Fn(&'a str) -> Option<Value>) -> Value {
    object(names.iter().filter_map(|name| Some((Value::from(name.as_str()), lookup(name)?))))
}

/// How [`write_json`] lays JSON out.
pub(super) struct JsonStyle<'a> {
    /// How numbers are written.
    pub numbers: Numbers,
    /// The indent of one level; empty for compact JSON (`{"a":1}`).
    pub indent: &'a str,
}

/// The `dump` filter (Nunjucks'): the value as `JSON.stringify(value,
/// null, spaces)` writes it, `spaces` a number (up to 10) or the indent
/// itself; undefined as nothing.
pub(super) fn dump(value: &Value, spaces: Option<Value>) -> String {
    let indent = match &spaces {
        Some(spaces) if spaces.is_number() => " ".repeat(spaces.as_usize().unwrap_or(0).min(10)),
        Some(spaces) => spaces.as_str().unwrap_or_default().chars().take(10).collect(),
        None => String::new(),
    };
    let mut out = String::new();
    write_json(&mut out, value, &JsonStyle { numbers: Numbers::JavaScript, indent: &indent }, 0);
    out
}

/// JSON `value` as JavaScript's `JSON.stringify(value)` writes it (numbers
/// as JavaScript prints them: `1.0` is `1`).
pub(super) fn stringify(value: &Json) -> String {
    let mut out = String::new();
    let style = JsonStyle { numbers: Numbers::JavaScript, indent: "" };
    write_json(&mut out, &from_json(value, Numbers::JavaScript), &style, 0);
    out
}

/// `value` as JSON into `out`, as `JSON.stringify` writes it: `false` (and
/// nothing written) for a value JSON has no place for (undefined, a
/// function), which an object leaves out and a list writes as `null`.
pub(super) fn write_json(out: &mut String, value: &Value, style: &JsonStyle<'_>, depth: usize) -> bool {
    match value.kind() {
        ValueKind::Undefined | ValueKind::Plain | ValueKind::Invalid => return false,
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => write_number(out, value, style.numbers, true),
        ValueKind::String => write_json_string(out, value.as_str().unwrap_or_default()),
        ValueKind::Bytes => write_json_string(out, &String::from_utf8_lossy(value.as_bytes().unwrap_or_default())),
        ValueKind::Map => {
            let entries: Vec<(Value, Value)> = match value.try_iter() {
                Ok(keys) => keys.map(|key| (value.get_item(&key).unwrap_or_default(), key)).collect(),
                Err(_) => Vec::new(),
            };
            out.push('{');
            let mut first = true;
            for (item, key) in entries {
                let mark = out.len();
                if !first {
                    out.push(',');
                }
                newline(out, style.indent, depth + 1);
                write_json_string(out, &key.to_string());
                out.push(':');
                if !style.indent.is_empty() {
                    out.push(' ');
                }
                if write_json(out, &item, style, depth + 1) {
                    first = false;
                } else {
                    out.truncate(mark);
                }
            }
            if !first {
                newline(out, style.indent, depth);
            }
            out.push('}');
        }
        // A list, or anything else that iterates (a `range(…)`).
        _ => {
            let items: Vec<Value> = value.try_iter().map(Iterator::collect).unwrap_or_default();
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style.indent, depth + 1);
                if !write_json(out, item, style, depth + 1) {
                    out.push_str("null");
                }
            }
            if !items.is_empty() {
                newline(out, style.indent, depth);
            }
            out.push(']');
        }
    }
    true
}

fn newline(out: &mut String, indent: &str, depth: usize) {
    if !indent.is_empty() {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(indent);
        }
    }
}

/// A string as a JSON string: quoted, with `"`, `\` and control characters
/// escaped (as `JSON.stringify` and serde_json both do).
pub(super) fn write_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number: an integer as its digits, a float by `numbers`; `in_json`
/// writes what JSON has no number for (NaN, infinities) as `null`.
fn write_number(out: &mut String, value: &Value, numbers: Numbers, in_json: bool) {
    if value.is_integer() {
        let _ = write!(out, "{value}");
        return;
    }
    let f = f64::try_from(value.clone()).unwrap_or(f64::NAN);
    if !f.is_finite() && in_json {
        out.push_str("null");
        return;
    }
    match numbers {
        Numbers::JavaScript => out.push_str(&js_number(f)),
        Numbers::Json => match serde_json::Number::from_f64(f) {
            Some(number) => {
                let _ = write!(out, "{number}");
            }
            None => out.push_str("null"),
        },
    }
}

/// A number as JavaScript's `String(n)` writes it (ECMA-262
/// Number::toString): the shortest digits that read back as `n`, in plain
/// notation from 1e-7 up to 1e21, in exponent notation (`1e+21`) outside.
pub(super) fn js_number(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` writes the shortest round-tripping digits: `1.5e-7`.
    let scientific = format!("{:e}", f.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    // The value is 0.DIGITS × 10^n.
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        match digits.split_at(1) {
            (first, "") => format!("{first}e{sign}{}", e.abs()),
            (first, rest) => format!("{first}.{rest}e{sign}{}", e.abs()),
        }
    };
    if f < 0.0 { format!("-{body}") } else { body }
}

/// A value as Nunjucks prints it: a string as itself, a number as
/// JavaScript writes it, `true`/`false`, a list as its elements joined by
/// `,` (nested lists flattened, as JavaScript's `Array.toString` does), an
/// object as `[object Object]`, undefined and `none` as nothing.
pub(super) fn write_nunjucks(out: &mut String, value: &Value) {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => {}
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => write_number(out, value, Numbers::JavaScript, false),
        ValueKind::String => out.push_str(value.as_str().unwrap_or_default()),
        ValueKind::Map => out.push_str("[object Object]"),
        ValueKind::Seq | ValueKind::Iterable => {
            for (i, item) in value.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_nunjucks(out, &item);
            }
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json(value: &Json, numbers: Numbers, indent: &str) -> String {
        let mut out = String::new();
        write_json(&mut out, &from_json(value, numbers), &JsonStyle { numbers, indent }, 0);
        out
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        let cases = [
            (3.0, "3"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (-1.25e-9, "-1.25e-9"),
            (-0.0, "0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (number, written) in cases {
            assert_eq!(js_number(number), written, "{number}");
        }
    }

    #[test]
    fn json_keeps_key_order_and_each_style_of_number() {
        let value = json!({"z": 3.0, "a": [1, "q\"\n\u{1}", null, true], "e": {}, "l": []});
        assert_eq!(json(&value, Numbers::Json, ""), r#"{"z":3.0,"a":[1,"q\"\n\u0001",null,true],"e":{},"l":[]}"#);
        assert_eq!(json(&value, Numbers::JavaScript, ""), r#"{"z":3,"a":[1,"q\"\n\u0001",null,true],"e":{},"l":[]}"#);
        assert_eq!(
            json(&json!({"a": [1, {"b": 2}]}), Numbers::JavaScript, "  "),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ]\n}"
        );
        // Every value serde_json writes reads back the same.
        let round_trip = json!({"big": u64::MAX, "neg": i64::MIN, "f": 1.0e-7, "s": "é\u{7f}\t"});
        assert_eq!(serde_json::from_str::<Json>(&json(&round_trip, Numbers::Json, "")).unwrap(), round_trip);
    }

    #[test]
    fn nunjucks_prints_lists_joined_and_objects_as_javascript_does() {
        let mut out = String::new();
        let value = json!([1, [2.0, "x"], null, {"k": 1}, true, 1.5]);
        write_nunjucks(&mut out, &from_json(&value, Numbers::JavaScript));
        assert_eq!(out, "1,2,x,,[object Object],true,1.5");
    }
}
