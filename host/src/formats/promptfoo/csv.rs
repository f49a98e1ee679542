//! promptfoo's CSV test files: a header row, then one test per row (RFC
//! 4180: fields in double quotes may hold commas, newlines and `""`).
//! Columns are vars, except promptfoo's special ones: `__expected`,
//! `__expected1`… (an assertion each, written `type: value`, `not-type:
//! value`, `type(threshold): value`, or a bare value for `equals`),
//! `__description`, `__metric`, `__threshold`, `__prefix`, `__suffix`,
//! `__config:__expectedN:threshold` (that assertion's threshold) and
//! `__metadata:KEY` (the test's metadata, which changes no verdict). Any
//! other column starting `__` is an error naming it ([`check_header`]).

use crate::formats::promptfoo::asserts::plugin_types;
use serde_json::{Map, Value, json};

/// The rows of a CSV text, each as (column, cell) pairs in column order.
pub fn parse(text: &str) -> Result<Vec<Vec<(String, String)>>, String> {
    let mut records = records(text.strip_prefix('\u{feff}').unwrap_or(text))?.into_iter();
    let Some(header) = records.next() else { return Ok(Vec::new()) };
    let header: Vec<String> = header.into_iter().map(|h| h.trim().to_owned()).collect();
    let mut rows = Vec::new();
    for (i, record) in records.enumerate() {
        if record.len() == 1 && record[0].is_empty() {
            continue;
        }
        if record.len() != header.len() {
            return Err(format!("row {} has {} fields, the header {}", i + 2, record.len(), header.len()));
        }
        rows.push(header.iter().cloned().zip(record).collect());
    }
    Ok(rows)
}

/// Every record of the text.
fn records(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut line = 1;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => {
                line += usize::from(c == '\n');
                field.push(c);
            }
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                line += 1;
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err(format!("a quoted field is not closed by line {line}"));
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

/// Refuses a header with a `__` column assay does not read, or a
/// `__config:` column that is not `__config:__expected…:threshold` of an
/// `__expected…` column the header has.
pub(crate) fn check_header(header: &[String]) -> Result<(), String> {
    const SPECIAL: &[&str] = &["__prefix", "__suffix", "__description", "__metric", "__threshold"];
    for column in header.iter().filter(|c| c.starts_with("__")) {
        if column.starts_with("__expected") || SPECIAL.contains(&column.as_str()) || column.starts_with("__metadata:") {
            continue;
        }
        if let Some(rest) = column.strip_prefix("__config:") {
            match rest.split_once(':') {
                Some((target, "threshold"))
                    if target.starts_with("__expected") && header.iter().any(|c| c == target) =>
                {
                    continue;
                }
                _ => {
                    return Err(format!(
                        "the column `{column}` is not one assay reads; `__config:` columns are \
                         `__config:__expectedN:threshold`, naming an `__expectedN` column of the file"
                    ));
                }
            }
        }
        return Err(format!(
            "the column `{column}` is not one assay reads (`__expected…`, `__description`, `__metric`, \
             `__threshold`, `__prefix`, `__suffix`, `__config:__expected…:threshold`, `__metadata:KEY`)"
        ));
    }
    Ok(())
}

/// A row as promptfoo's test (`testCaseFromCsvRow`); its header passed
/// [`check_header`].
pub fn test_of_row(row: Vec<(String, String)>) -> Map<String, Value> {
    let mut vars = Map::new();
    let mut asserts = Vec::new();
    let mut options = Map::new();
    let mut test = Map::new();
    let mut metadata = Map::new();
    let mut metric = None;
    let mut by_column: Vec<(String, usize)> = Vec::new();
    let mut thresholds: Vec<(String, f64)> = Vec::new();
    for (key, value) in row {
        if let Some(rest) = key.strip_prefix("__config:") {
            let target = rest.split_once(':').map_or(rest, |(target, _)| target);
            if let Ok(threshold) = value.trim().parse::<f64>() {
                thresholds.push((target.to_owned(), threshold));
            }
        } else if let Some(name) = key.strip_prefix("__metadata:") {
            metadata.insert(name.to_owned(), Value::String(value));
        } else if key.starts_with("__expected") {
            if !value.trim().is_empty() {
                by_column.push((key.clone(), asserts.len()));
                asserts.push(assertion_of_string(value.trim()));
            }
        } else if key == "__prefix" || key == "__suffix" {
            options.insert(key[2..].to_owned(), Value::String(value));
        } else if key == "__description" {
            test.insert("description".into(), Value::String(value));
        } else if key == "__metric" {
            metric = Some(value);
        } else if key == "__threshold" {
            if let Ok(threshold) = value.trim().parse::<f64>() {
                test.insert("threshold".into(), json!(threshold));
            }
        } else if !key.starts_with("__") {
            vars.insert(key, Value::String(value));
        }
    }
    if let Some(metric) = metric {
        for assertion in &mut asserts {
            assertion.insert("metric".into(), Value::String(metric.clone()));
        }
    }
    for (column, threshold) in thresholds {
        if let Some((_, index)) = by_column.iter().find(|(name, _)| *name == column) {
            asserts[*index].insert("threshold".into(), json!(threshold));
        }
    }
    if !metadata.is_empty() {
        test.insert("metadata".into(), Value::Object(metadata));
    }
    test.insert("vars".into(), Value::Object(vars));
    test.insert("assert".into(), Value::Array(asserts.into_iter().map(Value::Object).collect()));
    test.insert("options".into(), Value::Object(options));
    test
}

/// promptfoo's `assertionFromString`.
fn assertion_of_string(expected: &str) -> Map<String, Value> {
    let object = |kind: &str, value: Value| {
        let mut map = Map::new();
        map.insert("type".into(), Value::String(kind.to_owned()));
        if !value.is_null() {
            map.insert("value".into(), value);
        }
        map
    };
    for (prefix, kind) in [("javascript:", "javascript"), ("fn:", "javascript"), ("eval:", "javascript")] {
        if let Some(rest) = expected.strip_prefix(prefix) {
            return object(kind, Value::String(rest.trim().to_owned()));
        }
    }
    for prefix in ["grade:", "llm-rubric:"] {
        if let Some(rest) = expected.strip_prefix(prefix) {
            return object("llm-rubric", Value::String(rest.to_owned()));
        }
    }
    if let Some(rest) = expected.strip_prefix("python:") {
        return object("python", Value::String(rest.trim().to_owned()));
    }
    let (negated, body) = match expected.strip_prefix("not-") {
        Some(rest) => (true, rest),
        None => (false, expected),
    };
    // `type`, `type(threshold)`, then `:value` or nothing.
    for kind in plugin_types() {
        let Some(rest) = body.strip_prefix(kind) else { continue };
        let (threshold, rest) = match rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
            Some((number, rest)) => match number.parse::<f64>() {
                Ok(threshold) => (Some(threshold), rest),
                Err(_) => continue,
            },
            None => (None, rest),
        };
        let value = match rest.strip_prefix(':') {
            Some(value) => Some(value),
            None if rest.is_empty() => None,
            None => continue,
        };
        let full = if negated { format!("not-{kind}") } else { kind.to_owned() };
        let value = match (kind, value) {
            (_, None) => Value::Null,
            ("contains-any" | "contains-all" | "icontains-any" | "icontains-all", Some(value)) => {
                Value::Array(comma_separated(value).into_iter().map(Value::String).collect())
            }
            ("is-json" | "contains-json", Some(value)) => Value::String(value.to_owned()),
            (_, Some(value)) => Value::String(value.trim().to_owned()),
        };
        let mut assertion = object(&full, value);
        let default_threshold = match kind {
            "similar" => Some(0.8),
            "cost" | "latency" | "levenshtein" | "rouge-n" | "starts-with" => Some(0.75),
            _ => None,
        };
        if let Some(threshold) = threshold.or(default_threshold) {
            assertion.insert("threshold".into(), json!(threshold));
        }
        return assertion;
    }
    object("equals", Value::String(expected.to_owned()))
}

/// promptfoo's `parseCommaSeparatedAssertionValues`: comma-separated,
/// trimmed, with `"…"` fields that may hold commas.
fn comma_separated(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = value.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        let mut field = String::new();
        if first == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    '"' => break,
                    c => field.push(c),
                }
            }
            while chars.peek().is_some_and(|c| *c != ',') {
                chars.next();
            }
            out.push(field);
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                field.push(c);
                chars.next();
            }
            out.push(field.trim().to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_columns_set_an_assertion_s_threshold_metadata_is_kept_and_other_double_underscores_are_refused() {
        let rows = parse("q,__expected1,__expected2,__config:__expected2:threshold,__metadata:topic\nhi,contains:h,similar:hello,0.5,greeting\n").unwrap();
        let header: Vec<String> = rows[0].iter().map(|(c, _)| c.clone()).collect();
        check_header(&header).unwrap();
        let test = test_of_row(rows[0].clone());
        assert_eq!(test["assert"][0].get("threshold"), None);
        assert_eq!(test["assert"][1]["threshold"], json!(0.5));
        assert_eq!(test["metadata"], json!({"topic": "greeting"}));
        assert_eq!(test["vars"], json!({"q": "hi"}));
        for (columns, named) in [
            (vec!["q", "__providerOutput"], "__providerOutput"),
            (vec!["__expected", "__config:__expected3:threshold"], "__config:__expected3:threshold"),
            (vec!["__expected", "__config:__expected:weight"], "__config:__expected:weight"),
            (vec!["__bogus"], "__bogus"),
        ] {
            let header: Vec<String> = columns.iter().map(|c| (*c).to_owned()).collect();
            assert!(check_header(&header).unwrap_err().contains(&format!("`{named}`")), "{columns:?}");
        }
    }

    #[test]
    fn quoted_fields_hold_commas_quotes_and_newlines() {
        let rows = parse("q,__expected\n\"a, \"\"b\"\"\nc\",contains: x\r\nplain,\n").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][0].1, "a, \"b\"\nc");
        assert_eq!(rows[1][1].1, "");
        assert!(parse("q\n\"open").unwrap_err().contains("not closed"));
        assert!(parse("a,b\n1\n").unwrap_err().contains("row 2"));
    }

    #[test]
    fn cells_become_assertions_as_promptfoo_reads_them() {
        let a = assertion_of_string("contains-any: a, \"b,c\" ,d");
        assert_eq!(Value::Object(a), json!({"type": "contains-any", "value": ["a", "b,c", "d"]}));
        let a = assertion_of_string("not-levenshtein(3): kitten");
        assert_eq!(Value::Object(a), json!({"type": "not-levenshtein", "value": "kitten", "threshold": 3.0}));
        let a = assertion_of_string("rouge-n: the cat");
        assert_eq!(Value::Object(a), json!({"type": "rouge-n", "value": "the cat", "threshold": 0.75}));
        assert_eq!(Value::Object(assertion_of_string("is-json")), json!({"type": "is-json"}));
        assert_eq!(Value::Object(assertion_of_string("Paris")), json!({"type": "equals", "value": "Paris"}));
        assert_eq!(
            Value::Object(assertion_of_string("grade: polite")),
            json!({"type": "llm-rubric", "value": " polite"})
        );
        assert_eq!(Value::Object(assertion_of_string("fn: x")), json!({"type": "javascript", "value": "x"}));
    }
}
