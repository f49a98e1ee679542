//! A suite's `[setup]` as the runner's [`Prerequisite`] of each cluster
//! state: a command started in the suite's folder with the minimal
//! environment of `command` connections (the `env` variables and a
//! `PATH`), or the OpenSearch loader; either bounded by `timeout_secs`. A
//! failure names the state, what ran, how it ended and the tail of its
//! stderr; it becomes the error verdict of that state's cases.

use crate::agent::{StderrTail, describe_exit, keep_stderr_tail, process_environment, shown_command};
use crate::formats::suite::file::{STATE_FIELD, Setup, SetupKind, display_folder};
use crate::formats::suite::opensearch::load_cluster_state;
use crate::job::Prerequisite;
use crate::template::FillError;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The prerequisite of `state`'s cases in the suite at `suite_file`.
pub fn prerequisite(setup: &Arc<Setup>, suite_file: &Path, state: &str) -> Prerequisite {
    // Absolute, so that a program named by a path relative to it is found
    // whatever the process's own folder (the child starts in `folder`).
    let folder = suite_file.parent().unwrap_or(Path::new("")).to_path_buf();
    let folder = std::path::absolute(&folder).unwrap_or(folder);
    let name = format!("the setup of cluster state {state:?} of `{}`", suite_file.display());
    let (setup, state) = (setup.clone(), state.to_owned());
    let described = name.clone();
    Prerequisite::new(
        name,
        Box::new(move || {
            let (setup, state, folder, described) = (setup.clone(), state.clone(), folder.clone(), described.clone());
            Box::pin(async move { run(&setup, &folder, &state).await.map_err(|e| format!("{described}: {e}")) })
        }),
    )
}

async fn run(setup: &Setup, folder: &Path, state: &str) -> Result<(), String> {
    let seconds = setup.timeout.as_secs_f64();
    match &setup.kind {
        SetupKind::Nothing => Ok(()),
        SetupKind::Command { command, env } => {
            let line = Map::from_iter([(STATE_FIELD.to_owned(), Value::String(state.to_owned()))]);
            let words = command
                .iter()
                .enumerate()
                .map(|(i, word)| {
                    word.fill(&line).map_err(|error| match error {
                        FillError::Missing(field) => format!("`setup.command[{i}]` uses `{field}`, which it cannot"),
                        FillError::Failed(message) => format!("`setup.command[{i}]` cannot be filled: {message}"),
                    })
                })
                .collect::<Result<Vec<String>, String>>()?;
            run_command(&words, env, folder, setup.timeout).await
        }
        SetupKind::OpenSearch { url, indices, recreate } => {
            match tokio::time::timeout(setup.timeout, load_cluster_state(url, &setup.access, indices, state, *recreate))
                .await
            {
                Ok(result) => {
                    result.map_err(|e| format!("loading `{}` into {url}: {e}", indices.join(state).display()))
                }
                Err(_) => Err(format!(
                    "loading `{}` into {url} did not finish within its timeout_secs of {seconds} s",
                    indices.join(state).display()
                )),
            }
        }
    }
}

/// Runs `words` in `folder` and waits for it to exit 0, at most `timeout`.
async fn run_command(words: &[String], env: &[String], folder: &Path, timeout: Duration) -> Result<(), String> {
    let shown = format!("`{}` in `{}`", shown_command(words), display_folder(folder));
    let program = program(&words[0], folder);
    let mut child = tokio::process::Command::new(&program)
        .args(&words[1..])
        .current_dir(if folder.as_os_str().is_empty() { Path::new(".") } else { folder })
        .env_clear()
        .envs(process_environment(env, |name| std::env::var_os(name)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("the command {shown} could not start: {e}"))?;
    let stderr = child.stderr.take().expect("stderr was piped");
    let tail = Arc::new(Mutex::new(StderrTail::default()));
    let reader = tokio::spawn(keep_stderr_tail(stderr, tail.clone()));
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => status.map_err(|e| format!("the command {shown} could not be waited for: {e}"))?,
        Err(_) => {
            let _ = child.kill().await;
            let stderr = with_stderr(collected(reader, &tail).await);
            return Err(format!(
                "the command {shown} did not finish within its timeout_secs of {} s and was killed{stderr}",
                timeout.as_secs_f64()
            ));
        }
    };
    if status.success() {
        return Ok(());
    }
    Err(format!("the command {shown} {}{}", describe_exit(status), with_stderr(collected(reader, &tail).await)))
}

/// The stderr tail, once the stream closes. A process's stderr closes when
/// it exits, unless a child it started keeps it open: then the error goes
/// without it rather than wait for that child.
async fn collected(reader: tokio::task::JoinHandle<()>, tail: &Mutex<StderrTail>) -> String {
    let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
    tail.lock().expect("the stderr tail's lock").text()
}

/// A program named by a path (`./setup.sh`) is found from the suite's
/// folder; a bare name in the minimal `PATH`, as a shell would.
fn program(word: &str, folder: &Path) -> PathBuf {
    let path = Path::new(word);
    if path.components().count() > 1 && !path.is_absolute() { folder.join(path) } else { path.to_path_buf() }
}

fn with_stderr(tail: String) -> String {
    if tail.is_empty() { "; it wrote nothing to stderr".into() } else { format!("; its stderr ends:\n{tail}") }
}
