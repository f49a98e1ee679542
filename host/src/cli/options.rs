//! Small readers of flag values shared by several commands.

use super::CliError;
use crate::case::Connection;
use crate::project::Project;
use crate::report::Provenance;
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// A positive number of seconds from the flag `flag`.
pub fn seconds(value: f64, flag: &'static str) -> Result<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| CliError::Flag { flag, message: format!("{value} is not a positive number of seconds") }.into())
}

/// Connection names (`--connection`), each built in or configured in the
/// project.
pub fn parse_connections(names: &[String], project: &Project) -> Result<Vec<Connection>> {
    names.iter().map(|name| parse_connection(name, project)).collect()
}

/// One connection name: built in, or a `[connections.NAME]` of the project.
pub fn parse_connection(name: &str, project: &Project) -> Result<Connection> {
    let configured: Vec<&str> = project.config().connections.keys().map(String::as_str).collect();
    match Connection::from_name(name) {
        Some(Connection::Named(named)) if !configured.contains(&named.as_ref()) => {}
        Some(connection) => return Ok(connection),
        None => {}
    }
    let known: Vec<&str> = Connection::BUILT_IN.iter().map(Connection::name).chain(configured).collect();
    let hint = crate::suggest::nearest(name, known.iter().copied()).map(|s| format!(" (did you mean `{s}`?)"));
    let message = format!(
        "`{name}` is no connection{}: the connections are {}, and any [connections.NAME] of assay.toml",
        hint.unwrap_or_default(),
        known.join(", ")
    );
    Err(CliError::Flag { flag: "--connection", message }.into())
}

/// A score between 0 and 1 from the flag `flag`.
pub fn fraction(value: f64, flag: &'static str) -> Result<f64> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(CliError::Flag { flag, message: format!("{value} is not between 0 and 1") }.into())
    }
}

/// `results/<UTC timestamp>`, made unique if a run in the same second
/// already took it.
pub fn default_results_dir(project: &crate::project::Project) -> PathBuf {
    project.run_folders().next()
}

/// The results directory `path` could not be made (`error` says which file
/// and why).
pub fn results_error(path: &std::path::Path, error: std::io::Error) -> CliError {
    CliError::Results { path: path.to_owned(), cause: error.to_string() }
}

/// Writes the HTML report of `results_dir` to `path` (`--html FILE`) and
/// says where to `out`. Best effort on `out`: stdout may be closed.
pub fn write_html(
    results_dir: &std::path::Path,
    path: &std::path::Path,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    crate::results::render_report_to(results_dir, path)?;
    let _ = writeln!(out, "HTML report in {}", path.display());
    Ok(())
}

/// Says which part of the cases (or scenarios: `noun`) found a command
/// runs: its shard, the failed cases of an earlier run. Nothing when it
/// runs them all.
pub fn announce_selection(provenance: &Provenance, selected: usize, found: usize, noun: &str) {
    let of = format!("{selected} of {}", crate::plural::count(found, noun));
    let line = match (&provenance.shard, &provenance.rerun_of) {
        (None, None) => return,
        (Some(shard), None) => format!("Running shard {shard}: {of}"),
        (None, Some(dir)) => format!("Rerunning the failed cases of {}: {of}", dir.display()),
        (Some(shard), Some(dir)) => format!("Rerunning the failed cases of {} in shard {shard}: {of}", dir.display()),
    };
    // Best effort: stdout may be closed (`| head`).
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// The runs of the project the current folder is in (its `results/`),
/// for the commands that read runs rather than open a project.
pub fn run_folders() -> Result<crate::results::RunFolders, CliError> {
    let config = crate::config::Config::discover(None).map_err(crate::errors::ProjectError::from)?;
    Ok(crate::results::RunFolders::of_project(&config))
}

/// `--rerun-failed`, `report` or `diff` defaulting to a run that does not
/// exist.
pub fn no_run(what: &'static str, missing: &std::path::Path) -> CliError {
    CliError::Flag {
        flag: what,
        message: format!(
            "defaults to the last runs, and there is no such run (`{}`): run `assay run` first, or name a results directory",
            missing.display()
        ),
    }
}
