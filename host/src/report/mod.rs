//! Reporters: each renders the runner's event stream one way, to the
//! writers or files it is given.
//!
//! - [`ReporterSet`]: the run's reporters as one, built by
//!   [`ReporterSet::builder`]; a member's failure cancels the run;
//! - [`Terminal`]: live progress, slow cases, the failing cases, a summary;
//! - [`ResultsDir`]: `results.jsonl` (one line per case, flushed as each
//!   finishes) and `summary.json`;
//! - [`JunitReport`]: JUnit XML, flaky cases marked the way nextest marks
//!   them;
//! - [`render_report`]: after the run, the self-contained HTML report of a
//!   results directory (`report.html`), with the sections of `assess`,
//!   `eval` and `validate` when the run was one; [`render_diff_to`] the
//!   page of two runs compared.
//!
//! [`CaseFlags`] are the seed-style flags on every line of
//! `results.jsonl`; [`SuiteTally`] sums up each file that holds many cases
//! (a suite) for the terminal, `summary.json` and JUnit.
//!
//! [`RunFolders`] says where runs keep their results (`results/latest`
//! the last). [`read_results_dir`] reads a results directory back ([`ResultsOfRun`]);
//! [`merge()`] puts the results directories of shards and reruns together;
//! [`diff()`] compares two runs ([`RunDiff`], `assay diff`), and
//! [`write_diff`] prints the comparison.
//!
//! `describe.rs` turns a case result into the lines a person reads; the
//! terminal and JUnit share it. `evaluation.rs` renders the reports of
//! `assay assess`, `eval` and `validate`.
//!
//! Every reporter takes a [`Redactor`] (`with_redactor`, or the set's
//! `redactor`) and writes the
//! run's secrets as `[REDACTED]`; the [`escape`] functions keep text from
//! case files, agents and plugins from controlling the terminal.

mod describe;
pub mod diff;
mod diff_terminal;
pub mod escape;
mod evaluation;
#[cfg(test)]
mod fixtures;
mod html;
mod junit;
pub mod merge;
mod promptfoo_output;
mod read;
mod redact;
mod results_dir;
mod run_folders;
mod set;
mod tally;
mod terminal;

pub use describe::{failure_lines, sample_failure_lines};
pub use diff::{Allowances, DiffOptions, RunDiff, diff};
pub use diff_terminal::write_diff;
pub use evaluation::{write_assessment, write_eval, write_json_report, write_validation};
pub use html::{render_diff_to, render_history_to, render_report, render_report_to};
pub use junit::JunitReport;
pub use merge::{MergeOptions, Merged, MergedDir, merge};
pub use promptfoo_output::PromptfooOutput;
pub use read::{CaseOfRun, ResultsOfRun, RunCounts, SummaryOfRun, read_results_dir};
pub use redact::{MIN_SECRET_CHARS, REDACTED, Redactor};
pub use results_dir::{Provenance, ResultsDir, RunInfo, SUMMARY_FILE};
pub use run_folders::{LATEST, RunFolders};
pub use set::{ReporterSet, ReporterSetBuilder};
pub use tally::{CaseFlags, FlagCounts, SuiteSummary, SuiteTally};
pub use terminal::{Terminal, Verbosity, use_colour};
