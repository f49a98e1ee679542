//! `assay validate`: mock responses with known right answers, judged by
//! the expectations' matchers (or `--key`); agreement per mock response,
//! per category and overall, and a confusion matrix. Writes
//! `validate.json`.

use super::args::ValidateArgs;
use super::options::{default_results_dir, fraction, results_error, write_html};
use crate::eval::Validator;
use crate::report::{ResultsDir, write_json_report, write_validation};
use anyhow::{Context, Result};
use std::io::Write;

pub fn run(args: ValidateArgs) -> Result<u8> {
    let min_agreement = args.min_agreement.map(|s| fraction(s, "--min-agreement")).transpose()?;
    let project = super::project::open(&args.project, Some(&args.case_env), None)?;
    let redactor = project.redactor();
    let validations = project.validations(&args.paths)?;
    let jobs = args.jobs.unwrap_or_else(|| crate::run::RunOptions::default().jobs);
    // Every mock response is a case of the run: its results go where a
    // run's do.
    let results_dir = args.results.unwrap_or_else(|| default_results_dir(&project));
    let mut results =
        ResultsDir::create(&results_dir).map_err(|e| results_error(&results_dir, e))?.with_redactor(redactor.clone());
    let validator = Validator::new(project.registry()?, project.agents()?, args.key, jobs);
    let report = validator.run_blocking(validations, &mut results);

    let mut out = std::io::stdout().lock();
    write_validation(&mut out, &report, &redactor)?;
    let path = write_json_report(&results_dir, "validate.json", &report, &redactor)
        .context("failed to write the agreement")?;
    writeln!(out, "Agreement in {}", path.display())?;
    if let Some(html) = &args.html {
        write_html(&results_dir, html, &mut out)?;
    }
    let below = min_agreement.is_some_and(|min| report.agreement.score().is_none_or(|s| s < min));
    Ok(if report.has_errors() || below { crate::exit_codes::FAILED } else { crate::exit_codes::OK })
}
