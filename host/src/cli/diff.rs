//! `assay diff OLD NEW`: reads both results directories, compares them
//! (the library's [`assay::report::diff()`]) and prints the comparison, or
//! it as JSON with `--json`; `--html FILE` also writes the comparison as
//! a page (the library's [`assay::report::render_diff_to`]). Exits 1 when the new run regressed beyond the
//! `--allow` allowances, 2 when either directory cannot be read.

use super::CliError;
use super::args::DiffArgs;
use anyhow::Result;
use assay::report::{Allowances, DiffOptions, diff, read_results_dir, render_diff_to, write_diff};
use std::io::{IsTerminal, Write};

pub fn run(args: DiffArgs) -> Result<u8> {
    let mut allow = Allowances::default();
    for text in &args.allow {
        allow.set(text).map_err(|message| CliError::Flag { flag: "--allow", message })?;
    }
    let old = read_results_dir(&args.old).map_err(CliError::from)?;
    let new = read_results_dir(&args.new).map_err(CliError::from)?;
    let compared = diff(&old, &new, &DiffOptions { allow, top: args.top });

    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &compared)?;
        writeln!(out)?;
    } else {
        write_diff(&mut out, &compared, std::io::stdout().is_terminal())?;
    }
    if let Some(path) = &args.html {
        render_diff_to(&compared, path)?;
        if !args.json {
            writeln!(out, "HTML comparison in {}", path.display())?;
        }
    }
    Ok(if compared.verdict.regressed { assay::exit_codes::FAILED } else { assay::exit_codes::OK })
}
