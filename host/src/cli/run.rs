//! `assay run`: load the cases, run them against their agents, report to
//! the terminal, the results directory and optionally JUnit.

use super::UsageError;
use super::args::RunArgs;
use super::project::Project;
use anyhow::Result;
use assay::agent::{Agents, HttpAgents, HttpSettings};
use assay::case::{Connection, discover};
use assay::config::Config;
use assay::report::{JunitReport, ResultsDir, Terminal, Verbosity};
use assay::run::{CaseFilter, LoadedCase, Reporter, RunOptions, Runner, load_cases};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub fn run(args: RunArgs) -> Result<u8> {
    let project = Project::open(&args.project)?;
    let registry = Arc::new(project.registry()?);
    let files = discover(&args.paths).map_err(|e| UsageError(e.to_string()))?;
    if files.is_empty() {
        return Err(UsageError("no test case files (*.hocon) found".into()).into());
    }
    let env: HashMap<String, String> = std::env::vars().collect();
    let filter = args.filter.as_deref().map(CaseFilter::new);
    let mut cases = load_cases(&files, registry.as_ref(), &env, filter.as_ref());
    if cases.is_empty() {
        return Err(UsageError(format!("no test case matches --filter `{}`", args.filter.unwrap_or_default())).into());
    }
    let connections = parse_connections(&args.connections)?;
    if !connections.is_empty() {
        for case in &mut cases {
            if let LoadedCase::Ready(ready) = case {
                ready.0.connections = connections.clone();
            }
        }
    }
    if args.list {
        return list(&cases);
    }

    let catalog = project.catalog()?;
    let http = HttpAgents::new(http_settings(&args, &project.config)?).map_err(UsageError)?;
    let agents = Agents::new(catalog, http);
    let mut options = RunOptions::default();
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    if let Some(seconds) = args.timeout {
        options.sample_timeout = Some(
            Duration::try_from_secs_f64(seconds)
                .map_err(|_| UsageError(format!("--timeout {seconds} is not a number of seconds")))?,
        );
    }

    let verbosity = match (args.verbose, args.quiet) {
        (true, _) => Verbosity::Verbose,
        (_, true) => Verbosity::Quiet,
        _ => Verbosity::Normal,
    };
    let results_dir = args.results.unwrap_or_else(default_results_dir);
    let mut results = ResultsDir::create(&results_dir).map_err(|e| UsageError(e.to_string()))?;
    let mut terminal = Terminal::new(verbosity);
    let mut junit = args.junit.map(JunitReport::new);
    // The results file first: a case the terminal shows as finished is
    // already on disk.
    let mut reporters: Vec<&mut dyn Reporter> = vec![&mut results, &mut terminal];
    if let Some(junit) = junit.as_mut() {
        reporters.push(junit);
    }
    let runner = Runner::new(registry, agents, options);
    let summary = runner.run_blocking(cases, &mut reporters);
    for error in &summary.reporter_errors {
        eprintln!("error: a report could not be written: {error}");
    }
    if verbosity != Verbosity::Quiet {
        // Best effort: stdout may be closed (`| head`); the exit code matters more.
        let _ = writeln!(std::io::stdout(), "Results in {}", results_dir.display());
    }
    let ok = summary.success(args.fail_on_flaky) && summary.reporter_errors.is_empty();
    Ok(if ok { assay::exit_codes::OK } else { assay::exit_codes::FAILED })
}

/// Flags and environment over `[agent]` in assay.toml over defaults.
fn http_settings(args: &RunArgs, config: &Config) -> Result<HttpSettings> {
    let defaults = HttpSettings::default();
    let idle_timeout = match config.agent.idle_timeout_secs {
        None => defaults.idle_timeout,
        Some(seconds) => Duration::try_from_secs_f64(seconds).map_err(|_| {
            UsageError(format!("[agent] idle_timeout_secs = {seconds} in assay.toml is not a number of seconds"))
        })?,
    };
    Ok(HttpSettings {
        base_url: args.agent_url.clone().or_else(|| config.agent.url.clone()).unwrap_or(defaults.base_url),
        ca_file: args.agent_ca.clone().or_else(|| config.agent.ca.as_deref().map(|ca| config.resolve(ca))),
        max_response_bytes: config.agent.max_response_mb.map_or(defaults.max_response_bytes, |mb| mb << 20),
        idle_timeout,
        ..defaults
    })
}

fn parse_connections(names: &[String]) -> Result<Vec<Connection>> {
    names
        .iter()
        .map(|name| {
            Connection::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| {
                UsageError(format!("unknown connection `{name}`: the connections are direct, http and https")).into()
            })
        })
        .collect()
}

fn list(cases: &[LoadedCase]) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    let mut broken = 0;
    for case in cases {
        match case {
            LoadedCase::Ready(ready) => {
                let (case, plan) = (&ready.0, &ready.1);
                let connections: Vec<&str> = case.connections.iter().map(|c| c.name()).collect();
                writeln!(
                    out,
                    "{}  agent {}  connections {}  success_ratio {}  ({} checks)",
                    case.id,
                    case.agent,
                    connections.join(","),
                    case.success_ratio,
                    plan.check_count()
                )?;
            }
            LoadedCase::Broken { error, .. } => {
                broken += 1;
                eprintln!("error: {error}");
            }
        }
    }
    Ok(if broken > 0 { assay::exit_codes::FAILED } else { assay::exit_codes::OK })
}

/// `results/<UTC timestamp>`, made unique if a run in the same second
/// already took it.
fn default_results_dir() -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%SZ").to_string();
    let base = PathBuf::from("results");
    let mut dir = base.join(&stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = base.join(format!("{stamp}-{n}"));
    }
    dir
}
