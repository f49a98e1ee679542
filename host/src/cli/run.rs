//! `assay run`: load the cases, run them against their agents (or, with
//! `--replay`, check the answers a results directory recorded), report to
//! the terminal, the results directory and optionally JUnit; with `--html`,
//! the HTML report of the results directory at the end.

use super::CliError;
use super::args::RunArgs;
use super::options::{announce_selection, parse_connections, results_error, seconds, write_html};
use crate::case::{CaseWatch, Changed};
use crate::config::Config;
use crate::errors::ProjectError;
use crate::job::{
    CaseAdjustment, CaseFilter, CaseReader, Job, LoadedCase, PendingCase, PendingCases, Replay, load_cases,
};
use crate::report::RunInfo;
use crate::report::{JunitReport, Provenance, Redactor, ReporterSet, ResultsDir, Terminal, Verbosity, escape};
use crate::results::RunFolders;
use crate::results::read_results_dir;
use crate::run::{RunOptions, RunTimeout};
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

pub fn run(args: RunArgs) -> Result<u8> {
    match args.watch {
        true => watch(&args),
        false => run_once(&args, None),
    }
}

/// `--watch`: a run, then another of what changed whenever something
/// does ([`CaseWatch`]), until the process is stopped. A run that cannot
/// start (a file half-edited) says why and waits for the next change.
fn watch(args: &RunArgs) -> Result<u8> {
    let config = Config::discover(args.project.config.as_deref()).map_err(ProjectError::from)?;
    let watched = match &config.file {
        Some(_) => vec![std::fs::canonicalize(&config.dir).unwrap_or_else(|_| config.dir.clone())],
        None if args.paths.is_empty() => return Err(ProjectError::NoPaths.into()),
        None => args.paths.clone(),
    };
    let mut ignored = vec![RunFolders::of_project(&config).base().to_owned()];
    ignored.extend([&args.junit, &args.html, &args.promptfoo_output].into_iter().flatten().cloned());
    let watch = CaseWatch::new(&watched, &ignored)
        .map_err(|error| CliError::Flag { flag: "--watch", message: error.to_string() })?;
    let shown: Vec<String> = watched.iter().map(|path| format!("`{}`", path.display())).collect();
    let mut only = None;
    loop {
        if let Err(error) = run_once(args, only.take()) {
            eprintln!("error: {error:#}");
        }
        println!("Watching {} for changes (Ctrl-C to stop)", shown.join(", "));
        match watch.next() {
            None => return Ok(crate::exit_codes::OK),
            Some(Changed::Everything(path)) => println!("`{}` changed: running every case", path.display()),
            Some(Changed::Cases(files)) => {
                let names: Vec<String> = files.iter().map(|file| format!("`{}`", file.display())).collect();
                println!("{} changed: running {}", names.join(", "), if files.len() == 1 { "it" } else { "them" });
                only = Some(files);
            }
        }
    }
}

/// One run, of `only` when given (the case files `--watch` saw change).
fn run_once(args: &RunArgs, only: Option<Vec<PathBuf>>) -> Result<u8> {
    let project = super::project::open(&args.project, Some(&args.case_env), Some(&args.server))?;
    let filter = args.filter.as_deref().map(CaseFilter::new);
    let paths = match (only, args.paths.is_empty()) {
        (Some(files), _) => files,
        (None, true) => project.default_case_paths()?,
        (None, false) => args.paths.clone(),
    };
    let mut files = project.discover(&paths, filter.as_ref())?;
    let folders = project.run_folders();
    let rerun_dir = args.rerun_failed.clone().map(|dir| dir.unwrap_or_else(|| folders.latest()));
    // Counting walks the tree again: only when a selection is announced.
    let discovered = (args.shard.is_some() || args.rerun_failed.is_some()).then(|| files.len());
    let mut provenance = Provenance { shard: args.shard, ..Provenance::default() };
    if let Some(shard) = args.shard {
        files = files.select(move |id| shard.contains(id));
    }
    let selected: PendingCases = match &rerun_dir {
        Some(dir) => {
            if args.rerun_failed == Some(None) && std::fs::symlink_metadata(dir).is_err() {
                let message = format!("reruns the last run's failures, and there is no last run (`{}`)", dir.display());
                return Err(CliError::Flag { flag: "--rerun-failed", message }.into());
            }
            let rerun = Arc::new(read_results_dir(dir).map_err(CliError::from)?.rerun(args.rerun_flaky));
            if rerun.is_empty() {
                let message = format!(
                    "found nothing to rerun: no case of `{}` failed{}",
                    dir.display(),
                    if args.rerun_flaky { " or was flaky" } else { "" }
                );
                return Err(CliError::Flag { flag: "--rerun-failed", message }.into());
            }
            let named = rerun.clone();
            let files: Vec<PendingCase> = files.select(move |id| named.contains(id)).into_iter().collect();
            let selection = rerun.select(files, |case| case.id().to_owned());
            for id in &selection.gone {
                eprintln!(
                    "warning: case `{}` of `{}` is in none of the case files any more (renamed or deleted?): it is not rerun",
                    escape::one_line(id),
                    dir.display()
                );
            }
            if selection.cases.is_empty() {
                let message = format!(
                    "found none of the {} to rerun from `{}` among the cases of {}: nothing was run",
                    crate::plural::count(rerun.len(), "case"),
                    dir.display(),
                    paths.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", ")
                );
                return Err(CliError::Flag { flag: "--rerun-failed", message }.into());
            }
            provenance.rerun_of = Some(dir.clone());
            selection.cases.into()
        }
        None => files.into(),
    };
    let redactor = project.redactor();
    let connections = parse_connections(&args.connections, &project)?;
    let adjust: Option<CaseAdjustment> = (!connections.is_empty())
        .then(|| Arc::new(move |job: &mut Job| job.connections = connections.clone()) as CaseAdjustment);
    if args.list {
        let files: Vec<PendingCase> = selected.into_iter().collect();
        let mut cases = load_cases(&files, project.case_names()?.as_ref(), project.case_env(), None);
        for case in &mut cases {
            if let (LoadedCase::Ready(job), Some(adjust)) = (case, &adjust) {
                adjust(job);
            }
        }
        return list(&cases, &redactor);
    }
    let cases = project.cases(selected, adjust)?;

    let mut options = RunOptions::default();
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    options.sample_timeout = args
        .timeout
        .map(|t| seconds(t, "--timeout").map(|length| RunTimeout { length, set_by: "--timeout" }))
        .transpose()?;
    options.max_fail = match (args.fail_fast, args.max_fail) {
        (true, _) => Some(1),
        (false, max) => max.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    };
    if let Some(slow) = args.slow_timeout {
        options.slow_timeout = Some(seconds(slow, "--slow-timeout")?);
    }
    if let Some(dir) = &args.replay {
        options.replay = Some(Arc::new(Replay::read(dir).map_err(CliError::from)?));
    }

    let verbosity = args.output.verbosity();
    let latest = args.results.is_none();
    let results_dir = args.results.clone().unwrap_or_else(|| folders.next());
    if let Some(replay) = &options.replay {
        // Writing there would truncate the results.jsonl being replayed.
        let replayed = replay.source().parent().and_then(|dir| std::fs::canonicalize(dir).ok());
        if replayed.is_some() && replayed == std::fs::canonicalize(&results_dir).ok() {
            let message = format!(
                "`{}` is the directory --replay reads: a replay writes its results to another one",
                results_dir.display()
            );
            return Err(CliError::Flag { flag: "--results", message }.into());
        }
    }
    let info = RunInfo::now().with_command(std::env::args()).with_commit(project.git_commit());
    let results = ResultsDir::create(&results_dir)
        .map_err(|e| results_error(&results_dir, e))?
        .with_provenance(provenance.clone())
        .with_run_info(info);
    if latest && let Err(error) = folders.mark_latest(&results_dir) {
        eprintln!("warning: `{}` does not point at this run: {error}", folders.latest().display());
    }
    let mut reporters =
        ReporterSet::builder().results_dir(results).terminal(Terminal::stdio(verbosity)).redactor(redactor);
    if let Some(path) = args.junit.clone() {
        reporters = reporters.junit(JunitReport::new(path));
    }
    let mut promptfoo_output = args.promptfoo_output.clone().map(|path| project.promptfoo_output(path));
    if let Some(output) = promptfoo_output.as_mut() {
        reporters = reporters.reporter(output);
    }
    if let Some(replay) = options.replay.as_ref().filter(|_| verbosity != Verbosity::Quiet) {
        let recorded = crate::plural::count(replay.len(), "recorded case");
        let _ = writeln!(std::io::stdout(), "Replaying {recorded} of {}: no agent is asked", replay.source().display());
    }
    if verbosity != Verbosity::Quiet {
        announce_selection(&provenance, cases.len(), discovered.unwrap_or_default(), "case");
    }
    let summary = project.runner(options)?.run_blocking(cases, &mut reporters.build());
    for error in &summary.reporter_errors {
        eprintln!("error: failed to {error}");
    }
    if let Some(path) = &args.html {
        let mut out: Box<dyn Write> =
            if verbosity == Verbosity::Quiet { Box::new(std::io::sink()) } else { Box::new(std::io::stdout()) };
        write_html(&results_dir, path, &mut out)?;
    }
    if verbosity != Verbosity::Quiet {
        // Best effort: stdout may be closed (`| head`); the exit code matters more.
        let _ = writeln!(std::io::stdout(), "Results in {}", results_dir.display());
    }
    Ok(if summary.success(args.output.fail_on_flaky) { crate::exit_codes::OK } else { crate::exit_codes::FAILED })
}

fn list(cases: &[LoadedCase], redactor: &Redactor) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    let mut broken = 0;
    for case in cases {
        match case {
            LoadedCase::Ready(job) => {
                let connections: Vec<&str> = job.connections.iter().map(|c| c.name()).collect();
                let line = format!(
                    "{}  agent {}  connections {}  success_ratio {}  ({})",
                    escape::one_line(&job.id),
                    escape::one_line(&job.agent),
                    connections.join(","),
                    job.success_ratio,
                    crate::plural::count(job.check_count(), "check")
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
    Ok(if broken > 0 { crate::exit_codes::FAILED } else { crate::exit_codes::OK })
}
