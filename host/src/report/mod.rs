//! Reporters: each renders the runner's event stream one way.
//!
//! - [`Terminal`]: live progress, the failing cases, a summary;
//! - [`ResultsDir`]: `results.jsonl` (one line per case, flushed as each
//!   finishes) and `summary.json`;
//! - [`JunitReport`]: JUnit XML, flaky cases marked the way nextest marks
//!   them.
//!
//! `describe.rs` turns a case result into the lines a person reads; the
//! terminal and JUnit share it. `evaluation.rs` renders the reports of
//! `assay assess`, `eval` and `validate`.

mod describe;
mod evaluation;
mod junit;
mod results_dir;
mod terminal;

pub use describe::{failure_lines, sample_failure_lines};
pub use evaluation::{write_assessment, write_eval, write_json_report, write_validation};
pub use junit::JunitReport;
pub use results_dir::ResultsDir;
pub use terminal::{Terminal, Verbosity};
