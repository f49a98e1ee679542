//! Results directories as read back, for the tests of this module.

use crate::job::CaseStatus;
use crate::report::CaseFlags;
use crate::results::{CaseOfRun, ResultsOfRun};
use std::path::PathBuf;

/// A results directory `dir` as read back, of cases `(id, status, rouge
/// score)` in that order: what the diff tests compare.
pub(crate) fn run_of(dir: &str, cases: &[(&str, CaseStatus, Option<f64>)]) -> ResultsOfRun {
    let cases = cases
        .iter()
        .enumerate()
        .map(|(index, &(id, status, score))| CaseOfRun {
            id: id.to_owned(),
            file: PathBuf::from(format!("{id}.hocon")),
            agent: "echo".to_owned(),
            status,
            flags: CaseFlags::default(),
            scores: score.map(|s| std::collections::BTreeMap::from([("rouge".to_owned(), s)])).unwrap_or_default(),
            line: index + 1,
            json: serde_json::Value::Null,
        })
        .collect();
    ResultsOfRun { dir: PathBuf::from(dir), summary: None, cases }
}
