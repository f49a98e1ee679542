//! `levenshtein`: how close the response is to a reference text, by edit
//! distance over Unicode characters (code points, not bytes).
//!
//! The score is the normalized similarity `1 − d / max(len_a, len_b)`, where
//! `d` is the Levenshtein distance (insertions, deletions and substitutions
//! of one character each cost 1) and the lengths count characters; two empty
//! strings have similarity 1. The check passes when the similarity reaches
//! `threshold` (alias `min`, default [`DEFAULT_THRESHOLD`]), or, when
//! `max_distance` is given instead, when the distance is at most
//! `max_distance` (promptfoo's `levenshtein` semantics). Giving both is an
//! error. See this crate's `README.md` for every parameter.

use assay_plugin_sdk::params::{Params, show_score};
use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use serde_json::json;

/// The similarity a check needs when neither `threshold` nor `max_distance`
/// is given.
pub const DEFAULT_THRESHOLD: f64 = 0.8;

/// The parameters the object form of the expected value accepts.
const PARAMETERS: &[&str] = &["reference", "threshold", "min", "max_distance", "case_sensitive"];

/// The levenshtein matcher.
pub struct Levenshtein;

impl Matcher for Levenshtein {
    fn describe() -> PluginInfo {
        PluginInfo::new("levenshtein", env!("CARGO_PKG_VERSION")).matcher(
            "levenshtein",
            "normalized Levenshtein similarity of the text to a reference, over Unicode characters",
        )
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        if key != "levenshtein" {
            return Err(format!("the levenshtein plugin has no matcher `{key}`"));
        }
        let text =
            actual.as_str().ok_or_else(|| format!("levenshtein compares strings, found {}", actual.describe()))?;
        let params = Params::parse("levenshtein", expected, "reference", PARAMETERS)?;
        let reference = params.required_string("reference")?;
        let case_sensitive = params.bool("case_sensitive")?.unwrap_or(true);
        let threshold = params.threshold()?;
        let max_distance = params.count("max_distance")?;
        let criterion = match (threshold, max_distance) {
            (Some(_), Some(_)) => {
                return Err("levenshtein takes either a similarity threshold (threshold or min) or max_distance, \
                            but both were given"
                    .to_owned());
            }
            (_, Some(max)) => Criterion::MaxDistance(max),
            (threshold, None) => Criterion::Threshold(threshold.unwrap_or(DEFAULT_THRESHOLD)),
        };
        Ok(verdict(&compare(text, reference, case_sensitive), criterion, case_sensitive))
    }
}

export_matcher!(Levenshtein);

/// What decides whether a check passes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Criterion {
    /// The similarity is at least this.
    Threshold(f64),
    /// The distance is at most this.
    MaxDistance(u64),
}

/// The outcome of comparing two texts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// The Levenshtein distance in characters.
    pub distance: usize,
    /// The first text's length in characters (after case folding, if any).
    pub len_a: usize,
    /// The second text's length in characters (after case folding, if any).
    pub len_b: usize,
    /// `1 − distance / max(len_a, len_b)`, and 1 for two empty texts.
    pub similarity: f64,
}

/// Compares two texts: the distance, the lengths and the normalized
/// similarity. With `case_sensitive` false both texts are lowercased first
/// (Unicode full lowercasing, which may change a text's length, e.g. `İ`
/// becomes two characters).
pub fn compare(a: &str, b: &str, case_sensitive: bool) -> Comparison {
    let (a, b): (Vec<char>, Vec<char>) = if case_sensitive {
        (a.chars().collect(), b.chars().collect())
    } else {
        (a.to_lowercase().chars().collect(), b.to_lowercase().chars().collect())
    };
    let distance = distance_chars(&a, &b);
    let longest = a.len().max(b.len());
    let similarity = if longest == 0 { 1.0 } else { 1.0 - distance as f64 / longest as f64 };
    Comparison { distance, len_a: a.len(), len_b: b.len(), similarity }
}

/// The Levenshtein distance between two strings, counted in Unicode
/// characters (code points): the fewest single-character insertions,
/// deletions and substitutions that turn one into the other.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    distance_chars(&a, &b)
}

/// The Levenshtein distance between two character sequences, in O(n·m) time
/// and O(min(n, m)) memory beyond the inputs. A common prefix and suffix are
/// skipped first, as they never change the distance.
pub fn distance_chars(a: &[char], b: &[char]) -> usize {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    // One row over the shorter text; the longer one is walked.
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.len();
    }
    let mut row: Vec<usize> = (0..=short.len()).collect();
    for (i, &c) in long.iter().enumerate() {
        // `diagonal` is the previous row's value one column to the left.
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &s) in short.iter().enumerate() {
            let above = row[j + 1];
            let substitute = diagonal + usize::from(c != s);
            row[j + 1] = substitute.min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[short.len()]
}

/// The verdict for a comparison under a criterion.
fn verdict(comparison: &Comparison, criterion: Criterion, case_sensitive: bool) -> Verdict {
    let Comparison { distance, len_a, len_b, similarity } = *comparison;
    let longest = len_a.max(len_b);
    let characters = if longest == 1 { "character" } else { "characters" };
    let case = if case_sensitive { "" } else { ", ignoring case" };
    let mut extras = json!({
        "similarity": similarity,
        "distance": distance,
        "actual_length": len_a,
        "reference_length": len_b,
        "case_sensitive": case_sensitive,
    });
    let (pass, message) = match criterion {
        Criterion::Threshold(threshold) => {
            extras["threshold"] = json!(threshold);
            let shown = show_score(similarity, Some(threshold));
            (
                similarity >= threshold,
                format!(
                    "Levenshtein similarity {shown} (distance {distance} over {longest} {characters}{case}); \
                     threshold {threshold}"
                ),
            )
        }
        Criterion::MaxDistance(max) => {
            extras["max_distance"] = json!(max);
            let shown = show_score(similarity, None);
            (
                distance as u64 <= max,
                format!(
                    "Levenshtein distance {distance} over {longest} {characters}{case} (similarity {shown}); \
                     max_distance {max}"
                ),
            )
        }
    };
    Verdict::new(pass, message).with_score(similarity).with_extras(extras)
}

#[cfg(test)]
mod tests;
