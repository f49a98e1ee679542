//! The judge capability's OpenAI-compatible backend against a local judge
//! server with deterministic rules: answers, retries, faults, the budget,
//! the answer cache, and a granted plugin asking it end to end.

use crate::fake_server::{FakeServer, Recorded, Reply};
use crate::util::{assay, fixture, stderr, stdout};
use assay::plugin::host::judge::Judge;
use assay::plugin::host::openai_judge::{JudgeSettings, OpenAiJudge};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A chat completion whose content is `text`.
fn completion(text: &str) -> Reply {
    let body = serde_json::json!({ "choices": [{ "message": { "role": "assistant", "content": text } }] }).to_string();
    Reply::Raw(
        format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
            .into_bytes(),
    )
}

/// The judge's rule: "pass" when the prompt says "say pass", else "fail".
fn rule(request: &Recorded) -> Reply {
    let prompt = request.body["messages"][0]["content"].as_str().unwrap_or_default();
    completion(if prompt.contains("say pass") { "pass" } else { "fail" })
}

fn settings(server: &FakeServer) -> JudgeSettings {
    let mut settings = JudgeSettings::new(format!("{}/v1", server.url()), "judge-model");
    settings.backoff = Duration::from_millis(10);
    settings
}

#[test]
fn the_judge_answers_with_the_completion_content() {
    let server = FakeServer::start(rule);
    let mut settings = settings(&server);
    settings.api_key = Some("sk-test".into());
    let judge = OpenAiJudge::new(settings).unwrap();
    assert_eq!(judge.complete("please say pass").unwrap(), "pass");
    assert_eq!(judge.complete("anything else").unwrap(), "fail");
    let request = server.requests.lock().unwrap()[0].clone();
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.body["model"], "judge-model");
    assert_eq!(request.body["temperature"], 0);
}

#[test]
fn a_429_is_retried_and_then_succeeds() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let server = FakeServer::start(move |request| {
        if counter.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::Raw(
                b"HTTP/1.1 429 Too Many\r\nretry-after: 0\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
            )
        } else {
            rule(request)
        }
    });
    let judge = OpenAiJudge::new(settings(&server)).unwrap();
    assert_eq!(judge.complete("say pass").unwrap(), "pass");
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[test]
fn a_server_that_keeps_failing_is_an_error_after_the_retries() {
    let server = FakeServer::start(|_| Reply::status(503, "overloaded"));
    let mut settings = settings(&server);
    settings.retries = 2;
    let error = OpenAiJudge::new(settings).unwrap().complete("x").unwrap_err();
    assert!(error.ends_with("answered HTTP 503 after 3 attempts: overloaded"), "{error}");
    assert_eq!(server.requests.lock().unwrap().len(), 3);
}

#[test]
fn a_garbage_answer_is_an_error_quoting_it() {
    let server = FakeServer::start(|_| Reply::status(200, "{\"not\": \"a completion\"}"));
    let error = OpenAiJudge::new(settings(&server)).unwrap().complete("x").unwrap_err();
    assert!(error.contains("answered something that is not a chat completion: {\"not\": \"a completion\"}"), "{error}");
}

#[test]
fn a_slow_judge_is_cut_off_by_the_timeout() {
    let server = FakeServer::start(|_| Reply::Chunks(vec![(Duration::from_secs(30), "late".into())]));
    let mut settings = settings(&server);
    settings.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let error = OpenAiJudge::new(settings).unwrap().complete("x").unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(error.contains("did not answer within 0.3 s"), "{error}");
}

#[test]
fn a_dead_judge_is_an_error_naming_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let judge = OpenAiJudge::new(JudgeSettings::new(format!("http://127.0.0.1:{port}/v1"), "m")).unwrap();
    let error = judge.complete("x").unwrap_err();
    assert!(
        error.starts_with(&format!("cannot reach the judge at http://127.0.0.1:{port}/v1/chat/completions")),
        "{error}"
    );
}

#[test]
fn the_budget_bounds_the_calls_of_a_run() {
    let server = FakeServer::start(rule);
    let mut settings = settings(&server);
    settings.max_calls = 1;
    let judge = OpenAiJudge::new(settings).unwrap();
    judge.complete("one").unwrap();
    let error = judge.complete("two").unwrap_err();
    assert!(error.contains("the judge budget of 1 calls for this run is spent"), "{error}");
}

#[test]
fn the_cache_makes_a_second_run_send_no_requests() {
    let server = FakeServer::start(rule);
    let cache = tempfile::tempdir().unwrap();
    let mut settings = settings(&server);
    settings.cache_dir = Some(cache.path().to_owned());
    for _ in 0..2 {
        // A new judge per "run", sharing the cache directory.
        let judge = OpenAiJudge::new(settings.clone()).unwrap();
        assert_eq!(judge.complete("say pass").unwrap(), "pass");
        assert_eq!(judge.complete("say no").unwrap(), "fail");
    }
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

#[test]
fn a_granted_plugin_asks_the_configured_judge_end_to_end() {
    let server = FakeServer::start(rule);
    let project = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("plugins/judge-importer/judge-importer.wasm"), project.path().join("asker.wasm")).unwrap();
    let config = project.path().join("assay.toml");
    std::fs::write(
        &config,
        format!(
            "[plugins.asker]\npath = \"asker.wasm\"\ngrants = [\"judge\"]\n\n[judge]\nurl = \"{}/v1\"\nmodel = \"m\"\n",
            server.url()
        ),
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let check = |expected: &str| {
        assay(&[
            "check",
            "--config",
            config.to_str().unwrap(),
            "--cache-dir",
            cache.path().to_str().unwrap(),
            "--key",
            "ask_judge",
            "--actual",
            "\"an answer\"",
            "--expected",
            expected,
        ])
    };
    let output = check("\"say pass\"");
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(stdout(&output), "PASS ask_judge: the judge said \"pass\"\n");
    assert_eq!(check("\"say no\"").status.code(), Some(1));
    assert_eq!(server.requests.lock().unwrap().len(), 2);
    // Run again: every answer comes from the cache.
    assert_eq!(check("\"say pass\"").status.code(), Some(0));
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

/// Runs the `assay` binary with the judge at `url` (or none).
fn assay_judged(url: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_assay"));
    command.args(args).current_dir(crate::util::root()).env_remove("ASSAY_JUDGE_URL");
    if let Some(url) = url {
        command.env("ASSAY_JUDGE_URL", url).env("ASSAY_JUDGE_MODEL", "m");
    }
    command.output().unwrap()
}

#[test]
fn gist_asks_the_judge_and_not_gist_negates_it() {
    let server = FakeServer::start(rule);
    let url = format!("{}/v1", server.url());
    let gist = |key: &str, criteria: &str| {
        let expected = format!("\"{criteria}\"");
        assay_judged(
            Some(&url),
            &["check", "--no-judge-cache", "--key", key, "--actual", "\"The Beatles\"", "--expected", &expected],
        )
    };
    let output = gist("gist", "say pass");
    assert_eq!(stdout(&output), "PASS gist: the judge found the text meets \"say pass\"\n", "{}", stderr(&output));
    assert_eq!(gist("gist", "say no").status.code(), Some(1));
    assert_eq!(gist("not_gist", "say no").status.code(), Some(0));
    let prompt = server.requests.lock().unwrap()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(prompt.contains("ACCEPTANCE CRITERIA:\nsay pass\n\nTEXT:\nThe Beatles"), "{prompt}");
}

#[test]
fn gist_without_a_judge_is_an_error_never_a_pass() {
    let output = assay_judged(None, &["check", "--key", "gist", "--actual", "\"x\"", "--expected", "\"y\"", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(verdict["outcome"], "error");
    assert!(
        verdict["message"]
            .as_str()
            .unwrap()
            .ends_with("gist needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL"),
        "{verdict}"
    );
    // not_gist is not a pass either.
    let output = assay_judged(None, &["check", "--key", "not_gist", "--actual", "\"x\"", "--expected", "\"y\""]);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn gist_checks_run_in_test_cases() {
    let server = FakeServer::start(rule);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("judged.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "The Beatles came from Liverpool",
             "response": { "text": { "gist": "say pass", "not_gist": "say no" } } } ] }"#,
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let url = format!("{}/v1", server.url());
    let output = assay_judged(
        Some(&url),
        &["run", "--no-judge-cache", "--results", out.path().to_str().unwrap(), dir.path().to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}
