//! A [`RunDiff`] for a person at a terminal: both runs' counts, a line per
//! case that changed status or was added or removed, per key the mean
//! score change and the cases that moved most, a summary of the counts,
//! and the verdict. Coloured as the run's terminal report is (red for
//! worse, yellow for flaky, green for better); ids are escaped.

use crate::job::CaseStatus;
use crate::plural;
use crate::results::diff::{KeyScores, RunDiff, RunSide, StatusChange};
use crate::report::escape;
use crate::report::paint;
use std::io::{self, Write};

/// How wide the label column is, as `NEWLY FAILING` needs.
const LABEL: usize = 15;

/// How lines under a label's own are indented.
const INDENT: &str = "                  ";

/// Writes `diff` to `out`, in colour when `colour`.
pub fn write_diff(out: &mut dyn Write, diff: &RunDiff, colour: bool) -> io::Result<()> {
    let label = |text: &str, status: CaseStatus| paint(colour, &format!("{text:>LABEL$}"), status);
    writeln!(out, "{}", side("Old", &diff.old))?;
    writeln!(out, "{}", side("New", &diff.new))?;
    let changes: [(&str, CaseStatus, &[StatusChange]); 4] = [
        ("NEWLY FAILING", CaseStatus::Failed, &diff.newly_failing),
        ("NEWLY FLAKY", CaseStatus::Flaky, &diff.newly_flaky),
        ("NEWLY PASSING", CaseStatus::Passed, &diff.newly_passing),
        ("NO LONGER FLAKY", CaseStatus::Passed, &diff.no_longer_flaky),
    ];
    for (text, status, list) in changes {
        for change in list {
            let id = escape::one_line(&change.id);
            writeln!(out, "{} {id} ({} → {})", label(text, status), change.old.name(), change.new.name())?;
        }
    }
    for case in &diff.added {
        let status = paint(colour, case.status.name(), case.status);
        writeln!(out, "{:>LABEL$} {} ({status})", "ADDED", escape::one_line(&case.id))?;
    }
    for case in &diff.removed {
        writeln!(out, "{:>LABEL$} {} (was {})", "REMOVED", escape::one_line(&case.id), case.status.name())?;
    }
    for scores in &diff.scores {
        let worse = scores.change.is_some_and(|c| c < 0.0);
        let head = label("SCORE", if worse { CaseStatus::Failed } else { CaseStatus::Passed });
        writeln!(out, "{head} {}", score_line(scores))?;
        for moved in scores.dropped.iter().chain(&scores.rose) {
            let id = escape::one_line(&moved.id);
            writeln!(out, "{INDENT}{:+.3} {id} ({:.3} → {:.3})", moved.change, moved.old, moved.new)?;
        }
    }
    writeln!(out, "{}", counts_line(diff))?;
    if diff.verdict.regressed {
        let reasons: Vec<String> = diff.verdict.regressions.iter().map(|r| r.describe()).collect();
        writeln!(out, "{} {}", paint(colour, "REGRESSED", CaseStatus::Failed), reasons.join("; "))?;
    } else {
        writeln!(out, "{}", paint(colour, "NO REGRESSION", CaseStatus::Passed))?;
    }
    out.flush()
}

/// `Old results/a: 4 test cases: 3 passed, 1 failed, 0 flaky, 0 errors`,
/// as the run's own summary counts them.
fn side(name: &str, side: &RunSide) -> String {
    let c = &side.counts;
    format!(
        "{name} {}: {}: {} passed, {} failed, {} flaky, {}",
        escape::one_line(&side.dir.to_string_lossy()),
        plural::count(c.cases, "test case"),
        c.passed,
        c.failed,
        c.flaky,
        plural::count(c.errors, "error")
    )
}

/// `rouge: mean 0.612 → 0.540, -0.072 over 10 cases in both`.
fn score_line(scores: &KeyScores) -> String {
    let mean = |m: Option<f64>| m.map_or("-".to_owned(), |m| format!("{m:.3}"));
    let head = format!("{}: mean {} → {}", escape::one_line(&scores.key), mean(scores.old_mean), mean(scores.new_mean));
    match scores.change {
        Some(change) => format!("{head}, {change:+.3} over {} in both", plural::count(scores.paired, "case")),
        None => format!("{head}, no case scored in both"),
    }
}

/// `Diff: 1 newly failing, 0 newly passing, ...; 1 added, 0 removed`: every
/// case of both runs is counted once.
fn counts_line(diff: &RunDiff) -> String {
    format!(
        "Diff: {} newly failing, {} newly passing, {} newly flaky, {} no longer flaky, {} still failing, {} unchanged; {} added, {} removed",
        diff.newly_failing.len(),
        diff.newly_passing.len(),
        diff.newly_flaky.len(),
        diff.no_longer_flaky.len(),
        diff.still_failing.len(),
        diff.unchanged,
        diff.added.len(),
        diff.removed.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::diff::{DiffOptions, diff};
    use crate::results::fixtures::run_of;
    use CaseStatus::{Error, Failed, Flaky, Passed};

    /// Every kind of line, in colour; an id that would drive the terminal
    /// is escaped.
    #[test]
    fn colour() {
        let old = run_of(
            "results/old",
            &[("a", Passed, Some(0.9)), ("b", Failed, Some(0.2)), ("c", Passed, None), ("gone", Error, None)],
        );
        let new = run_of(
            "results/new",
            &[("a", Failed, Some(0.5)), ("b", Passed, Some(0.6)), ("c", Flaky, None), ("new\u{1b}[2K", Passed, None)],
        );
        let mut out = Vec::new();
        write_diff(&mut out, &diff(&old, &new, &DiffOptions::default()), true).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
