//! `assay diff [OLD [NEW]]`: reads both results directories (by default the
//! last run as NEW, and the run before it as OLD), compares them
//! (the library's [`crate::results::diff()`]) and prints the comparison, or
//! it as JSON with `--json`; `--html FILE` also writes the comparison as
//! a page (the library's [`crate::results::render_diff_to`]). Exits 1 when the new run regressed beyond the
//! `--allow` allowances, 2 when either directory cannot be read.

use super::CliError;
use super::args::DiffArgs;
use crate::results::{Allowances, DiffOptions, diff, read_results_dir, render_diff_to, write_diff};
use anyhow::Result;
use std::io::{IsTerminal, Write};

pub fn run(args: DiffArgs) -> Result<u8> {
    let mut allow = Allowances::default();
    for text in &args.allow {
        allow.set(text).map_err(|message| CliError::Flag { flag: "--allow", message })?;
    }
    let (old_dir, new_dir) = runs_compared(args.old, args.new)?;
    let old = read_results_dir(&old_dir).map_err(CliError::from)?;
    let new = read_results_dir(&new_dir).map_err(CliError::from)?;
    let compared = diff(&old, &new, &DiffOptions { allow, top: args.top });

    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &compared)?;
        writeln!(out)?;
    } else {
        write_diff(&mut out, &compared, crate::report::use_colour(std::io::stdout().is_terminal()))?;
    }
    if let Some(path) = &args.html {
        render_diff_to(&compared, path)?;
        if !args.json {
            writeln!(out, "HTML comparison in {}", path.display())?;
        }
    }
    Ok(if compared.verdict.regressed { crate::exit_codes::FAILED } else { crate::exit_codes::OK })
}

/// OLD and NEW, each defaulting: NEW to the last run, OLD to the run
/// before NEW.
fn runs_compared(
    old: Option<std::path::PathBuf>,
    new: Option<std::path::PathBuf>,
) -> Result<(std::path::PathBuf, std::path::PathBuf), CliError> {
    if let (Some(old), Some(new)) = (&old, &new) {
        return Ok((old.clone(), new.clone()));
    }
    let folders = super::options::run_folders()?;
    let Some(new) = new.or_else(|| folders.last()) else {
        return Err(super::options::no_run("assay diff", &folders.latest()));
    };
    match old.or_else(|| folders.before(&new)) {
        Some(old) => Ok((old, new)),
        None => Err(super::options::no_run("assay diff", &folders.base().join("<the run before the last>"))),
    }
}
