//! A results folder read back: everything assay does with the runs it kept
//! after they ended. `report::ResultsDir` writes the folder live
//! (`results.jsonl`, a line per case, and `summary.json`); this module owns
//! the rest of its life.
//!
//! - [`RunFolders`]: where runs keep their results (`results/<time>`, and
//!   `results/latest` the last);
//! - [`read_results_dir`]: a results directory read back
//!   ([`ResultsOfRun`]: a [`CaseOfRun`] per line, its summary);
//! - [`Rerun`]: the cases of a run to run again (`--rerun-failed`);
//! - [`merge()`]: the results directories of shards and reruns put
//!   together (`assay merge`);
//! - [`diff()`]: two runs compared ([`RunDiff`], `assay diff`), and
//!   [`write_diff`] prints the comparison;
//! - [`render_report`]: the self-contained HTML report of a results
//!   directory (`report.html`), with the sections of `assess`, `eval` and
//!   `validate` when the run was one; [`render_diff_to`] the page of two
//!   runs compared, [`render_history_to`] the page of many.
//!
//! A replay (`--replay DIR`) reads the same lines, for their answers only:
//! `job::Replay`, below the runner that takes answers from it.

pub mod diff;
mod diff_terminal;
#[cfg(test)]
mod fixtures;
mod html;
pub mod merge;
mod read;
mod rerun;
mod run_folders;

pub use diff::{Allowances, DiffOptions, RunDiff, diff};
pub use diff_terminal::write_diff;
pub use html::{render_diff_to, render_history_to, render_report, render_report_to};
pub use merge::{MergeOptions, Merged, merge};
pub use read::{CaseOfRun, ResultsOfRun, RunCounts, SummaryOfRun, read_results_dir};
pub use rerun::{Rerun, RerunSelection};
pub use run_folders::{LATEST, RunFolders};
