//! Tests with a fake embeddings backend whose vectors are small integers, so
//! that every number can be checked by hand.

use super::*;
use assay_plugin_sdk::Capability;
use assay_plugin_sdk::embeddings::{NativeEmbeddings, TokenVectors, Vectors, set_native};
use serde_json::json;

/// A word's vector: a hand-picked table (4 dimensions).
fn word(w: &str) -> Vec<f32> {
    match w {
        "the" => vec![0.0, 0.0, 1.0, 0.0],
        "cat" => vec![1.0, 0.0, 0.0, 0.0],
        "dog" => vec![3.0, 4.0, 0.0, 0.0],
        "sat" => vec![0.0, 1.0, 0.0, 0.0],
        "anti" => vec![-1.0, 0.0, 0.0, 0.0],
        "nothing" => vec![0.0; 4],
        "wide" => vec![1.0; 5],
        other => panic!("the fake backend has no vector for {other:?}"),
    }
}

/// Bag-of-words embeddings: a text's tokens are its words, its sentence
/// vector their sum. `tokens: false` plays a backend with sentence vectors
/// only.
struct Fake {
    tokens: bool,
}

fn tokens(text: &str) -> Vec<Vec<f32>> {
    text.split_whitespace().map(word).collect()
}

impl NativeEmbeddings for Fake {
    fn embed(&self, texts: &[String]) -> Result<Vectors, CapabilityError> {
        assert_eq!(texts.len(), 2, "one call for the response and the reference");
        Ok(texts
            .iter()
            .map(|t| {
                tokens(t).into_iter().fold(vec![0.0; 4], |mut sum, v| {
                    sum.resize(v.len().max(sum.len()), 0.0);
                    sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
                    sum
                })
            })
            .collect())
    }

    fn embed_tokens(&self, texts: &[String]) -> Result<TokenVectors, CapabilityError> {
        if !self.tokens {
            return Err(CapabilityError::Failed("the backend `minilm` produces sentence vectors only".to_owned()));
        }
        Ok(texts.iter().map(|t| tokens(t)).collect())
    }
}

/// A backend that fails, or answers with the wrong number of vectors.
struct Broken;

impl NativeEmbeddings for Broken {
    fn embed(&self, _texts: &[String]) -> Result<Vectors, CapabilityError> {
        Ok(vec![vec![1.0]])
    }

    fn embed_tokens(&self, _texts: &[String]) -> Result<TokenVectors, CapabilityError> {
        Err(CapabilityError::Failed("timeout".to_owned()))
    }
}

/// A backend that is not there: the host's `not-configured`, or a failure
/// worded like it.
struct Missing {
    error: CapabilityError,
}

impl NativeEmbeddings for Missing {
    fn embed(&self, _texts: &[String]) -> Result<Vectors, CapabilityError> {
        Err(self.error.clone())
    }

    fn embed_tokens(&self, _texts: &[String]) -> Result<TokenVectors, CapabilityError> {
        Err(self.error.clone())
    }
}

fn run(key: &str, actual: &str, expected: Json, tokens: bool) -> Result<Verdict, String> {
    set_native(Box::new(Fake { tokens }));
    Similarity::evaluate(key, &Actual::text(actual), &expected)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn cosine_by_hand() {
    // [1,0,0,0]·[3,4,0,0] = 3 over 1·5.
    assert!(close(cosine(&word("cat"), &word("dog")).unwrap(), 0.6));
    assert!(close(cosine(&word("cat"), &word("anti")).unwrap(), -1.0));
    assert!(close(cosine(&word("cat"), &word("the")).unwrap(), 0.0));
    assert_eq!(cosine(&word("cat"), &word("nothing")).unwrap_err(), "a zero vector, for which the cosine is undefined");
    assert_eq!(cosine(&word("cat"), &word("wide")).unwrap_err(), "vectors of different dimensions (4 and 5)");
}

/// "the cat" sums to [1,0,1,0], "the dog" to [3,4,1,0]: the dot product is
/// 4, the norms √2 and √26, the cosine 4/√52 = 0.5547001962.
#[test]
fn similarity_is_the_sentence_cosine() {
    let v = run("similarity", "the cat", json!("the dog"), true).unwrap();
    let expected = 4.0 / 52f64.sqrt();
    assert!(close(v.score.unwrap(), expected));
    assert!(close(expected, 0.5547001962252291));
    assert!(!v.pass);
    assert_eq!(
        v.message,
        "cosine similarity 0.55 between the embeddings of the response and the reference; threshold 0.8"
    );
    assert_eq!(v.extras.as_ref().unwrap()["threshold"], json!(0.8));

    let v = run("similarity", "the cat", json!({"reference": "the dog", "threshold": 0.5}), true).unwrap();
    assert!(v.pass);
    let v = run("similarity", "the cat", json!({"reference": "the dog", "min": 0.56}), true).unwrap();
    assert!(!v.pass);
    // Word order does not change a bag of words.
    let v = run("similarity", "the cat", json!("cat the"), true).unwrap();
    assert!(v.pass);
    assert!(close(v.score.unwrap(), 1.0));
}

#[test]
fn negative_cosines_score_zero() {
    let v = run("similarity", "anti", json!({"reference": "cat", "threshold": 0.1}), true).unwrap();
    assert!(!v.pass);
    assert_eq!(v.score, Some(0.0));
    assert_eq!(v.extras.unwrap()["cosine"], json!(-1.0));
}

/// Candidate [the, cat, sat], reference [the, dog]. Cosines: the·the 1,
/// cat·dog 3/5, sat·dog 4/5, every other pair 0.
/// Precision = (1 + 0.6 + 0.8) / 3 = 0.8; recall = (1 + 0.8) / 2 = 0.9;
/// F1 = 2 · 0.8 · 0.9 / 1.7 = 0.8470588235.
#[test]
fn bertscore_by_hand() {
    let v = run("bertscore", "the cat sat", json!("the dog"), true).unwrap();
    let x = v.extras.clone().unwrap();
    assert!(close(x["precision"].as_f64().unwrap(), 0.8));
    assert!(close(x["recall"].as_f64().unwrap(), 0.9));
    assert!(close(x["f1"].as_f64().unwrap(), 1.44 / 1.7));
    assert!(close(v.score.unwrap(), 0.8470588235294118));
    assert!(v.pass);
    assert_eq!(x["mode"], json!("tokens"));
    assert_eq!(x["response_tokens"], json!(3));
    assert_eq!(x["reference_tokens"], json!(2));
    assert_eq!(
        v.message,
        "BERTScore F1 0.85 (precision 0.8, recall 0.9; response 3 tokens, reference 2 tokens); threshold 0.8"
    );

    let v = run("bertscore", "the cat sat", json!({"reference": "the dog", "measure": "precision"}), true).unwrap();
    assert!(close(v.score.unwrap(), 0.8));
    assert!(v.message.starts_with("BERTScore precision 0.8 (recall 0.9, F1 0.85;"), "{}", v.message);
    let v =
        run("bertscore", "the cat sat", json!({"reference": "the dog", "measure": "recall", "threshold": 0.95}), true)
            .unwrap();
    assert!(close(v.score.unwrap(), 0.9));
    assert!(!v.pass);
    assert!(v.message.starts_with("BERTScore recall 0.9 (precision 0.8, F1 0.85;"), "{}", v.message);
}

#[test]
fn bert_score_core() {
    let candidate = vec![word("the"), word("cat"), word("sat")];
    let reference = vec![word("the"), word("dog")];
    let s = bert_score(&candidate, &reference).unwrap();
    assert!(close(s.precision, 0.8) && close(s.recall, 0.9));
    // Swapping the sides swaps precision and recall.
    let t = bert_score(&reference, &candidate).unwrap();
    assert!(close(t.precision, 0.9) && close(t.recall, 0.8) && close(t.f1, s.f1));
    // No tokens on either side: all zero, as in the bert_score package.
    assert_eq!(bert_score(&[], &reference).unwrap(), BertScore { precision: 0.0, recall: 0.0, f1: 0.0 });
    assert_eq!(bert_score(&candidate, &[]).unwrap().f1, 0.0);
    // Opposite tokens: precision = recall = -1, F1 = -1 (the score clamps it).
    let s = bert_score(&[word("anti")], &[word("cat")]).unwrap();
    assert!(close(s.f1, -1.0));
}

#[test]
fn without_token_vectors_bertscore_uses_the_sentence_cosine() {
    let v = run("bertscore", "the cat", json!({"reference": "the dog", "threshold": 0.5}), false).unwrap();
    assert!(v.pass);
    assert!(close(v.score.unwrap(), 4.0 / 52f64.sqrt()));
    assert_eq!(
        v.message,
        "sentence cosine similarity 0.55 in place of BERTScore, as the embeddings backend has no token vectors \
         (the backend `minilm` produces sentence vectors only); threshold 0.5"
    );
    let x = v.extras.unwrap();
    assert_eq!(x["mode"], json!("sentence"));
    assert_eq!(x["token_error"], json!("the backend `minilm` produces sentence vectors only"));
    assert_eq!(x["measure"], json!("f1"));
}

#[test]
fn zero_vectors_are_errors() {
    assert_eq!(
        run("similarity", "nothing", json!("the cat"), true).unwrap_err(),
        "similarity: the response and the reference have a zero vector, for which the cosine is undefined"
    );
    assert_eq!(
        run("bertscore", "the nothing", json!("cat"), true).unwrap_err(),
        "bertscore: response token 2 and reference token 1 have a zero vector, for which the cosine is undefined"
    );
    assert_eq!(
        run("bertscore", "cat", json!("wide"), true).unwrap_err(),
        "bertscore: response token 1 and reference token 1 have vectors of different dimensions (4 and 5)"
    );
}

#[test]
fn backend_failures_are_errors() {
    set_native(Box::new(Broken));
    assert_eq!(
        Similarity::evaluate("similarity", &Actual::text("a"), &json!("b")).unwrap_err(),
        "the embeddings backend returned 1 vectors for 2 texts"
    );
    assert_eq!(
        Similarity::evaluate("bertscore", &Actual::text("a"), &json!("b")).unwrap_err(),
        "bertscore has no token vectors (timeout) and no sentence vectors either: \
         the embeddings backend returned 1 vectors for 2 texts"
    );
}

#[test]
fn without_a_backend_both_keys_say_how_to_configure_one_and_decide_by_the_kind() {
    set_native(Box::new(Missing { error: CapabilityError::NotConfigured(Capability::Embeddings) }));
    for key in ["similarity", "bertscore"] {
        assert_eq!(
            Similarity::evaluate(key, &Actual::text("a"), &json!("b")).unwrap_err(),
            format!("{key} needs an embeddings backend: set [embeddings] in assay.toml")
        );
    }
    // A failure worded like a missing backend is a failure.
    let worded = "no embeddings backend is configured: set [embeddings] in assay.toml";
    set_native(Box::new(Missing { error: CapabilityError::Failed(worded.into()) }));
    assert_eq!(
        Similarity::evaluate("similarity", &Actual::text("a"), &json!("b")).unwrap_err(),
        format!("similarity could not get embeddings: {worded}")
    );
}

#[test]
fn bad_parameters_are_errors() {
    let rows = [
        (
            "similarity",
            json!({"reference": "cat", "measure": "f1"}),
            "similarity has no parameter `measure` (its parameters: reference, threshold, min)",
        ),
        (
            "bertscore",
            json!({"reference": "cat", "idf": true}),
            "bertscore has no parameter `idf` (its parameters: reference, threshold, min, measure)",
        ),
        (
            "bertscore",
            json!({"reference": "cat", "measure": "F2"}),
            "bertscore has no measure \"F2\" (its measures: precision, recall, f1)",
        ),
        ("similarity", json!({"threshold": 0.5}), "similarity needs the parameter `reference` (a string)"),
        (
            "similarity",
            json!(0.5),
            "similarity needs a string or an object of parameters (reference, threshold, min), found the number 0.5",
        ),
        (
            "similarity",
            json!({"reference": "cat", "threshold": -0.1}),
            "similarity needs `threshold` to be a number between 0 and 1, found the number -0.1",
        ),
        (
            "bertscore",
            json!({"reference": "cat", "measure": 1}),
            "bertscore needs `measure` to be a string, found the number 1",
        ),
    ];
    for (key, expected, message) in rows {
        assert_eq!(run(key, "cat", expected.clone(), true).unwrap_err(), message, "{key} {expected}");
    }
    set_native(Box::new(Fake { tokens: true }));
    assert_eq!(
        Similarity::evaluate("similarity", &Actual::value(json!(3)), &json!("3")).unwrap_err(),
        "similarity compares strings, found the number 3"
    );
    assert_eq!(
        Similarity::evaluate("rouge", &Actual::text("a"), &json!("a")).unwrap_err(),
        "the similarity plugin has no matcher `rouge`"
    );
    let keys: Vec<String> = Similarity::describe().matchers.into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["similarity", "bertscore"]);
}
