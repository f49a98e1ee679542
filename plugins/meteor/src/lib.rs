//! `meteor`: METEOR of the response against one or more references, as
//! nltk's `nltk.translate.meteor_score.meteor_score` (nltk 3.10) computes
//! it with exact and Porter-stem matching only: there is no WordNet offline,
//! so synonyms never match (nltk with a `wordnet` whose `synsets` finds
//! nothing gives the same numbers). Texts are split on whitespace as
//! Python's `str.split()` does and lowercased as nltk's default `preprocess`
//! (`str.lower`) does; with several references the best score counts.
//!
//! The check passes when the score is at least the threshold. See this
//! crate's `README.md` for every parameter and its default, and
//! `reference/meteor_reference.py` for the nltk numbers the tests check.
//!
//! The scoring itself is a plain native API ([`meteor`],
//! [`single_meteor`]) that hosts and benchmarks can call directly.

#![warn(missing_docs)]

mod score;

use assay_plugin_sdk::params::{self, Params, show_score};
use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use serde_json::json;

pub use score::{Meteor, Weights, align, meteor, single_meteor, tokenize};

/// The METEOR score a check needs when no `threshold` is given.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// The parameters the object form of the expected value accepts.
const PARAMETERS: &[&str] = &["reference", "references", "alpha", "beta", "gamma", "threshold", "min"];

/// The meteor matcher.
pub struct MeteorMatcher;

impl Matcher for MeteorMatcher {
    fn describe() -> PluginInfo {
        PluginInfo::new("meteor", env!("CARGO_PKG_VERSION")).matcher(
            "meteor",
            "METEOR (exact and stem matches) of the text against one or more references, as nltk computes it",
        )
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        if key != "meteor" {
            return Err(format!("the meteor plugin has no matcher `{key}`"));
        }
        let hypothesis =
            actual.as_str().ok_or_else(|| format!("meteor scores a string, found {}", actual.describe()))?;
        let params = Params::parse("meteor", expected, "reference", PARAMETERS)?;
        let references = params.one_or_many("reference", "references")?;
        let defaults = Weights::default();
        let weights = Weights {
            alpha: number(&params, "alpha", defaults.alpha, 0.0, 1.0)?,
            beta: number(&params, "beta", defaults.beta, 0.0, f64::MAX)?,
            gamma: number(&params, "gamma", defaults.gamma, 0.0, 1.0)?,
        };
        let threshold = params.threshold()?.unwrap_or(DEFAULT_THRESHOLD);
        let (best, m) = meteor(&references, hypothesis, weights).ok_or("meteor needs at least one reference")?;
        Ok(verdict(&m, best, references.len(), threshold))
    }
}

export_matcher!(MeteorMatcher);

/// A number parameter in `[low, high]`, or its default.
fn number(params: &Params, name: &str, default: f64, low: f64, high: f64) -> Result<f64, String> {
    let Some(value) = params.get(name) else {
        return Ok(default);
    };
    match value.as_f64() {
        Some(x) if (low..=high).contains(&x) => Ok(x),
        _ if high == f64::MAX => {
            Err(format!("meteor needs `{name}` to be a non-negative number, found {}", params::describe(value)))
        }
        _ => Err(format!(
            "meteor needs `{name}` to be a number between {low} and {high}, found {}",
            params::describe(value)
        )),
    }
}

/// The verdict: the score against the threshold, its parts in the extras.
fn verdict(m: &Meteor, best: usize, reference_count: usize, threshold: f64) -> Verdict {
    let against = if reference_count == 1 {
        count(m.reference_tokens, "reference token")
    } else {
        format!("the best of {reference_count} references (#{}, {})", best + 1, count(m.reference_tokens, "token"))
    };
    let message = format!(
        "METEOR {} (precision {}, recall {}, {} {} in {} {}, fragmentation penalty {}) for {} against \
         {against}; threshold {threshold}",
        show_score(m.score, Some(threshold)),
        show_score(m.precision, None),
        show_score(m.recall, None),
        m.matches,
        if m.matches == 1 { "match" } else { "matches" },
        m.chunks,
        if m.chunks == 1 { "chunk" } else { "chunks" },
        show_score(m.penalty, None),
        count(m.hypothesis_tokens, "response token"),
    );
    let extras = json!({
        "precision": m.precision,
        "recall": m.recall,
        "fmean": m.fmean,
        "penalty": m.penalty,
        "chunks": m.chunks,
        "matches": m.matches,
        "reference_index": best,
    });
    Verdict::new(m.score >= threshold, message).with_score(m.score).with_extras(extras)
}

/// `1 response token`, `2 response tokens`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

#[cfg(test)]
mod tests;
