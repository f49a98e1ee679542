//! `assay merge DIR… --results OUT`: the results directories of a run's
//! shards and reruns merged into one (the library's
//! [`crate::results::merge()`]), the merged cases shown as a run shows
//! them. Exits as `run` would have over every case: 1 when one failed.

use super::CliError;
use super::args::MergeArgs;
use crate::report::{Terminal, Verbosity};
use crate::results::{MergeOptions, merge};
use anyhow::Result;
use std::io::Write;

pub fn run(args: MergeArgs) -> Result<u8> {
    let project = super::project::open(&args.project, Some(&args.case_env), None)?;
    let verbosity = args.output.verbosity();
    let options = MergeOptions {
        allow_missing: args.allow_missing,
        allow_incomplete: args.allow_incomplete,
        redactor: project.redactor(),
    };
    let mut terminal = Terminal::stdio(verbosity).with_redactor(project.redactor());
    let merged = merge(&args.dirs, &args.results, &options, &mut terminal).map_err(CliError::from)?;
    for error in &merged.summary.reporter_errors {
        eprintln!("error: failed to {error}");
    }
    if !merged.provenance.missing_shards.is_empty() {
        let missing: Vec<String> = merged.provenance.missing_shards.iter().map(ToString::to_string).collect();
        eprintln!(
            "warning: merged without shards {} (--allow-missing): their cases are not in the results",
            missing.join(", ")
        );
    }
    for source in merged.provenance.merged_from.iter().filter(|s| s.incomplete) {
        eprintln!(
            "warning: `{}` never finished (--allow-incomplete): only the cases it recorded are merged",
            source.dir.display()
        );
    }
    if verbosity != Verbosity::Quiet {
        let sources = crate::plural::count(merged.provenance.merged_from.len(), "run");
        // Best effort: stdout may be closed; the exit code matters more.
        let _ = writeln!(std::io::stdout(), "Merged {sources} into {}", args.results.display());
    }
    Ok(if merged.summary.success(args.output.fail_on_flaky) {
        crate::exit_codes::OK
    } else {
        crate::exit_codes::FAILED
    })
}
