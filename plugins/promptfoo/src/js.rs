//! The few JavaScript semantics promptfoo's assertions lean on, done the way
//! JavaScript does them: `\s` and `trim`, `String(number)`, `Number(x)`,
//! `util.isDeepStrictEqual` on parsed JSON, `String.prototype.replace` with a
//! global regex, and promptfoo's `extractJsonObjects`.

use serde_json::Value as Json;

/// Whether `c` is JavaScript's `\s` (WhiteSpace and LineTerminator): unlike
/// Rust's `char::is_whitespace` it includes U+FEFF and excludes U+0085.
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// `text.trim()`.
pub fn trim(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// `text.trimEnd()`.
pub fn trim_end(text: &str) -> &str {
    text.trim_end_matches(is_space)
}

/// `text.split(/\s+/)`: empty pieces at either end are kept, as in JS.
pub fn split_spaces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_space(c) {
            pieces.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !is_space(d) {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            start = end;
        }
    }
    pieces.push(&text[start..]);
    pieces
}

/// `String(n)` for a finite number: integers without a fraction, the
/// shortest round-trip digits otherwise, exponent form below 1e-6 and from
/// 1e21 on (`1e+21`, `1.5e-7`).
pub fn number_to_string(n: f64) -> String {
    if n == 0.0 {
        return "0".to_owned();
    }
    let magnitude = n.abs();
    if (1e-6..1e21).contains(&magnitude) {
        return format!("{n}");
    }
    let exponent = format!("{n:e}");
    match exponent.split_once('e') {
        Some((mantissa, power)) if !power.starts_with('-') => format!("{mantissa}e+{power}"),
        _ => exponent,
    }
}

/// `String(value)` for a JSON value: strings as they are, numbers as JS
/// prints them, `null`, booleans, arrays joined by `,`, objects as
/// `[object Object]`.
pub fn to_string(value: &Json) -> String {
    match value {
        Json::String(text) => text.clone(),
        Json::Number(number) => number.as_f64().map(number_to_string).unwrap_or_else(|| number.to_string()),
        Json::Bool(flag) => flag.to_string(),
        Json::Null => "null".to_owned(),
        Json::Array(items) => items
            .iter()
            .map(|item| if item.is_null() { String::new() } else { to_string(item) })
            .collect::<Vec<_>>()
            .join(","),
        Json::Object(_) => "[object Object]".to_owned(),
    }
}

/// `Number(value)`: `NaN` where JavaScript gives `NaN`.
pub fn to_number(value: &Json) -> f64 {
    match value {
        Json::Number(number) => number.as_f64().unwrap_or(f64::NAN),
        Json::Bool(flag) => f64::from(u8::from(*flag)),
        Json::Null => 0.0,
        Json::String(text) => string_to_number(text),
        Json::Array(items) => match items.as_slice() {
            [] => 0.0,
            [one] => string_to_number(&to_string(one)),
            _ => f64::NAN,
        },
        Json::Object(_) => f64::NAN,
    }
}

/// `Number(text)`: trimmed, empty is 0, decimal, `Infinity`, `0x`/`0o`/`0b`.
fn string_to_number(text: &str) -> f64 {
    let text = trim(text);
    if text.is_empty() {
        return 0.0;
    }
    let radix = |digits: &str, base: u32| u64::from_str_radix(digits, base).map(|n| n as f64).unwrap_or(f64::NAN);
    match text.get(..2) {
        Some("0x" | "0X") => return radix(&text[2..], 16),
        Some("0o" | "0O") => return radix(&text[2..], 8),
        Some("0b" | "0B") => return radix(&text[2..], 2),
        _ => {}
    }
    match text {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    // Rust also reads `inf`, `nan` and `infinity`, which JavaScript does not.
    if text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) {
        text.parse().unwrap_or(f64::NAN)
    } else {
        f64::NAN
    }
}

/// `util.isDeepStrictEqual` on two values parsed from JSON: numbers compare
/// by value (`1` equals `1.0`), objects regardless of key order.
pub fn deep_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| deep_equal(x, y)),
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, value)| y.get(key).is_some_and(|other| deep_equal(value, other)))
        }
        _ => a == b,
    }
}

/// promptfoo's `extractJsonObjects`: from every `{`, the shortest balanced
/// (by a naive brace count) or, at the end of the text, auto-closed span that
/// parses as an object; scanning resumes after it. promptfoo parses each span
/// with a YAML loader, which also accepts YAML flow mappings (unquoted keys,
/// comments); this reads JSON only.
pub fn extract_json_objects(text: &str) -> Vec<Json> {
    const MAX_JSON_LENGTH: usize = 100_000;
    let bytes = text.as_bytes();
    let mut objects = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let (mut open, mut close) = (1usize, 0usize);
            let mut j = i + 1;
            let limit = (i + MAX_JSON_LENGTH).min(bytes.len());
            while j < limit && open > close {
                match bytes[j] {
                    b'{' => open += 1,
                    b'}' => close += 1,
                    _ => {}
                }
                j += 1;
                if open == close || j == bytes.len() || j == i + MAX_JSON_LENGTH {
                    let mut candidate = String::from_utf8_lossy(&bytes[i..j]).into_owned();
                    candidate.push_str(&"}".repeat(open.saturating_sub(close)));
                    match serde_json::from_str::<Json>(&candidate) {
                        Ok(object @ Json::Object(_)) => {
                            objects.push(object);
                            i = j - 1;
                            break;
                        }
                        _ if open == close => break,
                        _ => {}
                    }
                }
            }
        }
        i += 1;
    }
    objects
}

/// `text.replace(regex, template)` for a global `regex`: `$&` is the match,
/// `$1`…`$9` its groups (empty when a group did not take part).
pub fn replace_all(regex: &regress::Regex, text: &str, template: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut last = 0;
    for found in regex.find_iter(text) {
        out.push_str(&text[last..found.start()]);
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek().copied()) {
                ('$', Some('&')) => {
                    chars.next();
                    out.push_str(&text[found.range()]);
                }
                ('$', Some(d @ '1'..='9')) => {
                    chars.next();
                    let group = d as usize - '0' as usize;
                    if let Some(Some(range)) = found.captures.get(group - 1) {
                        out.push_str(&text[range.clone()]);
                    }
                }
                _ => out.push(c),
            }
        }
        last = found.end();
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn split_keeps_empty_ends_as_javascript_does() {
        assert_eq!(split_spaces(""), vec![""]);
        assert_eq!(split_spaces(" a  b "), vec!["", "a", "b", ""]);
        assert_eq!(split_spaces("a\u{FEFF}b"), vec!["a", "b"]);
        assert_eq!(split_spaces("a\u{85}b"), vec!["a\u{85}b"]);
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        assert_eq!(number_to_string(4.0), "4");
        assert_eq!(number_to_string(0.5), "0.5");
        assert_eq!(number_to_string(1e21), "1e+21");
        assert_eq!(number_to_string(1.5e-7), "1.5e-7");
        assert_eq!(to_string(&json!([1, null, "a"])), "1,,a");
    }

    #[test]
    fn strings_convert_to_numbers_as_javascript_does() {
        assert_eq!(to_number(&json!(" 0.5 ")), 0.5);
        assert_eq!(to_number(&json!("")), 0.0);
        assert!(to_number(&json!("inf")).is_nan());
        assert_eq!(to_number(&json!("0x10")), 16.0);
    }

    #[test]
    fn json_objects_are_extracted_and_auto_closed() {
        assert_eq!(
            extract_json_objects(r#"x {"a": 1} y {"b": {"c": 2}"#),
            vec![json!({"a": 1}), json!({"b": {"c": 2}})]
        );
        assert!(extract_json_objects("{not json}").is_empty());
    }

    #[test]
    fn deep_equality_ignores_key_order_and_number_form() {
        assert!(deep_equal(&json!({"a": 1, "b": [2.0]}), &json!({"b": [2], "a": 1.0})));
        assert!(!deep_equal(&json!({"a": 1}), &json!({"a": "1"})));
    }
}
