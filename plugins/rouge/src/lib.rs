//! `rouge`: ROUGE of the response against a reference, numerically identical
//! to Google's `rouge-score` package (0.1.2): its default tokenizer
//! (lowercase, `[a-z0-9]+` runs, optional Porter stemming of tokens longer
//! than 3 characters), ROUGE-N for n in 1..=9, ROUGE-L and ROUGE-Lsum. In
//! rouge-score's `score(target, prediction)`, the target is the test's
//! reference and the prediction is the agent's response.
//!
//! The score of a check is the mean F-measure of the requested types; the
//! check passes when it is at least the threshold. See this crate's
//! `README.md` for every parameter and its default, and
//! `reference/rouge_reference.py` for the rouge-score numbers the tests
//! check.
//!
//! The scoring itself is a plain native API ([`rouge_scores`],
//! [`RougeTexts`]) that hosts and benchmarks can call directly.

#![warn(missing_docs)]

mod score;

use assay_plugin_sdk::params::{self, Params, show_score};
use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use serde_json::{Map, json};

pub use score::{ROUGE_TYPE_NAMES, RougeTexts, RougeType, Score, rouge_scores, tokenize};

/// The mean F-measure a check needs when no `threshold` is given.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// The types scored when no `types` are given.
pub const DEFAULT_TYPES: [RougeType; 3] = [RougeType::N(1), RougeType::N(2), RougeType::L];

/// Whether tokens are stemmed when `use_stemmer` is not given
/// (rouge-score's default).
pub const DEFAULT_USE_STEMMER: bool = false;

/// The parameters the object form of the expected value accepts.
const PARAMETERS: &[&str] = &["reference", "types", "use_stemmer", "threshold", "min"];

/// The type names, for messages.
const KNOWN_TYPES: &str = "its types: rouge1 … rouge9, rougeL, rougeLsum";

/// The rouge matcher.
pub struct Rouge;

impl Matcher for Rouge {
    fn describe() -> PluginInfo {
        PluginInfo::new("rouge", env!("CARGO_PKG_VERSION")).matcher(
            "rouge",
            "mean ROUGE F-measure (rouge1, rouge2, rougeL by default) of the text against a reference, as rouge-score computes it",
        )
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        if key != "rouge" {
            return Err(format!("the rouge plugin has no matcher `{key}`"));
        }
        let response = actual.as_str().ok_or_else(|| format!("rouge scores a string, found {}", actual.describe()))?;
        let params = Params::parse("rouge", expected, "reference", PARAMETERS)?;
        let reference = params.required_string("reference")?;
        let types = types(&params)?;
        let use_stemmer = params.bool("use_stemmer")?.unwrap_or(DEFAULT_USE_STEMMER);
        let threshold = params.threshold()?.unwrap_or(DEFAULT_THRESHOLD);
        let texts = RougeTexts::new(reference, response, use_stemmer);
        let scores: Vec<(RougeType, Score)> = types.iter().map(|&t| (t, texts.score(t))).collect();
        Ok(verdict(&texts, &scores, use_stemmer, threshold))
    }
}

export_matcher!(Rouge);

/// `types`: a non-empty list of type names, duplicates dropped, in order.
fn types(params: &Params) -> Result<Vec<RougeType>, String> {
    let Some(value) = params.get("types") else {
        return Ok(DEFAULT_TYPES.to_vec());
    };
    let list = match value {
        Json::Array(list) if !list.is_empty() => list,
        other => {
            return Err(format!(
                "rouge needs `types` to be a non-empty list of type names ({}), found {}",
                KNOWN_TYPES,
                params::describe(other)
            ));
        }
    };
    let mut types = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let Some(name) = item.as_str() else {
            return Err(format!(
                "rouge needs `types` to be a list of type names, element {i} is {}",
                params::describe(item)
            ));
        };
        let rouge_type =
            RougeType::parse(name).ok_or_else(|| format!("rouge has no type {name:?} ({})", KNOWN_TYPES))?;
        if !types.contains(&rouge_type) {
            types.push(rouge_type);
        }
    }
    Ok(types)
}

/// The verdict: the mean F-measure against the threshold, every type's
/// precision, recall and F-measure in the extras.
fn verdict(texts: &RougeTexts, scores: &[(RougeType, Score)], use_stemmer: bool, threshold: f64) -> Verdict {
    let mean = scores.iter().map(|(_, s)| s.fmeasure).sum::<f64>() / scores.len() as f64;
    let each: Vec<String> = scores.iter().map(|(t, s)| format!("{t} {}", show_score(s.fmeasure, None))).collect();
    let stemmed = if use_stemmer { ", stemmed" } else { "" };
    let message = format!(
        "ROUGE mean F {} ({}) for {} against {}{stemmed}; threshold {threshold}",
        show_score(mean, Some(threshold)),
        each.join(", "),
        count(texts.candidate_tokens(), "response token"),
        count(texts.reference_tokens(), "reference token"),
    );
    let extras: Map<String, Json> = scores
        .iter()
        .map(|(t, s)| {
            (t.name().to_owned(), json!({"precision": s.precision, "recall": s.recall, "fmeasure": s.fmeasure}))
        })
        .collect();
    Verdict::new(mean >= threshold, message).with_score(mean).with_extras(Json::Object(extras))
}

/// `1 response token`, `2 response tokens`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

#[cfg(test)]
mod tests;
