//! The terminal: a live progress bar (when asked for) with passed/failed/
//! flaky/error counts, each case that did not pass as it finishes with its
//! failing checks, each case still running past the slow threshold, and a
//! summary, followed by a line per suite (a file that held more than one
//! case) with its pass rate and mean scores. It writes to the writers it
//! is given, and colours and draws the bar only when told to:
//! [`Terminal::stdio`] makes that choice for the process's own stdout and
//! stderr. Text from case files, agents and plugins is escaped (no control
//! character reaches the terminal, and none of it starts a line) and
//! redacted.

use crate::job::{CaseResult, CaseStatus};
use crate::plural;
use crate::report::describe::{check_line, error_message, failure_lines, place};
use crate::report::{Redactor, SuiteSummary, SuiteTally, escape};
use crate::run::{EventKind, Reporter, RunEvent, RunSummary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How much the terminal shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verbosity {
    /// Only the summary and errors.
    Quiet,
    /// Progress, slow cases, the cases that did not pass, the summary.
    #[default]
    Normal,
    /// Every case and every check.
    Verbose,
}

/// A writer the progress bar's ticker thread shares with the reporter.
type SharedWriter = Arc<Mutex<Box<dyn Write + Send>>>;

/// Writes progress and results to an output and an error writer.
pub struct Terminal {
    verbosity: Verbosity,
    colour: bool,
    /// The width of the terminal the bar is drawn on, when one is.
    bar_columns: Option<u16>,
    out: Box<dyn Write + Send>,
    err: SharedWriter,
    bar: Option<ProgressBar>,
    counts: RunSummary,
    suites: SuiteTally,
    redactor: Redactor,
    /// In quiet mode, the first line of why each case that did not pass
    /// did not, for the summary's list.
    reasons: std::collections::HashMap<String, String>,
}

/// Whether to paint a stream: `NO_COLOR` (set and not empty) says never,
/// else `CLICOLOR_FORCE` (set and not `0`) says always, else only a
/// terminal (<https://no-color.org>, <https://bixense.com/clicolors>).
pub fn use_colour(is_terminal: bool) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if set("NO_COLOR") {
        return false;
    }
    if set("CLICOLOR_FORCE") && std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
        return true;
    }
    is_terminal
}

/// How lines under a case's own are indented.
const INDENT: &str = "         ";

/// How many mean scores a suite's line holds; more go on lines under it.
const SCORES_PER_LINE: usize = 3;

impl Terminal {
    /// A terminal reporter writing its lines to `out`; `err` is where the
    /// progress bar goes, if [`Terminal::progress_bar`] asks for one. No
    /// colour unless [`Terminal::colour`] asks for it.
    pub fn new(verbosity: Verbosity, out: impl Write + Send + 'static, err: impl Write + Send + 'static) -> Terminal {
        Terminal {
            verbosity,
            colour: false,
            bar_columns: None,
            out: Box::new(out),
            err: Arc::new(Mutex::new(Box::new(err))),
            bar: None,
            counts: RunSummary::default(),
            suites: SuiteTally::default(),
            redactor: Redactor::none(),
            reasons: std::collections::HashMap::new(),
        }
    }

    /// On the process's stdout and stderr: colour when stdout is a
    /// terminal, the progress bar when stderr is.
    pub fn stdio(verbosity: Verbosity) -> Terminal {
        let terminal =
            Terminal::new(verbosity, io::stdout(), io::stderr()).colour(use_colour(io::stdout().is_terminal()));
        if io::stderr().is_terminal() { terminal.progress_bar(console::Term::stderr().size().1) } else { terminal }
    }

    /// The same, with statuses in colour (ANSI) or not.
    pub fn colour(self, colour: bool) -> Terminal {
        Terminal { colour, ..self }
    }

    /// The same, drawing a live progress bar on the error writer, a
    /// terminal `columns` wide (never in quiet mode).
    pub fn progress_bar(self, columns: u16) -> Terminal {
        Terminal { bar_columns: Some(columns), ..self }
    }

    /// The same, hiding `redactor`'s secrets.
    pub fn with_redactor(self, redactor: Redactor) -> Terminal {
        Terminal { redactor, ..self }
    }

    fn paint(&self, text: &str, status: CaseStatus) -> String {
        paint(self.colour, text, status)
    }

    /// Writes one line (redacted) to the output, above the bar if there is
    /// one.
    fn print(&mut self, text: &str) -> io::Result<()> {
        let text = self.redactor.redact(text);
        let out = &mut self.out;
        match &self.bar {
            Some(bar) => bar.suspend(|| writeln!(out, "{text}")),
            None => writeln!(out, "{text}"),
        }
    }

    fn case_lines(&self, case: &CaseResult) -> Vec<String> {
        let label = match case.status {
            CaseStatus::Passed => "PASS",
            CaseStatus::Flaky => "FLAKY",
            CaseStatus::Failed => "FAIL",
            CaseStatus::Error => "ERROR",
        };
        let samples = if case.samples.len() > 1 || case.success_ratio.samples > 1 {
            format!(
                " ({}/{} {} passed, needed {})",
                case.passed_samples(),
                case.samples.len(),
                plural::noun(case.samples.len(), "sample"),
                case.success_ratio.required
            )
        } else {
            String::new()
        };
        // Padded before it is painted: escape sequences take no columns.
        let mut lines = vec![format!(
            "{} [{:>8.3}s] {}{samples}",
            self.paint(&format!("{label:>6}"), case.status),
            case.duration_ms / 1e3,
            escape::one_line(&case.id)
        )];
        if self.verbosity == Verbosity::Verbose {
            for sample in &case.samples {
                for run in &sample.runs {
                    for interaction in &run.interactions {
                        let at = format!(
                            "[{}] sample {} interaction {}",
                            run.connection,
                            sample.index,
                            interaction.index + 1
                        );
                        if let Some(error) = &interaction.error {
                            lines.push(format!("{INDENT}{at}: {}", error_message(&error.message)));
                        }
                        for check in &interaction.checks {
                            // A non-gating check decides nothing: its miss is
                            // a note, not a failure.
                            let mark = match (check.verdict.passed(), check.gate, check.verdict.outcome) {
                                (true, _, _) => "ok  ",
                                (false, true, crate::check::Outcome::Error) => "ERROR",
                                (false, true, _) => "FAIL",
                                (false, false, _) => "note",
                            };
                            let place = if check.verdict.passed() { String::new() } else { place(&case.file, check) };
                            lines.push(format!(
                                "{INDENT}{mark} {place}{at}: {}",
                                check_line(check, interaction.actual_of(check).as_deref())
                            ));
                        }
                    }
                }
            }
            if let Some(error) = &case.error {
                lines.push(format!("{INDENT}{}", error_message(&error.message)));
            }
        } else {
            lines.extend(failure_lines(case).into_iter().map(|l| format!("{INDENT}{l}")));
        }
        // A message's continuation lines, indented under it.
        lines.into_iter().map(|line| line.replace('\n', &format!("\n{INDENT}"))).collect()
    }

    /// nextest's SLOW line: how long the case has run, at least.
    fn slow_line(&self, id: &str, running: Duration) -> String {
        format!(
            "{} [>{:>7.3}s] {}",
            self.paint("  SLOW", CaseStatus::Flaky),
            running.as_secs_f64(),
            escape::one_line(id)
        )
    }

    /// `   SUITE specs/cat.suite.toml: 18/20 passed (90%); mean rouge 0.612,
    /// similarity 0.871`, the scores [`SCORES_PER_LINE`] to a line.
    fn suite_lines(&self, suite: &SuiteSummary) -> Vec<String> {
        let status = if suite.passed == suite.cases { CaseStatus::Passed } else { CaseStatus::Failed };
        let mut head = format!(
            "{} {}: {}/{} passed ({})",
            self.paint("   SUITE", status),
            escape::one_line(&suite.file.to_string_lossy()),
            suite.passed,
            suite.cases,
            percent(suite.passed, suite.cases)
        );
        let scores: Vec<String> =
            suite.mean_scores.iter().map(|(key, mean)| format!("{} {mean:.3}", escape::one_line(key))).collect();
        let mut chunks = scores.chunks(SCORES_PER_LINE);
        let Some(first) = chunks.next() else { return vec![head] };
        head.push_str(&format!("; mean {}", first.join(", ")));
        let mut lines = vec![head];
        lines.extend(chunks.map(|chunk| format!("{INDENT}{}", chunk.join(", "))));
        // Every line but the last ends with a comma: the list goes on.
        let last = lines.len() - 1;
        for line in &mut lines[..last] {
            line.push(',');
        }
        lines
    }

    fn counts_message(&self) -> String {
        let c = &self.counts;
        format!("{} passed, {} failed, {} flaky, {}", c.passed, c.failed, c.flaky, plural::count(c.errors, "error"))
    }
}

impl Reporter for Terminal {
    fn report(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
        match self.render(event) {
            // A closed stdout (`assay run … | head`) is the reader's choice.
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

impl Terminal {
    fn render(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
        match event.kind {
            EventKind::RunStarted { cases } => {
                match self.bar_columns {
                    _ if self.verbosity == Verbosity::Quiet => {}
                    Some(columns) => self.bar = Some(self.progress(cases, columns)),
                    None => writeln!(self.out, "Running {}", plural::count(cases, "test case"))?,
                }
                Ok(())
            }
            EventKind::CaseSlow { id, running } => {
                if self.verbosity != Verbosity::Quiet {
                    let line = self.slow_line(id, running);
                    self.print(&line)?;
                }
                Ok(())
            }
            EventKind::CaseFinished(case) => {
                self.counts.add(case);
                self.suites.add(case);
                let show = match self.verbosity {
                    Verbosity::Quiet => false,
                    Verbosity::Normal => case.status != CaseStatus::Passed,
                    Verbosity::Verbose => true,
                };
                if show {
                    for line in self.case_lines(case) {
                        self.print(&line)?;
                    }
                }
                if self.verbosity == Verbosity::Quiet && !matches!(case.status, CaseStatus::Passed) {
                    // The first failure, after the samples' head line when
                    // there is one (`1 of 3 samples failed …; sample 1:`).
                    let lines = failure_lines(case);
                    let mut first: Vec<&str> = Vec::new();
                    for line in lines.iter().filter_map(|l| l.lines().next()) {
                        first.push(line);
                        if !line.ends_with(':') || first.len() == 2 {
                            break;
                        }
                    }
                    if !first.is_empty() {
                        let reason = truncate(&first.join(" "), 200);
                        self.reasons.insert(case.id.clone(), escape::one_line(&reason).into_owned());
                    }
                }
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                    bar.set_message(self.counts_message());
                }
                Ok(())
            }
            EventKind::RunFinished(summary) => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                self.summary(summary)
            }
            EventKind::CaseStarted { .. } | EventKind::SampleFinished { .. } => Ok(()),
        }
    }

    /// The bar, drawn on the error writer.
    fn progress(&self, cases: usize, columns: u16) -> ProgressBar {
        let term = BarTerm { err: self.err.clone(), columns };
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(term), 20);
        let bar = ProgressBar::with_draw_target(Some(cases as u64), target);
        let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("a valid template");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(100));
        bar
    }

    fn summary(&mut self, summary: &RunSummary) -> io::Result<()> {
        let failed = summary.failed + summary.errors > 0
            || summary.not_run > 0
            || !summary.reporter_errors.is_empty()
            || !summary.internal_errors.is_empty();
        let status = if failed {
            CaseStatus::Failed
        } else if summary.flaky > 0 {
            CaseStatus::Flaky
        } else {
            CaseStatus::Passed
        };
        let head = format!(
            "{} [{:.3}s] {}: {}",
            self.paint("Summary", status),
            summary.duration_ms / 1e3,
            plural::count(summary.cases, "test case"),
            self.counts_message()
        );
        writeln!(self.out, "{head}")?;
        for (status, ids) in &summary.not_passed {
            for id in ids {
                let line = match self.reasons.get(id) {
                    Some(reason) => format!("{:>8} {}: {reason}", status.to_uppercase(), escape::one_line(id)),
                    None => format!("{:>8} {}", status.to_uppercase(), escape::one_line(id)),
                };
                writeln!(self.out, "{}", self.redactor.redact(&line))?;
            }
        }
        if summary.not_run > 0 {
            let cancel = self.paint("CANCEL", CaseStatus::Failed);
            let count = plural::count(summary.not_run, "test case");
            match &summary.stopped {
                Some(why) => {
                    writeln!(self.out, "  {cancel} {count} not run: the run was stopped: {}", escape::one_line(why))?
                }
                None => writeln!(self.out, "  {cancel} {count} not run: a report could not be written")?,
            }
        }
        for error in &summary.internal_errors {
            let error = self.redactor.redact(error);
            writeln!(self.out, "   ERROR internal error: {}", escape::one_line(&error))?;
        }
        for suite in self.suites.suites() {
            for line in self.suite_lines(&suite) {
                writeln!(self.out, "{}", self.redactor.redact(&line))?;
            }
        }
        self.out.flush()
    }
}

/// `text` in the colour of `status` (bold green, yellow or red), when
/// `colour`: every terminal report paints alike.
pub(crate) fn paint(colour: bool, text: &str, status: CaseStatus) -> String {
    if !colour {
        return text.to_owned();
    }
    let code = match status {
        CaseStatus::Passed => "32",
        CaseStatus::Flaky => "33",
        CaseStatus::Failed | CaseStatus::Error => "31",
    };
    format!("\x1b[1;{code}m{text}\x1b[0m")
}

/// `part` of `whole` as a percentage to one decimal, without a trailing
/// `.0`: `90%`, `66.7%`; never `100%` unless all, nor `0%` unless none.
fn percent(part: usize, whole: usize) -> String {
    let share = if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 };
    let share = if part < whole { share.min(99.9) } else { share };
    let share = if part > 0 { share.max(0.1) } else { share };
    let text = format!("{share:.1}");
    format!("{}%", text.strip_suffix(".0").unwrap_or(&text))
}

/// The progress bar's terminal: the error writer, moved about with ANSI
/// cursor sequences, as indicatif's own stderr target does.
struct BarTerm {
    err: SharedWriter,
    columns: u16,
}

impl BarTerm {
    fn write(&self, text: &str) -> io::Result<()> {
        let mut err = self.err.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        err.write_all(text.as_bytes())
    }

    fn moved(&self, n: usize, direction: char) -> io::Result<()> {
        if n == 0 { Ok(()) } else { self.write(&format!("\x1b[{n}{direction}")) }
    }
}

impl fmt::Debug for BarTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BarTerm").field("columns", &self.columns).finish_non_exhaustive()
    }
}

impl TermLike for BarTerm {
    fn width(&self) -> u16 {
        self.columns
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.moved(n, 'A')
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.moved(n, 'B')
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.moved(n, 'C')
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.moved(n, 'D')
    }

    fn write_line(&self, text: &str) -> io::Result<()> {
        self.write(&format!("{text}\n"))
    }

    fn write_str(&self, text: &str) -> io::Result<()> {
        self.write(text)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.write("\r\x1b[2K")
    }

    fn flush(&self) -> io::Result<()> {
        self.err.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).flush()
    }
}

/// `text` cut to at most `max` characters, `…` marking a cut.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, SECRET};

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// What the terminal writes to its output and error writers for the
    /// fixed run ending with `summary`.
    fn render(
        terminal: impl FnOnce(Buffer, Buffer) -> Terminal,
        summary: impl Fn(RunSummary) -> RunSummary,
    ) -> (String, String) {
        let cases = fixtures::cases();
        let summary = summary(fixtures::summary(&cases));
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut terminal = terminal(out.clone(), err.clone()).with_redactor(Redactor::new([SECRET]));
        for event in fixtures::events(&cases, &summary) {
            terminal.report(&event).unwrap();
        }
        (out.text(), err.text())
    }

    fn plain(verbosity: Verbosity) -> String {
        let (out, err) = render(|out, err| Terminal::new(verbosity, out, err), |s| s);
        assert_eq!(err, "");
        out
    }

    #[test]
    fn normal() {
        insta::assert_snapshot!(plain(Verbosity::Normal));
    }

    #[test]
    fn verbose() {
        insta::assert_snapshot!(plain(Verbosity::Verbose));
    }

    #[test]
    fn quiet() {
        insta::assert_snapshot!(plain(Verbosity::Quiet));
    }

    #[test]
    fn colour() {
        let (out, _) = render(|out, err| Terminal::new(Verbosity::Normal, out, err).colour(true), |s| s);
        // Escape sequences shown as text: a snapshot of raw ones is unreadable.
        insta::assert_snapshot!(out.replace('\x1b', "\\e"));
    }

    #[test]
    fn cancelled() {
        let (out, _) = render(|out, err| Terminal::new(Verbosity::Quiet, out, err), fixtures::cancelled);
        insta::assert_snapshot!(out);
    }

    #[test]
    fn a_stopped_run_says_why_its_cases_did_not_run() {
        let stopped = |mut summary: RunSummary| {
            summary.not_run = 2;
            summary.stopped = Some("its client cancelled it (DELETE /v1/runs/ab)".into());
            summary
        };
        let (out, _) = render(|out, err| Terminal::new(Verbosity::Quiet, out, err), stopped);
        assert!(
            out.contains(
                "CANCEL 2 test cases not run: the run was stopped: its client cancelled it (DELETE /v1/runs/ab)"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_line_per_suite_follows_the_summary() {
        let cases: Vec<CaseResult> = fixtures::cases().into_iter().chain(fixtures::suite_cases()).collect();
        let summary = fixtures::summary(&cases);
        let out = Buffer::default();
        let mut terminal = Terminal::new(Verbosity::Quiet, out.clone(), io::sink());
        for event in fixtures::events(&cases, &summary) {
            terminal.report(&event).unwrap();
        }
        insta::assert_snapshot!(out.text());
    }

    #[test]
    fn a_suite_with_many_scores_continues_on_indented_lines() {
        let keys = ["bleu", "levenshtein", "meteor", "rouge", "similarity", "table_equivalence"];
        let suite = SuiteSummary {
            file: "specs/\u{1b}[31mppl.suite.toml".into(),
            cases: 3,
            passed: 3,
            mean_scores: keys.iter().zip(1..).map(|(key, i)| (key.to_string(), f64::from(i) / 8.0)).collect(),
        };
        let lines = Terminal::new(Verbosity::Normal, io::sink(), io::sink()).suite_lines(&suite);
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn percentages_never_round_to_all_or_none() {
        let shown: Vec<String> = [(18, 20), (2, 3), (0, 5), (1999, 2000), (1, 2000), (4, 4), (0, 0)]
            .into_iter()
            .map(|(part, whole)| percent(part, whole))
            .collect();
        assert_eq!(shown, ["90%", "66.7%", "0%", "99.9%", "0.1%", "100%", "0%"]);
    }

    #[test]
    fn the_progress_bar_goes_to_the_error_writer_and_the_lines_stay_the_same() {
        let (out, err) = render(|out, err| Terminal::new(Verbosity::Normal, out, err).progress_bar(80), |s| s);
        let without_bar = plain(Verbosity::Normal);
        assert_eq!(out, without_bar.strip_prefix("Running 8 test cases\n").unwrap());
        assert!(err.contains("8/8"), "{err:?}");
        let after_last_draw = err.rsplit("8/8").next().unwrap();
        assert!(after_last_draw.contains("\r\x1b[2K"), "the bar is cleared at the end: {err:?}");
    }
}
