//! The reporters of a run as one [`Reporter`]: a [`ReporterSet`], built by
//! [`ReporterSet::builder`], hands each event to its members in a fixed
//! order, and turns a member's failure into the run's cancellation.
//!
//! The order: the results directory first, so that a case the terminal
//! shows as finished is already on disk; then the terminal, JUnit, and the
//! reporters added with [`ReporterSetBuilder::reporter`]. The run's end is
//! the exception: JUnit writes its file first, then the results directory
//! `summary.json`, then the terminal its summary, so that both show JUnit's
//! failure too.
//!
//! A member that fails is named in the error the set returns (which cancels
//! the run: the runner stops starting cases) and gets no further case
//! events; the others go on. It still gets the run's end, so that a results
//! directory whose `results.jsonl` failed (a full disk) still tries to write
//! `summary.json`, which then says why `results.jsonl` is short.
//!
//! What `summary.json` can show, then: every failure before the end, and
//! JUnit's at the end (a JUnit directory that vanished mid-run, known only
//! then). What it cannot: its own failure, and the terminal's while it
//! prints the summary (after `summary.json`); those reach only the summary
//! the run returns, and so the exit code and what the command prints on
//! stderr.

use crate::report::{JunitReport, Redactor, ResultsDir, Terminal};
use crate::run::{EventKind, Reporter, RunEvent, RunSummary};
use std::io;

/// The run's reporters, as one.
pub struct ReporterSet<'a> {
    /// In the order case events go to them.
    members: Vec<Member<'a>>,
}

/// One reporter of the set.
struct Member<'a> {
    reporter: Box<dyn Reporter + 'a>,
    /// Where it comes at the run's end (lowest first).
    finish_rank: u8,
    failed: bool,
}

/// Builds a [`ReporterSet`]; every reporter is optional.
#[derive(Default)]
pub struct ReporterSetBuilder<'a> {
    results: Option<ResultsDir>,
    terminal: Option<Terminal>,
    junit: Option<JunitReport>,
    others: Vec<&'a mut dyn Reporter>,
    redactor: Option<Redactor>,
}

impl<'a> ReporterSet<'a> {
    /// A builder with no reporters.
    pub fn builder() -> ReporterSetBuilder<'a> {
        ReporterSetBuilder::default()
    }
}

impl<'a> ReporterSetBuilder<'a> {
    /// The terminal.
    pub fn terminal(self, terminal: Terminal) -> Self {
        ReporterSetBuilder { terminal: Some(terminal), ..self }
    }

    /// The results directory (`results.jsonl`, `summary.json`).
    pub fn results_dir(self, results: ResultsDir) -> Self {
        ReporterSetBuilder { results: Some(results), ..self }
    }

    /// A JUnit report.
    pub fn junit(self, junit: JunitReport) -> Self {
        ReporterSetBuilder { junit: Some(junit), ..self }
    }

    /// One more reporter (an embedder's, a command's collector): it gets
    /// each event after the others.
    pub fn reporter(mut self, reporter: &'a mut dyn Reporter) -> Self {
        self.others.push(reporter);
        self
    }

    /// Hides `redactor`'s secrets in the terminal, results and JUnit.
    pub fn redactor(self, redactor: Redactor) -> Self {
        ReporterSetBuilder { redactor: Some(redactor), ..self }
    }

    /// The set.
    pub fn build(self) -> ReporterSet<'a> {
        let redactor = self.redactor;
        let mut members = Vec::new();
        let mut add = |reporter: Box<dyn Reporter + 'a>, finish_rank| {
            members.push(Member { reporter, finish_rank, failed: false });
        };
        if let Some(results) = self.results {
            let results = match &redactor {
                Some(redactor) => results.with_redactor(redactor.clone()),
                None => results,
            };
            add(Box::new(results), 1);
        }
        if let Some(terminal) = self.terminal {
            let terminal = match &redactor {
                Some(redactor) => terminal.with_redactor(redactor.clone()),
                None => terminal,
            };
            add(Box::new(terminal), 2);
        }
        if let Some(junit) = self.junit {
            let junit = match &redactor {
                Some(redactor) => junit.with_redactor(redactor.clone()),
                None => junit,
            };
            add(Box::new(junit), 0);
        }
        for other in self.others {
            add(Box::new(other), 3);
        }
        ReporterSet { members }
    }
}

impl Reporter for ReporterSet<'_> {
    fn report(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
        let mut errors = Vec::new();
        match event.kind {
            EventKind::RunFinished(summary) => {
                // Each member sees the failures of those before it.
                let mut seen: Option<RunSummary> = None;
                let mut order: Vec<&mut Member<'_>> = self.members.iter_mut().collect();
                order.sort_by_key(|m| m.finish_rank);
                for member in order {
                    let current = seen.as_ref().unwrap_or(summary);
                    let result = member.reporter.report(&RunEvent { kind: EventKind::RunFinished(current), ..*event });
                    if let Err(error) = result {
                        member.failed = true;
                        seen.get_or_insert_with(|| summary.clone()).reporter_errors.push(error.to_string());
                        errors.push(error);
                    }
                }
            }
            _ => {
                for member in self.members.iter_mut().filter(|m| !m.failed) {
                    if let Err(error) = member.reporter.report(event) {
                        member.failed = true;
                        errors.push(error);
                    }
                }
            }
        }
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => {
                let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
                Err(io::Error::other(messages.join("; and ")))
            }
        }
    }
}
