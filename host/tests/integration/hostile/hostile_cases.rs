//! `assay run` with hostile matcher plugins, in `direct` cases (the agent
//! in-process) and in `http` cases against `assay agent serve` (the matcher
//! runs in the client): the run ends within about the plugin's deadline, a
//! case whose plugin blocks, exits or raises is reported as an error, one
//! whose plugin prints as its verdict says, with what it printed in the
//! plugin's log, every case is reported exactly once (terminal,
//! `results.jsonl`, `summary.json`, JUnit), the cases beside them are
//! reported normally, and the exit code is 1.

use crate::fake_server::FakeServer;
use crate::hostile::hostile_support::{
    DEADLINE_MS, Expect, HOSTILE_PY, HOSTILE_RUST, JUDGE_LOOP, JUDGE_LOOP_DEADLINE_MS, Project, Run, SLACK, Server,
    WASI_IO, assay_command, path, warm, warm_plugin,
};
use crate::judge::judge_server::completion;
use std::time::Duration;

/// The log cap per call (the sandbox's default `max_log_lines` and
/// `max_log_bytes`).
const MAX_LOG_LINES: usize = 100;
const MAX_LOG_BYTES: usize = 16 << 10;

/// A project whose one plugin `label` is the corpus file `file` under the
/// tests' short deadline, with a case per key (named after it, checking the
/// echoed text with the key) and two ordinary cases: `good` passes and
/// `wrong` fails on the stock `value` matcher.
fn project(label: &str, file: &str, keys: &[&str]) -> Project {
    let project = Project::new(&format!("[plugins.{label}]\npath = \"{}\"\ndeadline_ms = {DEADLINE_MS}\n", path(file)));
    warm(&project.config());
    ordinary_cases(&project);
    for key in keys {
        project.simple_case(key, "echo", "hello", &format!(r#""{key}": "anything""#), None);
    }
    project
}

/// The cases beside the hostile ones.
fn ordinary_cases(project: &Project) {
    project.simple_case("good", "echo", "hello", r#""value": "hello""#, None);
    project.simple_case("wrong", "echo", "hello", r#""value": "bye""#, None);
}

/// What the ordinary cases must look like.
fn ordinary() -> [Expect; 2] {
    [Expect::new("good", "passed"), Expect::new("wrong", "failed").message("does not equal")]
}

/// The run over `connection`: in-process, or over HTTP against a fresh
/// `assay agent serve echo`.
fn run(project: &Project, connection: &str) -> Run {
    match connection {
        "direct" => project.run(&[]),
        _ => {
            let server = Server::start(&["echo"]);
            project.run(&["--connection", "http", "--agent-url", &server.url])
        }
    }
}

/// The deadline plus slack.
fn bound() -> Duration {
    Duration::from_millis(DEADLINE_MS) + SLACK
}

const WASI_IO_KEYS: [&str; 7] = ["sleep", "poll", "stdout", "stderr", "stdout_flood", "stderr_flood", "exit"];

/// How each case of the wasi-io project must be reported.
fn wasi_io_expectations() -> Vec<Expect> {
    let deadline = "plugin `wasi-io` exceeded its deadline of 500 ms";
    let mut expected = vec![
        Expect::error("sleep", "deadline").message(deadline),
        Expect::error("poll", "deadline").message(deadline),
        Expect::new("stdout", "failed").message("printed").log("wasi-io", "stdout", "hello"),
        Expect::new("stderr", "failed").message("printed").log("wasi-io", "stderr", "hello"),
        Expect::new("stdout_flood", "failed").message("printed").log("wasi-io", "stdout", "xxxxxxxx"),
        Expect::new("stderr_flood", "failed").message("printed").log("wasi-io", "stderr", "xxxxxxxx"),
        Expect::error("exit", "exit").message("plugin `wasi-io`"),
    ];
    expected.extend(ordinary());
    expected
}

/// The log a flood left stays within the cap.
fn assert_flood_capped(run: &Run) {
    for id in ["stdout_flood", "stderr_flood"] {
        let Some(line) = run.case(id) else { continue };
        let interaction = &line["samples"][0]["runs"][0]["interactions"][0];
        let lines: Vec<&serde_json::Value> = interaction["logs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|log| log["plugin"] == "wasi-io")
            .flat_map(|log| log["lines"].as_array().into_iter().flatten())
            .collect();
        let bytes: usize = lines.iter().filter_map(|l| l["message"].as_str()).map(str::len).sum();
        assert!(
            lines.len() <= MAX_LOG_LINES && bytes <= MAX_LOG_BYTES,
            "case `{id}` kept {} log lines, {bytes} bytes of a 1 MiB flood",
            lines.len()
        );
    }
}

/// Nothing a plugin printed reached assay's own output.
fn assert_terminal_clean(run: &Run) {
    for output in [&run.finished.stdout, &run.finished.stderr] {
        assert!(!output.lines().any(|l| l == "hello" || l.starts_with("xxxx")), "{}", run.describe());
    }
}

fn wasi_io_cases_over(connection: &str) {
    let project = project("wasi-io", WASI_IO, &WASI_IO_KEYS);
    let run = run(&project, connection);
    run.finished.assert_within(bound());
    run.assert_cases(&wasi_io_expectations(), 1);
    assert_flood_capped(&run);
    assert_terminal_clean(&run);
}

#[test]
fn direct_cases_whose_plugin_blocks_prints_or_exits_are_each_reported() {
    wasi_io_cases_over("direct");
}

#[test]
fn http_cases_whose_plugin_blocks_prints_or_exits_are_each_reported() {
    wasi_io_cases_over("http");
}

const PYTHON_KEYS: [&str; 4] = ["print", "raise", "sleep", "exit"];

/// How each case of the Python project must be reported.
fn python_expectations() -> Vec<Expect> {
    let mut expected = vec![
        Expect::new("print", "failed").message("printed").log("hostile-py", "stdout", "hello"),
        Expect::new("raise", "error")
            .message("plugin `hostile-py`")
            .log("hostile-py", "stderr", "Traceback (most recent call last)")
            .log("hostile-py", "stderr", "RuntimeError: the hostile Python plugin raises on purpose"),
        Expect::error("sleep", "deadline").message("plugin `hostile-py` exceeded its deadline of 500 ms"),
        Expect::error("exit", "exit").message("plugin `hostile-py`"),
    ];
    expected.extend(ordinary());
    expected
}

fn python_cases_over(connection: &str) {
    let project = project("hostile-py", HOSTILE_PY, &PYTHON_KEYS);
    let run = run(&project, connection);
    run.finished.assert_within(bound());
    run.assert_cases(&python_expectations(), 1);
    assert_terminal_clean(&run);
}

#[test]
fn direct_cases_whose_python_plugin_prints_raises_sleeps_or_exits_are_each_reported() {
    python_cases_over("direct");
}

#[test]
fn http_cases_whose_python_plugin_prints_raises_sleeps_or_exits_are_each_reported() {
    python_cases_over("http");
}

/// The reproduction of issue 14: a case with a failing check of the stock
/// `value` matcher and a check of a plugin (loaded with `--plugin`, default
/// limits) that prints `hello`, as any toolchain's `print` does. The case
/// must be reported as failed, everywhere, and the run must fail.
fn printing_plugin_beside_a_failing_check(plugin: &str, key: &str) {
    let project = Project::new("");
    project.simple_case("printing", "echo", "hello", &format!(r#""value": "bye", "{key}": "anything""#), None);
    project.simple_case("good", "echo", "hello", r#""value": "hello""#, None);
    let run = project.run(&["--plugin", &path(plugin)]);
    run.finished.assert_within(Duration::from_secs(2) + SLACK);
    run.assert_cases(
        &[Expect::new("printing", "failed").message("\"hello\" does not equal \"bye\""), Expect::new("good", "passed")],
        1,
    );
    let interaction = &run.case("printing").unwrap()["samples"][0]["runs"][0]["interactions"][0];
    assert_eq!(interaction["checks"][1]["message"], "printed", "{interaction}");
}

#[test]
fn a_plugin_that_prints_cannot_hide_a_failing_case() {
    printing_plugin_beside_a_failing_check(WASI_IO, "stdout");
}

#[test]
fn a_python_plugin_that_prints_cannot_hide_a_failing_case() {
    warm_plugin(HOSTILE_PY);
    printing_plugin_beside_a_failing_check(HOSTILE_PY, "print");
}

/// A project whose `judge-loop` plugin asks `judge`, with a compile and
/// answer cache of its own (warmed), a `judge_loop` case and the ordinary
/// ones.
fn judge_loop_project(judge: &FakeServer) -> Project {
    let project = Project::new(&format!(
        "[plugins.judge-loop]\npath = \"{}\"\ndeadline_ms = {JUDGE_LOOP_DEADLINE_MS}\ngrants = [\"judge\"]\n\n[judge]\nurl = \"{}/v1\"\nmodel = \"m\"\n",
        path(JUDGE_LOOP),
        judge.url()
    ));
    let (config, cache) = (project.config(), project.path("cache"));
    let warmed =
        assay_command(&["plugins", "--config", &config, "--cache-dir", cache.to_str().unwrap()]).output().unwrap();
    assert!(warmed.status.success(), "{}", String::from_utf8_lossy(&warmed.stderr));
    ordinary_cases(&project);
    project.simple_case("judge_loop", "echo", "hello", r#""judge_loop": "anything""#, None);
    project
}

fn judge_loop_over(connection: &str) {
    let judge = FakeServer::start(|_| completion("pass"));
    let project = judge_loop_project(&judge);
    let cache = project.path("cache");
    let cache = cache.to_str().unwrap();
    let run = match connection {
        "direct" => project.run(&["--cache-dir", cache]),
        _ => {
            let server = Server::start(&["echo"]);
            project.run(&["--cache-dir", cache, "--connection", "http", "--agent-url", &server.url])
        }
    };
    run.finished.assert_within(Duration::from_millis(JUDGE_LOOP_DEADLINE_MS) + SLACK);
    let message = "plugin `judge-loop` exceeded its deadline of 1500 ms";
    let mut expected = vec![Expect::error("judge_loop", "deadline").message(message)];
    expected.extend(ordinary());
    run.assert_cases(&expected, 1);
    assert_eq!(judge.requests.lock().unwrap().len(), 1, "every call after the first is a cache hit");
}

#[test]
fn a_direct_case_whose_plugin_asks_the_judge_forever_is_an_error() {
    judge_loop_over("direct");
}

#[test]
fn an_http_case_whose_plugin_asks_the_judge_forever_is_an_error() {
    judge_loop_over("http");
}

/// Five cases whose answer is too big for a plugin (it faults on it), run
/// first and one at a time, beside twenty good cases on the same plugin:
/// the faults are those five cases' errors, and the plugin stays enabled
/// for the twenty (it used to be disabled for the rest of the run after
/// five faults in a row).
#[test]
fn faults_on_answers_too_big_for_a_plugin_do_not_disable_it_for_the_good_cases() {
    let config = format!("[plugins.hostile]\npath = \"{}\"\ndeadline_ms = {DEADLINE_MS}\n", path(HOSTILE_RUST));
    let project = Project::new(&config);
    warm(&project.config());
    let big = "x".repeat(assay::plugin::SMALL_INPUT_BYTES + 1);
    for i in 0..5 {
        project.simple_case(&format!("a-big-{i}"), "echo", &big, r#""panic": "1""#, None);
    }
    for i in 0..20 {
        project.simple_case(&format!("b-good-{i:02}"), "echo", "hello", r#""count": "1""#, None);
    }
    let run = project.run(&["--jobs", "1"]);
    let status = |prefix: &str, wanted: &str| {
        run.results.iter().filter(|r| r["id"].as_str().unwrap().starts_with(prefix) && r["status"] == wanted).count()
    };
    assert_eq!(status("a-big-", "error"), 5, "{}", run.describe());
    assert_eq!(status("b-good-", "passed"), 20, "{}", run.describe());
    assert_eq!(run.finished.code, Some(1), "{}", run.describe());
}
