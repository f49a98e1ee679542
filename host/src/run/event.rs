//! The event stream from the runner to reporters. The runner knows nothing
//! of terminals or files: it emits [`RunEvent`]s, and each [`Reporter`]
//! renders them its own way.

use crate::run::result::{CaseResult, CaseStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// Something that happened during a run.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// The run starts with this many cases.
    Started {
        /// How many cases will be reported.
        cases: usize,
    },
    /// A case finished (or could not be read); its result is final.
    CaseFinished(&'a CaseResult),
    /// Every case finished.
    Finished(&'a RunSummary),
}

/// Renders events: a terminal, a results file, a JUnit report, a test.
pub trait Reporter: Send {
    /// Handles one event. An error stops this reporter, not the run.
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()>;
}

/// The totals of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunSummary {
    /// How many cases ran (or failed to load).
    pub cases: usize,
    /// Cases by status.
    pub passed: usize,
    /// Cases that passed with some failed samples.
    pub flaky: usize,
    /// Cases that failed a check.
    pub failed: usize,
    /// Cases that errored.
    pub errors: usize,
    /// Ids of the cases that did not pass, by status.
    pub not_passed: BTreeMap<String, Vec<String>>,
    /// Wall-clock time of the run, in milliseconds.
    pub duration_ms: f64,
    /// Reporters that failed (e.g. a full disk) and were dropped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reporter_errors: Vec<String>,
    /// Breaches of the rule that every admitted case is reported exactly
    /// once (a case never reported, or reported twice): assay's own bugs,
    /// which fail the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub internal_errors: Vec<String>,
}

impl RunSummary {
    /// Counts one finished case.
    pub fn add(&mut self, case: &CaseResult) {
        self.cases += 1;
        match case.status {
            CaseStatus::Passed => self.passed += 1,
            CaseStatus::Flaky => self.flaky += 1,
            CaseStatus::Failed => self.failed += 1,
            CaseStatus::Error => self.errors += 1,
        }
        if case.status != CaseStatus::Passed {
            self.not_passed.entry(case.status.name().to_owned()).or_default().push(case.id.clone());
        }
    }

    /// Whether the run succeeded: nothing failed or errored, nothing was
    /// flaky if flaky counts as failure, and every case was reported
    /// exactly once.
    pub fn success(&self, fail_on_flaky: bool) -> bool {
        self.failed == 0 && self.errors == 0 && (!fail_on_flaky || self.flaky == 0) && self.internal_errors.is_empty()
    }
}
