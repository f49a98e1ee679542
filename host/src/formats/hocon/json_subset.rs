//! The fast path of the HOCON reader. Most test case files are JSON with
//! `#` and `//` comments and `"""` strings: a subset of HOCON in which HOCON
//! and JSON mean the same thing. Such a file is rewritten as JSON (comments
//! dropped, triple-quoted strings escaped) and read by serde_json, an order
//! of magnitude faster than the full HOCON parser. Anything else — unquoted
//! text, `=`, substitutions, includes, concatenation, keys that HOCON would
//! merge — makes this path give up, and the full parser reads the file (and
//! reports its errors).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// The file's root object, when the file is in the subset.
pub(super) fn parse(text: &str) -> Option<Map<String, Value>> {
    let json = rewrite(text)?;
    match serde_json::from_str::<Strict>(&json).ok()?.0 {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// `text` as JSON: comments dropped, triple-quoted strings as JSON
/// strings. `None` at anything outside the subset: a `$` (a substitution)
/// outside a string, a quoted string running past its line, an
/// unterminated string.
fn rewrite(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                out.push_str(&text[copied..i]);
                let start = i + 3;
                // It ends at the last quote of the first run of three or
                // more: extra quotes belong to the string, as in HOCON.
                let close = start + text[start..].find("\"\"\"")?;
                let mut end = close + 3;
                while bytes.get(end) == Some(&b'"') {
                    end += 1;
                }
                out.push_str(&serde_json::to_string(&text[start..end - 3]).ok()?);
                i = end;
                copied = i;
            }
            b'"' => {
                i += 1;
                loop {
                    match bytes.get(i)? {
                        b'\\' => i += 2,
                        b'"' => break,
                        b'\n' => return None,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            b'#' => {
                out.push_str(&text[copied..i]);
                i = skip_line(bytes, i);
                copied = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[copied..i]);
                i = skip_line(bytes, i);
                copied = i;
            }
            b'$' => return None,
            _ => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The index of the newline ending the line at `i` (kept: it separates).
fn skip_line(bytes: &[u8], i: usize) -> usize {
    bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |n| i + n)
}

/// A JSON value read with duplicate keys refused: HOCON merges a key given
/// twice where JSON keeps the last, so such files take the full parser.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("the key `{key}` is given twice")));
            }
            let Strict(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// What the full HOCON parser makes of `text`.
    fn full(text: &str) -> Option<Map<String, Value>> {
        hocon::parse_with_env(text, &HashMap::new()).ok()?.deserialize().ok()
    }

    /// Whenever the fast path reads a text, the full parser reads the same.
    fn agrees(text: &str) {
        if let Some(fast) = parse(text) {
            assert_eq!(Some(fast), full(text), "the two readers differ on:\n{text}");
        }
    }

    #[test]
    fn reads_json_with_comments_and_triple_quotes_as_hocon_does() {
        let text = r#"
# A comment with "quotes" and a $ sign.
{
    // Another kind of comment.
    "agent": "echo",   # trailing comment
    "url": "http://x/y#not-a-comment // nor this",
    "text": """
From earth, "hello" \n stays two characters.
""",
    "stray": """ends with a quote"""",
    "numbers": [1, -2.5, 3e2, 0],
    "nested": { "a": { "b": [true, false, null] } },
    "escaped": "tab\there \"quoted\" \u00e9 😀"
}
"#;
        let map = parse(text).expect("in the subset");
        assert_eq!(map["text"], "\nFrom earth, \"hello\" \\n stays two characters.\n");
        assert_eq!(map["stray"], "ends with a quote\"");
        assert_eq!(map["url"], "http://x/y#not-a-comment // nor this");
        assert_eq!(Some(map), full(text));
    }

    #[test]
    fn leaves_everything_else_to_the_full_parser() {
        for text in [
            "{ a: 1 }",
            "{ \"a\" = 1 }",
            "{ \"a\": ${HOME} }",
            "{ \"a\": { \"x\": 1 }, \"a\": { \"y\": 2 } }",
            "{ \"a\": \"b\" \"c\" }",
            "\"a\": 1",
            "[1, 2]",
            "{ \"a\": \"unterminated }",
            "{ \"a\": \"\"\"unterminated }",
            "{ \"a\": 1, }",
            "include \"other.conf\"",
            "{ \"a\": \"line\nbreak\" }",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_project_fixtures_read_the_same_both_ways() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cases");
        let mut read = 0;
        for group in std::fs::read_dir(root).unwrap() {
            for file in std::fs::read_dir(group.unwrap().path()).unwrap() {
                let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
                if let Some(fast) = parse(&text) {
                    assert_eq!(Some(fast), full(&text));
                    read += 1;
                }
            }
        }
        assert!(read > 0, "no fixture took the fast path");
    }

    /// JSON values with strings full of the characters that matter here.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z #/$\"\\\\{}\\[\\]:,=é😀\t]{0,12}".prop_map(Value::String),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z_.#$ ]{1,6}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn generated_documents_read_the_same_both_ways(
            entries in prop::collection::vec(("[a-z_]{1,8}", value()), 1..6),
            comments in prop::collection::vec("[ -~]{0,20}", 0..4),
            triple in any::<bool>(),
        ) {
            let object: Map<String, Value> = entries.into_iter().collect();
            let mut text = serde_json::to_string_pretty(&Value::Object(object)).unwrap();
            // Comments between lines, a triple-quoted string.
            for (i, comment) in comments.iter().enumerate() {
                let marker = if i % 2 == 0 { "#" } else { "//" };
                text = text.replacen(",\n", &format!(", {marker} {comment}\n"), 1);
            }
            if triple {
                text = text.replacen("{", "{ \"the block\": \"\"\"several\n\"lines\" of $ text\"\"\",", 1);
            }
            prop_assert!(parse(&text).is_some(), "not read by the fast path:\n{}", text);
            agrees(&text);
        }

        #[test]
        fn mutated_texts_read_the_same_when_the_fast_path_reads_them(
            text in "[{}\\[\\]\":,#/$\n a-c0-9\\\\]{0,60}",
        ) {
            agrees(&text);
        }
    }
}
