//! `similarity` and `bertscore`: semantic closeness of the response to a
//! reference, from the embeddings backend the user configured (the
//! `embeddings` capability, which needs `grants = ["embeddings"]`).
//!
//! - `similarity`: the cosine similarity of the two sentence vectors.
//! - `bertscore`: BERTScore's greedy matching (Zhang et al., 2020) over
//!   token vectors: precision is the mean, over the response's tokens, of
//!   the best cosine to any reference token; recall the converse; F1 their
//!   harmonic mean. No idf weighting and no baseline rescaling. When the
//!   backend has no token vectors, it falls back to the sentence cosine and
//!   says so (`"mode": "sentence"` in the extras).
//!
//! Without an embeddings backend (the host's `not-configured`) both keys
//! are errors saying how to configure one; `bertscore` does not fall back.
//!
//! Cosines lie in [-1, 1]; the score is the value clamped to [0, 1], and the
//! raw value is in the extras. See this crate's `README.md`.

use assay_plugin_sdk::params::{Params, show_score};
use assay_plugin_sdk::{Actual, CapabilityError, Json, Matcher, PluginInfo, Verdict, embeddings, export_matcher};
use serde_json::json;

/// The cosine a `similarity` check needs when no `threshold` is given.
pub const DEFAULT_SIMILARITY_THRESHOLD: f64 = 0.8;

/// The BERTScore a `bertscore` check needs when no `threshold` is given.
pub const DEFAULT_BERTSCORE_THRESHOLD: f64 = 0.8;

/// The parameters of `similarity`.
const SIMILARITY_PARAMETERS: &[&str] = &["reference", "threshold", "min"];

/// The parameters of `bertscore`.
const BERTSCORE_PARAMETERS: &[&str] = &["reference", "threshold", "min", "measure"];

/// The cosine similarity of two vectors, computed in f64; an error when
/// their lengths differ or either is a zero vector (the cosine is then
/// undefined).
pub fn cosine(a: &[f32], b: &[f32]) -> Result<f64, String> {
    if a.len() != b.len() {
        return Err(format!("vectors of different dimensions ({} and {})", a.len(), b.len()));
    }
    let (mut dot, mut norm_a, mut norm_b) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    if norm_a == 0.0 || norm_b == 0.0 {
        return Err("a zero vector, for which the cosine is undefined".to_owned());
    }
    if !(dot.is_finite() && norm_a.is_finite() && norm_b.is_finite()) {
        return Err("a vector with a non-finite component".to_owned());
    }
    Ok((dot / (norm_a.sqrt() * norm_b.sqrt())).clamp(-1.0, 1.0))
}

/// BERTScore's three measures, unweighted and unrescaled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BertScore {
    /// Mean over candidate tokens of the best cosine to a reference token.
    pub precision: f64,
    /// Mean over reference tokens of the best cosine to a candidate token.
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
}

/// BERTScore by greedy matching of token vectors. When either side has no
/// tokens all three measures are 0, as in the `bert_score` package. Token
/// vectors must share one dimension and none may be zero.
pub fn bert_score(candidate: &[Vec<f32>], reference: &[Vec<f32>]) -> Result<BertScore, String> {
    if candidate.is_empty() || reference.is_empty() {
        return Ok(BertScore { precision: 0.0, recall: 0.0, f1: 0.0 });
    }
    // best_for_reference[j]: the best cosine of reference token j so far.
    let mut best_for_reference = vec![f64::NEG_INFINITY; reference.len()];
    let mut precision_sum = 0.0;
    for (i, c) in candidate.iter().enumerate() {
        let mut best = f64::NEG_INFINITY;
        for (j, r) in reference.iter().enumerate() {
            let similarity =
                cosine(c, r).map_err(|e| format!("response token {} and reference token {} have {e}", i + 1, j + 1))?;
            best = best.max(similarity);
            best_for_reference[j] = best_for_reference[j].max(similarity);
        }
        precision_sum += best;
    }
    let precision = precision_sum / candidate.len() as f64;
    let recall = best_for_reference.iter().sum::<f64>() / reference.len() as f64;
    let f1 = if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
    Ok(BertScore { precision, recall, f1 })
}

/// Which BERTScore measure is the score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Precision: how much of the response the reference supports.
    Precision,
    /// Recall: how much of the reference the response covers.
    Recall,
    /// F1, the default.
    F1,
}

impl Measure {
    fn name(self) -> &'static str {
        match self {
            Measure::Precision => "precision",
            Measure::Recall => "recall",
            Measure::F1 => "f1",
        }
    }

    fn of(self, score: &BertScore) -> f64 {
        match self {
            Measure::Precision => score.precision,
            Measure::Recall => score.recall,
            Measure::F1 => score.f1,
        }
    }
}

/// The similarity and bertscore matchers.
pub struct Similarity;

impl Matcher for Similarity {
    fn describe() -> PluginInfo {
        PluginInfo::new("similarity", env!("CARGO_PKG_VERSION"))
            .matcher("similarity", "cosine similarity of the sentence embeddings of the text and a reference")
            .matcher("bertscore", "BERTScore (greedy token matching of embeddings) of the text against a reference")
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        let known = match key {
            "similarity" => SIMILARITY_PARAMETERS,
            "bertscore" => BERTSCORE_PARAMETERS,
            other => return Err(format!("the similarity plugin has no matcher `{other}`")),
        };
        let text = actual.as_str().ok_or_else(|| format!("{key} compares strings, found {}", actual.describe()))?;
        let params = Params::parse(key, expected, "reference", known)?;
        let reference = params.required_string("reference")?;
        let texts = [text.to_owned(), reference.to_owned()];
        if key == "similarity" {
            let threshold = params.threshold()?.unwrap_or(DEFAULT_SIMILARITY_THRESHOLD);
            let cosine = sentence_cosine(key, &texts)?;
            return Ok(similarity_verdict(cosine, threshold));
        }
        let threshold = params.threshold()?.unwrap_or(DEFAULT_BERTSCORE_THRESHOLD);
        let measure = match params.string("measure")? {
            None | Some("f1") => Measure::F1,
            Some("precision") => Measure::Precision,
            Some("recall") => Measure::Recall,
            Some(other) => {
                return Err(format!("bertscore has no measure {other:?} (its measures: precision, recall, f1)"));
            }
        };
        match embeddings::embed_tokens(&texts) {
            Ok(vectors) => {
                let [candidate, reference] = two(vectors, "token vector lists")?;
                let score = bert_score(&candidate, &reference).map_err(|e| format!("bertscore: {e}"))?;
                Ok(bertscore_verdict(&score, measure, threshold, candidate.len(), reference.len()))
            }
            Err(CapabilityError::NotConfigured(_)) => Err(needs_a_backend(key)),
            Err(token_error) => {
                let cosine = sentence_cosine(key, &texts).map_err(|e| {
                    format!("bertscore has no token vectors ({token_error}) and no sentence vectors either: {e}")
                })?;
                Ok(fallback_verdict(cosine, measure, threshold, &token_error.to_string()))
            }
        }
    }
}

export_matcher!(Similarity);

/// The backend's answer for [response, reference], checked to hold two.
fn two<T>(mut items: Vec<T>, what: &str) -> Result<[T; 2], String> {
    if items.len() != 2 {
        return Err(format!("the embeddings backend returned {} {what} for 2 texts", items.len()));
    }
    let second = items.pop().expect("two items");
    let first = items.pop().expect("two items");
    Ok([first, second])
}

/// What `key` says when no embeddings backend is configured.
fn needs_a_backend(key: &str) -> String {
    format!("{key} needs an embeddings backend: set [embeddings] in assay.toml")
}

/// The cosine of the sentence vectors of [response, reference].
fn sentence_cosine(key: &str, texts: &[String; 2]) -> Result<f64, String> {
    let vectors = embeddings::embed(texts).map_err(|error| match error {
        CapabilityError::NotConfigured(_) => needs_a_backend(key),
        other => format!("{key} could not get embeddings: {other}"),
    })?;
    let [response, reference] = two(vectors, "vectors")?;
    cosine(&response, &reference).map_err(|e| format!("{key}: the response and the reference have {e}"))
}

/// A cosine as a score in [0, 1].
fn clamp(value: f64) -> f64 {
    value.clamp(0.0, 1.0)
}

fn similarity_verdict(cosine: f64, threshold: f64) -> Verdict {
    let score = clamp(cosine);
    Verdict::new(
        score >= threshold,
        format!(
            "cosine similarity {} between the embeddings of the response and the reference; threshold {threshold}",
            show_score(cosine, Some(threshold))
        ),
    )
    .with_score(score)
    .with_extras(json!({"cosine": cosine, "threshold": threshold}))
}

fn bertscore_verdict(
    score: &BertScore,
    measure: Measure,
    threshold: f64,
    candidate: usize,
    reference: usize,
) -> Verdict {
    let value = measure.of(score);
    let clamped = clamp(value);
    let tokens = |n: usize| if n == 1 { "1 token".to_owned() } else { format!("{n} tokens") };
    let detail = match measure {
        Measure::F1 => {
            format!("precision {}, recall {}", show_score(score.precision, None), show_score(score.recall, None))
        }
        Measure::Precision => format!("recall {}, F1 {}", show_score(score.recall, None), show_score(score.f1, None)),
        Measure::Recall => {
            format!("precision {}, F1 {}", show_score(score.precision, None), show_score(score.f1, None))
        }
    };
    let label = match measure {
        Measure::F1 => "F1",
        Measure::Precision => "precision",
        Measure::Recall => "recall",
    };
    Verdict::new(
        clamped >= threshold,
        format!(
            "BERTScore {label} {} ({detail}; response {}, reference {}); threshold {threshold}",
            show_score(value, Some(threshold)),
            tokens(candidate),
            tokens(reference),
        ),
    )
    .with_score(clamped)
    .with_extras(json!({
        "mode": "tokens",
        "measure": measure.name(),
        "precision": score.precision,
        "recall": score.recall,
        "f1": score.f1,
        "response_tokens": candidate,
        "reference_tokens": reference,
        "threshold": threshold,
    }))
}

fn fallback_verdict(cosine: f64, measure: Measure, threshold: f64, token_error: &str) -> Verdict {
    let score = clamp(cosine);
    Verdict::new(
        score >= threshold,
        format!(
            "sentence cosine similarity {} in place of BERTScore, as the embeddings backend has no token vectors \
             ({token_error}); threshold {threshold}",
            show_score(cosine, Some(threshold))
        ),
    )
    .with_score(score)
    .with_extras(json!({
        "mode": "sentence",
        "measure": measure.name(),
        "cosine": cosine,
        "token_error": token_error,
        "threshold": threshold,
    }))
}

#[cfg(test)]
mod tests;
