//! promptfoo's assertions, differentially: every case promptfoo 0.123.1
//! evaluated in `plugins/promptfoo/differential/recorded.jsonl` (its own
//! `runAssertion`, both the type and its `not-` form) is evaluated again by
//! the `promptfoo` plugin in real wasmtime, through the host's dispatch
//! (`not_pf_*` included), against this file's port of the deterministic
//! judge/embeddings server promptfoo was graded by
//! (`plugins/promptfoo/differential/server.mjs`) on 127.0.0.1. Pass/fail
//! must be identical and scores within 1e-9; an error promptfoo raised must
//! be an error verdict; the differences below are the only exceptions.

use crate::connections::connections_openai::json_reply;
use crate::fake_server::{FakeServer, Recorded};
use crate::util::{root, runtime};
use assay::backend::{EmbeddingsSettings, JudgeSettings, RemoteEmbeddings, RemoteJudge};
use assay::check::{Outcome, Verdict};
use assay::plugin::{FIRST_PARTY_PLUGINS, MatcherPlugin, Registry, evaluate_one};
use assay::sandbox::host::embeddings::Embeddings;
use assay::sandbox::host::judge::Judge;
use assay::sandbox::{ComponentOptions, ComponentSource, Grants};
use serde_json::{Value, json};
use std::sync::Arc;

const COMPONENT: &str = "plugins/promptfoo/promptfoo.wasm";
const RECORDING: &str = "plugins/promptfoo/differential/recorded.jsonl";

/// Where assay deliberately differs from promptfoo: `(type, output,
/// expected, why)`. In each, assay gives an error verdict, in both forms,
/// where promptfoo gives a verdict.
const DOCUMENTED: &[(&str, &str, &str, &str)] = &[
    (
        "equals",
        "null",
        "{}",
        "promptfoo compares the output with the text `undefined` when the value is missing; assay asks for the value",
    ),
    (
        "regex",
        "x",
        r#"{"value":"(unclosed"}"#,
        "promptfoo fails a check whose regex does not compile; assay says the regex does not compile",
    ),
    (
        "levenshtein",
        "anything",
        r#"{"value":"x","threshold":-1}"#,
        "a negative distance threshold is an error in assay",
    ),
    ("rouge-n", "x", r#"{"value":"x","threshold":1.5}"#, "a score threshold outside 0..=1 is an error in assay"),
    ("bleu", "x", r#"{"value":"x","threshold":-0.5}"#, "a score threshold outside 0..=1 is an error in assay"),
];

/// Cases whose promptfoo score lies outside 0..=1, which assay's verdicts
/// cannot carry: the plugin clamps it (and keeps promptfoo's number in the
/// extras as `promptfoo_score`). `(type, output)`.
const CLAMPED: &[(&str, &str)] = &[("llm-rubric", r#"Paris REPLY<<{"pass": true, "score": 1.7}>>"#)];

/// The server's rules, as `server.mjs` states them: a chat answer is the
/// text after `REPLY<<` up to `>>`; an embedding counts letters a–z and
/// other non-space characters.
fn answer(content: &str) -> String {
    match content.split_once("REPLY<<") {
        None => "NO REPLY".to_owned(),
        Some((_, rest)) => rest.split_once(">>").map_or(rest, |(reply, _)| reply).to_owned(),
    }
}

/// JavaScript's `\s`.
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

fn embed(text: &str) -> Vec<u32> {
    let mut vector = vec![0; 27];
    for c in text.chars() {
        if c.is_ascii_alphabetic() {
            vector[usize::from(c.to_ascii_lowercase() as u8 - b'a')] += 1;
        } else if !is_js_space(c) {
            vector[26] += 1;
        }
    }
    vector
}

fn server() -> FakeServer {
    FakeServer::start(|request: &Recorded| {
        if request.request_line.contains("/embeddings") {
            let data: Vec<Value> = request.body["input"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(index, text)| json!({ "index": index, "embedding": embed(text.as_str().unwrap()) }))
                .collect();
            json_reply(200, "", &json!({ "data": data }))
        } else {
            let content: Vec<&str> =
                request.body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
            json_reply(
                200,
                "",
                &json!({ "choices": [{ "message": { "role": "assistant", "content": answer(&content.join("\n\n")) } }] }),
            )
        }
    })
}

/// The committed component, loaded from its file with `options`.
fn load(options: ComponentOptions) -> MatcherPlugin {
    let path = root().join(COMPONENT);
    let bytes = std::fs::read(&path).unwrap();
    MatcherPlugin::load(runtime(), ComponentSource::File(path), &bytes, options).unwrap()
}

/// The plugin loaded with the judge and embeddings grants and backends at
/// `url`, in a registry of its own.
fn registry(url: &str) -> Registry {
    let mut options =
        ComponentOptions { grants: Grants { log: true, judge: true, embeddings: true }, ..ComponentOptions::default() };
    options.capabilities.judge =
        Some(Arc::new(RemoteJudge::new(JudgeSettings::openai(url, "judge")).unwrap()) as Arc<dyn Judge>);
    options.capabilities.embeddings =
        Some(Arc::new(RemoteEmbeddings::new(EmbeddingsSettings::new(url, "embedder")).unwrap()) as Arc<dyn Embeddings>);
    let mut registry = Registry::new();
    registry.add(load(options)).unwrap();
    registry
}

/// The recording: its header and its cases.
fn recording() -> (Value, Vec<Value>) {
    let text = std::fs::read_to_string(root().join(RECORDING)).unwrap();
    let mut lines = text.lines().map(|line| serde_json::from_str::<Value>(line).unwrap());
    let header = lines.next().unwrap();
    (header, lines.collect())
}

/// Why one verdict differs from promptfoo's, if it does.
fn difference(recorded: &Value, verdict: &Verdict, clamped: bool) -> Option<String> {
    if let Some(error) = recorded.get("error") {
        return (verdict.outcome != Outcome::Error)
            .then(|| format!("promptfoo raised {error}, assay gave {:?}: {}", verdict.outcome, verdict.message));
    }
    let pass = recorded["pass"].as_bool().unwrap();
    let score = recorded["score"].as_f64().unwrap();
    let score = if clamped { score.clamp(0.0, 1.0) } else { score };
    let outcome = if pass { Outcome::Pass } else { Outcome::Fail };
    if verdict.outcome != outcome {
        return Some(format!("promptfoo: {outcome:?}, assay: {:?} ({})", verdict.outcome, verdict.message));
    }
    match verdict.score {
        Some(ours) if (ours - score).abs() <= 1e-9 => None,
        ours => Some(format!("promptfoo scored {score}, assay {ours:?} ({})", verdict.message)),
    }
}

#[test]
fn every_recorded_promptfoo_verdict_is_assays() {
    let (header, cases) = recording();
    assert_eq!(header["promptfoo"], "0.123.1", "{header}");
    let server = server();
    let registry = registry(&format!("{}/v1", server.url()));
    let mut differences = Vec::new();
    let mut documented_seen = 0;
    for case in &cases {
        let kind = case["type"].as_str().unwrap();
        let key = format!("pf_{}", kind.replace('-', "_"));
        let (output, expected) = (&case["output"], &case["expected"]);
        let documented = DOCUMENTED.iter().find(|(t, o, e, _)| {
            *t == kind && output.as_str() == Some(*o) && serde_json::from_str::<Value>(e).unwrap() == *expected
        });
        for (form, recorded) in [(key.clone(), &case["direct"]), (format!("not_{key}"), &case["negated"])] {
            let verdict = evaluate_one(&registry, &form, output, expected).unwrap();
            if let Some((_, _, _, why)) = documented {
                assert_eq!(verdict.outcome, Outcome::Error, "{form} on {output} with {expected}: documented ({why})");
                documented_seen += 1;
                continue;
            }
            let clamped = CLAMPED.contains(&(kind, output.as_str().unwrap_or_default()));
            if let Some(difference) = difference(recorded, &verdict, clamped) {
                differences.push(format!("{form} on {output} with {expected}: {difference}"));
            }
        }
    }
    assert!(differences.is_empty(), "{} of {} differ:\n{}", differences.len(), cases.len() * 2, differences.join("\n"));
    assert_eq!(documented_seen, DOCUMENTED.len() * 2, "every documented difference is in the recording");
}

#[test]
fn the_recording_covers_every_key_of_the_plugin_and_its_first_party_entry() {
    let (_, cases) = recording();
    let recorded: std::collections::BTreeSet<String> =
        cases.iter().map(|c| format!("pf_{}", c["type"].as_str().unwrap().replace('-', "_"))).collect();
    let plugin = load(ComponentOptions {
        grants: Grants { log: true, judge: true, embeddings: true },
        ..ComponentOptions::default()
    });
    let keys: std::collections::BTreeSet<String> = plugin.keys().iter().map(|k| k.key.clone()).collect();
    // promptfoo decides select-best across a test's outputs, not through
    // runAssertion: `promptfoo_compare.rs` and the examples corpus
    // (`eval-select-best`) check it.
    let compared: std::collections::BTreeSet<String> =
        keys.iter().filter(|k| *k != "pf_select_best").cloned().collect();
    assert_eq!(recorded, compared);
    let entry = FIRST_PARTY_PLUGINS.iter().find(|p| p.label == "promptfoo").unwrap();
    assert_eq!(entry.keys.iter().map(|k| k.to_string()).collect::<std::collections::BTreeSet<_>>(), keys);
    assert_eq!(entry.grants, ["judge", "embeddings"]);
}

#[test]
fn bad_expected_values_are_errors_naming_the_key_and_what_to_write() {
    let server = server();
    let registry = registry(&format!("{}/v1", server.url()));
    for (key, expected, says) in [
        ("pf_contains", json!("Paris"), "pf_contains takes an object such as {\"value\": …"),
        ("pf_regex", json!({ "value": "(" }), "pf_regex's regular expression \"(\" does not compile"),
        ("pf_rouge_n", json!({ "value": "x", "threshold": 2 }), "pf_rouge_n's threshold 2 is outside 0..=1"),
        ("pf_bleu", json!({}), "pf_bleu needs `value`: the reference text, or a list of them"),
        ("pf_latency", json!({}), "pf_latency needs `threshold`: the most milliseconds allowed"),
        ("pf_factuality", json!({ "value": "Paris" }), "pf_factuality needs `prompt`"),
        (
            "pf_is_json",
            json!({ "value": { "patternProperties": {} } }),
            "the JSON schema keyword `patternProperties` is not supported",
        ),
        ("pf_equals", json!({ "value": 1, "extra": 2 }), "pf_equals does not take `extra`"),
    ] {
        let verdict = evaluate_one(&registry, key, &json!("text"), &expected).unwrap();
        assert_eq!(verdict.outcome, Outcome::Error, "{key}: {verdict:?}");
        assert!(verdict.message.contains(says), "{key}: {}", verdict.message);
    }
}

#[test]
fn without_a_judge_the_graded_types_say_how_to_configure_one() {
    let options =
        ComponentOptions { grants: Grants { log: true, judge: true, embeddings: true }, ..ComponentOptions::default() };
    let mut registry = Registry::new();
    registry.add(load(options)).unwrap();
    let verdict =
        evaluate_one(&registry, "pf_llm_rubric", &json!("Paris"), &json!({ "value": "names a city" })).unwrap();
    assert_eq!(verdict.outcome, Outcome::Error);
    assert!(verdict.message.contains("pf_llm_rubric needs a judge: set [judge] in assay.toml"), "{}", verdict.message);
    let verdict = evaluate_one(&registry, "pf_similar", &json!("Paris"), &json!({ "value": "Paris" })).unwrap();
    assert!(verdict.message.contains("pf_similar needs embeddings"), "{}", verdict.message);
}
