//! The event stream from the runner to reporters. The runner knows nothing
//! of terminals or files: it emits [`RunEvent`]s, each stamped with the time
//! since the run started, and each [`Reporter`] renders them its own way.
//! A reporter never calls back into the run: all it can do is fail, and a
//! failure only asks the run to stop starting cases (nextest's model).

use crate::agent::Usage;
use crate::job::{CaseResult, CaseStatus};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Something that happened during a run, and when.
#[derive(Clone, Copy, Debug)]
pub struct RunEvent<'a> {
    /// Time since the run started.
    pub elapsed: Duration,
    /// What happened.
    pub kind: EventKind<'a>,
}

/// What happened, in the order a case lives: every case is started, has its
/// samples finished (none for a file that could not be read), may be slow,
/// and is finished exactly once, between the run's start and its end.
#[derive(Clone, Copy, Debug)]
pub enum EventKind<'a> {
    /// The run starts with this many cases.
    RunStarted {
        /// How many cases the run holds (those it does not start, when it
        /// is cancelled, are counted in [`RunSummary::not_run`]).
        cases: usize,
    },
    /// A case was admitted: it will be finished exactly once.
    CaseStarted {
        /// The case's id.
        id: &'a str,
    },
    /// One sample of a case was decided (samples a case stopped early are
    /// never finished, and not reported).
    SampleFinished {
        /// The case's id.
        case: &'a str,
        /// The sample's 0-based index.
        index: u32,
        /// Whether every check of every connection passed.
        passed: bool,
        /// How long the sample took.
        duration: Duration,
    },
    /// A case has been running for `running`, a multiple of the run's slow
    /// threshold ([`crate::run::RunOptions::slow_timeout`]): sent once at
    /// the threshold and again at each further multiple, as nextest's SLOW.
    CaseSlow {
        /// The case's id.
        id: &'a str,
        /// How long it has been running (at least).
        running: Duration,
    },
    /// A case finished (or could not be read); its result is final.
    CaseFinished(&'a CaseResult),
    /// Every case admitted finished.
    RunFinished(&'a RunSummary),
}

/// Renders events: a terminal, a results file, a JUnit report, a test.
pub trait Reporter: Send {
    /// Handles one event. An error cancels the run: no further case is
    /// started, the cases in flight finish, and the summary records the
    /// error and how many cases were not run. The runner goes on sending
    /// events (a [`ReporterSet`](crate::report::ReporterSet) sends them on
    /// to its members that still work) and records every further error.
    /// The error's message is a fragment that reads after "failed to"
    /// ("write `results/results.jsonl`: …") and names the file.
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()>;
}

/// Two reporters, one after the other: each sees every event; an error of
/// either is the pair's (the first one's, when both fail).
impl<A: Reporter, B: Reporter> Reporter for (A, B) {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        let first = self.0.report(event);
        let second = self.1.report(event);
        first.and(second)
    }
}

/// A borrowed reporter reports as the one it borrows.
impl<R: Reporter + ?Sized> Reporter for &mut R {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        (**self).report(event)
    }
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
    /// Every interaction's time waiting for the agent, summed, in
    /// milliseconds.
    pub agent_ms: f64,
    /// The tokens every answer cost, summed, when connections report them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What reporters failed to do (a full disk, a vanished directory), in
    /// the order it happened: the first cancelled the run. Each is a
    /// fragment that reads after "failed to".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reporter_errors: Vec<String>,
    /// Cases the run never started because a reporter failed or the run
    /// was stopped.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_run: usize,
    /// Why the run was stopped before its end (see [`crate::Runner::run_until`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Breaches of the rule that every admitted case is reported exactly
    /// once (a case never reported, or reported twice): assay's own bugs,
    /// which fail the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub internal_errors: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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
        let interactions = case.samples.iter().flat_map(|s| &s.runs).flat_map(|r| &r.interactions);
        for interaction in interactions {
            self.agent_ms += interaction.agent_ms;
            if let Some(usage) = interaction.usage {
                self.usage.get_or_insert_with(Usage::default).add(usage);
            }
        }
    }

    /// Whether the run succeeded: nothing failed or errored, nothing was
    /// flaky if flaky counts as failure, every report was written, every
    /// case ran, and every case was reported exactly once.
    pub fn success(&self, fail_on_flaky: bool) -> bool {
        self.failed == 0
            && self.errors == 0
            && (!fail_on_flaky || self.flaky == 0)
            && self.reporter_errors.is_empty()
            && self.not_run == 0
            && self.internal_errors.is_empty()
    }
}
