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
use std::collections::HashMap;
use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Spools each case's `<testcase>` as it finishes and writes the report
/// when the run finishes. What it holds in memory is a few bytes a case
/// (where its element is in the spool, its file and outcome), so a merge
/// of a million cases writes its report in bounded memory.
#[derive(Debug)]
pub struct JunitReport {
    path: PathBuf,
    /// The `<testcase>` elements so far, in a private file beside the
    /// report (`junit.xml.cases`), removed once the report is written.
    spool: Option<Spool>,
    /// Each case's element, in the order the cases finished.
    cases: Vec<Spooled>,
    /// Hashes case files for `Spooled::file` (a suite file is found by its
    /// hash: no path is kept per case).
    hasher: RandomState,
    suites: SuiteTally,
    redactor: Redactor,
    /// Why the spool could not be written, if it could not: said once,
    /// when the run finishes (the report is not written).
    failed: Option<io::Error>,
}

/// The spool file, and how much has been written to it.
#[derive(Debug)]
struct Spool {
    path: PathBuf,
    writer: io::BufWriter<File>,
    written: u64,
}

/// One case's `<testcase>` element in the spool: 24 bytes.
#[derive(Clone, Copy, Debug)]
struct Spooled {
    /// Its file's hash.
    file: u64,
    offset: u64,
    /// Its length, below 2^30, and in the two bits above, its outcome
    /// (0 passed, [`FAILURE`] or [`ERROR`]).
    len_and_kind: u32,
    seconds: f32,
}

/// [`Spooled::len_and_kind`]'s outcome bits of a failure.
const FAILURE: u32 = 1 << 30;
/// [`Spooled::len_and_kind`]'s outcome bits of an error.
const ERROR: u32 = 2 << 30;

impl Spooled {
    fn len(&self) -> usize {
        (self.len_and_kind & (FAILURE - 1)) as usize
    }

    fn kind(&self) -> Option<NonSuccessKind> {
        match self.len_and_kind & !(FAILURE - 1) {
            FAILURE => Some(NonSuccessKind::Failure),
            ERROR => Some(NonSuccessKind::Error),
            _ => None,
        }
    }
}

impl JunitReport {
    /// A report to be written to `path`.
    pub fn new(path: PathBuf) -> JunitReport {
        JunitReport {
            path,
            spool: None,
            cases: Vec::new(),
            hasher: RandomState::new(),
            suites: SuiteTally::default(),
            redactor: Redactor::none(),
            failed: None,
        }
    }

    /// The same, hiding `redactor`'s secrets.
    pub fn with_redactor(self, redactor: Redactor) -> JunitReport {
        JunitReport { redactor, ..self }
    }

    /// Appends `case`'s `<testcase>` to the spool, which the first case
    /// creates beside the report.
    fn spool(&mut self, case: &CaseResult) -> io::Result<()> {
        if self.spool.is_none() {
            if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
                private_files::create_dir(parent)?;
            }
            let path = self.spool_path();
            let writer = io::BufWriter::new(private_files::create(&path)?);
            self.spool = Some(Spool { path, writer, written: 0 });
        }
        let test_case = test_case(case, &self.redactor);
        let kind = match &test_case.status {
            TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, .. } => FAILURE,
            TestCaseStatus::NonSuccess { kind: NonSuccessKind::Error, .. } => ERROR,
            _ => 0,
        };
        let xml = element_of(test_case)?;
        if xml.len() >= FAILURE as usize {
            return Err(io::Error::other(format!("case `{}`'s element is over 1 GiB", case.id)));
        }
        let spool = self.spool.as_mut().expect("created above");
        spool.writer.write_all(xml.as_bytes())?;
        let file = self.hasher.hash_one(&case.file);
        let seconds = (case.duration_ms / 1e3) as f32;
        self.cases.push(Spooled { file, offset: spool.written, len_and_kind: xml.len() as u32 | kind, seconds });
        spool.written += xml.len() as u64;
        Ok(())
    }

    /// `junit.xml.cases` beside the report.
    fn spool_path(&self) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_owned();
        name.push(".cases");
        self.path.with_file_name(name)
    }

    /// Writes the report: the `<testsuites>` and each `<testsuite>` as
    /// quick-junit writes them, each suite's `<testcase>` elements copied
    /// from the spool in the order the cases finished; then removes the
    /// spool. Cases go in the `assay` suite, but those of a file that held
    /// more than one case (a suite), which make a suite of their own.
    fn write(&mut self, duration: Duration) -> io::Result<()> {
        let suites = self.suites.suites();
        let suite_of_file: HashMap<u64, usize> =
            suites.iter().enumerate().map(|(k, suite)| (self.hasher.hash_one(&suite.file), k + 1)).collect();
        let group = |case: &Spooled| suite_of_file.get(&case.file).copied().unwrap_or(0);
        let mut report = Report::new("assay");
        for index in 0..=suites.len() {
            let mut suite = match index {
                0 if suites.is_empty() || self.cases.iter().any(|case| group(case) == 0) => {
                    let mut suite = TestSuite::new("assay");
                    suite.set_time(duration);
                    suite
                }
                0 => continue,
                k => self.test_suite(&suites[k - 1]),
            };
            let mut seconds = 0.0;
            for case in self.cases.iter().filter(|case| group(case) == index) {
                suite.tests += 1;
                match case.kind() {
                    Some(NonSuccessKind::Failure) => suite.failures += 1,
                    Some(NonSuccessKind::Error) => suite.errors += 1,
                    None => {}
                }
                seconds += f64::from(case.seconds);
            }
            if index > 0 {
                suite.set_time(Duration::from_secs_f64(seconds));
            }
            // A case that holds the place of the suite's: replaced below.
            suite.test_cases.push(TestCase::new(placeholder(index), TestCaseStatus::success()));
            report.add_test_suite(suite);
        }
        report.set_time(duration);
        let outline = report.to_string().map_err(io::Error::other)?;

        let mut spooled = match self.spool.take() {
            Some(spool) => {
                let file = spool.writer.into_inner().map_err(io::IntoInnerError::into_error)?;
                drop(file);
                Some(File::open(&spool.path)?)
            }
            None => None,
        };
        let mut out = io::BufWriter::new(private_files::create(&self.path)?);
        let mut element = Vec::new();
        for line in outline.split_inclusive('\n') {
            let group_index = (0..=suites.len()).find(|&k| line.contains(&format!("name=\"{}\"", placeholder(k))));
            let Some(index) = group_index else {
                out.write_all(line.as_bytes())?;
                continue;
            };
            let Some(spool) = spooled.as_mut() else { continue };
            for case in self.cases.iter().filter(|case| group(case) == index) {
                element.resize(case.len(), 0);
                spool.seek(SeekFrom::Start(case.offset))?;
                spool.read_exact(&mut element)?;
                out.write_all(&element)?;
            }
        }
        out.into_inner().map_err(io::IntoInnerError::into_error)?.sync_all()?;
        if spooled.is_some() {
            std::fs::remove_file(self.spool_path())?;
        }
        Ok(())
    }
}

/// The name of the case that holds the place of suite `index`'s cases in
/// the report's outline (no case has it: the outline holds no case).
fn placeholder(index: usize) -> String {
    format!("assay-junit-spool-{index}")
}

/// `test_case` as quick-junit writes it inside a `<testsuite>`: its
/// `<testcase>` element, indented, ending in a newline.
fn element_of(test_case: TestCase) -> io::Result<String> {
    let mut suite = TestSuite::new("one");
    suite.add_test_case(test_case);
    let mut report = Report::new("one");
    report.add_test_suite(suite);
    let text = report.to_string().map_err(io::Error::other)?;
    // Markup in the text is escaped: these tags are quick-junit's own.
    let start = text.find("<testcase").and_then(|at| text[..at].rfind('\n')).map(|at| at + 1);
    let end = text.rfind("</testsuite>").and_then(|at| text[..at].rfind('\n')).map(|at| at + 1);
    match start.zip(end) {
        Some((start, end)) if start < end => Ok(text[start..end].to_owned()),
        _ => Err(io::Error::other(format!("quick-junit wrote a test case as no element: {text}"))),
    }
}

impl Reporter for JunitReport {
    fn report(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
        match event.kind {
            EventKind::CaseFinished(case) => {
                self.suites.add(case);
                if self.failed.is_none()
                    && let Err(error) = self.spool(case)
                {
                    self.failed = Some(error);
                }
                Ok(())
            }
            EventKind::RunFinished(summary) => match self.failed.take() {
                Some(error) => Err(self.cannot(error)),
                None => self.write(Duration::from_secs_f64(summary.duration_ms / 1e3)).map_err(|e| self.cannot(e)),
            },
            EventKind::RunStarted { .. }
            | EventKind::CaseStarted { .. }
            | EventKind::SampleFinished { .. }
            | EventKind::CaseSlow { .. } => Ok(()),
        }
    }
}

impl JunitReport {
    /// What could not be done with the report, naming it.
    fn cannot(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("write the JUnit report `{}`: {e}", self.path.display()))
    }
}

impl JunitReport {
    /// The `<testsuite>` of one suite file, without its cases: its totals
    /// as properties.
    fn test_suite(&self, summary: &SuiteSummary) -> TestSuite {
        let name = escape::one_line(&summary.file.to_string_lossy()).into_owned();
        let mut suite = TestSuite::new(self.redactor.redact(&name).into_owned());
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
            // The first concrete failure, not the "k of n samples" header
            // that comes first when the case sampled more than once.
            let header = usize::from(case.error.is_none() && case.samples.len() > 1);
            let headline = lines.get(header).or(lines.first()).cloned().unwrap_or_default();
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
