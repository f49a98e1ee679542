//! `assay check` against the hostile corpus: a plugin that blocks in WASI,
//! exits, raises, prints or asks the judge in an endless loop is stopped
//! within about its deadline, its verdict names the cause, and the command
//! exits with 1 as for any error verdict; what it prints stays out of
//! assay's own output.

use crate::fake_server::FakeServer;
use crate::hostile::hostile_support::{
    DEADLINE_MS, Finished, HOSTILE_PY, JUDGE_LOOP, JUDGE_LOOP_DEADLINE_MS, Project, SLACK, WASI_IO, assay_bounded,
    assay_command, path, warm,
};
use crate::judge::judge_server::completion;
use std::time::Duration;

/// A project whose one plugin `label` is the corpus file `file`, with the
/// tests' short deadline and `extra` settings.
fn project(label: &str, file: &str, extra: &str) -> Project {
    let project =
        Project::new(&format!("[plugins.{label}]\npath = \"{}\"\ndeadline_ms = {DEADLINE_MS}\n{extra}", path(file)));
    warm(&project.config());
    project
}

/// `assay check --config … --key KEY --json` on a text actual, with `extra`
/// arguments.
fn check(project: &Project, key: &str, extra: &[&str]) -> Finished {
    let config = project.config();
    let mut args =
        vec!["check", "--config", &config, "--key", key, "--actual", "\"an answer\"", "--expected", "\"x\"", "--json"];
    args.extend_from_slice(extra);
    assay_bounded(&args)
}

/// The deadline plus slack.
fn bound() -> Duration {
    Duration::from_millis(DEADLINE_MS) + SLACK
}

/// Checks, in parallel, each (project, key) and what its verdict must be:
/// (outcome, error kind, text of the message); panics listing every
/// difference.
fn expect_verdicts(cases: &[(&Project, &str, &str, Option<&str>, &str)]) {
    let problems: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .iter()
            .map(|&(project, key, outcome, kind, message)| {
                scope.spawn(move || {
                    let finished = check(project, key, &[]);
                    let mut problems = Vec::new();
                    if finished.killed || finished.elapsed > bound() {
                        problems.push(format!(
                            "took {:.2?}{}",
                            finished.elapsed,
                            if finished.killed { " (killed)" } else { "" }
                        ));
                    }
                    if finished.code != Some(1) {
                        problems.push(format!("exit code {:?}, not 1", finished.code));
                    }
                    match serde_json::from_str::<serde_json::Value>(&finished.stdout) {
                        Err(e) => problems.push(format!("stdout is not one JSON verdict ({e})")),
                        Ok(verdict) => {
                            if verdict["outcome"] != outcome {
                                problems.push(format!("outcome {}, not {outcome}", verdict["outcome"]));
                            }
                            if verdict["error_kind"].as_str() != kind {
                                problems.push(format!("error kind {}, not {kind:?}", verdict["error_kind"]));
                            }
                            if !verdict["message"].as_str().is_some_and(|m| m.contains(message)) {
                                problems.push(format!("message {} does not contain {message:?}", verdict["message"]));
                            }
                        }
                    }
                    problems
                        .into_iter()
                        .map(|p| format!("key `{key}`: {p}\n{}", finished.describe()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        runs.into_iter().flat_map(|run| run.join().unwrap()).collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn a_plugin_blocked_in_wasi_is_stopped_at_its_deadline() {
    let wat = project("wasi-io", WASI_IO, "");
    let python = project("hostile-py", HOSTILE_PY, "");
    let deadline = "exceeded its deadline of 500 ms";
    expect_verdicts(&[
        (&wat, "sleep", "error", Some("deadline"), deadline),
        (&wat, "poll", "error", Some("deadline"), deadline),
        (&python, "sleep", "error", Some("deadline"), deadline),
    ]);
}

#[test]
fn a_plugin_that_exits_gets_an_exit_error_verdict() {
    let wat = project("wasi-io", WASI_IO, "");
    let python = project("hostile-py", HOSTILE_PY, "");
    expect_verdicts(&[
        (&wat, "exit", "error", Some("exit"), "plugin `wasi-io`"),
        (&python, "exit", "error", Some("exit"), "plugin `hostile-py`"),
    ]);
}

#[test]
fn an_exception_escaping_a_python_plugin_is_an_error_verdict() {
    let python = project("hostile-py", HOSTILE_PY, "");
    let finished = check(&python, "raise", &[]);
    finished.assert_within(bound());
    assert_eq!(finished.code, Some(1), "{}", finished.describe());
    let verdict = finished.json();
    assert_eq!(verdict["outcome"], "error", "{verdict}");
    assert!(verdict["message"].as_str().unwrap().starts_with("plugin `hostile-py` "), "{verdict}");
}

#[test]
fn what_a_plugin_prints_changes_neither_its_verdict_nor_assays_output() {
    let wat = project("wasi-io", WASI_IO, "");
    let python = project("hostile-py", HOSTILE_PY, "");
    expect_verdicts(&[
        (&wat, "stdout", "fail", None, "printed"),
        (&wat, "stderr", "fail", None, "printed"),
        (&wat, "stdout_flood", "fail", None, "printed"),
        (&wat, "stderr_flood", "fail", None, "printed"),
        (&python, "print", "fail", None, "printed"),
    ]);
    // Plain output too: the verdict, and nothing the plugin wrote as it
    // wrote it.
    for (project, key) in [(&wat, "stdout"), (&wat, "stderr_flood"), (&python, "print")] {
        let config = project.config();
        let finished = assay_bounded(&[
            "check",
            "--config",
            &config,
            "--key",
            key,
            "--actual",
            "\"an answer\"",
            "--expected",
            "1",
        ]);
        assert!(finished.stdout.starts_with(&format!("FAIL {key}: printed\n")), "{}", finished.describe());
        for output in [&finished.stdout, &finished.stderr] {
            assert!(!output.lines().any(|l| l == "hello" || l.starts_with("xxxx")), "{}", finished.describe());
        }
    }
}

/// A project whose `judge-loop` plugin may ask `judge`, with `settings`
/// added to `[judge]`, and a compile cache of its own (warmed) in `cache/`,
/// which also holds the judge's answers.
fn judge_loop_project(judge: &FakeServer, settings: &str) -> Project {
    let config = format!(
        "[plugins.judge-loop]\npath = \"{}\"\ndeadline_ms = {JUDGE_LOOP_DEADLINE_MS}\ngrants = [\"judge\"]\n\n[judge]\nurl = \"{}/v1\"\nmodel = \"m\"\n{settings}",
        path(JUDGE_LOOP),
        judge.url()
    );
    let project = Project::new(&config);
    let (config, cache) = (project.config(), project.path("cache"));
    let warmed =
        assay_command(&["plugins", "--config", &config, "--cache-dir", cache.to_str().unwrap()]).output().unwrap();
    assert!(warmed.status.success(), "{}", String::from_utf8_lossy(&warmed.stderr));
    project
}

#[test]
fn a_plugin_asking_the_judge_in_an_endless_loop_is_stopped_at_its_deadline() {
    // Answers cached on disk: every call after the first is a cache hit.
    let judge = FakeServer::start(|_| completion("pass"));
    let cached = judge_loop_project(&judge, "");
    // The judge's budget spent after 3 calls: every later call is an error.
    let spent_judge = FakeServer::start(|_| completion("pass"));
    let spent = judge_loop_project(&spent_judge, "max_calls = 3\n");
    let cache_dir = |project: &Project| project.path("cache").to_str().unwrap().to_owned();
    let (with_cache, with_budget) = std::thread::scope(|scope| {
        let with_cache = scope.spawn(|| check(&cached, "judge_loop", &["--cache-dir", &cache_dir(&cached)]));
        let with_budget =
            scope.spawn(|| check(&spent, "judge_loop", &["--no-judge-cache", "--cache-dir", &cache_dir(&spent)]));
        (with_cache.join().unwrap(), with_budget.join().unwrap())
    });
    for finished in [with_cache, with_budget] {
        finished.assert_within(Duration::from_millis(JUDGE_LOOP_DEADLINE_MS) + SLACK);
        assert_eq!(finished.code, Some(1), "{}", finished.describe());
        let verdict = finished.json();
        assert_eq!(verdict["error_kind"], "deadline", "{verdict}");
        let message = format!("plugin `judge-loop` exceeded its deadline of {JUDGE_LOOP_DEADLINE_MS} ms");
        assert!(verdict["message"].as_str().unwrap().contains(&message), "{verdict}");
    }
    // The loops took the paths they were meant to: one request, then cache
    // hits; three requests, then the spent budget.
    assert_eq!(judge.requests.lock().unwrap().len(), 1);
    assert_eq!(spent_judge.requests.lock().unwrap().len(), 3);
}
