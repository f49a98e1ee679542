//! From paths to runnable cases: discover files, read them, plan their
//! checks, and select by `--filter`. A file that cannot be read or planned
//! becomes an error entry, so one bad file never stops the others.

use crate::case::{CaseFile, TestCase, read_case_file};
use crate::check::{CasePlan, KeySet, plan_case};
use crate::errors::CaseError;
use std::collections::HashMap;

/// A case ready to run, or the reason it cannot.
#[derive(Debug)]
pub enum LoadedCase {
    /// Read and planned.
    Ready(Box<(TestCase, CasePlan)>),
    /// Unreadable or unplannable.
    Broken {
        /// The case's id (from its path).
        id: String,
        /// Why.
        error: CaseError,
    },
}

impl LoadedCase {
    /// The case's id.
    pub fn id(&self) -> &str {
        match self {
            LoadedCase::Ready(ready) => &ready.0.id,
            LoadedCase::Broken { id, .. } => id,
        }
    }
}

/// `--filter`: selects a case when its id contains the filter text, or
/// matches it as a regular expression.
#[derive(Clone, Debug)]
pub struct CaseFilter {
    text: String,
    regex: Option<regex::Regex>,
}

impl CaseFilter {
    /// A filter matching ids that contain `text` or match it as a regex.
    /// Text that is not a valid regex is matched as a substring only.
    pub fn new(text: &str) -> CaseFilter {
        CaseFilter { text: text.to_owned(), regex: regex::Regex::new(text).ok() }
    }

    /// Whether `id` is selected.
    pub fn matches(&self, id: &str) -> bool {
        id.contains(&self.text) || self.regex.as_ref().is_some_and(|r| r.is_match(id))
    }
}

/// Reads and plans every file, keeping the ones `filter` selects.
pub fn load_cases(
    files: &[CaseFile],
    keys: &dyn KeySet,
    env: &HashMap<String, String>,
    filter: Option<&CaseFilter>,
) -> Vec<LoadedCase> {
    files
        .iter()
        .filter(|file| filter.is_none_or(|f| f.matches(&file.id)))
        .map(|file| {
            let planned = read_case_file(&file.path, &file.id, env).and_then(|case| {
                let plan = plan_case(&case, keys).map_err(|kind| CaseError::new(&file.path, kind))?;
                Ok((case, plan))
            });
            match planned {
                Ok(ready) => LoadedCase::Ready(Box::new(ready)),
                Err(error) => LoadedCase::Broken { id: file.id.clone(), error },
            }
        })
        .collect()
}
