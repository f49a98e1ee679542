//! Named connections (`[connections.NAME]` of assay.toml): a case names one
//! in its `connections`, or `--connection NAME` runs every case over it;
//! a name nothing configures is an error naming the file, the key and the
//! nearest name; a bad table names itself.

use crate::util::{Served, assay_command, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A project folder: `assay.toml` and one case file per (name, text).
pub(crate) fn project(config: &str, cases: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("assay.toml"), config).unwrap();
    for (name, text) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// Runs `assay run` on the project's folder with its assay.toml.
pub(crate) fn run(dir: &Path, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    run_with(assay_command(), dir, extra)
}

/// Runs `command` (the `assay` binary, e.g. with variables set) as `assay
/// run` on the project's folder with its assay.toml: its output and
/// results.
pub(crate) fn run_with(mut command: Command, dir: &Path, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    let results = dir.join("results");
    let config = dir.join("assay.toml");
    let mut args = vec!["run", dir.to_str().unwrap(), "--config", config.to_str().unwrap()];
    args.extend(["--results", results.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let output = command.args(&args).output().unwrap();
    let lines = std::fs::read_to_string(results.join("results.jsonl"))
        .map(|text| text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
        .unwrap_or_default();
    (output, lines)
}

const TWO_TURNS: &str = r#"{ "agent": "echo", "connections": ["staging"],
    "interactions": [ { "text": "hello", "response": { "text": { "keywords": "hello" }, "structure": { "turn": { "value": 1 } } } },
                      { "text": "again", "response": { "structure": { "turn": { "value": 2 } } } } ] }"#;

#[test]
fn a_case_runs_over_a_named_neuro_san_connection() {
    let served = Served::start(&["echo"]);
    let config = format!("[connections.staging]\ntype = \"neuro-san\"\nurl = \"{}\"\n", served.url);
    let dir = project(&config, &[("two.hocon", TWO_TURNS)]);
    let (output, lines) = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(lines[0]["status"], "passed");
    let run = &lines[0]["samples"][0]["runs"][0];
    assert_eq!(run["connection"], "staging");
    assert_eq!(run["interactions"].as_array().unwrap().len(), 2, "the conversation went on");
    assert!(run["interactions"][0]["agent_ms"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_named_neuro_san_server_that_is_down_points_at_its_table_not_at_agent_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = format!("[connections.staging]\ntype = \"neuro-san\"\nurl = \"http://127.0.0.1:{port}\"\n");
    let dir = project(&config, &[("two.hocon", TWO_TURNS)]);
    let (output, lines) = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let error = &lines[0]["samples"][0]["runs"][0]["interactions"][0]["error"];
    assert_eq!(error["kind"], "unreachable", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&format!("http://127.0.0.1:{port}/api/v1/echo/streaming_chat")), "{message}");
    assert!(message.contains("correcting `url` in the connection's [connections.NAME] of assay.toml"), "{message}");
    assert!(!message.contains("--agent-url"), "{message}");
}

#[test]
fn an_unconfigured_connection_is_an_error_naming_the_file_and_the_nearest_name() {
    let dir = project(
        "[connections.staging]\ntype = \"neuro-san\"\nurl = \"http://127.0.0.1:9\"\n",
        &[("typo.hocon", &TWO_TURNS.replace("\"staging\"", "\"stagign\""))],
    );
    let (output, lines) = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(lines[0]["status"], "error");
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(message.ends_with("typo.hocon`: unknown connection `stagign` at `connections` (did you mean `staging`?); the known ones are direct, http, https, grpc, staging (and any [connections.NAME] of assay.toml)"), "{message}");

    let (output, _) = run(dir.path(), &["--connection", "stagin"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--connection `stagin` is no connection (did you mean `staging`?)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_bad_connection_table_names_the_file_and_the_connection() {
    for (table, expected) in [
        ("type = \"opneai\"\nurl = \"x\"\n", "`type = \"opneai\"` is no kind of connection (did you mean `openai`?)"),
        ("url = \"x\"\n", "it has no `type`"),
        ("type = \"neuro-san\"\nurl = \"x\"\nca = \"/none\"\nzone = 1\n", "unknown field `zone`"),
        ("type = \"neuro-san\"\nurl = \"not a url\"\n", "invalid agent URL `not a url`"),
    ] {
        let dir = project(&format!("[connections.bad]\n{table}"), &[("two.hocon", TWO_TURNS)]);
        let (output, _) = run(dir.path(), &[]);
        assert_eq!(output.status.code(), Some(2), "{table}: {}", stderr(&output));
        let error = stderr(&output);
        assert!(error.contains("[connections.bad] in `") && error.contains("assay.toml`"), "{error}");
        assert!(error.contains(expected), "{table}: {error}");
    }
}
