//! A tool that embeds assay: it runs the test cases under the paths it is
//! given exactly as `assay run` would (the current folder's `assay.toml`
//! honoured: its plugins, agents, judge and caches), with a reporter of its
//! own that prints one line per case, and exits 0 when every case passed.
//!
//! It uses only the library's public face (the crate root's names).
//!
//! ```sh
//! cargo run --release -p assay --example embed -- fixtures/
//! ```

use assay::{EventKind, Project, ProjectOptions, Reporter, RunEvent, RunOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// One line per case: its status, how long it took, its id.
struct OneLine<W>(W);

impl<W: Write + Send> Reporter for OneLine<W> {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        match event.kind {
            EventKind::CaseFinished(case) => {
                writeln!(self.0, "{:<7} {:>7.3}s  {}", case.status.name(), case.duration_ms / 1e3, case.id)
            }
            _ => Ok(()),
        }
    }
}

fn main() -> ExitCode {
    let paths: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        eprintln!("usage: embed PATH...   (test case files, folders or globs)");
        return ExitCode::from(2);
    }
    match run(&paths) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

/// Runs the cases under `paths`: whether all passed.
fn run(paths: &[PathBuf]) -> Result<bool, assay::errors::ProjectError> {
    let project = Project::open(ProjectOptions::default())?;
    let files = project.discover(paths, None)?;
    let cases = project.cases(files, None)?;
    let summary = project.runner(RunOptions::default())?.run_blocking(cases, &mut OneLine(std::io::stdout()));
    Ok(summary.success(false))
}
