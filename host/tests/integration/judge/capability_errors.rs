//! The typed capability error of `assay:plugin@0.2.0`, end to end: the
//! `capability-probe` fixture (0.2.0, built with the SDK) names the kind of
//! error each judge or embeddings call gets, against real backends on
//! 127.0.0.1 that are absent, dead, failing, spent or asked too often; the
//! gist plugin decides by the kind; and a 0.1.0 component asking the same
//! judge still hears a sentence.

use crate::fake_server::{FakeServer, Reply};
use crate::judge::judge_server::{self, completion};
use crate::util::{assay_with_judge, eval_in, load, stdout};
use assay::backend::{EmbeddingsSettings, JudgeSettings, RemoteEmbeddings, RemoteJudge};
use assay::plugin::{EvaluationError, MatcherPlugin, PluginScope};
use assay::sandbox::host::embeddings::NO_EMBEDDINGS;
use assay::sandbox::host::judge::{Judge, NO_JUDGE};
use assay::sandbox::{ComponentOptions, Grants};
use std::sync::Arc;
use std::time::Duration;

const PROBE: &str = "plugins/capability-probe/capability-probe.wasm";
const JUDGE_IMPORTER: &str = "plugins/judge-importer/judge-importer.wasm";

/// Both capabilities granted.
const BOTH: Grants = Grants { log: true, judge: true, embeddings: true };

/// `path` loaded with both grants and `judge` as its judge.
fn with_judge(path: &str, judge: Option<RemoteJudge>) -> MatcherPlugin {
    let mut options = ComponentOptions { grants: BOTH, ..ComponentOptions::default() };
    options.capabilities.judge = judge.map(|j| Arc::new(j) as Arc<dyn Judge>);
    load(path, options).unwrap()
}

/// A judge at `url` (an OpenAI-compatible API base) that retries quickly.
fn remote_judge(url: &str) -> RemoteJudge {
    let mut settings = JudgeSettings::openai(url, "judge-model");
    settings.retry.backoff = Duration::from_millis(10);
    RemoteJudge::new(settings).unwrap()
}

/// What one check with `key` and `expected` (JSON text) got: the verdict's
/// message, or the error verdict's.
fn probe(plugin: &MatcherPlugin, key: &str, expected: &str) -> Result<String, String> {
    probe_in(plugin, &PluginScope::default(), key, expected)
}

/// [`probe`], counted in `scope` (a run's).
fn probe_in(plugin: &MatcherPlugin, scope: &PluginScope, key: &str, expected: &str) -> Result<String, String> {
    match eval_in(plugin, scope, key, "some text", expected).results.remove(0) {
        Ok(evaluation) => Ok(evaluation.message),
        Err(EvaluationError::Rejected(message)) => Err(message),
        Err(fault) => panic!("the probe faulted: {fault}"),
    }
}

/// A port on 127.0.0.1 with nothing listening.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn a_0_2_plugin_hears_not_configured_with_the_hosts_wording() {
    let plugin = with_judge(PROBE, None);
    assert_eq!(probe(&plugin, "probe_judge", "\"say pass\""), Err(format!("not-configured: {NO_JUDGE}")));
    assert_eq!(probe(&plugin, "probe_embeddings", "null"), Err(format!("not-configured: {NO_EMBEDDINGS}")));
}

#[test]
fn a_0_2_plugin_hears_failed_from_a_dead_judge_and_a_failing_one() {
    let port = dead_port();
    let plugin = with_judge(PROBE, Some(remote_judge(&format!("http://127.0.0.1:{port}/v1"))));
    let dead = probe(&plugin, "probe_judge", "\"say pass\"").unwrap_err();
    let reason = format!("failed: cannot reach the judge at http://127.0.0.1:{port}/v1/chat/completions");
    assert!(dead.starts_with(&reason), "{dead}");

    let server = FakeServer::start(|_| Reply::status(500, "it broke"));
    let mut settings = JudgeSettings::openai(format!("{}/v1", server.url()), "judge-model");
    settings.retry.retries = 0;
    let plugin = with_judge(PROBE, Some(RemoteJudge::new(settings).unwrap()));
    let failing = probe(&plugin, "probe_judge", "\"say pass\"").unwrap_err();
    assert!(failing.starts_with("failed: "), "{failing}");
    assert!(failing.contains("/v1/chat/completions answered HTTP 500: it broke"), "{failing}");
}

#[test]
fn a_0_2_plugin_hears_failed_when_the_runs_judge_budget_is_spent() {
    let server = judge_server::start();
    let mut settings = JudgeSettings::openai(format!("{}/v1", server.url()), "judge-model");
    settings.max_calls = 1;
    let plugin = with_judge(PROBE, Some(RemoteJudge::new(settings).unwrap()));
    let run = PluginScope::default();
    assert_eq!(probe_in(&plugin, &run, "probe_judge", "\"say pass\""), Ok("the judge answered \"pass\"".into()));
    let spent = probe_in(&plugin, &run, "probe_judge", "\"say pass again\"").unwrap_err();
    assert!(spent.starts_with("failed: "), "{spent}");
    assert!(spent.contains("the judge budget of 1 request for this run is spent"), "{spent}");
    assert_eq!(server.requests.lock().unwrap().len(), 1);
    // The next run has a budget of its own.
    let next_run = PluginScope::default();
    assert_eq!(probe_in(&plugin, &next_run, "probe_judge", "\"say pass 3\""), Ok("the judge answered \"pass\"".into()));
}

#[test]
fn a_0_2_plugin_hears_failed_past_the_capability_calls_of_one_evaluate() {
    // The judge always answers `again`, and the probe asks again: four
    // calls for its one check, then the host refuses.
    let server = FakeServer::start(|_| completion("again"));
    let plugin = with_judge(PROBE, Some(remote_judge(&format!("{}/v1", server.url()))));
    assert_eq!(
        probe(&plugin, "probe_judge", "\"loop\""),
        Err("failed: this evaluate call has used every judge call it may make (judge and embeddings calls together are capped per check in the batch); the call was refused".into())
    );
    assert_eq!(server.requests.lock().unwrap().len(), 4);
}

#[test]
fn a_0_2_plugin_hears_failed_from_a_dead_embeddings_backend() {
    let port = dead_port();
    let mut settings = EmbeddingsSettings::new(format!("http://127.0.0.1:{port}/v1"), "embedding-model");
    settings.retry.retries = 0;
    let mut options = ComponentOptions { grants: BOTH, ..ComponentOptions::default() };
    options.capabilities.embeddings = Some(Arc::new(RemoteEmbeddings::new(settings).unwrap()));
    let plugin = load(PROBE, options).unwrap();
    let dead = probe(&plugin, "probe_embeddings", "null").unwrap_err();
    assert!(dead.starts_with("failed: "), "{dead}");
    assert!(dead.contains(&format!("127.0.0.1:{port}")), "{dead}");
}

#[test]
fn a_0_2_plugin_without_its_grant_never_runs_so_never_hears_not_granted() {
    // The import policy reads the component's imports before it runs: one
    // `judge` grant covers the judge of either version, and without it the
    // component is refused, naming the 0.2.0 import.
    let error = load(PROBE, ComponentOptions::default()).unwrap_err().to_string();
    assert!(error.contains("it imports `assay:plugin/judge@0.2.0`, which its grants do not cover."), "{error}");
    assert!(error.contains("grants = [\"judge\"]"), "{error}");
    let only_judge = Grants { judge: true, ..Grants::default() };
    let error = load(PROBE, ComponentOptions { grants: only_judge, ..ComponentOptions::default() }).unwrap_err();
    assert!(error.to_string().contains("it imports `assay:plugin/embeddings@0.2.0`"), "{error}");
}

#[test]
fn the_same_dead_judge_is_a_sentence_to_a_0_1_plugin_and_failed_to_a_0_2_one() {
    let port = dead_port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let old = with_judge(JUDGE_IMPORTER, Some(remote_judge(&url)));
    let new = with_judge(PROBE, Some(remote_judge(&url)));
    let sentence = probe(&old, "ask_judge", "\"say pass\"").unwrap_err();
    assert!(sentence.starts_with(&format!("cannot reach the judge at {url}/chat/completions")), "{sentence}");
    assert_eq!(probe(&new, "probe_judge", "\"say pass\""), Err(format!("failed: {sentence}")));
    // Without a judge, the 0.1.0 plugin hears the sentence the 0.2.0
    // plugin's error displays as.
    let old = with_judge(JUDGE_IMPORTER, None);
    assert_eq!(probe(&old, "ask_judge", "\"say pass\""), Err(NO_JUDGE.into()));
}

#[test]
fn gist_tells_a_missing_judge_from_a_dead_one_by_the_kind() {
    let missing =
        assay_with_judge(None, &["check", "--key", "gist", "--actual", "\"x\"", "--expected", "\"y\"", "--json"]);
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&missing)).unwrap();
    assert_eq!(verdict["message"], "gist needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL", "{verdict}");

    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let args = ["check", "--no-judge-cache", "--key", "gist", "--actual", "\"x\"", "--expected", "\"y\"", "--json"];
    let dead = assay_with_judge(Some(&url), &args);
    assert_eq!(dead.status.code(), Some(1));
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&dead)).unwrap();
    assert_eq!(verdict["outcome"], "error", "{verdict}");
    let message = verdict["message"].as_str().unwrap();
    let reason = format!("gist could not ask the judge: cannot reach the judge at {url}/chat/completions");
    assert!(message.starts_with(&reason), "{message}");
}
