//! `assay report [DIR]`: the HTML report of a results directory (the last
//! run's, `results/latest`, by default), written to `DIR/report.html` (the
//! library's `report::render_report`).

use super::args::ReportArgs;
use anyhow::Result;
use std::io::Write;

pub fn run(args: ReportArgs) -> Result<u8> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => {
            let latest = super::options::run_folders()?.latest();
            if !latest.exists() {
                return Err(super::options::no_run("assay report", &latest).into());
            }
            latest
        }
    };
    let path = assay::report::render_report(&dir)?;
    // Best effort: stdout may be closed; the report is written.
    let _ = writeln!(std::io::stdout(), "HTML report in {}", path.display());
    Ok(assay::exit_codes::OK)
}
