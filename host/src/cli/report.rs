//! `assay report DIR`: the HTML report of a results directory, written to
//! `DIR/report.html` (the library's `report::render_report`).

use super::args::ReportArgs;
use anyhow::Result;
use std::io::Write;

pub fn run(args: ReportArgs) -> Result<u8> {
    let path = assay::report::render_report(&args.dir)?;
    // Best effort: stdout may be closed; the report is written.
    let _ = writeln!(std::io::stdout(), "HTML report in {}", path.display());
    Ok(assay::exit_codes::OK)
}
