//! `assay eval`: scenario problems to an agent, the answers judged against
//! weighted expectations, scores per scenario and category, and a verdict
//! for scenarios with required expectations. Writes `eval.json`.

use super::args::EvalArgs;
use super::options::{
    announce_selection, default_results_dir, fraction, parse_connection, results_error, seconds, write_html,
};
use crate::eval::EvalOptions;
use crate::report::{Provenance, ResultsDir, write_eval, write_json_report};
use anyhow::{Context, Result};
use std::io::Write;

pub fn run(args: EvalArgs) -> Result<u8> {
    let min_score = args.min_score.map(|s| fraction(s, "--min-score")).transpose()?;
    let project = super::project::open(&args.project, Some(&args.case_env), Some(&args.server))?;
    let redactor = project.redactor();
    let mut scenarios = project.scenarios(&args.paths)?;
    let (found, provenance) = (scenarios.len(), Provenance { shard: args.shard, ..Provenance::default() });
    if let Some(shard) = args.shard {
        scenarios = shard.select(scenarios, crate::eval::scenario_id);
    }
    announce_selection(&provenance, scenarios.len(), found, "scenario");
    let mut options = EvalOptions {
        agent: args.to,
        connection: args.connection.as_deref().map(|name| parse_connection(name, &project)).transpose()?,
        samples: args.samples,
        timeout: args.timeout.map(|t| seconds(t, "--timeout")).transpose()?,
        key: args.key,
        ..EvalOptions::default()
    };
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    // Every scenario is a case of the run: its results go where a run's do.
    let results_dir = args.results.unwrap_or_else(|| default_results_dir(&project));
    let mut results = ResultsDir::create(&results_dir)
        .map_err(|e| results_error(&results_dir, e))?
        .with_redactor(redactor.clone())
        .with_provenance(provenance);
    let evaluator = project.evaluator(options)?;
    let report = evaluator.run_blocking(scenarios, &mut results);

    let mut out = std::io::stdout().lock();
    write_eval(&mut out, &report, &redactor)?;
    let path =
        write_json_report(&results_dir, "eval.json", &report, &redactor).context("failed to write the scores")?;
    writeln!(out, "Scores in {}", path.display())?;
    if let Some(html) = &args.html {
        write_html(&results_dir, html, &mut out)?;
    }
    let below = min_score.is_some_and(|min| report.scenarios.iter().any(|s| s.score.score().is_none_or(|s| s < min)));
    Ok(if report.has_errors() || report.has_failures() || below {
        crate::exit_codes::FAILED
    } else {
        crate::exit_codes::OK
    })
}
