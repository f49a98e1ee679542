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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Verbosity;
    use crate::report::fixtures;
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    /// Keeps what it is told, as `kind id` lines, and fails as told.
    #[derive(Default)]
    struct Record {
        seen: Vec<String>,
        fail_on_finished_case: bool,
    }

    impl Reporter for Record {
        fn report(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
            let line = match event.kind {
                EventKind::RunStarted { cases } => format!("run started {cases}"),
                EventKind::CaseStarted { id } => format!("started {id}"),
                EventKind::SampleFinished { case, index, .. } => format!("sample {case} {index}"),
                EventKind::CaseSlow { id, .. } => format!("slow {id}"),
                EventKind::CaseFinished(case) => format!("finished {}", case.id),
                EventKind::RunFinished(summary) => format!("run finished {:?}", summary.reporter_errors),
            };
            self.seen.push(line);
            match event.kind {
                EventKind::CaseFinished(_) if self.fail_on_finished_case => {
                    Err(io::Error::other("write `collector`: it is full"))
                }
                _ => Ok(()),
            }
        }
    }

    /// Sends the fixed run's events to `set`: the errors it returned.
    fn feed(set: &mut ReporterSet<'_>) -> Vec<String> {
        let cases = fixtures::cases();
        let summary = fixtures::summary(&cases);
        fixtures::events(&cases, &summary).iter().filter_map(|e| set.report(e).err()).map(|e| e.to_string()).collect()
    }

    #[test]
    fn a_failed_member_is_named_gets_no_more_case_events_and_still_gets_the_run_end() {
        let (mut failing, mut working) =
            (Record { fail_on_finished_case: true, ..Record::default() }, Record::default());
        let errors = feed(&mut ReporterSet::builder().reporter(&mut failing).reporter(&mut working).build());
        assert_eq!(errors, ["write `collector`: it is full"]);
        assert_eq!(failing.seen.iter().filter(|l| l.starts_with("finished")).count(), 1, "{:?}", failing.seen);
        assert_eq!(failing.seen.last().unwrap(), "run finished []");
        assert_eq!(working.seen.iter().filter(|l| l.starts_with("finished")).count(), 8);
        assert_eq!(working.seen.iter().filter(|l| l.starts_with("slow")).count(), 2);
        assert_eq!(working.seen.iter().filter(|l| l.starts_with("sample flaky/flaky")).count(), 3);
    }

    /// A writer that notes how many lines `results.jsonl` holds each time
    /// the terminal writes a line.
    #[derive(Clone)]
    struct Witness {
        results: PathBuf,
        seen: Arc<Mutex<Vec<(String, usize)>>>,
    }

    impl Write for Witness {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            let on_disk = std::fs::read_to_string(&self.results).map_or(0, |t| t.lines().count());
            self.seen.lock().unwrap().push((String::from_utf8_lossy(bytes).into_owned(), on_disk));
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn junit_under_a_file(dir: &Path) -> PathBuf {
        let file = dir.join("not-a-directory");
        std::fs::write(&file, "").unwrap();
        file.join("junit.xml")
    }

    #[test]
    fn a_case_the_terminal_shows_is_on_disk_and_summary_json_shows_junit_failing_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let results = ResultsDir::create(&dir.path().join("results")).unwrap();
        let witness =
            Witness { results: dir.path().join("results").join(crate::job::RESULTS_FILE), seen: Arc::default() };
        let junit = junit_under_a_file(dir.path());
        let mut last = Record::default();
        let errors = feed(
            &mut ReporterSet::builder()
                .junit(JunitReport::new(junit.clone()))
                .terminal(Terminal::new(Verbosity::Normal, witness.clone(), io::sink()))
                .results_dir(results)
                .reporter(&mut last)
                .build(),
        );

        // The terminal's line for the second case finished (the first it
        // shows) came when the results file held it.
        let seen = witness.seen.lock().unwrap();
        let shown = seen.iter().find(|(text, _)| text.contains("math_guy/wrong")).unwrap();
        assert_eq!(shown.1, 2, "{seen:?}");

        // JUnit fails when it writes, at the end: named in the error, and
        // in what `summary.json` and the reporters after it see.
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with(&format!("write the JUnit report `{}`: ", junit.display())), "{errors:?}");
        let summary: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join("results").join(crate::report::SUMMARY_FILE)).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["reporter_errors"], serde_json::json!(errors));
        assert_eq!(last.seen.last().unwrap(), &format!("run finished {errors:?}"));
    }
}
