//! The seed's index groups on disk: `INDICES/<cluster state>/<index>/`
//! holds `mappings.json` (the index's mappings, or a whole create-index
//! body with `mappings`/`settings`) and `documents.ndjson` (one JSON object
//! a line). Both the OpenSearch loader and the date templates read them
//! here, so a bad line gets the same located error from either.

use crate::case::FileAccess;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The file of an index's mappings.
pub(crate) const MAPPINGS_FILE: &str = "mappings.json";
/// The file of an index's documents.
pub(crate) const DOCUMENTS_FILE: &str = "documents.ndjson";

/// One index of a cluster state: its name is its folder's.
#[derive(Debug)]
pub(crate) struct IndexFolder {
    /// The index name.
    pub(crate) name: String,
    /// `INDICES/<state>/<name>`.
    pub(crate) dir: PathBuf,
}

impl IndexFolder {
    /// Its `documents.ndjson`.
    pub(crate) fn documents_file(&self) -> PathBuf {
        self.dir.join(DOCUMENTS_FILE)
    }

    /// Its `mappings.json`.
    pub(crate) fn mappings_file(&self) -> PathBuf {
        self.dir.join(MAPPINGS_FILE)
    }
}

/// One document of `documents.ndjson`.
#[derive(Debug)]
pub(crate) struct DocumentLine {
    /// Its line number (1-based).
    pub(crate) line: usize,
    /// The line as written (trimmed), sent as it is unless its `_id` must
    /// come out of the source.
    pub(crate) text: String,
    /// Its fields.
    pub(crate) fields: Map<String, Value>,
}

impl DocumentLine {
    /// Its `_id`: a metadata field, so it goes into the bulk action line
    /// and not into the source OpenSearch stores.
    pub(crate) fn metadata_id(&self) -> Option<String> {
        id_text(self.fields.get("_id"))
    }

    /// Its `id` field, when a non-empty string or a whole number.
    pub(crate) fn id_field(&self) -> Option<String> {
        id_text(self.fields.get("id"))
    }

    /// Every id the document answers to in a date template: its `id` field
    /// and its `_id`.
    pub(crate) fn template_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.id_field().into_iter().chain(self.metadata_id()).collect();
        ids.dedup();
        ids
    }

    /// The source line to index: the line as written, without `_id` if it
    /// has one.
    pub(crate) fn source(&self) -> String {
        if self.fields.contains_key("_id") {
            let mut fields = self.fields.clone();
            fields.remove("_id");
            Value::Object(fields).to_string()
        } else {
            self.text.clone()
        }
    }
}

/// A string or whole-number id as text.
fn id_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        _ => None,
    }
}

/// The index folders of `state` under `indices_dir`, by name. Files beside
/// them (a `.DS_Store`, a README) are not indices; a folder whose name
/// starts with a dot is (`.opendistro-alerting-alerts`).
pub(crate) fn index_folders(access: &FileAccess, indices_dir: &Path, state: &str) -> Result<Vec<IndexFolder>, String> {
    let state_dir = state_dir(access, indices_dir, state)?;
    let entries = access
        .read_dir(&state_dir)
        .map_err(|e| format!("read the index group folder `{}`: {e}", state_dir.display()))?;
    let mut folders = Vec::new();
    for entry in entries.into_iter().filter(|entry| entry.is_dir) {
        let name = entry.name.to_string_lossy().into_owned();
        folders.push(IndexFolder { dir: state_dir.join(&entry.name), name });
    }
    folders.sort_by(|a, b| a.name.cmp(&b.name));
    if folders.is_empty() {
        return Err(format!(
            "its folder `{}` holds no index folder; add one per index, each with `{MAPPINGS_FILE}` and \
             `{DOCUMENTS_FILE}`, or add `{state}` to `[setup] skip`",
            state_dir.display()
        ));
    }
    Ok(folders)
}

/// `indices_dir/<state>`, which must be a folder; the error lists the
/// states there are.
fn state_dir(access: &FileAccess, indices_dir: &Path, state: &str) -> Result<PathBuf, String> {
    if state.is_empty() || state == "." || state == ".." || state.contains(['/', '\\']) {
        return Err(format!(
            "`{state}` is not a folder name; use the name of a folder under `{}`",
            indices_dir.display()
        ));
    }
    let dir = indices_dir.join(state);
    if access.is_dir(&dir) {
        return Ok(dir);
    }
    let mut states: Vec<String> = access
        .read_dir(indices_dir)
        .map_err(|e| {
            format!(
                "cannot read the indices folder `{}`: {e}; check `[setup] opensearch.indices`",
                indices_dir.display()
            )
        })?
        .into_iter()
        .filter(|entry| entry.is_dir)
        .map(|entry| entry.name.to_string_lossy().into_owned())
        .collect();
    states.sort();
    let known = if states.is_empty() {
        "it has none".to_owned()
    } else {
        format!("it has {}", states.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
    };
    let hint = match crate::suggest::nearest(state, states.iter().map(String::as_str)) {
        Some(near) => format!("did you mean `{near}`? "),
        None => String::new(),
    };
    Err(format!(
        "there is no folder `{state}` under `{}` ({known}); {hint}add the folder, or add `{state}` to `[setup] skip`",
        indices_dir.display()
    ))
}

/// The documents of `path`, one JSON object a non-blank line; the error is
/// located `file:line`.
pub(crate) fn read_documents(access: &FileAccess, path: &Path) -> Result<Vec<DocumentLine>, String> {
    let text = read_text(access, path)?;
    let mut documents = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        let fields = match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Object(fields)) => fields,
            Ok(other) => {
                return Err(format!(
                    "read `{}:{line}`: a document must be a JSON object, not {}; write one object per line",
                    path.display(),
                    kind_of(&other)
                ));
            }
            Err(e) => {
                return Err(format!(
                    "read `{}:{line}`: it is not JSON ({e}); write one JSON object per line (NDJSON)",
                    path.display()
                ));
            }
        };
        documents.push(DocumentLine { line, text: trimmed.to_owned(), fields });
    }
    Ok(documents)
}

/// The create-index body of `path`: its object as it is when it already
/// has `mappings` or `settings`, else the mappings it is, wrapped as
/// `{"mappings": …}` (the seed's files hold the mappings alone).
pub(crate) fn read_create_body(access: &FileAccess, path: &Path) -> Result<Value, String> {
    let text = read_text(access, path)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "read `{}:{}`: it is not JSON ({e}); write the index's mappings as one JSON object",
            path.display(),
            e.line()
        )
    })?;
    let Value::Object(object) = value else {
        return Err(format!(
            "read `{}`: the mappings must be a JSON object (e.g. {{\"properties\": {{…}}}}), not {}",
            path.display(),
            kind_of(&value)
        ));
    };
    if object.contains_key("mappings") || object.contains_key("settings") {
        Ok(Value::Object(object))
    } else {
        Ok(serde_json::json!({ "mappings": object }))
    }
}

/// The most bytes one file of an index group may hold.
const MAX_INDEX_FILE_BYTES: u64 = 1 << 30;

/// The whole of a UTF-8 file, or an error naming it.
fn read_text(access: &FileAccess, path: &Path) -> Result<String, String> {
    access.read_to_string(path, MAX_INDEX_FILE_BYTES).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!(
                "read `{}`: it does not exist; every index folder needs `{MAPPINGS_FILE}` and `{DOCUMENTS_FILE}`",
                path.display()
            )
        }
        std::io::ErrorKind::InvalidData => format!("read `{}`: it is not UTF-8 text", path.display()),
        std::io::ErrorKind::FileTooLarge => {
            format!(
                "read `{}`: {e}, over the {} MiB an index group's file may be",
                path.display(),
                MAX_INDEX_FILE_BYTES >> 20
            )
        }
        _ => format!("read `{}`: {e}", path.display()),
    })
}

/// What a JSON value is, for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        root
    }

    #[test]
    fn index_folders_are_the_folders_of_the_state_by_name_dot_folders_too() {
        let root = group(&[
            ("alerting/b/mappings.json", "{}"),
            ("alerting/.opendistro-alerting-alerts/mappings.json", "{}"),
            ("alerting/.DS_Store", ""),
            ("other/x/mappings.json", "{}"),
        ]);
        let names: Vec<String> = index_folders(&FileAccess::anywhere(), root.path(), "alerting")
            .unwrap()
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, [".opendistro-alerting-alerts", "b"]);
    }

    #[test]
    fn an_unknown_state_names_the_states_there_are_and_the_nearest() {
        let root = group(&[("alerting/a/mappings.json", "{}"), ("spider/a/mappings.json", "{}")]);
        let error = index_folders(&FileAccess::anywhere(), root.path(), "alertng").unwrap_err();
        let dir = root.path().display();
        assert_eq!(
            error,
            format!(
                "there is no folder `alertng` under `{dir}` (it has `alerting`, `spider`); did you mean \
                 `alerting`? add the folder, or add `alertng` to `[setup] skip`"
            )
        );
        assert!(
            index_folders(&FileAccess::anywhere(), root.path(), "../alerting")
                .unwrap_err()
                .contains("is not a folder name")
        );
    }

    #[test]
    fn documents_are_objects_a_line_and_a_bad_line_is_located() {
        let root = group(&[("s/i/documents.ndjson", "{\"id\":\"a\",\"n\":1}\n\n  {\"_id\":7,\"n\":2}  \n")]);
        let path = root.path().join("s/i/documents.ndjson");
        let documents = read_documents(&FileAccess::anywhere(), &path).unwrap();
        assert_eq!(documents.iter().map(|d| d.line).collect::<Vec<_>>(), [1, 3]);
        assert_eq!((documents[0].id_field().as_deref(), documents[0].metadata_id()), (Some("a"), None));
        assert_eq!((documents[1].id_field(), documents[1].metadata_id().as_deref()), (None, Some("7")));
        assert_eq!(documents[0].template_ids(), ["a"]);
        assert_eq!(documents[1].source(), r#"{"n":2}"#);
        assert_eq!(documents[0].source(), r#"{"id":"a","n":1}"#);

        std::fs::write(&path, "{\"a\":1}\n{\"a\":\n").unwrap();
        let error = read_documents(&FileAccess::anywhere(), &path).unwrap_err();
        assert!(error.starts_with(&format!("read `{}:2`: it is not JSON (", path.display())), "{error}");
        std::fs::write(&path, "{\"a\":1}\n[1]\n").unwrap();
        assert_eq!(
            read_documents(&FileAccess::anywhere(), &path).unwrap_err(),
            format!(
                "read `{}:2`: a document must be a JSON object, not an array; write one object per line",
                path.display()
            )
        );
    }

    #[test]
    fn mappings_alone_are_wrapped_and_a_whole_body_is_kept() {
        let root = group(&[
            ("a.json", r#"{"properties":{"n":{"type":"long"}}}"#),
            ("b.json", r#"{"settings":{},"mappings":{}}"#),
            ("c.json", "{\n\"properties\": }"),
        ]);
        assert_eq!(
            read_create_body(&FileAccess::anywhere(), &root.path().join("a.json")).unwrap(),
            serde_json::json!({"mappings": {"properties": {"n": {"type": "long"}}}})
        );
        assert_eq!(
            read_create_body(&FileAccess::anywhere(), &root.path().join("b.json")).unwrap(),
            serde_json::json!({"settings": {}, "mappings": {}})
        );
        let error = read_create_body(&FileAccess::anywhere(), &root.path().join("c.json")).unwrap_err();
        assert!(
            error.starts_with(&format!("read `{}:2`: it is not JSON (", root.path().join("c.json").display())),
            "{error}"
        );
        let error = read_create_body(&FileAccess::anywhere(), &root.path().join("missing.json")).unwrap_err();
        assert!(
            error.ends_with("it does not exist; every index folder needs `mappings.json` and `documents.ndjson`"),
            "{error}"
        );
    }
}
