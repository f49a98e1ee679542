//! Reporters: each renders the runner's event stream one way, live, to the
//! writers or files it is given.
//!
//! - [`ReporterSet`]: the run's reporters as one, built by
//!   [`ReporterSet::builder`]; a member's failure cancels the run;
//! - [`Terminal`]: live progress, slow cases, the failing cases, a summary;
//! - [`ResultsDir`]: `results.jsonl` (one line per case, flushed as each
//!   finishes) and `summary.json`: the writer of the results folder that
//!   `crate::results` reads back;
//! - [`JunitReport`]: JUnit XML, flaky cases marked the way nextest marks
//!   them;
//! - [`PromptfooOutput`]: promptfoo's `-o` output file.
//!
//! [`CaseFlags`] are the seed-style flags on every line of
//! `results.jsonl`; [`SuiteTally`] sums up each file that holds many cases
//! (a suite) for the terminal, `summary.json` and JUnit.
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
pub mod escape;
mod evaluation;
#[cfg(test)]
pub(crate) mod fixtures;
mod junit;
mod promptfoo_output;
mod redact;
mod results_dir;
mod set;
mod tally;
mod terminal;

pub use describe::{failure_lines, sample_failure_lines};
pub use evaluation::{write_assessment, write_eval, write_json_report, write_validation};
pub use junit::JunitReport;
pub use promptfoo_output::PromptfooOutput;
pub use redact::{MIN_SECRET_CHARS, REDACTED, Redactor};
pub use results_dir::{MergedDir, Provenance, ResultsDir, RunInfo, SUMMARY_FILE};
pub use set::{ReporterSet, ReporterSetBuilder};
pub use tally::{CaseFlags, FlagCounts, SuiteSummary, SuiteTally};
pub(crate) use tally::{case_scores, mean_per_key};
pub use terminal::{Terminal, Verbosity, use_colour};
pub(crate) use terminal::paint;
