//! The judge capability's backends (an OpenAI-compatible endpoint, a
//! neuro-san agent) against local judge servers with deterministic rules:
//! answers, retries, faults, the budget, the answer cache, and the gist
//! plugin asking them end to end.

use crate::fake_server::{FakeServer, Recorded, Reply};
use crate::judge::judge_server::{self, completion};
use crate::util::{assay, assay_with_judge, fixture, stderr, stdout};
use assay::backend::{AnswerCache, JudgeBackend, JudgeSettings, RemoteJudge};
use assay::sandbox::host::CapabilitySpend;
use assay::sandbox::host::judge::Judge;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The test judge's rules (see `judge_server`).
fn rule(request: &Recorded) -> Reply {
    completion(&judge_server::answer(judge_server::prompt(request)))
}

fn settings(server: &FakeServer) -> JudgeSettings {
    let mut settings = JudgeSettings::openai(format!("{}/v1", server.url()), "judge-model");
    settings.retry.backoff = Duration::from_millis(10);
    settings
}

#[test]
fn the_judge_answers_with_the_completion_content() {
    let server = FakeServer::start(rule);
    let mut settings = settings(&server);
    settings.backend = JudgeBackend::OpenAi {
        url: format!("{}/v1", server.url()),
        model: "judge-model".into(),
        api_key: Some("sk-test".into()),
    };
    let judge = RemoteJudge::new(settings).unwrap();
    assert_eq!(judge.complete("please say pass", &CapabilitySpend::default()).answer.unwrap(), "pass");
    assert_eq!(judge.complete("anything else", &CapabilitySpend::default()).answer.unwrap(), "fail");
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
    let judge = RemoteJudge::new(settings(&server)).unwrap();
    assert_eq!(judge.complete("say pass", &CapabilitySpend::default()).answer.unwrap(), "pass");
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[test]
fn a_server_that_keeps_failing_is_an_error_after_the_retries() {
    let server = FakeServer::start(|_| Reply::status(503, "overloaded"));
    let mut settings = settings(&server);
    settings.retry.retries = 2;
    let error = RemoteJudge::new(settings).unwrap().complete("x", &CapabilitySpend::default()).answer.unwrap_err();
    assert!(
        error.ends_with("/v1/chat/completions answered HTTP 503: overloaded (gave up after 3 attempts)"),
        "{error}"
    );
    assert_eq!(server.requests.lock().unwrap().len(), 3);
}

#[test]
fn a_garbage_answer_is_an_error_quoting_it() {
    let server = FakeServer::start(|_| Reply::status(200, "{\"not\": \"a completion\"}"));
    let error =
        RemoteJudge::new(settings(&server)).unwrap().complete("x", &CapabilitySpend::default()).answer.unwrap_err();
    assert!(error.contains("answered something that is not a chat completion: {\"not\": \"a completion\"}"), "{error}");
}

#[test]
fn a_slow_judge_is_cut_off_by_the_timeout() {
    let server = FakeServer::start(|_| Reply::Chunks(vec![(Duration::from_secs(30), "late".into())]));
    let mut settings = settings(&server);
    settings.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let error = RemoteJudge::new(settings).unwrap().complete("x", &CapabilitySpend::default()).answer.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(error.contains("did not answer within 0.3 s"), "{error}");
}

#[test]
fn a_dead_judge_is_an_error_naming_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let judge = RemoteJudge::new(JudgeSettings::openai(format!("http://127.0.0.1:{port}/v1"), "m")).unwrap();
    let error = judge.complete("x", &CapabilitySpend::default()).answer.unwrap_err();
    assert!(
        error.starts_with(&format!("cannot reach the judge at http://127.0.0.1:{port}/v1/chat/completions")),
        "{error}"
    );
}

#[test]
fn the_budget_bounds_the_calls_of_a_run_and_each_run_has_its_own() {
    let server = FakeServer::start(rule);
    let mut settings = settings(&server);
    settings.max_calls = 1;
    let judge = RemoteJudge::new(settings).unwrap();
    let run = CapabilitySpend::default();
    judge.complete("one", &run).answer.unwrap();
    let error = judge.complete("two", &run).answer.unwrap_err();
    assert!(error.contains("the judge budget of 1 request for this run is spent"), "{error}");
    assert_eq!(judge.requests(), 1, "the refused request is not sent");
    assert_eq!(server.requests.lock().unwrap().len(), 1);
    // The next run (or client of `assay serve`) has a budget of its own.
    judge.complete("three", &CapabilitySpend::default()).answer.unwrap();
    assert_eq!(judge.requests(), 2);
}

#[test]
fn the_cache_makes_a_second_run_send_no_requests() {
    let server = FakeServer::start(rule);
    let cache = tempfile::tempdir().unwrap();
    let mut settings = settings(&server);
    settings.cache = Some(AnswerCache::with_key_file(cache.path().join("judge"), cache.path().join("secret.key")));
    for _ in 0..2 {
        // A new judge per "run", sharing the cache directory.
        let judge = RemoteJudge::new(settings.clone()).unwrap();
        assert_eq!(judge.complete("say pass", &CapabilitySpend::default()).answer.unwrap(), "pass");
        assert_eq!(judge.complete("say no", &CapabilitySpend::default()).answer.unwrap(), "fail");
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

#[test]
fn gist_asks_the_judge_and_not_gist_negates_it() {
    let server = FakeServer::start(rule);
    let url = format!("{}/v1", server.url());
    let gist = |key: &str, criteria: &str| {
        let expected = format!("\"{criteria}\"");
        assay_with_judge(
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
    let output =
        assay_with_judge(None, &["check", "--key", "gist", "--actual", "\"x\"", "--expected", "\"y\"", "--json"]);
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
    let output = assay_with_judge(None, &["check", "--key", "not_gist", "--actual", "\"x\"", "--expected", "\"y\""]);
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
    let output = assay_with_judge(
        Some(&url),
        &["run", "--no-judge-cache", "--results", out.path().to_str().unwrap(), dir.path().to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

/// A neuro-san server whose `gist` agent answers by the test judge's rules,
/// reading the prompt from the user message.
fn neuro_san_judge(busy_first: usize) -> FakeServer {
    let seen = AtomicUsize::new(0);
    FakeServer::start(move |request| {
        if seen.fetch_add(1, Ordering::SeqCst) < busy_first {
            return Reply::status(503, "busy");
        }
        let prompt = request.body["user_message"]["text"].as_str().unwrap_or_default();
        let line = serde_json::json!({ "response": { "type": "AI", "text": judge_server::answer(prompt) } });
        Reply::lines(&[&line.to_string()])
    })
}

/// Writes an assay.toml with `judge` as its [judge] section.
fn config_with(judge: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("assay.toml");
    std::fs::write(&path, format!("[judge]\n{judge}\n")).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

#[test]
fn a_neuro_san_agent_judges_gist_checks() {
    let server = neuro_san_judge(0);
    let (_dir, config) = config_with(&format!("neuro_san = \"{}/gist\"", server.url()));
    let gist = |criteria: &str| {
        let expected = format!("\"{criteria}\"");
        let args = ["check", "--config", &config, "--no-judge-cache", "--key", "gist"];
        assay_with_judge(None, &[&args[..], &["--actual", "\"salt and pepper\"", "--expected", &expected]].concat())
    };
    let output = gist("mentions pepper");
    assert_eq!(
        stdout(&output),
        "PASS gist: the judge found the text meets \"mentions pepper\"\n",
        "{}",
        stderr(&output)
    );
    assert_eq!(gist("mentions cumin").status.code(), Some(1));
    let request = server.requests.lock().unwrap()[0].clone();
    assert_eq!(request.request_line, "POST /api/v1/gist/streaming_chat HTTP/1.1");
    let text = request.body["user_message"]["text"].as_str().unwrap();
    assert!(text.contains("ACCEPTANCE CRITERIA:\nmentions pepper\n\nTEXT:\nsalt and pepper"), "{text}");
}

#[test]
fn a_busy_neuro_san_judge_is_retried() {
    let server = neuro_san_judge(1);
    let mut settings = JudgeSettings::neuro_san(format!("{}/gist", server.url()));
    settings.retry.backoff = Duration::from_millis(10);
    let judge = assay::agent::remote_judge(settings).unwrap();
    assert_eq!(judge.complete("please say pass", &CapabilitySpend::default()).answer.unwrap(), "pass");
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

#[test]
fn a_dead_neuro_san_judge_is_an_error_naming_the_agent_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let judge = assay::agent::remote_judge(JudgeSettings::neuro_san(format!("http://127.0.0.1:{port}/gist"))).unwrap();
    let error = judge.complete("x", &CapabilitySpend::default()).answer.unwrap_err();
    assert!(
        error.starts_with(&format!("the judge agent at http://127.0.0.1:{port}/api/v1/gist/streaming_chat: ")),
        "{error}"
    );
}

#[test]
fn url_and_neuro_san_together_are_a_configuration_error() {
    let (_dir, config) = config_with("url = \"http://127.0.0.1:1/v1\"\nneuro_san = \"http://127.0.0.1:1/gist\"");
    let output = assay_with_judge(None, &["plugins", "--config", &config]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("sets both `url` and `neuro_san`: choose one judge"), "{}", stderr(&output));
}

#[test]
fn a_judge_slower_than_the_plugin_deadline_still_answers() {
    // The gist plugin's deadline is 2 s of its own time; the judge takes
    // 2.5 s. Time waiting in the host does not count against the plugin
    // (the judge's own timeout bounds it), so the check passes.
    let server = FakeServer::start(|request| {
        std::thread::sleep(Duration::from_millis(2500));
        rule(request)
    });
    let url = format!("{}/v1", server.url());
    let output = assay_with_judge(
        Some(&url),
        &["check", "--no-judge-cache", "--key", "gist", "--actual", "\"x\"", "--expected", "\"say pass\""],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
}

#[test]
fn an_equivocal_judge_is_an_error_quoting_it() {
    let server = FakeServer::start(rule);
    let url = format!("{}/v1", server.url());
    for key in ["gist", "not_gist"] {
        let output = assay_with_judge(
            Some(&url),
            &["check", "--no-judge-cache", "--key", key, "--actual", "\"x\"", "--expected", "\"be vague\"", "--json"],
        );
        assert_eq!(output.status.code(), Some(1));
        let verdict: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(verdict["outcome"], "error", "{verdict}");
        assert_eq!(verdict["message"], "the judge's answer is equivocal: \"pass, or perhaps fail\"");
    }
}

#[test]
fn a_neuro_san_judge_is_made_by_the_agent_module_and_remote_judge_new_says_so() {
    let settings = JudgeSettings::neuro_san("http://user:secret@127.0.0.1:9/gist");
    let error = RemoteJudge::new(settings.clone()).unwrap_err();
    assert!(error.contains("is made by `assay::agent::remote_judge`"), "{error}");
    assert!(!error.contains("secret"), "{error}");
    let judge = assay::agent::remote_judge(settings).unwrap();
    assert_eq!(judge.settings().backend.url(), "http://[redacted]@127.0.0.1:9/gist");
}
