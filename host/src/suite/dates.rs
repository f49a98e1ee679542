//! Date templates (`<ID.FIELD,date|dateAndTime>`) in a spec line, resolved
//! from the documents of the line's cluster state before its `{{field}}`s
//! are filled. Only a suite with `[setup] opensearch` resolves them.
//!
//! This branch holds only the signatures: helper "opensearch" builds the
//! resolver, and the lead replaces this file with it at the merge.

use serde_json::{Map, Value};
use std::path::Path;

/// The documents of one cluster state: every
/// `indices/<state>/*/documents.ndjson`. Read once per state and shared by
/// the reader threads, so it must be `Send + Sync`.
#[derive(Debug, Default)]
pub struct DocumentsOfState {}

impl DocumentsOfState {
    /// Reads the documents of `state` under `indices_dir`.
    pub fn read(indices_dir: &Path, state: &str) -> Result<Self, String> {
        let _ = (indices_dir, state);
        Ok(DocumentsOfState {})
    }
}

/// Resolves every date template in `line`'s fields from `documents`, in
/// place. `Err` names the template and what is wrong with it.
pub fn resolve_line(line: &mut Map<String, Value>, documents: &DocumentsOfState) -> Result<(), String> {
    let _ = (line, documents);
    Ok(())
}
