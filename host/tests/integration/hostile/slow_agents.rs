//! A slow agent cannot hold a case: every exchange — connecting, the head
//! and every streamed byte — ends at the sample's bound, however often the
//! server sends a keep-alive. Servers on 127.0.0.1 that drip forever, over
//! each streaming transport, through the `assay` binary; the verdict names
//! the bound that fired (the case's, `--timeout`, assay.toml's default) and
//! how to raise it.

use crate::connections::named::{project, run};
use crate::fake_server::{FakeServer, Reply};
use crate::util::{stderr, stdout};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How often the servers send something: far inside every idle timeout.
const DRIP: Duration = Duration::from_millis(150);

/// A server answering every request with a drip of `unit`.
fn dripping(content_type: &'static str, unit: &'static str) -> FakeServer {
    FakeServer::start(move |_| Reply::Drip { content_type, unit, every: DRIP })
}

/// A case asking `connection` one question.
fn case(connection: &str, extra: &str) -> String {
    format!(
        r#"{{ "agent": "a", "connections": ["{connection}"], {extra}
            "interactions": [ {{ "text": "hi", "response": {{ "text": {{ "keywords": "hi" }} }} }} ] }}"#
    )
}

/// The error of the result line `line`'s only turn, and how long the turn
/// took.
fn timed_out(line: &Value) -> (&Value, Duration) {
    assert_eq!(line["status"], "error", "{line:#}");
    let turn = &line["samples"][0]["runs"][0]["interactions"][0];
    (&turn["error"], Duration::from_secs_f64(turn["duration_ms"].as_f64().unwrap() / 1e3))
}

// See issue 29: a keep-alive reset the idle timer, so a dripping server
// held its case (and a `serve` slot) forever.
#[test]
fn issue_29_a_dripping_server_ends_as_a_timeout_at_the_default_bound_over_every_transport() {
    let sse = "text/event-stream";
    let servers = [
        ("openai", dripping(sse, ": keep-alive\n\n"), "type = \"openai\"\nurl = \"URL/v1\"\nstream = true\n"),
        (
            "http_sse",
            dripping(sse, ": keep-alive\n\n"),
            "type = \"http\"\nurl = \"URL/chat\"\nbody = '{\"q\": {{text}}}'\ntext = \"$.answer\"\nresponse = \"sse\"\n",
        ),
        (
            "http_json",
            dripping("application/json", " "),
            "type = \"http\"\nurl = \"URL/chat\"\nbody = '{\"q\": {{text}}}'\ntext = \"$.answer\"\n",
        ),
        ("neuro_san", dripping("application/json-lines", " "), "type = \"neuro-san\"\nurl = \"URL\"\n"),
    ];
    let mut config = "[cases]\ntimeout_in_seconds = 1\n".to_owned();
    for (name, server, table) in &servers {
        config.push_str(&format!("[connections.{name}]\n{}\n", table.replace("URL", &server.url())));
    }
    let cases: Vec<(String, String)> =
        servers.iter().map(|(name, ..)| (format!("{name}.hocon"), case(name, ""))).collect();
    let cases: Vec<(&str, &str)> = cases.iter().map(|(file, text)| (file.as_str(), text.as_str())).collect();
    let dir = project(&config, &cases);

    let started = Instant::now();
    let (output, lines) = run(dir.path(), &["-j", "8"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(started.elapsed() < Duration::from_secs(20), "the run took {:?}", started.elapsed());
    assert_eq!(lines.len(), servers.len(), "every case is reported");
    for (name, server, _) in &servers {
        let line = lines.iter().find(|line| line["id"] == *name).unwrap_or_else(|| panic!("no {name} in {lines:?}"));
        let (error, took) = timed_out(line);
        assert_eq!(error["kind"], "case-timeout", "{name}: {error:#}");
        assert_eq!(
            error["message"],
            "the default timeout of 1 s (`[cases] timeout_in_seconds` of assay.toml) fired during interaction 1; the \
             request was cancelled\n\nConsider `timeout_in_seconds` in the case file, or raising `[cases] \
             timeout_in_seconds` in assay.toml",
            "{name}"
        );
        assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(3), "{name} took {took:?}");
        assert_eq!(server.requests.lock().unwrap().len(), 1, "{name}: the request reached the server");
        let terminal = stdout(&output);
        let shown = format!("[{name}] interaction 1: the default timeout of 1 s (`[cases] timeout_in_seconds`");
        assert!(terminal.contains(&shown), "{terminal}\n(expected it to contain: {shown})");
    }
}

#[test]
fn a_timeout_names_the_bound_that_fired_and_how_to_raise_it() {
    let server = dripping("text/event-stream", ": keep-alive\n\n");
    let config = format!(
        "[cases]\ntimeout_in_seconds = 60\n[connections.gpt]\ntype = \"openai\"\nurl = \"{}/v1\"\nstream = true\n",
        server.url()
    );
    let own = case("gpt", r#""timeout_in_seconds": 1,"#);
    let dir = project(&config, &[("own.hocon", &own)]);
    let (output, lines) = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let (error, took) = timed_out(&lines[0]);
    assert_eq!(error["kind"], "case-timeout", "{error:#}");
    assert!(
        error["message"].as_str().unwrap().ends_with(
            "the case's timeout_in_seconds of 1 s fired during interaction 1; the request was cancelled\n\n\
             Consider raising the case's `timeout_in_seconds` in the case file"
        ),
        "{error:#}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");

    let (output, lines) = run(dir.path(), &["--timeout", "0.5"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let (error, took) = timed_out(&lines[0]);
    assert_eq!(
        error,
        &json!({ "kind": "case-timeout", "message": "the run's --timeout of 0.5 s fired during interaction 1; the \
                 request was cancelled\n\nConsider a larger --timeout" })
    );
    assert!(took >= Duration::from_millis(500) && took < Duration::from_millis(2500), "took {took:?}");
}

#[test]
fn a_default_timeout_that_is_not_positive_is_refused_naming_the_key() {
    for value in ["0", "-1", "-0.5"] {
        let dir = project(&format!("[cases]\ntimeout_in_seconds = {value}\n"), &[("a.hocon", &case("http", ""))]);
        let (output, lines) = run(dir.path(), &[]);
        assert_eq!(output.status.code(), Some(2), "{value}: {}", stderr(&output));
        assert!(lines.is_empty(), "{value}: nothing ran");
        let error = stderr(&output);
        let expected = format!(
            "[cases] timeout_in_seconds in `{}`: {value} is not a positive number of seconds: use, e.g., 300 (the default)",
            dir.path().join("assay.toml").display()
        );
        assert!(error.contains(&expected), "{error}\n(expected it to contain: {expected})");
    }
}

/// `assay eval` is bounded the same way: assay.toml's default ends a
/// scenario whose agent drips.
#[test]
fn an_eval_scenario_of_a_dripping_agent_ends_at_assay_tomls_default() {
    let server = dripping("application/json-lines", " ");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("assay.toml"), "[cases]\ntimeout_in_seconds = 1\n").unwrap();
    let scenario = "scenario_id: slow\nproblem: hi\nagent: a\nexpectations:\n  - expectation_id: hi\n    statement: says hi\n    key: keywords\n    expected: hi\n";
    std::fs::write(dir.path().join("slow.yaml"), scenario).unwrap();
    let (config, results) = (dir.path().join("assay.toml"), dir.path().join("results"));
    let started = Instant::now();
    let output = crate::util::assay_command()
        .args(["eval", "--config", config.to_str().unwrap(), "--connection", "http", "--agent-url", &server.url()])
        .args(["--results", results.to_str().unwrap(), dir.path().join("slow.yaml").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "eval took {:?}", started.elapsed());
    let lines = std::fs::read_to_string(results.join("results.jsonl")).unwrap();
    let line: Value = serde_json::from_str(lines.trim()).unwrap();
    let (error, took) = timed_out(&line);
    assert_eq!(error["kind"], "case-timeout", "{error:#}\n{}{}", stdout(&output), stderr(&output));
    assert!(error["message"].as_str().unwrap().contains("[cases] timeout_in_seconds"), "{error:#}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
}
