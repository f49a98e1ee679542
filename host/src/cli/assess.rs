//! `assay assess`: every sample of each case (no early stopping), then how
//! the failed ones failed: failure modes by grouping, and optionally as
//! the judge classifies them. Writes `results.jsonl` and `assess.json`.

use super::CliError;
use super::args::AssessArgs;
use super::options::{announce_selection, default_results_dir, parse_connections, results_error, seconds, write_html};
use crate::case::SuccessRatio;
use crate::eval::{FailureModes, classify_with_judge};
use crate::job::{CaseAdjustment, CaseFilter, CaseStatus, Job};
use crate::report::{Provenance, ReporterSet, ResultsDir, write_assessment, write_json_report};
use crate::run::{RunOptions, RunTimeout};
use anyhow::{Context, Result};
use std::io::Write;
use std::sync::Arc;

pub fn run(args: AssessArgs) -> Result<u8> {
    let project = super::project::open(&args.project, Some(&args.case_env), Some(&args.server))?;
    let judge = match (args.llm_modes, project.judge()) {
        (true, None) => {
            return Err(CliError::NoJudge { what: "--llm-modes" }.into());
        }
        (true, Some(judge)) => Some(judge.clone()),
        (false, _) => None,
    };
    let filter = args.filter.as_deref().map(CaseFilter::new);
    let mut files = project.discover(&args.paths, filter.as_ref())?;
    let (found, provenance) = (files.len(), Provenance { shard: args.shard, ..Provenance::default() });
    if let Some(shard) = args.shard {
        files = files.select(move |id| shard.contains(id));
    }
    announce_selection(&provenance, files.len(), found, "case");
    let redactor = project.redactor();
    let connections = parse_connections(&args.connections, &project)?;
    let samples = args.samples;
    let adjust: CaseAdjustment = Arc::new(move |job: &mut Job| {
        if !connections.is_empty() {
            job.connections = connections.clone();
        }
        if let Some(n) = samples {
            let ratio = job.success_ratio;
            job.success_ratio = SuccessRatio { required: ratio.required.min(n), samples: n };
        }
    });
    let cases = project.cases(files, Some(adjust))?;

    let mut options = RunOptions { exhaustive: true, ..RunOptions::default() };
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    options.sample_timeout = args
        .timeout
        .map(|t| seconds(t, "--timeout").map(|length| RunTimeout { length, set_by: "--timeout" }))
        .transpose()?;
    let results_dir = args.results.unwrap_or_else(|| default_results_dir(&project));
    let results =
        ResultsDir::create(&results_dir).map_err(|e| results_error(&results_dir, e))?.with_provenance(provenance);
    let mut modes = FailureModes::default();
    let mut reporters =
        ReporterSet::builder().results_dir(results).reporter(&mut modes).redactor(redactor.clone()).build();
    let summary = project.runner(options)?.run_blocking(cases, &mut reporters);
    drop(reporters);

    let mut assessments = modes.into_assessments();
    if let Some(judge) = &judge {
        for assessment in &mut assessments {
            classify_with_judge(assessment, judge.as_ref());
        }
    }
    let mut out = std::io::stdout().lock();
    for assessment in &assessments {
        write_assessment(&mut out, assessment, &redactor)?;
    }
    let path = write_json_report(&results_dir, "assess.json", &serde_json::json!({ "cases": assessments }), &redactor)
        .context("failed to write the assessment")?;
    for error in &summary.reporter_errors {
        eprintln!("error: failed to {error}");
    }
    writeln!(out, "Assessment in {}", path.display())?;
    if let Some(html) = &args.html {
        write_html(&results_dir, html, &mut out)?;
    }
    let met = assessments.iter().all(|a| matches!(a.status, CaseStatus::Passed | CaseStatus::Flaky));
    let complete = summary.reporter_errors.is_empty() && summary.not_run == 0 && summary.internal_errors.is_empty();
    Ok(if met && complete { crate::exit_codes::OK } else { crate::exit_codes::FAILED })
}
