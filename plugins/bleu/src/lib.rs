//! `bleu`: sentence BLEU of the response against one or more references,
//! computed exactly as `sacrebleu.sentence_bleu` (sacrebleu 2.x) computes it:
//! clipped n-gram precisions up to `max_ngram_order`, the brevity penalty
//! against the closest reference length, sacrebleu's `13a` tokenizer (or
//! `none`), optional lowercasing, the smoothing methods `none`, `floor`,
//! `add-k` and `exp`, and effective order. sacrebleu reports BLEU on a 0–100
//! scale; the score here is that number divided by 100.
//!
//! See this crate's `README.md` for every parameter and its default, and
//! `reference/bleu_reference.py` for the sacrebleu numbers the tests check.

mod tokenize;

use assay_plugin_sdk::params::{self, Params, show_score};
use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use rustc_hash::FxHashMap;
use serde_json::json;

pub use tokenize::{split_whitespace, tokenize_13a};

/// The BLEU score (in [0, 1]) a check needs when no `threshold` is given:
/// promptfoo's default for its `bleu` assertion.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// The highest n-gram order a check may ask for.
pub const MAX_ORDER_LIMIT: usize = 10;

/// The parameters the object form of the expected value accepts.
const PARAMETERS: &[&str] = &[
    "reference",
    "references",
    "threshold",
    "min",
    "max_ngram_order",
    "tokenize",
    "lowercase",
    "smooth_method",
    "smooth_value",
    "effective_order",
];

/// How the text is split into tokens before counting n-grams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokenizer {
    /// sacrebleu's default, `13a` (mteval-v13a): punctuation and symbols
    /// become tokens of their own.
    Mteval13a,
    /// No tokenization: the text is split on whitespace only.
    None,
}

impl Tokenizer {
    /// sacrebleu's name for the tokenizer.
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Mteval13a => "13a",
            Tokenizer::None => "none",
        }
    }
}

/// How zero n-gram matches are smoothed (Chen and Cherry, 2014).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Smoothing {
    /// No smoothing: any order without a match makes BLEU 0.
    None,
    /// Method 1: an order without matches counts `value` matches (0.1 by
    /// default).
    Floor(f64),
    /// Method 2: `k` is added to the matches and the totals of every order
    /// above 1 (1 by default).
    AddK(f64),
    /// Method 3, NIST's geometric sequence: the i-th order without matches
    /// has precision 1 / (2^i · total). sacrebleu's default for sentences.
    Exp,
}

impl Smoothing {
    /// sacrebleu's name for the method.
    pub fn name(self) -> &'static str {
        match self {
            Smoothing::None => "none",
            Smoothing::Floor(_) => "floor",
            Smoothing::AddK(_) => "add-k",
            Smoothing::Exp => "exp",
        }
    }
}

/// How BLEU is computed; the defaults are those of `sacrebleu.sentence_bleu`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The highest n-gram order (4).
    pub max_ngram_order: usize,
    /// The tokenizer (`13a`).
    pub tokenizer: Tokenizer,
    /// Whether both sides are lowercased first (false).
    pub lowercase: bool,
    /// The smoothing method (`exp`).
    pub smoothing: Smoothing,
    /// Whether orders the hypothesis has no n-grams of are left out of the
    /// geometric mean (true, as in `sentence_bleu`).
    pub effective_order: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_ngram_order: 4,
            tokenizer: Tokenizer::Mteval13a,
            lowercase: false,
            smoothing: Smoothing::Exp,
            effective_order: true,
        }
    }
}

/// A BLEU score with its sufficient statistics, as sacrebleu's `BLEUScore`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bleu {
    /// BLEU on sacrebleu's 0–100 scale.
    pub score: f64,
    /// Clipped n-gram matches per order (before add-k smoothing).
    pub counts: Vec<u64>,
    /// Hypothesis n-grams per order (before add-k smoothing).
    pub totals: Vec<u64>,
    /// The (smoothed) precision per order, on sacrebleu's 0–100 scale.
    pub precisions: Vec<f64>,
    /// The brevity penalty.
    pub bp: f64,
    /// The hypothesis length in tokens.
    pub sys_len: usize,
    /// The reference length in tokens: the closest to the hypothesis's,
    /// the shorter one on a tie.
    pub ref_len: usize,
    /// How many orders the geometric mean covered.
    pub effective_order: usize,
}

/// Sentence BLEU of `hypothesis` against `references` (at least one), as
/// `sacrebleu.metrics.BLEU(...).sentence_score` computes it.
pub fn sentence_bleu(hypothesis: &str, references: &[&str], options: &Options) -> Bleu {
    let order = options.max_ngram_order.max(1);
    let hypothesis = preprocess(hypothesis, options);
    let hyp_tokens = split_whitespace(&hypothesis);
    let references: Vec<String> = references.iter().map(|r| preprocess(r, options)).collect();

    let ref_tokens: Vec<Vec<&str>> = references.iter().map(|r| split_whitespace(r)).collect();
    let ref_lens: Vec<usize> = ref_tokens.iter().map(Vec::len).collect();
    let (counts, totals) = clipped_counts(&hyp_tokens, &ref_tokens, order);
    let sys_len = hyp_tokens.len();
    let ref_len = closest_ref_len(sys_len, &ref_lens);
    compute_bleu(counts, totals, sys_len, ref_len, options)
}

/// Lowercases (optionally), strips trailing whitespace and tokenizes, as
/// sacrebleu's `BLEU._preprocess_segment`.
fn preprocess(text: &str, options: &Options) -> String {
    let lowered;
    let text = if options.lowercase {
        lowered = text.to_lowercase();
        lowered.as_str()
    } else {
        text
    };
    let text = tokenize::rstrip(text);
    match options.tokenizer {
        Tokenizer::Mteval13a => tokenize_13a(text),
        Tokenizer::None => text.to_owned(),
    }
}

/// Per order 1 to `order`: the hypothesis's n-grams clipped by the most
/// times each occurs in any one reference (sacrebleu's `correct`), and all
/// the hypothesis's n-grams (`total`).
///
/// Tokens are interned to ids, and every distinct n-gram gets an id one
/// order at a time: the id of an (n+1)-gram is that of the pair (its
/// n-gram's id, its last token's id). Counting is then by index, with no
/// hashing of token slices.
fn clipped_counts<'t>(hypothesis: &[&'t str], references: &[Vec<&'t str>], order: usize) -> (Vec<u64>, Vec<u64>) {
    let mut vocabulary: FxHashMap<&'t str, u32> = FxHashMap::default();
    let mut intern = |tokens: &[&'t str]| -> Vec<u32> {
        tokens
            .iter()
            .map(|&token| {
                let next = vocabulary.len() as u32;
                *vocabulary.entry(token).or_insert(next)
            })
            .collect()
    };
    let hyp_tokens = intern(hypothesis);
    let ref_tokens: Vec<Vec<u32>> = references.iter().map(|tokens| intern(tokens)).collect();
    let mut distinct = vocabulary.len();

    let mut counts = vec![0u64; order];
    let mut totals = vec![0u64; order];
    let mut hyp_grams = hyp_tokens.clone();
    let mut ref_grams = ref_tokens.clone();
    let mut pairs: FxHashMap<u64, u32> = FxHashMap::default();
    let (mut best_in_ref, mut in_ref) = (Vec::new(), Vec::new());
    for n in 1..=order.min(hyp_tokens.len()) {
        if n > 1 {
            pairs.clear();
            extend_grams(&mut hyp_grams, &hyp_tokens, n - 1, &mut pairs);
            for (grams, tokens) in ref_grams.iter_mut().zip(&ref_tokens) {
                if grams.len() >= 2 {
                    extend_grams(grams, tokens, n - 1, &mut pairs);
                } else {
                    grams.clear();
                }
            }
            distinct = pairs.len();
        }
        // The most times each n-gram occurs in any one reference.
        best_in_ref.clear();
        best_in_ref.resize(distinct, 0u32);
        for grams in &ref_grams {
            in_ref.clear();
            in_ref.resize(distinct, 0u32);
            for &gram in grams {
                let count = &mut in_ref[gram as usize];
                *count += 1;
                let best = &mut best_in_ref[gram as usize];
                *best = (*best).max(*count);
            }
        }
        // Each hypothesis n-gram counts while the reference has one left.
        let mut matches = 0;
        for &gram in &hyp_grams {
            let left = &mut best_in_ref[gram as usize];
            if *left > 0 {
                *left -= 1;
                matches += 1;
            }
        }
        counts[n - 1] = matches;
        totals[n - 1] = hyp_grams.len() as u64;
    }
    (counts, totals)
}

/// Turns the ids of the k-grams of `tokens` (at least 2) into those of its
/// (k+1)-grams.
fn extend_grams(grams: &mut Vec<u32>, tokens: &[u32], k: usize, pairs: &mut FxHashMap<u64, u32>) {
    let count = grams.len() - 1;
    for i in 0..count {
        let key = (u64::from(grams[i]) << 32) | u64::from(tokens[i + k]);
        let next = pairs.len() as u32;
        grams[i] = *pairs.entry(key).or_insert(next);
    }
    grams.truncate(count);
}

/// The reference length closest to the hypothesis length, the shorter on a
/// tie (sacrebleu's `_get_closest_ref_len`).
fn closest_ref_len(hyp_len: usize, ref_lens: &[usize]) -> usize {
    let mut closest: Option<(usize, usize)> = None;
    for &len in ref_lens {
        let diff = hyp_len.abs_diff(len);
        closest = match closest {
            Some((best_diff, best_len)) if diff > best_diff || (diff == best_diff && len >= best_len) => {
                Some((best_diff, best_len))
            }
            _ => Some((diff, len)),
        };
    }
    closest.map_or(0, |(_, len)| len)
}

/// BLEU from its sufficient statistics (sacrebleu's `BLEU.compute_bleu`),
/// with the same operations in the same order so that the floating-point
/// result is the same.
fn compute_bleu(counts: Vec<u64>, totals: Vec<u64>, sys_len: usize, ref_len: usize, options: &Options) -> Bleu {
    let order = counts.len();
    let bp = if sys_len < ref_len {
        if sys_len > 0 { (1.0 - ref_len as f64 / sys_len as f64).exp() } else { 0.0 }
    } else {
        1.0
    };
    let mut precisions = vec![0.0; order];
    let mut bleu = Bleu {
        score: 0.0,
        counts: counts.clone(),
        totals: totals.clone(),
        precisions: precisions.clone(),
        bp,
        sys_len,
        ref_len,
        effective_order: order,
    };
    // No match at all: BLEU is 0 whatever the smoothing (sacrebleu #141).
    if counts.iter().all(|&c| c == 0) {
        return bleu;
    }
    let mut correct: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
    let mut total: Vec<f64> = totals.iter().map(|&t| t as f64).collect();
    let mut smooth_mteval = 1.0;
    let mut effective_order = order;
    for n in 1..=order {
        let i = n - 1;
        if let Smoothing::AddK(k) = options.smoothing
            && n > 1
        {
            correct[i] += k;
            total[i] += k;
        }
        if total[i] == 0.0 {
            break;
        }
        if options.effective_order {
            effective_order = n;
        }
        if correct[i] == 0.0 {
            match options.smoothing {
                Smoothing::Exp => {
                    smooth_mteval *= 2.0;
                    precisions[i] = 100.0 / (smooth_mteval * total[i]);
                }
                Smoothing::Floor(value) => precisions[i] = 100.0 * value / total[i],
                Smoothing::None | Smoothing::AddK(_) => {}
            }
        } else {
            precisions[i] = 100.0 * correct[i] / total[i];
        }
    }
    // sacrebleu's `my_log`: log(0) is floored to -9999999999.
    let log_sum = precisions[..effective_order]
        .iter()
        .fold(0.0, |sum, &p| sum + if p == 0.0 { -9999999999.0 } else { f64::ln(p) });
    bleu.score = bp * (log_sum / effective_order as f64).exp();
    bleu.precisions = precisions;
    bleu.effective_order = effective_order;
    bleu
}

/// The bleu matcher.
pub struct BleuMatcher;

impl Matcher for BleuMatcher {
    fn describe() -> PluginInfo {
        PluginInfo::new("bleu", env!("CARGO_PKG_VERSION"))
            .matcher("bleu", "sentence BLEU of the text against one or more references, as sacrebleu computes it")
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        if key != "bleu" {
            return Err(format!("the bleu plugin has no matcher `{key}`"));
        }
        let hypothesis = actual.as_str().ok_or_else(|| format!("bleu scores a string, found {}", actual.describe()))?;
        let params = Params::parse("bleu", expected, "reference", PARAMETERS)?;
        let references = params.one_or_many("reference", "references")?;
        let options = options(&params)?;
        let threshold = params.threshold()?.unwrap_or(DEFAULT_THRESHOLD);
        let bleu = sentence_bleu(hypothesis, &references, &options);
        Ok(verdict(&bleu, references.len(), &options, threshold))
    }
}

export_matcher!(BleuMatcher);

/// The computation options from the parameters.
fn options(params: &Params) -> Result<Options, String> {
    let defaults = Options::default();
    let max_ngram_order = match params.count("max_ngram_order")? {
        None => defaults.max_ngram_order,
        Some(n) if (1..=MAX_ORDER_LIMIT as u64).contains(&n) => n as usize,
        Some(n) => return Err(format!("bleu needs `max_ngram_order` between 1 and {MAX_ORDER_LIMIT}, found {n}")),
    };
    let tokenizer = match params.string("tokenize")? {
        None | Some("13a") => Tokenizer::Mteval13a,
        Some("none") => Tokenizer::None,
        Some(other) => return Err(format!("bleu has no tokenizer {other:?} (its tokenizers: 13a, none)")),
    };
    let smooth_value = match params.get("smooth_value") {
        None => None,
        Some(value) => match value.as_f64() {
            Some(v) if v >= 0.0 && v.is_finite() => Some(v),
            _ => {
                return Err(format!(
                    "bleu needs `smooth_value` to be a non-negative number, found {}",
                    params::describe(value)
                ));
            }
        },
    };
    let smoothing = match params.string("smooth_method")? {
        None | Some("exp") => Smoothing::Exp,
        Some("none") => Smoothing::None,
        Some("floor") => Smoothing::Floor(smooth_value.unwrap_or(0.1)),
        Some("add-k") => Smoothing::AddK(smooth_value.unwrap_or(1.0)),
        Some(other) => {
            return Err(format!("bleu has no smoothing method {other:?} (its methods: none, floor, add-k, exp)"));
        }
    };
    if smooth_value.is_some() && !matches!(smoothing, Smoothing::Floor(_) | Smoothing::AddK(_)) {
        return Err(format!(
            "bleu's `smooth_value` applies to the smoothing methods floor and add-k, and the method is {}",
            smoothing.name()
        ));
    }
    Ok(Options {
        max_ngram_order,
        tokenizer,
        lowercase: params.bool("lowercase")?.unwrap_or(defaults.lowercase),
        smoothing,
        effective_order: params.bool("effective_order")?.unwrap_or(defaults.effective_order),
    })
}

/// The verdict for a BLEU score.
fn verdict(bleu: &Bleu, reference_count: usize, options: &Options, threshold: f64) -> Verdict {
    let score = (bleu.score / 100.0).clamp(0.0, 1.0);
    let precisions: Vec<f64> = bleu.precisions.iter().map(|p| p / 100.0).collect();
    let shown: Vec<String> = precisions.iter().map(|p| format!("{p:.3}")).collect();
    let closest = if reference_count == 1 { String::new() } else { format!(" (closest of {reference_count})") };
    let tokens = if bleu.sys_len == 1 { "token" } else { "tokens" };
    let message = format!(
        "BLEU {} (n-gram precisions {}, brevity penalty {:.3}, {} hypothesis {tokens}, reference length {}{closest}); \
         threshold {threshold}",
        show_score(score, Some(threshold)),
        shown.join("/"),
        bleu.bp,
        bleu.sys_len,
        bleu.ref_len,
    );
    let mut extras = json!({
        "bleu": bleu.score,
        "precisions": precisions,
        "bp": bleu.bp,
        "sys_len": bleu.sys_len,
        "ref_len": bleu.ref_len,
        "counts": bleu.counts,
        "totals": bleu.totals,
        "effective_order": bleu.effective_order,
        "threshold": threshold,
        "tokenize": options.tokenizer.name(),
        "lowercase": options.lowercase,
        "smooth_method": options.smoothing.name(),
    });
    if let Smoothing::Floor(value) | Smoothing::AddK(value) = options.smoothing {
        extras["smooth_value"] = json!(value);
    }
    Verdict::new(score >= threshold, message).with_score(score).with_extras(extras)
}

#[cfg(test)]
mod tests;
