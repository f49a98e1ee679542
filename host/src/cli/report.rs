//! `assay report [DIR…]`: the HTML report of a results directory (the last
//! run's, `results/latest`, by default), written to `DIR/report.html` (the
//! library's `results::render_report`); of two or more, the page of their
//! history (`results::render_history_to`).

use super::CliError;
use super::args::ReportArgs;
use crate::results::{read_results_dir, render_history_to};
use anyhow::Result;
use std::io::Write;

pub fn run(args: ReportArgs) -> Result<u8> {
    if args.dirs.len() >= 2 {
        let runs =
            args.dirs.iter().map(|dir| read_results_dir(dir)).collect::<Result<Vec<_>, _>>().map_err(CliError::from)?;
        let last = &args.dirs[args.dirs.len() - 1];
        let path = args.html.unwrap_or_else(|| last.parent().unwrap_or(std::path::Path::new(".")).join("history.html"));
        render_history_to(&runs, &path)?;
        let _ = writeln!(std::io::stdout(), "HTML history of {} runs in {}", runs.len(), path.display());
        return Ok(crate::exit_codes::OK);
    }
    if args.html.is_some() {
        let message =
            "names where the history of two or more runs goes; one run's report is DIR/report.html".to_owned();
        return Err(CliError::Flag { flag: "--html", message }.into());
    }
    let dir = match args.dirs.into_iter().next() {
        Some(dir) => dir,
        None => {
            let latest = super::options::run_folders()?.latest();
            if !latest.exists() {
                return Err(super::options::no_run("assay report", &latest).into());
            }
            latest
        }
    };
    let path = crate::results::render_report(&dir)?;
    // Best effort: stdout may be closed; the report is written.
    let _ = writeln!(std::io::stdout(), "HTML report in {}", path.display());
    Ok(crate::exit_codes::OK)
}
