//! The fast paths against a line-by-line port of rouge-score's Python
//! (full DP tables, tuple n-grams, `_backtrack_norec`), on random token
//! sequences drawn from small vocabularies so that ties abound.

use super::*;
use std::collections::{BTreeSet, HashMap};

fn naive_ngrams(tokens: &[u32], n: usize) -> HashMap<&[u32], usize> {
    let mut grams = HashMap::new();
    for i in 0..(tokens.len() + 1).saturating_sub(n) {
        *grams.entry(&tokens[i..i + n]).or_insert(0) += 1;
    }
    grams
}

fn naive_rouge_n(target: &[u32], prediction: &[u32], n: usize) -> Score {
    let (t, p) = (naive_ngrams(target, n), naive_ngrams(prediction, n));
    let matches: usize = t.iter().map(|(g, &c)| c.min(p.get(g).copied().unwrap_or(0))).sum();
    let (tc, pc): (usize, usize) = (t.values().sum(), p.values().sum());
    Score::of(matches, pc.max(1), tc.max(1))
}

fn lcs_table(r: &[u32], c: &[u32]) -> Vec<Vec<usize>> {
    let mut t = vec![vec![0; c.len() + 1]; r.len() + 1];
    for i in 1..=r.len() {
        for j in 1..=c.len() {
            t[i][j] = if r[i - 1] == c[j - 1] { t[i - 1][j - 1] + 1 } else { t[i - 1][j].max(t[i][j - 1]) };
        }
    }
    t
}

fn naive_backtrack(r: &[u32], c: &[u32]) -> Vec<usize> {
    let t = lcs_table(r, c);
    let (mut i, mut j) = (r.len(), c.len());
    let mut lcs = Vec::new();
    while i > 0 && j > 0 {
        if r[i - 1] == c[j - 1] {
            lcs.insert(0, i - 1);
            i -= 1;
            j -= 1;
        } else if t[i][j - 1] > t[i - 1][j] {
            j -= 1;
        } else {
            i -= 1;
        }
    }
    lcs
}

fn naive_rouge_l(target: &[u32], prediction: &[u32]) -> Score {
    if target.is_empty() || prediction.is_empty() {
        return Score::default();
    }
    let length = lcs_table(target, prediction)[target.len()][prediction.len()];
    Score::of(length, prediction.len(), target.len())
}

fn naive_lsum(target: &[Vec<u32>], prediction: &[Vec<u32>]) -> Score {
    let m: usize = target.iter().map(Vec::len).sum();
    let n: usize = prediction.iter().map(Vec::len).sum();
    if target.is_empty() || prediction.is_empty() || m == 0 || n == 0 {
        return Score::default();
    }
    let mut counts_r: HashMap<u32, usize> = HashMap::new();
    let mut counts_c: HashMap<u32, usize> = HashMap::new();
    target.iter().flatten().for_each(|&t| *counts_r.entry(t).or_default() += 1);
    prediction.iter().flatten().for_each(|&t| *counts_c.entry(t).or_default() += 1);
    let mut hits = 0;
    for r in target {
        let union: BTreeSet<usize> = prediction.iter().flat_map(|c| naive_backtrack(r, c)).collect();
        for t in union.into_iter().map(|i| r[i]) {
            let (cr, cc) = (counts_r.get_mut(&t).unwrap(), counts_c.get_mut(&t).unwrap());
            if *cc > 0 && *cr > 0 {
                hits += 1;
                *cc -= 1;
                *cr -= 1;
            }
        }
    }
    Score::of(hits, n, m)
}

/// xorshift64*: deterministic random numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// A random text over `vocabulary` words, with lines, blank lines and
/// punctuation.
fn random_text(rng: &mut Rng, vocabulary: u64, max_tokens: u64) -> String {
    let mut text = String::new();
    for _ in 0..rng.below(max_tokens + 1) {
        text.push_str(&format!("w{}", rng.below(vocabulary)));
        text.push_str(match rng.below(12) {
            0 => "\n",
            1 => ".\n\n",
            2 => ", ",
            _ => " ",
        });
    }
    text
}

#[test]
fn fast_paths_match_the_python_port_on_random_texts() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..900 {
        let (vocabulary, max_tokens) = match round % 3 {
            0 => (3, 12),
            1 => (8, 60),
            _ => (40, 160),
        };
        let reference = random_text(&mut rng, vocabulary, max_tokens);
        let candidate = random_text(&mut rng, vocabulary, max_tokens);
        let texts = RougeTexts::new(&reference, &candidate, false);
        let (r, c) = (&texts.reference, &texts.candidate);
        let context = format!("reference {reference:?}, candidate {candidate:?}");
        for n in [1, 2, 3, 4, 12] {
            assert_eq!(texts.score(RougeType::N(n)), naive_rouge_n(&r.ids, &c.ids, n.into()), "rouge{n}: {context}");
        }
        assert_eq!(texts.score(RougeType::L), naive_rouge_l(&r.ids, &c.ids), "rougeL: {context}");
        let lines = |t: &Tokens| t.lines().map(<[u32]>::to_vec).collect::<Vec<_>>();
        assert_eq!(texts.score(RougeType::Lsum), naive_lsum(&lines(r), &lines(c)), "rougeLsum: {context}");
    }
}

#[test]
fn backtrack_matches_python_across_word_boundaries() {
    // Sequences longer than 64 and 128 tokens exercise the carry between
    // words and the partial last word.
    let mut rng = Rng(42);
    for len in [63, 64, 65, 127, 128, 129, 200] {
        for _ in 0..20 {
            let r: Vec<u32> = (0..len).map(|_| rng.below(4) as u32).collect();
            let c: Vec<u32> = (0..len + rng.below(5) as usize).map(|_| rng.below(4) as u32).collect();
            let mut masks = Masks::new(4);
            masks.load(&c);
            let mut rows = Vec::new();
            lcs_rows(&masks, &r, &mut rows);
            let mut lcs = Vec::new();
            backtrack(&rows, masks.words, &r, &c, &mut lcs);
            lcs.reverse();
            assert_eq!(lcs, naive_backtrack(&r, &c));
            assert_eq!(lcs_length(&masks, &r), lcs_table(&r, &c)[r.len()][c.len()]);
        }
    }
}

#[test]
fn type_names_round_trip() {
    for name in ROUGE_TYPE_NAMES {
        assert_eq!(RougeType::parse(name).unwrap().name(), name);
    }
    for bad in ["rouge0", "rouge10", "rougel", "RougeL", "rouge", "rougeLSum", "rouge1 ", ""] {
        assert_eq!(RougeType::parse(bad), None, "{bad:?}");
    }
    assert_eq!(RougeType::N(12).name(), "rougeN");
    assert_eq!(rouge_scores("a b", "a b", &[RougeType::N(0)], false), [Score::default()]);
}

#[test]
fn tokenizer_follows_python_lowercasing() {
    assert_eq!(
        tokenize("Hello, World! state-of-the-art 3.14", false),
        ["hello", "world", "state", "of", "the", "art", "3", "14"]
    );
    // İ lowercases to i + U+0307 (a separator); K (Kelvin) to k.
    assert_eq!(tokenize("İstanbul \u{212A}elvin café", false), ["i", "stanbul", "kelvin", "caf"]);
    assert_eq!(tokenize("The dies are running quickly", true), ["the", "die", "are", "run", "quickli"]);
    assert!(tokenize("", true).is_empty());
    assert!(tokenize("¿¡…!", false).is_empty());
}

/// The ASCII fast path of the tokenizer splits exactly as the general one.
#[test]
fn ascii_split_matches_char_split() {
    let texts = [
        "",
        "\n\n",
        "The Cat, sat.\nON the MAT!!\n\n  x9 Y-10\tz\n",
        "a\nb",
        "  leading and trailing  ",
        "punctuation-only: ,.;!?\n---\n",
        "averyveryverylongtokenofmorethan15bytes and short",
    ];
    for text in texts {
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        let (a, b) = (split_ascii(text, &mut fast), split_chars(text, &mut slow));
        let words = |raw: &RawTokens, bytes: &[u8]| -> Vec<Vec<u8>> {
            raw.spans.iter().map(|&(s, e)| bytes[s..e].to_vec()).collect()
        };
        assert_eq!(words(&a, &fast), words(&b, &slow), "{text:?}");
        assert_eq!(a.line_ends, b.line_ends, "{text:?}");
    }
}
