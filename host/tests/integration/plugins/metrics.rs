//! The first-party metric plugins, loaded from their files through
//! `assay.toml` exactly as a third party's would be, with scores checked
//! against values computed independently: rouge-score, nltk and sacrebleu
//! numbers recorded by each plugin's `reference/` script, hand-computed
//! tables, and cosines computed here from the test embeddings server's own
//! rule.

use crate::fake_server::{FakeServer, Reply};
use crate::util::{root, stderr, stdout};
use serde_json::{Value, json};
use std::process::Output;

/// The first-party metric plugins: `[plugins.NAME]` label and component.
const METRICS: &[(&str, &str)] = &[
    ("rouge", "plugins/rouge/rouge.wasm"),
    ("meteor", "plugins/meteor/meteor.wasm"),
    ("bleu", "plugins/bleu/bleu.wasm"),
    ("levenshtein", "plugins/levenshtein/levenshtein.wasm"),
    ("table-equivalence", "plugins/table-equivalence/table_equivalence.wasm"),
    ("similarity", "plugins/similarity/similarity.wasm"),
    ("readability", "plugins/readability-py/readability.wasm"),
];

/// One compile cache for every test here: compiled components are keyed by
/// their sha256, so sharing is safe, and each is compiled once (the Python
/// one takes half a minute). It lives in the target directory: a temporary
/// directory held by a static is never removed, and left the compiled
/// Python plugin behind in /tmp at every run.
fn compile_cache() -> &'static std::path::Path {
    static CACHE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("metrics-compile-cache"))
}

/// A project folder whose assay.toml loads the metric plugins labelled
/// `with`, and `extra`.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(with: &[&str], extra: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let mut config = String::new();
        for (label, path) in METRICS.iter().filter(|(label, _)| with.contains(label)) {
            let path = root().join(path);
            config.push_str(&format!("[plugins.{label}]\npath = {:?}\n", path.to_str().unwrap()));
            if *label == "similarity" {
                config.push_str("grants = [\"embeddings\"]\n");
            }
        }
        config.push_str(extra);
        std::fs::write(dir.path().join("assay.toml"), config).unwrap();
        Project { dir }
    }

    fn assay(&self, args: &[&str]) -> Output {
        let config = self.dir.path().join("assay.toml");
        let cache = compile_cache();
        crate::util::assay_command()
            .args(args)
            .args(["--config", config.to_str().unwrap(), "--cache-dir", cache.to_str().unwrap()])
            .current_dir(self.dir.path())
            .env_remove("ASSAY_EMBEDDINGS_URL")
            .output()
            .unwrap()
    }

    /// `assay check --json`: the verdict.
    fn check(&self, key: &str, actual: &Value, expected: &Value) -> Value {
        let (actual, expected) = (actual.to_string(), expected.to_string());
        let output = self.assay(&["check", "--key", key, "--actual", &actual, "--expected", &expected, "--json"]);
        serde_json::from_str(&stdout(&output)).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&output), stderr(&output)))
    }

    /// Runs test cases written into the folder; the results.jsonl lines.
    fn run(&self, cases: &[(&str, String)]) -> (Output, Vec<Value>) {
        for (name, text) in cases {
            std::fs::write(self.dir.path().join(name), text).unwrap();
        }
        let results = self.dir.path().join("results");
        let output = self.assay(&["run", "--quiet", "--results", results.to_str().unwrap(), "."]);
        let lines = std::fs::read_to_string(results.join("results.jsonl")).unwrap_or_default();
        (output, lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
    }
}

/// Every check of every case, in order.
fn checks(lines: &[Value]) -> Vec<Value> {
    let mut all = Vec::new();
    for line in lines {
        for interaction in line["samples"][0]["runs"][0]["interactions"].as_array().unwrap() {
            all.extend(interaction["checks"].as_array().unwrap().iter().cloned());
        }
    }
    all
}

/// The reference numbers are JSON strings of Python floats.
fn number(value: &Value) -> f64 {
    value.as_str().map_or_else(|| value.as_f64().unwrap(), |s| s.parse().unwrap())
}

/// Reads a plugin's recorded reference file.
fn reference(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(path)).unwrap()).unwrap()
}

#[test]
fn rouge_matches_rouge_score_through_a_test_case() {
    // Each reference case as one interaction with the echo agent, which
    // answers with the prediction: the check sees what rouge-score saw.
    let recorded = reference("plugins/rouge/tests/rouge_reference.json");
    let cases = recorded["cases"].as_array().unwrap();
    let types = recorded["types"].clone();
    let interactions: Vec<Value> = cases
        .iter()
        .map(|case| {
            json!({
                "text": case["prediction"],
                "response": { "text": { "rouge": {
                    "reference": case["reference"], "types": types,
                    "use_stemmer": case["use_stemmer"], "threshold": 0
                } } }
            })
        })
        .collect();
    let case = json!({ "agent": "echo", "interactions": interactions }).to_string();
    let project = Project::new(&["rouge"], "");
    let (output, lines) = project.run(&[("rouge.hocon", case)]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let results = checks(&lines);
    assert_eq!(results.len(), cases.len());
    for (case, result) in cases.iter().zip(&results) {
        let name = case["name"].as_str().unwrap();
        let mut mean = 0.0;
        for rouge_type in types.as_array().unwrap() {
            let rouge_type = rouge_type.as_str().unwrap();
            for part in ["precision", "recall", "fmeasure"] {
                let want = number(&case["scores"][rouge_type][part]);
                let got = result["extras"][rouge_type][part].as_f64().unwrap();
                assert_eq!(got, want, "{name}: {rouge_type} {part}");
            }
            mean += number(&case["scores"][rouge_type]["fmeasure"]);
        }
        mean /= types.as_array().unwrap().len() as f64;
        assert!((result["score"].as_f64().unwrap() - mean).abs() < 1e-12, "{name}: score {result}");
    }
}

#[test]
fn meteor_matches_nltk_without_synonyms() {
    let recorded = reference("plugins/meteor/tests/meteor_reference.json");
    let project = Project::new(&["meteor"], "");
    for case in recorded["cases"].as_array().unwrap().iter().take(6) {
        let weights = &case["weights"];
        let expected = json!({
            "references": case["references"], "alpha": weights["alpha"], "beta": weights["beta"],
            "gamma": weights["gamma"], "threshold": 0,
        });
        let verdict = project.check("meteor", &case["hypothesis"], &expected);
        let want = number(&case["score"]);
        let got = verdict["score"].as_f64().unwrap_or(f64::NAN);
        assert!((got - want).abs() < 1e-12, "{}: meteor {got}, nltk {want}: {verdict}", case["name"]);
    }
}

#[test]
fn bleu_and_levenshtein_match_their_references() {
    let project = Project::new(&["bleu", "levenshtein"], "");
    // sacrebleu 2.6.0 `sentence_bleu` (plugins/bleu/reference/bleu_reference.py).
    let verdict = project.check("bleu", &json!("The cat sat on the mat."), &json!("The cat is on the mat."));
    assert!((verdict["score"].as_f64().unwrap() - 48.892302243490086 / 100.0).abs() < 1e-11, "{verdict}");
    assert_eq!(verdict["outcome"], "fail", "below the default threshold of 0.5: {verdict}");
    assert_eq!(verdict["extras"]["counts"], json!([6, 4, 2, 1]));
    let verdict = project.check(
        "bleu",
        &json!("It is a guide to action which ensures that the military always obeys the commands of the party."),
        &json!({ "references": [
            "It is a guide to action that ensures that the military will forever heed Party commands.",
            "It is the guiding principle which guarantees the military forces always being under the command of the Party.",
            "It is the practical guide for the army always to heed the directions of the party."
        ] }),
    );
    assert!((verdict["score"].as_f64().unwrap() - 54.017258985951415 / 100.0).abs() < 1e-11, "{verdict}");
    assert_eq!(verdict["outcome"], "pass");
    // rapidfuzz 3.14.6 (plugins/levenshtein/reference/levenshtein_reference.py).
    let verdict = project.check("levenshtein", &json!("sitting"), &json!("kitten"));
    assert_eq!(verdict["extras"]["distance"], 3);
    assert!((verdict["score"].as_f64().unwrap() - 0.5714285714285714).abs() < 1e-15, "{verdict}");
    let verdict = project.check(
        "levenshtein",
        &json!("The Beatles came from Liverpool."),
        &json!({ "reference": "The Beatles were from Liverpool", "max_distance": 4 }),
    );
    assert_eq!((verdict["outcome"].as_str(), verdict["score"].as_f64()), (Some("pass"), Some(0.875)), "{verdict}");
    let verdict = project.check("not_levenshtein", &json!("abc"), &json!({ "reference": "abd", "threshold": 0.9 }));
    assert_eq!(verdict["outcome"], "pass", "0.67 is below 0.9, negated: {verdict}");
}

#[test]
fn table_equivalence_allows_permuted_and_renamed_columns() {
    let project = Project::new(&["table-equivalence"], "");
    let actual = json!([{ "n": 3, "name": "b" }, { "n": 1.0000001, "name": "a" }]);
    let expected = json!({ "rows": [{ "name": "a", "count": 1 }, { "name": "b", "count": 3 }] });
    let verdict = project.check("table_equivalence", &actual, &expected);
    assert_eq!((verdict["outcome"].as_str(), verdict["score"].as_f64()), (Some("pass"), Some(1.0)), "{verdict}");
    // One of two rows differs: half the rows match.
    let actual = json!([{ "n": 3, "name": "b" }, { "n": 2, "name": "a" }]);
    let verdict = project.check("table_equivalence", &actual, &expected);
    assert_eq!((verdict["outcome"].as_str(), verdict["score"].as_f64()), (Some("fail"), Some(0.5)), "{verdict}");
}

/// The test embeddings server's rule: a 6-dimensional vector of character
/// counts by code point modulo 6, plus one.
fn embed(text: &str) -> Vec<f64> {
    let mut vector = vec![1.0; 6];
    for c in text.chars() {
        vector[c as usize % 6] += 1.0;
    }
    vector
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

fn embeddings_server() -> FakeServer {
    FakeServer::start(|request| {
        let data: Vec<Value> = request.body["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, text)| json!({ "index": i, "embedding": embed(text.as_str().unwrap()) }))
            .collect();
        let body = json!({ "data": data }).to_string();
        Reply::Raw(
            format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
                .into_bytes(),
        )
    })
}

#[test]
fn similarity_and_bertscore_ask_the_embeddings_backend() {
    let server = embeddings_server();
    let extra = format!("[embeddings]\nurl = \"{}/v1\"\nmodel = \"m\"\n", server.url());
    let project = Project::new(&["similarity"], &extra);
    let (response, reference) = ("The Beatles were from Liverpool", "the band came from liverpool");
    let verdict = project.check("similarity", &json!(response), &json!({ "reference": reference, "threshold": 0.5 }));
    let want = cosine(&embed(response), &embed(reference));
    assert!((verdict["score"].as_f64().unwrap() - want).abs() < 1e-6, "{verdict}, want {want}");
    assert_eq!(verdict["outcome"], "pass");
    let request = server.requests.lock().unwrap()[0].clone();
    assert_eq!(request.request_line, "POST /v1/embeddings HTTP/1.1");
    assert_eq!(request.body["input"], json!([response, reference]));

    // BERTScore with word vectors: greedy matching of each word's vector.
    let verdict =
        project.check("bertscore", &json!("red fish"), &json!({ "reference": "blue fish", "threshold": 0.1 }));
    assert_eq!(verdict["extras"]["mode"], "tokens", "{verdict}");
    let (candidate, reference) = (["red", "fish"], ["blue", "fish"]);
    let best =
        |word: &str, others: &[&str]| others.iter().map(|o| cosine(&embed(word), &embed(o))).fold(f64::MIN, f64::max);
    let precision = candidate.iter().map(|w| best(w, &reference)).sum::<f64>() / 2.0;
    let recall = reference.iter().map(|w| best(w, &candidate)).sum::<f64>() / 2.0;
    let f1 = 2.0 * precision * recall / (precision + recall);
    assert!((verdict["score"].as_f64().unwrap() - f1).abs() < 1e-6, "{verdict}, want {f1}");

    // Both again: every vector comes from the cache.
    let sent = server.requests.lock().unwrap().len();
    project.check("similarity", &json!(response), &json!({ "reference": reference, "threshold": 0.5 }));
    project.check("bertscore", &json!("red fish"), &json!({ "reference": "blue fish", "threshold": 0.1 }));
    assert_eq!(server.requests.lock().unwrap().len(), sent);
}

#[test]
fn similarity_without_a_backend_is_an_error() {
    // The plugin hears the host's `not-configured` (assay:plugin@0.2.0) and
    // says how to configure a backend; bertscore does not fall back.
    let project = Project::new(&["similarity"], "");
    for key in ["similarity", "bertscore"] {
        let verdict = project.check(key, &json!("a"), &json!("b"));
        assert_eq!(verdict["outcome"], "error", "{verdict}");
        assert_eq!(verdict["message"], format!("{key} needs an embeddings backend: set [embeddings] in assay.toml"));
    }
}

#[test]
fn a_python_matcher_runs_with_nothing_granted() {
    let project = Project::new(&["readability"], "");
    let verdict = project.check("readability", &json!("The cat sat on the mat."), &json!(60));
    assert_eq!(verdict["outcome"], "pass", "{verdict}");
    assert!(verdict["message"].as_str().unwrap().starts_with("Flesch reading ease 116.15"), "{verdict}");
    let verdict = project.check("readability", &json!(42), &json!(60));
    assert_eq!(verdict["outcome"], "error", "{verdict}");
}

#[test]
fn metric_keys_work_on_every_target_and_negated() {
    let case = json!({
        "agent": "echo",
        "interactions": [{
            "text": "The Beatles were from Liverpool",
            "sly_data": { "summary": "The Beatles came from Liverpool", "table": [{ "n": 1 }] },
            "response": {
                "text": {
                    "rouge": { "reference": "The Beatles came from Liverpool", "types": ["rouge1", "rougeL"], "threshold": 0.5 },
                    "not_levenshtein": { "reference": "Something else entirely", "threshold": 0.8 }
                },
                "sly_data": {
                    "summary": { "bleu": { "reference": "The Beatles came from Liverpool", "threshold": 0.2 } },
                    "table": { "table_equivalence": { "rows": [{ "count": 1 }] } }
                }
            }
        }]
    });
    let project = Project::new(&["rouge", "levenshtein", "bleu", "table-equivalence"], "");
    let (output, lines) = project.run(&[("metrics.hocon", case.to_string())]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let results = checks(&lines);
    let keys: Vec<(&str, &str, &str)> = results
        .iter()
        .map(|c| (c["target"].as_str().unwrap(), c["key"].as_str().unwrap(), c["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            ("text", "rouge", "pass"),
            ("text", "not_levenshtein", "pass"),
            ("sly_data.summary", "bleu", "pass"),
            ("sly_data.table", "table_equivalence", "pass"),
        ]
    );
    // rouge-score gives rouge1 F = rougeL F = 0.8 for these two sentences.
    let f = results[0]["extras"]["rouge1"]["fmeasure"].as_f64().unwrap();
    assert!((f - 0.8).abs() < 1e-12, "{f}");
}

#[test]
fn a_key_whose_plugin_is_not_configured_is_an_unknown_key_with_a_hint() {
    let case = r#"{ "agent": "echo", "interactions": [ { "text": "x",
        "response": { "text": { "rouge": { "reference": "x" } } } } ] }"#;
    // Every metric plugin but rouge.
    let project = Project::new(&["meteor", "bleu", "levenshtein", "table-equivalence"], "");
    let (output, lines) = project.run(&[("r.hocon", case.to_owned())]);
    assert_eq!(output.status.code(), Some(1));
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("unknown matcher key `rouge` at `interactions[0].response.text.rouge`"), "{message}");
    assert!(
        message.contains("Consider adding the first-party plugin that provides it to assay.toml:\n  [plugins.rouge]\n  path = \"plugins/rouge/rouge.wasm\""),
        "{message}"
    );
}
