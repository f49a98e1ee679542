//! The numbers behind `levenshtein`, `rouge-n` and `bleu`, computed with
//! promptfoo's tokenization and promptfoo's floating-point operations in
//! promptfoo's order, so that scores are bit-identical.

use crate::js;
use std::collections::HashMap;

/// `fastest-levenshtein`'s `distance`: edit distance over UTF-16 code units
/// (an emoji outside the Basic Multilingual Plane counts as two).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<u16> = a.encode_utf16().collect();
    let b: Vec<u16> = b.encode_utf16().collect();
    if a.is_empty() {
        return b.len();
    }
    let mut row: Vec<usize> = (0..=a.len()).collect();
    for (i, &unit) in b.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &other) in a.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(unit != other)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[a.len()]
}

/// How often each n-gram occurs, keyed by its tokens.
fn counts<'a>(grams: &[&'a [String]]) -> HashMap<&'a [String], usize> {
    let mut counts = HashMap::new();
    for &gram in grams {
        *counts.entry(gram).or_insert(0) += 1;
    }
    counts
}

/// The n-grams of `tokens`, none when there are fewer than `n`.
fn ngrams(tokens: &[String], n: usize) -> Vec<&[String]> {
    if n == 0 || n > tokens.len() { Vec::new() } else { tokens.windows(n).collect() }
}

/// The clipped overlap of the candidate's n-grams with the reference's.
fn overlap(candidate: &[&[String]], reference: &[&[String]]) -> usize {
    let reference = counts(reference);
    counts(candidate).into_iter().map(|(gram, count)| count.min(reference.get(gram).copied().unwrap_or(0))).sum()
}

/// promptfoo's `rougeNScore` with n = 1 and β = 1 on texts the caller has
/// lowercased: treebank tokens, clipped unigram overlap, js-rouge's
/// `fMeasure`.
pub fn rouge_n(candidate: &str, reference: &str) -> f64 {
    const N: usize = 1;
    let candidate = crate::treebank::tokenize(candidate);
    let reference = crate::treebank::tokenize(reference);
    if candidate.len() < N || reference.len() < N {
        return 0.0;
    }
    let (candidate, reference) = (ngrams(&candidate, N), ngrams(&reference, N));
    let matched = overlap(&candidate, &reference);
    if matched == 0 {
        return 0.0;
    }
    let precision = matched as f64 / candidate.len() as f64;
    let recall = matched as f64 / reference.len() as f64;
    f_measure(precision, recall)
}

/// js-rouge's `fMeasure(p, r, 1)`, branch for branch.
fn f_measure(p: f64, r: f64) -> f64 {
    if p == r {
        return p;
    }
    if p == 0.0 || r == 0.0 {
        return 0.0;
    }
    if p > r {
        // inverseBeta = 1, weight = 1.
        return p.min(r * ((1.0 + 1.0) / (1.0 + (r / p))));
    }
    r.min(p * ((1.0 + 1.0) / (1.0 + (p / r))))
}

/// promptfoo's `calculateBleuScore` with the default weights (¼ each):
/// lowercased, trimmed, whitespace-split words; clipped n-gram precisions for
/// n = 1..4 over the orders the candidate has; zero precisions smoothed to
/// 1e-7; the brevity penalty against the closest reference length (the
/// shorter on a tie). An empty or blank candidate scores 0.
pub fn bleu(candidate: &str, references: &[String]) -> f64 {
    const WEIGHTS: [f64; 4] = [0.25; 4];
    if js::trim(candidate).is_empty() {
        return 0.0;
    }
    let tokenize = |text: &str| -> Vec<String> {
        js::split_spaces(js::trim(&text.to_lowercase())).into_iter().map(str::to_owned).collect()
    };
    let candidate_words = tokenize(candidate);
    let reference_words: Vec<Vec<String>> = references.iter().map(|r| tokenize(r)).collect();
    let length = candidate_words.len();
    let closest = reference_words
        .iter()
        .map(Vec::len)
        .reduce(|prev, curr| {
            let (dist_curr, dist_prev) = (curr.abs_diff(length), prev.abs_diff(length));
            if dist_curr < dist_prev || dist_curr == dist_prev && curr < prev { curr } else { prev }
        })
        .unwrap_or(0);
    let mut usable: Vec<(f64, f64)> = Vec::new();
    for n in 1..=4 {
        let grams = ngrams(&candidate_words, n);
        if grams.is_empty() {
            continue;
        }
        let best = reference_words.iter().map(|reference| overlap(&grams, &ngrams(reference, n))).max().unwrap_or(0);
        usable.push((best as f64 / grams.len() as f64, WEIGHTS[n - 1]));
    }
    let penalty = if length > closest { 1.0 } else { (1.0 - closest as f64 / length as f64).exp() };
    let weight_sum = usable.iter().fold(0.0, |acc, (_, weight)| acc + weight);
    if weight_sum == 0.0 {
        return 0.0;
    }
    let weighted = usable.iter().fold(0.0, |acc, &(precision, weight)| {
        let smoothed = if precision == 0.0 { 1e-7 } else { precision };
        acc + weight / weight_sum * smoothed.ln()
    });
    penalty * weighted.exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_utf16_units() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("a😀", "a"), 2);
    }

    #[test]
    fn rouge_n_matches_promptfoo_on_its_example() {
        assert!((rouge_n("the cat sat on", "the cat sat") - 0.857_142_857_142_857_1).abs() < 1e-15);
        assert_eq!(rouge_n("the cat sat on the mat", "the cat sat on the mat"), 1.0);
        assert_eq!(rouge_n("", "x"), 0.0);
    }

    #[test]
    fn bleu_of_identical_text_is_one_and_of_blank_zero() {
        assert_eq!(bleu("the cat sat on the mat", &["The cat sat on the mat".to_owned()]), 1.0);
        assert_eq!(bleu("  ", &["x".to_owned()]), 0.0);
    }
}
