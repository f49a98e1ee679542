//! `assay run`: load the cases, run them against their agents, report to
//! the terminal, the results directory and optionally JUnit.

use super::UsageError;
use super::args::RunArgs;
use super::options::{default_results_dir, parse_connections, seconds};
use super::project::Project;
use anyhow::Result;
use assay::case::{TestCase, discover};
use assay::report::{JunitReport, Redactor, ReporterSet, ResultsDir, Terminal, Verbosity, escape};
use assay::run::{CaseAdjustment, CaseFilter, CaseSource, LoadedCase, RunOptions, Runner, load_cases};
use std::io::Write;
use std::sync::Arc;

pub fn run(args: RunArgs) -> Result<u8> {
    let project = Project::open(&args.project)?;
    let registry = Arc::new(project.registry()?);
    let mut files = discover(&args.paths).map_err(|e| UsageError(e.to_string()))?;
    if files.is_empty() {
        return Err(UsageError("no test case files (*.hocon) found".into()).into());
    }
    if let Some(filter) = args.filter.as_deref().map(CaseFilter::new) {
        files.retain(|file| filter.matches(&file.id));
    }
    if files.is_empty() {
        return Err(UsageError(format!("no test case matches --filter `{}`", args.filter.unwrap_or_default())).into());
    }
    let env = project.case_env(&args.case_env)?;
    let redactor = Redactor::new(env.secrets());
    let connections = parse_connections(&args.connections)?;
    let adjust: Option<CaseAdjustment> = (!connections.is_empty())
        .then(|| Arc::new(move |case: &mut TestCase| case.connections = connections.clone()) as CaseAdjustment);
    if args.list {
        let mut cases = load_cases(&files, registry.as_ref(), &env, None);
        for case in &mut cases {
            if let (LoadedCase::Ready(ready), Some(adjust)) = (case, &adjust) {
                adjust(&mut ready.0);
            }
        }
        return list(&cases, &redactor);
    }
    let cases = CaseSource::read(files, registry.clone(), Arc::new(env), adjust);

    let agents = project.agents(&args.server)?;
    let mut options = RunOptions::default();
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    options.sample_timeout = args.timeout.map(|t| seconds(t, "--timeout")).transpose()?;
    if let Some(slow) = args.slow_timeout {
        options.slow_timeout = Some(seconds(slow, "--slow-timeout")?);
    }

    let verbosity = match (args.verbose, args.quiet) {
        (true, _) => Verbosity::Verbose,
        (_, true) => Verbosity::Quiet,
        _ => Verbosity::Normal,
    };
    let results_dir = args.results.unwrap_or_else(default_results_dir);
    let results = ResultsDir::create(&results_dir).map_err(|e| UsageError(e.to_string()))?;
    let mut reporters =
        ReporterSet::builder().results_dir(results).terminal(Terminal::stdio(verbosity)).redactor(redactor);
    if let Some(path) = args.junit {
        reporters = reporters.junit(JunitReport::new(path));
    }
    let runner = Runner::new(registry, agents, options);
    let summary = runner.run_blocking(cases, &mut reporters.build());
    for error in &summary.reporter_errors {
        eprintln!("error: failed to {error}");
    }
    if verbosity != Verbosity::Quiet {
        // Best effort: stdout may be closed (`| head`); the exit code matters more.
        let _ = writeln!(std::io::stdout(), "Results in {}", results_dir.display());
    }
    Ok(if summary.success(args.fail_on_flaky) { assay::exit_codes::OK } else { assay::exit_codes::FAILED })
}

fn list(cases: &[LoadedCase], redactor: &Redactor) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    let mut broken = 0;
    for case in cases {
        match case {
            LoadedCase::Ready(ready) => {
                let (case, plan) = (&ready.0, &ready.1);
                let connections: Vec<&str> = case.connections.iter().map(|c| c.name()).collect();
                let line = format!(
                    "{}  agent {}  connections {}  success_ratio {}  ({})",
                    escape::one_line(&case.id),
                    escape::one_line(&case.agent),
                    connections.join(","),
                    case.success_ratio,
                    assay::plural::count(plan.check_count(), "check")
                );
                writeln!(out, "{}", redactor.redact(&line))?;
            }
            LoadedCase::Broken { error, .. } => {
                broken += 1;
                let error = escape::lines(&error.to_string(), "  ").into_owned();
                eprintln!("error: {}", redactor.redact(&error));
            }
        }
    }
    Ok(if broken > 0 { assay::exit_codes::FAILED } else { assay::exit_codes::OK })
}
