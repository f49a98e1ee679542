//! METEOR as nltk's `nltk.translate.meteor_score` (3.10) computes it, with
//! exact and Porter-stem matching: the same alignment (each hypothesis word,
//! last to first, takes the latest unused reference word of the same form,
//! first exactly, then by stem), the same chunk count and the same
//! floating-point operations.

use assay_porter::{Mode, PorterStemmer};
use rustc_hash::FxHashMap;

/// METEOR's weights, nltk's `alpha`, `beta` and `gamma`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// The weight of precision against recall in the F-mean (0.9).
    pub alpha: f64,
    /// The exponent of the fragmentation penalty (3).
    pub beta: f64,
    /// The maximum fragmentation penalty (0.5).
    pub gamma: f64,
}

impl Default for Weights {
    /// nltk's defaults: alpha 0.9, beta 3, gamma 0.5.
    fn default() -> Self {
        Weights { alpha: 0.9, beta: 3.0, gamma: 0.5 }
    }
}

/// The METEOR of one hypothesis against one reference, with its parts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Meteor {
    /// The score: `(1 - penalty) * fmean`, or 0 when nltk divides by zero
    /// (an empty side, or no match).
    pub score: f64,
    /// Matches over hypothesis tokens (0 when there are none).
    pub precision: f64,
    /// Matches over reference tokens (0 when there are none).
    pub recall: f64,
    /// `precision * recall / (alpha * precision + (1 - alpha) * recall)`
    /// (0 without matches).
    pub fmean: f64,
    /// `gamma * (chunks / matches) ^ beta` (0 without matches).
    pub penalty: f64,
    /// The fewest runs of matches adjacent in both texts (0 without
    /// matches).
    pub chunks: usize,
    /// The number of aligned word pairs.
    pub matches: usize,
    /// The number of hypothesis tokens.
    pub hypothesis_tokens: usize,
    /// The number of reference tokens.
    pub reference_tokens: usize,
}

/// Splits a text into the tokens nltk's METEOR sees: Python's `str.split()`
/// (on Unicode whitespace, which for Python includes U+001C to U+001F), each
/// token lowercased as Python's `str.lower` does (nltk's `preprocess`).
pub fn tokenize(text: &str) -> Vec<String> {
    split(text)
        .map(|token| {
            let mut lower = String::new();
            lowercase_into(token, &mut lower);
            lower
        })
        .collect()
}

/// Python's `str.split()`.
fn split(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_python_whitespace).filter(|t| !t.is_empty())
}

/// Whether Python's `str.split()` splits on the character.
fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.lower` of one token, into `out` (cleared first).
fn lowercase_into(token: &str, out: &mut String) {
    out.clear();
    if token.is_ascii() {
        out.push_str(token);
        out.make_ascii_lowercase();
    } else {
        // Not char by char: a final sigma lowercases by its context.
        out.push_str(&token.to_lowercase());
    }
}

/// `single_meteor_score(reference, hypothesis)` on texts tokenized by
/// [`tokenize`], with WordNet matching disabled (a `wordnet` whose
/// `synsets` finds nothing).
///
/// ```
/// use assay_plugin_meteor::{Weights, single_meteor};
///
/// let m = single_meteor("the cat sat on the mat", "the cat sat on the mat", Weights::default());
/// assert_eq!((m.matches, m.chunks), (6, 1));
/// assert!((m.score - 0.9976851851851852).abs() < 1e-15);
/// ```
pub fn single_meteor(reference: &str, hypothesis: &str, weights: Weights) -> Meteor {
    let mut aligner = Aligner::default();
    let hypothesis = aligner.text(hypothesis);
    let reference = aligner.text(reference);
    aligner.score(&reference, &hypothesis, weights)
}

/// `meteor_score(references, hypothesis)`: the best [`single_meteor`] over
/// the references (the first of equal bests), with its index. `None` when
/// there is no reference.
pub fn meteor(references: &[&str], hypothesis: &str, weights: Weights) -> Option<(usize, Meteor)> {
    let mut aligner = Aligner::default();
    let hypothesis = aligner.text(hypothesis);
    let mut best: Option<(usize, Meteor)> = None;
    for (i, reference) in references.iter().enumerate() {
        let reference = aligner.text(reference);
        let m = aligner.score(&reference, &hypothesis, weights);
        if best.is_none_or(|(_, b)| m.score > b.score) {
            best = Some((i, m));
        }
    }
    best
}

/// nltk's word alignment (`align_words` with a WordNet that knows no
/// synonyms) of texts tokenized by [`tokenize`]: the (hypothesis position,
/// reference position) pairs, sorted by hypothesis position.
pub fn align(reference: &str, hypothesis: &str) -> Vec<(usize, usize)> {
    let mut aligner = Aligner::default();
    let (hypothesis, reference) = (aligner.text(hypothesis), aligner.text(reference));
    let aligned = aligner.align(&reference, &hypothesis);
    aligned.into_iter().enumerate().filter(|&(_, j)| j != END).collect()
}

/// One text's tokens: the lowercased form's id and the token as written.
struct Text<'t> {
    ids: Vec<u32>,
    tokens: Vec<&'t str>,
}

/// Interns lowercased words and their stems across texts, and aligns them.
#[derive(Default)]
struct Aligner {
    ids: FxHashMap<Box<str>, u32>,
    /// Per word id, its stem's id, once computed.
    stems: Vec<Option<u32>>,
    stem_ids: FxHashMap<String, u32>,
    /// A reusable buffer for lowercasing.
    scratch: String,
}

/// No word, in the linked lists of positions.
const END: usize = usize::MAX;

impl Aligner {
    /// Splits and interns a text.
    fn text<'t>(&mut self, text: &'t str) -> Text<'t> {
        let tokens: Vec<&str> = split(text).collect();
        let ids = tokens.iter().map(|token| self.id(token)).collect();
        Text { ids, tokens }
    }

    /// The id of a token's lowercased form.
    fn id(&mut self, token: &str) -> u32 {
        lowercase_into(token, &mut self.scratch);
        if let Some(&id) = self.ids.get(self.scratch.as_str()) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(self.scratch.as_str().into(), id);
        self.stems.push(None);
        id
    }

    /// The id of the stem of a token's lowercased form (word id `id`), by
    /// nltk's default `PorterStemmer()`.
    fn stem(&mut self, id: u32, token: &str) -> u32 {
        if let Some(stem) = self.stems[id as usize] {
            return stem;
        }
        lowercase_into(token, &mut self.scratch);
        let stemmed = PorterStemmer::new(Mode::NltkExtensions).stem(&self.scratch);
        let next = self.stem_ids.len() as u32;
        let stem = *self.stem_ids.entry(stemmed).or_insert(next);
        self.stems[id as usize] = Some(stem);
        stem
    }

    fn score(&mut self, reference: &Text, hypothesis: &Text, weights: Weights) -> Meteor {
        let aligned = self.align(reference, hypothesis);
        // The matches sorted by hypothesis position; `_count_chunks`.
        let mut matches = 0;
        let mut chunks = 0;
        let mut previous: Option<(usize, usize)> = None;
        for (i, &j) in aligned.iter().enumerate().filter(|(_, j)| **j != END) {
            matches += 1;
            if previous != Some((i.wrapping_sub(1), j.wrapping_sub(1))) {
                chunks += 1;
            }
            previous = Some((i, j));
        }
        finish(matches, chunks, hypothesis.ids.len(), reference.ids.len(), weights)
    }

    /// nltk's `_enum_align_words` without WordNet: for each hypothesis
    /// position, the reference position it aligns with, or `END`.
    fn align(&mut self, reference: &Text, hypothesis: &Text) -> Vec<usize> {
        let (h_len, r_len) = (hypothesis.ids.len(), reference.ids.len());
        let mut aligned = vec![END; h_len];
        let mut reference_used = vec![false; r_len];

        // `_match_enums`: exact forms.
        let all_hypothesis: Vec<usize> = (0..h_len).collect();
        let all_reference: Vec<usize> = (0..r_len).collect();
        match_latest(
            &all_hypothesis,
            &hypothesis.ids,
            &all_reference,
            &reference.ids,
            &mut aligned,
            &mut reference_used,
        );

        // `_enum_stem_match` on what is left: stems of the forms.
        let left_hypothesis: Vec<usize> = (0..h_len).filter(|&i| aligned[i] == END).collect();
        let left_reference: Vec<usize> = (0..r_len).filter(|&j| !reference_used[j]).collect();
        if !left_hypothesis.is_empty() && !left_reference.is_empty() {
            let h_stems: Vec<u32> =
                left_hypothesis.iter().map(|&i| self.stem(hypothesis.ids[i], hypothesis.tokens[i])).collect();
            let r_stems: Vec<u32> =
                left_reference.iter().map(|&j| self.stem(reference.ids[j], reference.tokens[j])).collect();
            match_latest(&left_hypothesis, &h_stems, &left_reference, &r_stems, &mut aligned, &mut reference_used);
        }
        // WordNet synonyms would come third; without WordNet, the stem
        // stage has already matched every equal form that is left.
        aligned
    }
}

/// nltk's `_match_enums` on the words at `h_positions`/`r_positions` with
/// the given keys: from the last hypothesis word to the first, each takes
/// the latest reference word with the same key not yet taken.
fn match_latest(
    h_positions: &[usize],
    h_keys: &[u32],
    r_positions: &[usize],
    r_keys: &[u32],
    aligned: &mut [usize],
    reference_used: &mut [bool],
) {
    // Per key, a stack of reference indices (into `r_positions`), latest on
    // top, as linked lists: `head[key]`, then `below[index]`.
    let keys = h_keys.iter().chain(r_keys).map(|&k| k as usize + 1).max().unwrap_or(0);
    let mut head = vec![END; keys];
    let mut below = vec![END; r_positions.len()];
    for (index, &key) in r_keys.iter().enumerate() {
        below[index] = head[key as usize];
        head[key as usize] = index;
    }
    for (&i, &key) in h_positions.iter().zip(h_keys).rev() {
        let top = head[key as usize];
        if top != END {
            head[key as usize] = below[top];
            let j = r_positions[top];
            aligned[i] = j;
            reference_used[j] = true;
        }
    }
}

/// The end of `single_meteor_score`, with nltk's operations in nltk's
/// order; a division by zero (`ZeroDivisionError`) scores 0.
fn finish(matches: usize, chunks: usize, hypothesis: usize, reference: usize, weights: Weights) -> Meteor {
    let Weights { alpha, beta, gamma } = weights;
    let mut m = Meteor { matches, hypothesis_tokens: hypothesis, reference_tokens: reference, ..Meteor::default() };
    if hypothesis > 0 {
        m.precision = matches as f64 / hypothesis as f64;
    }
    if reference > 0 {
        m.recall = matches as f64 / reference as f64;
    }
    let denominator = alpha * m.precision + (1.0 - alpha) * m.recall;
    if hypothesis == 0 || reference == 0 || matches == 0 || denominator == 0.0 {
        return m;
    }
    m.fmean = (m.precision * m.recall) / denominator;
    m.chunks = chunks;
    let fragmentation = chunks as f64 / matches as f64;
    m.penalty = gamma * fragmentation.powf(beta);
    m.score = (1.0 - m.penalty) * m.fmean;
    m
}

#[cfg(test)]
mod tests;
