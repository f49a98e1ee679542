//! The terminal: a live progress bar (on a TTY) with passed/failed/flaky/
//! error counts, each case that did not pass as it finishes with its failing
//! checks, and a summary. Colour only when stdout is a terminal. Text from
//! case files, agents and plugins is escaped (no control character reaches
//! the terminal, and none of it starts a line) and redacted.

use crate::plural;
use crate::report::describe::{check_line, error_message, failure_lines};
use crate::report::{Redactor, escape};
use crate::run::{CaseResult, CaseStatus, Reporter, RunEvent, RunSummary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, IsTerminal, Write};

/// How much the terminal shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verbosity {
    /// Only the summary and errors.
    Quiet,
    /// Progress, the cases that did not pass, the summary.
    #[default]
    Normal,
    /// Every case and every check.
    Verbose,
}

/// Writes progress and results to stdout/stderr.
pub struct Terminal {
    verbosity: Verbosity,
    colour: bool,
    bar: Option<ProgressBar>,
    counts: RunSummary,
    redactor: Redactor,
}

/// How lines under a case's own are indented.
const INDENT: &str = "         ";

impl Terminal {
    /// A terminal reporter; the bar and colours appear only on a TTY.
    pub fn new(verbosity: Verbosity) -> Terminal {
        Terminal {
            verbosity,
            colour: io::stdout().is_terminal(),
            bar: None,
            counts: RunSummary::default(),
            redactor: Redactor::none(),
        }
    }

    /// The same, hiding `redactor`'s secrets.
    pub fn with_redactor(self, redactor: Redactor) -> Terminal {
        Terminal { redactor, ..self }
    }

    fn paint(&self, text: &str, status: CaseStatus) -> String {
        if !self.colour {
            return text.to_owned();
        }
        let code = match status {
            CaseStatus::Passed => "32",
            CaseStatus::Flaky => "33",
            CaseStatus::Failed | CaseStatus::Error => "31",
        };
        format!("\x1b[1;{code}m{text}\x1b[0m")
    }

    fn print(&self, text: &str) -> io::Result<()> {
        let text = self.redactor.redact(text);
        match &self.bar {
            Some(bar) => {
                bar.println(text.as_ref());
                Ok(())
            }
            None => writeln!(io::stdout().lock(), "{text}"),
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
        let mut lines = vec![format!(
            "{:>6} [{:>8.3}s] {}{samples}",
            self.paint(label, case.status),
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
                            let mark = if check.verdict.passed() { "ok  " } else { "FAIL" };
                            lines.push(format!("{INDENT}{mark} {at}: {}", check_line(check)));
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
        match event {
            RunEvent::Started { cases } => {
                if self.verbosity != Verbosity::Quiet && io::stderr().is_terminal() {
                    let bar = ProgressBar::with_draw_target(Some(*cases as u64), ProgressDrawTarget::stderr());
                    let style =
                        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
                            .expect("a valid template");
                    bar.set_style(style);
                    bar.enable_steady_tick(std::time::Duration::from_millis(100));
                    self.bar = Some(bar);
                } else if self.verbosity != Verbosity::Quiet {
                    writeln!(io::stdout().lock(), "Running {}", plural::count(*cases, "test case"))?;
                }
                Ok(())
            }
            RunEvent::CaseFinished(case) => {
                self.counts.add(case);
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
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                    bar.set_message(self.counts_message());
                }
                Ok(())
            }
            RunEvent::Finished(summary) => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                let status = if summary.failed + summary.errors > 0 {
                    CaseStatus::Failed
                } else if summary.flaky > 0 {
                    CaseStatus::Flaky
                } else {
                    CaseStatus::Passed
                };
                let mut out = io::stdout().lock();
                writeln!(
                    out,
                    "{} [{:.3}s] {}: {}",
                    self.paint("Summary", status),
                    summary.duration_ms / 1e3,
                    plural::count(summary.cases, "test case"),
                    self.counts_message()
                )?;
                for (status, ids) in &summary.not_passed {
                    for id in ids {
                        let id = self.redactor.redact(id);
                        writeln!(out, "{:>8} {}", status.to_uppercase(), escape::one_line(&id))?;
                    }
                }
                for error in &summary.internal_errors {
                    let error = self.redactor.redact(error);
                    writeln!(out, "   ERROR internal error: {}", escape::one_line(&error))?;
                }
                Ok(())
            }
        }
    }
}
