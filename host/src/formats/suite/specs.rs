//! Spec files: JSON lines, one case each. A file is indexed when its suite
//! is expanded (each line's id, cluster state, line number and byte offset:
//! a few dozen bytes a line, whatever the line holds) and a line is read
//! again, by its offset, when its case's turn comes. An empty line is
//! skipped; a line that is not a JSON object, or has no `id`, is indexed as
//! that error, located by its line number.

use crate::case::FileAccess;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// The longest spec line read (a case file's cap).
pub const MAX_LINE_BYTES: u64 = 4 << 20;

/// One line of a spec file, as indexed.
#[derive(Clone, Debug, PartialEq)]
pub enum Indexed {
    /// A spec: its id and cluster state, and where it is.
    Spec {
        /// Its `id` (a string, or a number's text).
        id: String,
        /// Its `clusterStateId`, if it has one (a number's text included).
        state: Option<String>,
        /// 1-based line number.
        line: usize,
        /// Where the line starts, in bytes.
        offset: u64,
    },
    /// A line that is no spec.
    Bad {
        /// 1-based line number.
        line: usize,
        /// What is wrong, in words a person can act on.
        message: String,
    },
}

/// What indexing reads of a line: only these two fields are kept.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default, rename = "clusterStateId")]
    state: Option<Value>,
}

/// The largest spec file read: indexing reads every byte when the run is
/// discovered.
pub const MAX_SPEC_FILE_BYTES: u64 = 1 << 30;

/// Every non-empty line of the spec file at `path`; `Err` when it cannot be
/// read at all.
pub fn index(access: &FileAccess, path: &Path) -> Result<Vec<Indexed>, String> {
    let file = access.open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let size = file.metadata().map_err(|e| format!("cannot read it: {e}"))?.len();
    if size > MAX_SPEC_FILE_BYTES {
        return Err(format!(
            "it is {size} bytes, over the {} MiB a spec file may be; split it into several spec files",
            MAX_SPEC_FILE_BYTES >> 20
        ));
    }
    let file = file.take(MAX_SPEC_FILE_BYTES);
    let mut reader = BufReader::new(file);
    let mut lines = Vec::new();
    let mut offset = 0u64;
    let mut buffer = Vec::new();
    for number in 1.. {
        buffer.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buffer)
            .map_err(|e| format!("cannot read line {number}: {e}"))?;
        if read == 0 {
            break;
        }
        let start = offset;
        offset += read as u64;
        if read as u64 > MAX_LINE_BYTES {
            lines.push(Indexed::Bad { line: number, message: too_long() });
            // Skip the rest of the line.
            loop {
                buffer.clear();
                let more = (&mut reader)
                    .take(MAX_LINE_BYTES)
                    .read_until(b'\n', &mut buffer)
                    .map_err(|e| format!("cannot read line {number}: {e}"))?;
                offset += more as u64;
                if more == 0 || buffer.ends_with(b"\n") {
                    break;
                }
            }
            continue;
        }
        if buffer.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        lines.push(index_line(&buffer, number, start));
    }
    Ok(lines)
}

fn index_line(bytes: &[u8], line: usize, offset: u64) -> Indexed {
    let bad = |message: String| Indexed::Bad { line, message };
    // serde reads a struct from a JSON list too: only an object is a spec.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => bad(not_json(None, bytes)),
            Err(error) => bad(not_json(Some(&error), bytes)),
        };
    }
    let head: Head = match serde_json::from_slice(bytes) {
        Ok(head) => head,
        Err(error) => return bad(not_json(Some(&error), bytes)),
    };
    let id = match head.id {
        Some(Value::String(id)) if !id.is_empty() => id,
        Some(Value::Number(number)) => number.to_string(),
        Some(other) => return bad(format!("its `id` is {}; it must be a non-empty string", describe(&other))),
        None => return bad("it has no `id`; every spec line needs one, unique in its suite".into()),
    };
    let state = match head.state {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) => Some(state),
        Some(Value::Number(number)) => Some(number.to_string()),
        Some(other) => return bad(format!("its `clusterStateId` is {}; it must be a string", describe(&other))),
    };
    Indexed::Spec { id, state, line, offset }
}

/// The spec line at `offset` of `path` (line `line`), as a JSON object.
pub fn read_line(access: &FileAccess, path: &Path, offset: u64, line: usize) -> Result<Map<String, Value>, String> {
    let mut file = access.open(path).map_err(|e| format!("cannot read it: {e}"))?;
    file.seek(SeekFrom::Start(offset)).map_err(|e| format!("cannot read line {line}: {e}"))?;
    let mut buffer = Vec::new();
    BufReader::new(file)
        .take(MAX_LINE_BYTES + 1)
        .read_until(b'\n', &mut buffer)
        .map_err(|e| format!("cannot read line {line}: {e}"))?;
    if buffer.len() as u64 > MAX_LINE_BYTES {
        return Err(too_long());
    }
    match serde_json::from_slice::<Value>(&buffer) {
        Ok(Value::Object(map)) => Ok(map),
        // The file changed since it was indexed.
        Ok(other) => {
            Err(format!("it is {}, not a JSON object (did the file change during the run?)", describe(&other)))
        }
        Err(error) => Err(not_json(Some(&error), &buffer)),
    }
}

/// Why a line is no spec: not JSON (`error`), or JSON but not an object.
fn not_json(error: Option<&serde_json::Error>, bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut start: String = text.trim().chars().take(40).collect();
    if start.len() < text.trim().len() {
        start.push('…');
    }
    let what = match error {
        Some(error) if !error.is_data() => format!("it is not JSON ({error})"),
        _ => "it is not a JSON object".to_owned(),
    };
    format!("{what}: {start:?}\n\nConsider one JSON object per line, e.g. {{\"id\": \"q1\", \"question\": \"…\"}}")
}

fn too_long() -> String {
    format!("the line is over the cap of {} MiB for a spec line", MAX_LINE_BYTES >> 20)
}

fn describe(value: &Value) -> String {
    crate::errors::describe_json(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn lines_are_indexed_with_their_place_and_errors_located() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let lines = [
            r#"{"id":"a","clusterStateId":"s1","question":"q"}"#,
            "",
            r#"{"id":7,"question":"q"}"#,
            "not json",
            "[1]",
            r#"{"question":"no id"}"#,
            r#"{"id":"b","clusterStateId":["x"]}"#,
        ];
        write!(file, "{}", lines.join("\n")).unwrap();
        let lines = index(&FileAccess::anywhere(), file.path()).unwrap();
        assert_eq!(lines[0], Indexed::Spec { id: "a".into(), state: Some("s1".into()), line: 1, offset: 0 });
        assert_eq!(lines[1], Indexed::Spec { id: "7".into(), state: None, line: 3, offset: 49 });
        let bad: Vec<(usize, &str)> = lines[2..]
            .iter()
            .map(|l| match l {
                Indexed::Bad { line, message } => (*line, message.lines().next().unwrap()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(bad[0].0, 4);
        assert!(
            bad[0].1.starts_with("it is not JSON (expected ident at line 1 column 2): \"not json\""),
            "{}",
            bad[0].1
        );
        assert_eq!(bad[1], (5, "it is not a JSON object: \"[1]\""));
        assert_eq!(bad[2], (6, "it has no `id`; every spec line needs one, unique in its suite"));
        assert_eq!(bad[3], (7, "its `clusterStateId` is the list [\"x\"]; it must be a string"));

        let read = read_line(&FileAccess::anywhere(), file.path(), 49, 3).unwrap();
        assert_eq!(read["question"], "q");
    }
}
