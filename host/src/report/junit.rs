//! JUnit XML (with quick-junit, as nextest writes it): one `<testcase>` per
//! case, named by its id with the agent as class name. A failed case is a
//! `<failure>`, an errored one an `<error>`, and a flaky one passes with a
//! `<flakyFailure>` per failed sample. Text is redacted and escaped as for
//! the terminal: no control character, and so nothing XML 1.0 cannot hold,
//! reaches the file. The file is written private (0600, its missing parent
//! directories 0700), as the results directory is.
//!
//! Cases go in the `<testsuite name="assay">` as they always did, except
//! those of a file that held more than one case (a suite): each such file
//! is a `<testsuite>` of its own, named by its path, whose properties are
//! its pass rate and the mean score per check key (`mean_score.KEY`). A
//! case with one of the seed's flags ([`CaseFlags`]) has it as a property
//! (`api_error` = `true`).

use crate::job::{CaseResult, CaseStatus};
use crate::private_files;
use crate::report::describe::{failure_lines, sample_failure_lines};
use crate::report::{CaseFlags, Redactor, SuiteSummary, SuiteTally, escape};
use crate::run::{EventKind, Reporter, RunEvent};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestRerun, TestSuite};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Collects cases and writes the report when the run finishes.
#[derive(Debug)]
pub struct JunitReport {
    path: PathBuf,
    /// Every finished case's file and test case, in the order they
    /// finished.
    cases: Vec<(PathBuf, TestCase)>,
    suites: SuiteTally,
    redactor: Redactor,
}

impl JunitReport {
    /// A report to be written to `path`.
    pub fn new(path: PathBuf) -> JunitReport {
        JunitReport { path, cases: Vec::new(), suites: SuiteTally::default(), redactor: Redactor::none() }
    }

    /// The same, hiding `redactor`'s secrets.
    pub fn with_redactor(self, redactor: Redactor) -> JunitReport {
        JunitReport { redactor, ..self }
    }
}

impl Reporter for JunitReport {
    fn report(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
        match event.kind {
            EventKind::CaseFinished(case) => {
                self.suites.add(case);
                self.cases.push((case.file.clone(), test_case(case, &self.redactor)));
                Ok(())
            }
            EventKind::RunFinished(summary) => {
                let mut report = Report::new("assay");
                let suites = self.suites.suites();
                let in_suite = |file: &Path| suites.iter().any(|s| s.file == file);
                let (of_suites, others): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut self.cases).into_iter().partition(|(file, _)| in_suite(file));
                if !others.is_empty() || suites.is_empty() {
                    let mut suite = TestSuite::new("assay");
                    suite.add_test_cases(others.into_iter().map(|(_, case)| case));
                    suite.set_time(Duration::from_secs_f64(summary.duration_ms / 1e3));
                    report.add_test_suite(suite);
                }
                for summary in &suites {
                    let cases = of_suites.iter().filter(|(file, _)| *file == summary.file);
                    report.add_test_suite(self.test_suite(summary, cases.map(|(_, case)| case.clone())));
                }
                report.set_time(Duration::from_secs_f64(summary.duration_ms / 1e3));
                let text = report.to_string().map_err(io::Error::other)?;
                let cannot = |e: io::Error| {
                    io::Error::new(e.kind(), format!("write the JUnit report `{}`: {e}", self.path.display()))
                };
                if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    private_files::create_dir(parent).map_err(cannot)?;
                }
                private_files::write(&self.path, text.as_bytes()).map_err(cannot)
            }
            EventKind::RunStarted { .. }
            | EventKind::CaseStarted { .. }
            | EventKind::SampleFinished { .. }
            | EventKind::CaseSlow { .. } => Ok(()),
        }
    }
}

impl JunitReport {
    /// The `<testsuite>` of one suite file: its cases, its time (theirs,
    /// summed) and its totals as properties.
    fn test_suite(&self, summary: &SuiteSummary, cases: impl Iterator<Item = TestCase>) -> TestSuite {
        let name = escape::one_line(&summary.file.to_string_lossy()).into_owned();
        let mut suite = TestSuite::new(self.redactor.redact(&name).into_owned());
        suite.add_test_cases(cases);
        let time = suite.test_cases.iter().filter_map(|c| c.time).sum();
        suite.set_time(time);
        suite.add_property(Property::new("passed", format!("{}/{}", summary.passed, summary.cases)));
        suite.add_property(Property::new("pass_rate", format!("{:.4}", summary.pass_rate())));
        for (key, mean) in &summary.mean_scores {
            let key = self.redactor.redact(&escape::one_line(key)).into_owned();
            suite.add_property(Property::new(format!("mean_score.{key}"), format!("{mean:.4}")));
        }
        suite
    }
}

fn test_case(case: &CaseResult, redactor: &Redactor) -> TestCase {
    let text = |text: &str| redactor.redact(&escape::lines(text, "    ")).into_owned();
    let lines: Vec<String> = failure_lines(case).iter().map(|line| redactor.redact(line).into_owned()).collect();
    let mut status = match case.status {
        CaseStatus::Passed => TestCaseStatus::success(),
        CaseStatus::Flaky => {
            let mut status = TestCaseStatus::success();
            for sample in case.samples.iter().filter(|s| !s.passed) {
                let sample_lines = sample_failure_lines(sample, &case.file);
                let mut rerun = TestRerun::new(NonSuccessKind::Failure);
                rerun.set_message(format!("sample {} failed", sample.index));
                rerun.set_description(redactor.redact(&sample_lines.join("\n")).into_owned());
                status.add_rerun(rerun);
            }
            status
        }
        CaseStatus::Failed | CaseStatus::Error => {
            let kind = if case.status == CaseStatus::Failed { NonSuccessKind::Failure } else { NonSuccessKind::Error };
            let mut status = TestCaseStatus::non_success(kind);
            // The first concrete failure, not the "k of n samples" header.
            let headline = lines.iter().find(|l| l.starts_with('[')).or(lines.first()).cloned().unwrap_or_default();
            status.set_message(headline);
            status.set_description(lines.join("\n"));
            status
        }
    };
    if let TestCaseStatus::NonSuccess { .. } = &mut status {
        status.set_type(case.status.name());
    }
    let mut test_case = TestCase::new(text(&case.id), status);
    test_case.set_classname(if case.agent.is_empty() { "assay".to_owned() } else { text(&case.agent) });
    test_case.set_time(Duration::from_secs_f64(case.duration_ms / 1e3));
    test_case.set_assertions(
        case.samples.iter().flat_map(|s| &s.runs).flat_map(|r| &r.interactions).map(|i| i.checks.len()).sum(),
    );
    for flag in CaseFlags::of(case).names() {
        test_case.add_property(Property::new(flag, "true"));
    }
    test_case
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, SECRET};

    #[test]
    fn junit_xml() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reports").join("junit.xml");
        let cases = fixtures::cases();
        let summary = fixtures::summary(&cases);
        let mut junit = JunitReport::new(path.clone()).with_redactor(Redactor::new([SECRET]));
        for event in fixtures::events(&cases, &summary) {
            junit.report(&event).unwrap();
        }
        insta::assert_snapshot!(std::fs::read_to_string(&path).unwrap());
    }

    #[test]
    fn each_suite_file_is_a_testsuite_with_its_pass_rate_and_mean_scores() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junit.xml");
        let cases: Vec<CaseResult> = fixtures::cases().into_iter().chain(fixtures::suite_cases()).collect();
        let summary = fixtures::summary(&cases);
        let mut junit = JunitReport::new(path.clone()).with_redactor(Redactor::new([SECRET]));
        for event in fixtures::events(&cases, &summary) {
            junit.report(&event).unwrap();
        }
        insta::assert_snapshot!(std::fs::read_to_string(&path).unwrap());
    }
}
