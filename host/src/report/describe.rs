//! What went wrong in a case, as lines a person can act on: which sample,
//! connection and interaction, and for each failing check the `file:line`
//! that asks for it, its target, key, expected and actual values and the
//! matcher's message. Text from the
//! case file, the agent or a plugin is escaped (see `escape.rs`): a value
//! stays on its line, and a message's own line breaks continue indented.

use crate::check::CheckResult;
use crate::job::{CaseResult, SampleResult};
use crate::plural;
use crate::report::escape;
use std::path::Path;

/// How a message's continuation lines are indented under its first.
const CONTINUATION: &str = "    ";

/// The lines explaining why `case` did not simply pass: its load error, or
/// the failures of its first failing sample, with a count of the others.
pub fn failure_lines(case: &CaseResult) -> Vec<String> {
    if let Some(error) = &case.error {
        return vec![escape::lines(&error.message, CONTINUATION).into_owned()];
    }
    let failed: Vec<&SampleResult> = case.samples.iter().filter(|s| !s.passed).collect();
    let Some(first) = failed.first() else { return Vec::new() };
    let mut lines = Vec::new();
    if case.samples.len() > 1 {
        lines.push(format!(
            "{} of {} failed (success_ratio {}); sample {}:",
            failed.len(),
            plural::count(case.samples.len(), "sample"),
            case.success_ratio,
            first.index
        ));
    }
    lines.extend(sample_failure_lines(first, &case.file));
    lines
}

/// The failures of one sample of the case read from `file`.
pub fn sample_failure_lines(sample: &SampleResult, file: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for run in sample.runs.iter().filter(|r| !r.passed) {
        for interaction in run.interactions.iter().filter(|i| !i.passed) {
            let at = format!("[{}] interaction {}", run.connection, interaction.index + 1);
            if let Some(error) = &interaction.error {
                lines.push(format!("{at}: {}", escape::lines(&error.message, CONTINUATION)));
            }
            for check in interaction.checks.iter().filter(|c| !c.lets_pass()) {
                let actual = interaction.actual_of(check);
                lines.push(format!("{}{at}: {}", place(file, check), check_line(check, actual.as_deref())));
            }
        }
    }
    lines
}

/// The most characters of an expected value a check's line shows: a
/// parameter object can hold a whole program (a promptfoo `javascript`
/// assertion's module and context), which the results keep whole.
const EXPECTED_SHOWN: usize = 240;

/// One check: `structure.answer keywords "Liverpool": <message> (actual: …)`.
/// `actual` is the value it looked at
/// ([`crate::job::InteractionResult::actual_of`]).
pub fn check_line(check: &CheckResult, actual: Option<&str>) -> String {
    let actual = match actual {
        Some(actual) => format!(" (actual: {})", escape::one_line(actual)),
        None => String::new(),
    };
    let mut expected = check.expected.to_string();
    if let Some((cut, _)) = expected.char_indices().nth(EXPECTED_SHOWN) {
        expected.truncate(cut);
        expected.push('…');
    }
    format!(
        "{} {} {}: {}{actual}",
        escape::one_line(&check.target),
        escape::one_line(&check.key),
        escape::one_line(&expected),
        escape::lines(&check.verdict.message, CONTINUATION)
    )
}

/// Where the case file `file` asks for `check`, as editors and terminals
/// follow it (`cases/music.hocon:12: `, from the current folder when the
/// file is under it), when its reader knew the line; else nothing.
pub fn place(file: &Path, check: &CheckResult) -> String {
    let Some(line) = check.line else { return String::new() };
    let here = std::env::current_dir().ok();
    let shown = here.as_deref().and_then(|here| file.strip_prefix(here).ok()).unwrap_or(file);
    let shown = shown.strip_prefix(".").unwrap_or(shown);
    format!("{}:{line}: ", escape::one_line(&shown.display().to_string()))
}

/// An error message of the run (a bad file, a failed request), escaped.
pub(crate) fn error_message(message: &str) -> std::borrow::Cow<'_, str> {
    escape::lines(message, CONTINUATION)
}
