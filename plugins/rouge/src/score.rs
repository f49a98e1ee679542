//! ROUGE as Google's `rouge-score` 0.1.2 computes it, natively: the default
//! tokenizer, ROUGE-N, ROUGE-L and ROUGE-Lsum, with the same integer counts
//! and the same floating-point operations, so the numbers are identical.
//!
//! Tokens are interned to integer ids once per call; n-grams are counted by
//! id; LCS lengths come from a bit-parallel algorithm (64 cells per machine
//! word, one row of memory); ROUGE-Lsum keeps one bit per DP cell so it can
//! retrace the very LCS `rouge-score` picks, which decides the union.

use assay_porter::{Mode, PorterStemmer};
use rustc_hash::FxHashMap;
use std::fmt;

/// One ROUGE variant, named as `rouge-score` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RougeType {
    /// `rouge1` … `rouge9`: n-gram overlap for n in 1..=9 (the n rouge-score
    /// names; a larger n scores too, and `N(0)`, which has no n-grams, scores
    /// 0).
    N(u8),
    /// `rougeL`: the longest common subsequence of the two token sequences.
    L,
    /// `rougeLsum`: summary-level LCS, the union of each reference
    /// sentence's LCS with every candidate sentence (sentences are the
    /// newline-separated lines of each text).
    Lsum,
}

/// Every name [`RougeType::parse`] accepts, in order.
pub const ROUGE_TYPE_NAMES: [&str; 11] =
    ["rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rouge6", "rouge7", "rouge8", "rouge9", "rougeL", "rougeLsum"];

impl RougeType {
    /// Parses a `rouge-score` name: `rouge1` … `rouge9`, `rougeL` or
    /// `rougeLsum` (case-sensitive, as in `rouge-score`).
    pub fn parse(name: &str) -> Option<RougeType> {
        match name {
            "rougeL" => Some(RougeType::L),
            "rougeLsum" => Some(RougeType::Lsum),
            _ => match name.strip_prefix("rouge")?.as_bytes() {
                &[digit @ b'1'..=b'9'] => Some(RougeType::N(digit - b'0')),
                _ => None,
            },
        }
    }

    /// The `rouge-score` name, e.g. `rouge2` or `rougeLsum` (`rougeN` for an
    /// n outside 1..=9).
    pub fn name(self) -> &'static str {
        match self {
            RougeType::N(n @ 1..=9) => ROUGE_TYPE_NAMES[usize::from(n) - 1],
            RougeType::N(_) => "rougeN",
            RougeType::L => "rougeL",
            RougeType::Lsum => "rougeLsum",
        }
    }
}

impl fmt::Display for RougeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Precision, recall and F-measure of one ROUGE variant, each in [0, 1].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Score {
    /// Matches over the candidate's size.
    pub precision: f64,
    /// Matches over the reference's size.
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub fmeasure: f64,
}

impl Score {
    /// The score of `matches` out of `candidate` (precision) and `reference`
    /// (recall) items, computed as `rouge-score` does: the same divisions in
    /// the same order, so the same bits.
    fn of(matches: usize, candidate: usize, reference: usize) -> Score {
        let precision = matches as f64 / candidate as f64;
        let recall = matches as f64 / reference as f64;
        Score { precision, recall, fmeasure: fmeasure(precision, recall) }
    }
}

/// `rouge_score.scoring.fmeasure`.
fn fmeasure(precision: f64, recall: f64) -> f64 {
    if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 }
}

/// Scores `candidate` (rouge-score's `prediction`) against `reference`
/// (its `target`) for each of `types`, in order: the numbers of
/// `RougeScorer(types, use_stemmer=use_stemmer).score(reference, candidate)`.
///
/// ```
/// use assay_plugin_rouge::{RougeType, rouge_scores};
///
/// let scores = rouge_scores("the cat sat", "the cat ran", &[RougeType::N(1), RougeType::L], false);
/// assert_eq!(scores[0].fmeasure, 2.0 / 3.0);
/// ```
pub fn rouge_scores(reference: &str, candidate: &str, types: &[RougeType], use_stemmer: bool) -> Vec<Score> {
    let texts = RougeTexts::new(reference, candidate, use_stemmer);
    types.iter().map(|&t| texts.score(t)).collect()
}

/// `rouge-score`'s default tokenizer on one text: lowercase, every run of
/// characters other than `a`-`z` and `0`-`9` is a separator, and with
/// `use_stemmer` tokens longer than 3 characters are Porter-stemmed (NLTK's
/// default mode, as `rouge-score` does).
pub fn tokenize(text: &str, use_stemmer: bool) -> Vec<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let raw = split(text, &mut bytes);
    let stemmer = PorterStemmer::new(Mode::NltkExtensions);
    raw.spans
        .iter()
        .map(|&(start, end)| {
            // Tokens are ASCII, so this is lossless.
            let token = String::from_utf8_lossy(&bytes[start..end]).into_owned();
            if use_stemmer && token.len() > 3 { stemmer.stem(&token) } else { token }
        })
        .filter(|token| !token.is_empty())
        .collect()
}

/// A reference and a candidate, tokenized and interned once, to score with
/// any number of ROUGE variants.
#[derive(Debug)]
pub struct RougeTexts {
    reference: Tokens,
    candidate: Tokens,
    /// The number of distinct token ids (after stemming).
    distinct: usize,
}

/// One text as token ids, with its lines.
#[derive(Debug, Default)]
struct Tokens {
    ids: Vec<u32>,
    /// The end (exclusive, into `ids`) of every line that has tokens.
    line_ends: Vec<usize>,
}

impl Tokens {
    /// The token ids of every line that has tokens.
    fn lines(&self) -> impl Iterator<Item = &[u32]> {
        let mut start = 0;
        self.line_ends.iter().map(move |&end| {
            let line = &self.ids[start..end];
            start = end;
            line
        })
    }
}

impl RougeTexts {
    /// Tokenizes both texts as `rouge-score`'s default tokenizer does.
    pub fn new(reference: &str, candidate: &str, use_stemmer: bool) -> Self {
        let mut bytes = Vec::with_capacity(reference.len() + candidate.len());
        let raw_reference = split(reference, &mut bytes);
        let raw_candidate = split(candidate, &mut bytes);

        // Intern the raw tokens, then map each distinct one to its final
        // (stemmed) id once: stemming is per distinct token, not per token.
        let mut raw_ids: FxHashMap<&[u8], u32> = FxHashMap::default();
        let mut raw_vocabulary: Vec<&[u8]> = Vec::new();
        let mut intern_raw = |raw: &RawTokens| -> Vec<u32> {
            raw.spans
                .iter()
                .map(|&(start, end)| {
                    let token = &bytes[start..end];
                    *raw_ids.entry(token).or_insert_with(|| {
                        raw_vocabulary.push(token);
                        raw_vocabulary.len() as u32 - 1
                    })
                })
                .collect()
        };
        let reference_raw_ids = intern_raw(&raw_reference);
        let candidate_raw_ids = intern_raw(&raw_candidate);

        let (final_of_raw, distinct) = if use_stemmer {
            let stemmer = PorterStemmer::new(Mode::NltkExtensions);
            let mut final_ids: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
            let final_of_raw: Vec<u32> = raw_vocabulary
                .iter()
                .map(|&raw| {
                    let stemmed: Box<[u8]> = if raw.len() > 3 {
                        // Raw tokens are ASCII, so this is lossless.
                        stemmer.stem(&String::from_utf8_lossy(raw)).into_bytes().into_boxed_slice()
                    } else {
                        raw.into()
                    };
                    // rouge-score drops tokens that are not [a-z0-9]+ after
                    // stemming: only an empty stem could be one.
                    if stemmed.is_empty() {
                        return DROPPED;
                    }
                    let next = final_ids.len() as u32;
                    *final_ids.entry(stemmed).or_insert(next)
                })
                .collect();
            (Some(final_of_raw), final_ids.len())
        } else {
            (None, raw_vocabulary.len())
        };

        let finish = |raw: RawTokens, raw_ids: Vec<u32>| -> Tokens {
            let Some(final_of_raw) = &final_of_raw else {
                return Tokens { ids: raw_ids, line_ends: raw.line_ends };
            };
            let mut tokens = Tokens { ids: Vec::with_capacity(raw_ids.len()), line_ends: Vec::new() };
            let mut start = 0;
            for end in raw.line_ends {
                let line_start = tokens.ids.len();
                tokens.ids.extend(
                    raw_ids[start..end].iter().map(|&raw| final_of_raw[raw as usize]).filter(|&id| id != DROPPED),
                );
                if tokens.ids.len() > line_start {
                    tokens.line_ends.push(tokens.ids.len());
                }
                start = end;
            }
            tokens
        };
        RougeTexts {
            reference: finish(raw_reference, reference_raw_ids),
            candidate: finish(raw_candidate, candidate_raw_ids),
            distinct,
        }
    }

    /// The number of reference tokens (after stemming).
    pub fn reference_tokens(&self) -> usize {
        self.reference.ids.len()
    }

    /// The number of candidate tokens (after stemming).
    pub fn candidate_tokens(&self) -> usize {
        self.candidate.ids.len()
    }

    /// The score of one ROUGE variant.
    pub fn score(&self, rouge_type: RougeType) -> Score {
        match rouge_type {
            RougeType::N(0) => Score::default(),
            RougeType::N(n) => self.rouge_n(usize::from(n)),
            RougeType::L => self.rouge_l(),
            RougeType::Lsum => self.rouge_lsum(),
        }
    }

    /// `_score_ngrams(_create_ngrams(target, n), _create_ngrams(prediction, n))`.
    fn rouge_n(&self, n: usize) -> Score {
        let (reference, candidate) = (&self.reference.ids, &self.candidate.ids);
        let reference_count = (reference.len() + 1).saturating_sub(n);
        let candidate_count = (candidate.len() + 1).saturating_sub(n);
        let matches = if reference_count == 0 || candidate_count == 0 {
            0
        } else if n == 1 {
            overlap(reference, candidate, self.distinct)
        } else {
            // Give every distinct n-gram an id, one token at a time: the id
            // of a (k+1)-gram is that of the pair (k-gram id, next token).
            let mut pairs: FxHashMap<u64, u32> = FxHashMap::default();
            let mut reference_grams = reference.clone();
            let mut candidate_grams = candidate.clone();
            for k in 1..n {
                pairs.clear();
                extend_grams(&mut reference_grams, reference, k, &mut pairs);
                extend_grams(&mut candidate_grams, candidate, k, &mut pairs);
            }
            overlap(&reference_grams, &candidate_grams, pairs.len())
        };
        Score::of(matches, candidate_count.max(1), reference_count.max(1))
    }

    /// `_score_lcs(target, prediction)`.
    fn rouge_l(&self) -> Score {
        let (reference, candidate) = (&self.reference.ids, &self.candidate.ids);
        if reference.is_empty() || candidate.is_empty() {
            return Score::default();
        }
        let mut masks = Masks::new(self.distinct);
        masks.load(candidate);
        let length = lcs_length(&masks, reference);
        Score::of(length, candidate.len(), reference.len())
    }

    /// `_summary_level_lcs(target sentences, prediction sentences)`.
    fn rouge_lsum(&self) -> Score {
        let (reference, candidate) = (&self.reference, &self.candidate);
        let (m, n) = (reference.ids.len(), candidate.ids.len());
        if m == 0 || n == 0 {
            return Score::default();
        }
        // For every reference token, whether the union LCS of its sentence
        // holds it. Each candidate sentence's masks are built once.
        let mut in_union = vec![false; m];
        let mut masks = Masks::new(self.distinct);
        let mut rows = Vec::new();
        let mut lcs = Vec::new();
        for candidate_line in candidate.lines() {
            masks.load(candidate_line);
            let mut offset = 0;
            for reference_line in reference.lines() {
                lcs_rows(&masks, reference_line, &mut rows);
                backtrack(&rows, masks.words, reference_line, candidate_line, &mut lcs);
                for &i in &lcs {
                    in_union[offset + i] = true;
                }
                offset += reference_line.len();
            }
        }
        // Count hits sentence by sentence, each token at most as often as it
        // occurs in either text (rouge-score's "prevent double-counting").
        let mut counts_reference = vec![0u32; self.distinct];
        let mut counts_candidate = vec![0u32; self.distinct];
        for &id in &reference.ids {
            counts_reference[id as usize] += 1;
        }
        for &id in &candidate.ids {
            counts_candidate[id as usize] += 1;
        }
        let mut hits = 0;
        for (&id, _) in reference.ids.iter().zip(&in_union).filter(|(_, held)| **held) {
            let (r, c) = (&mut counts_reference[id as usize], &mut counts_candidate[id as usize]);
            if *c > 0 && *r > 0 {
                hits += 1;
                *c -= 1;
                *r -= 1;
            }
        }
        Score::of(hits, n, m)
    }
}

/// Marks a raw token dropped by the final `[a-z0-9]+` check.
const DROPPED: u32 = u32::MAX;

/// Token spans of one text in the shared byte buffer, and line ends.
struct RawTokens {
    spans: Vec<(usize, usize)>,
    /// The end (exclusive, into `spans`) of every line that has tokens.
    line_ends: Vec<usize>,
}

/// Which ASCII bytes are token characters once lowercased: `[a-z0-9]`.
static IS_TOKEN_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_lowercase() || (b as u8).is_ascii_digit();
        b += 1;
    }
    table
};

/// [`split`] for an ASCII text: the whole text is lowercased in one pass
/// into `bytes`, and the spans point at its runs of `[a-z0-9]`.
fn split_ascii(text: &str, bytes: &mut Vec<u8>) -> RawTokens {
    let mut raw = RawTokens { spans: Vec::with_capacity(text.len() / 5), line_ends: Vec::new() };
    let base = bytes.len();
    bytes.extend_from_slice(text.as_bytes());
    let lowered = &mut bytes[base..];
    lowered.make_ascii_lowercase();
    let (mut i, n) = (0, lowered.len());
    while i < n {
        while i < n && !IS_TOKEN_BYTE[usize::from(lowered[i])] {
            if lowered[i] == b'\n' && raw.line_ends.last().copied().unwrap_or(0) < raw.spans.len() {
                raw.line_ends.push(raw.spans.len());
            }
            i += 1;
        }
        let start = i;
        while i < n && IS_TOKEN_BYTE[usize::from(lowered[i])] {
            i += 1;
        }
        if i > start {
            raw.spans.push((base + start, base + i));
        }
    }
    if raw.line_ends.last().copied().unwrap_or(0) < raw.spans.len() {
        raw.line_ends.push(raw.spans.len());
    }
    raw
}

/// The tokenizer's first half: lowercase as Python's `str.lower` does, and
/// keep the runs of `[a-z0-9]`. Only two non-ASCII characters lowercase to
/// ASCII letters: K (U+212A, Kelvin) to `k`, and İ (U+0130) to `i` followed
/// by a combining dot, which separates.
fn split(text: &str, bytes: &mut Vec<u8>) -> RawTokens {
    if text.is_ascii() { split_ascii(text, bytes) } else { split_chars(text, bytes) }
}

/// [`split`] character by character, for any text.
fn split_chars(text: &str, bytes: &mut Vec<u8>) -> RawTokens {
    let mut raw = RawTokens { spans: Vec::with_capacity(text.len() / 5), line_ends: Vec::new() };
    let mut start = bytes.len();
    let end_token = |raw: &mut RawTokens, start: &mut usize, bytes: &Vec<u8>| {
        if bytes.len() > *start {
            raw.spans.push((*start, bytes.len()));
        }
        *start = bytes.len();
    };
    for ch in text.chars() {
        match ch {
            'a'..='z' | '0'..='9' => bytes.push(ch as u8),
            'A'..='Z' => bytes.push(ch.to_ascii_lowercase() as u8),
            '\u{212A}' => bytes.push(b'k'),
            '\u{130}' => {
                bytes.push(b'i');
                end_token(&mut raw, &mut start, bytes);
            }
            '\n' => {
                end_token(&mut raw, &mut start, bytes);
                if raw.line_ends.last().copied().unwrap_or(0) < raw.spans.len() {
                    raw.line_ends.push(raw.spans.len());
                }
            }
            _ => end_token(&mut raw, &mut start, bytes),
        }
    }
    end_token(&mut raw, &mut start, bytes);
    if raw.line_ends.last().copied().unwrap_or(0) < raw.spans.len() {
        raw.line_ends.push(raw.spans.len());
    }
    raw
}

/// Turns the ids of the k-grams of `tokens` into those of its (k+1)-grams.
fn extend_grams(grams: &mut Vec<u32>, tokens: &[u32], k: usize, pairs: &mut FxHashMap<u64, u32>) {
    let count = grams.len() - 1;
    for i in 0..count {
        let key = (u64::from(grams[i]) << 32) | u64::from(tokens[i + k]);
        let next = pairs.len() as u32;
        grams[i] = *pairs.entry(key).or_insert(next);
    }
    grams.truncate(count);
}

/// `sum(min(count_reference[g], count_candidate[g]))` over the ids `g`.
fn overlap(reference: &[u32], candidate: &[u32], ids: usize) -> usize {
    let mut counts = vec![0u32; ids];
    for &id in reference {
        counts[id as usize] += 1;
    }
    let mut matches = 0;
    for &id in candidate {
        let count = &mut counts[id as usize];
        if *count > 0 {
            *count -= 1;
            matches += 1;
        }
    }
    matches
}

/// For the bit-parallel LCS: for each token id, the bit mask of the
/// positions where it occurs in one sequence (the DP's columns).
struct Masks {
    /// Bits of a column vector: 64 columns per word.
    words: usize,
    /// Per token id, its mask's index in `masks`, or `NONE`.
    slot: Vec<u32>,
    masks: Vec<u64>,
    /// The ids with a slot, to reset them.
    loaded: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Masks {
    fn new(ids: usize) -> Self {
        Masks { words: 0, slot: vec![NONE; ids], masks: Vec::new(), loaded: Vec::new() }
    }

    /// Makes `columns` the sequence the masks describe.
    fn load(&mut self, columns: &[u32]) {
        for &id in &self.loaded {
            self.slot[id as usize] = NONE;
        }
        self.loaded.clear();
        self.masks.clear();
        self.words = columns.len().div_ceil(64);
        for (j, &id) in columns.iter().enumerate() {
            let mut slot = self.slot[id as usize];
            if slot == NONE {
                slot = self.loaded.len() as u32;
                self.slot[id as usize] = slot;
                self.loaded.push(id);
                self.masks.resize(self.masks.len() + self.words, 0);
            }
            self.masks[slot as usize * self.words + j / 64] |= 1 << (j % 64);
        }
    }

    /// The mask of `id`, or `None` when it does not occur.
    fn get(&self, id: u32) -> Option<&[u64]> {
        let slot = self.slot[id as usize];
        (slot != NONE).then(|| &self.masks[slot as usize * self.words..][..self.words])
    }
}

/// One DP row step (Allison–Dix / Hyyrö): `row` holds a 0 bit at every
/// column where the LCS table's row grows by one; `V' = (V + (V & M)) |
/// (V & !M)` with a carry across words.
fn step(row: &mut [u64], mask: &[u64]) {
    let mut carry = false;
    for (v, &m) in row.iter_mut().zip(mask) {
        let u = *v & m;
        let (sum, c1) = v.overflowing_add(u);
        let (sum, c2) = sum.overflowing_add(u64::from(carry));
        carry = c1 | c2;
        *v = sum | (*v & !m);
    }
}

/// The LCS length of `rows` against the masks' sequence, in one row of
/// memory.
fn lcs_length(masks: &Masks, rows: &[u32]) -> usize {
    let mut row = vec![u64::MAX; masks.words];
    for &id in rows {
        if let Some(mask) = masks.get(id) {
            step(&mut row, mask);
        }
    }
    // Bits past the last column stay 1: count the zeros.
    row.iter().map(|v| v.count_zeros() as usize).sum()
}

/// Every row of the LCS table in bit form: `rows[i * words..]` is row `i`
/// (row 0 is the empty prefix).
fn lcs_rows(masks: &Masks, reference: &[u32], rows: &mut Vec<u64>) {
    let words = masks.words;
    rows.clear();
    if words == 1 {
        // Sentences of up to 64 tokens, the common case: one word a row.
        let mut row = u64::MAX;
        rows.push(row);
        for &id in reference {
            if let Some(&[mask]) = masks.get(id) {
                row = row.wrapping_add(row & mask) | (row & !mask);
            }
            rows.push(row);
        }
        return;
    }
    rows.resize((reference.len() + 1) * words, u64::MAX);
    for (i, &id) in reference.iter().enumerate() {
        let (done, rest) = rows.split_at_mut((i + 1) * words);
        let row = &mut rest[..words];
        row.copy_from_slice(&done[i * words..]);
        if let Some(mask) = masks.get(id) {
            step(row, mask);
        }
    }
}

/// `table[i][j]` from a bit row: the zeros among its first `j` columns.
fn prefix_value(row: &[u64], j: usize) -> usize {
    let full = j / 64;
    let mut value: usize = row[..full].iter().map(|v| v.count_zeros() as usize).sum();
    if !j.is_multiple_of(64) {
        value += (!row[full] & ((1u64 << (j % 64)) - 1)).count_ones() as usize;
    }
    value
}

/// `_backtrack_norec`: the reference positions of the one LCS that
/// rouge-score reads out, walking back from the table's last cell (match:
/// diagonal; else left if `table[i][j-1] > table[i-1][j]`, else up), in
/// descending order. It tracks `table[i][j]`, and `table[i-1][j]` once
/// needed, as it goes, so most steps cost a bit read or two; it stops once
/// the cell's value is 0, where no match is left to find.
fn backtrack(rows: &[u64], words: usize, reference: &[u32], candidate: &[u32], lcs: &mut Vec<usize>) {
    lcs.clear();
    let (mut i, mut j) = (reference.len(), candidate.len());
    if i == 0 || j == 0 {
        return;
    }
    if words == 1 {
        return backtrack_one_word(rows, reference, candidate, lcs);
    }
    let row = |i: usize| &rows[i * words..(i + 1) * words];
    // Whether row `i` of the table grows by one at column `j` (1-based).
    let grows = |i: usize, j: usize| (row(i)[(j - 1) / 64] >> ((j - 1) % 64)) & 1 == 0;
    let mut value = prefix_value(row(i), j);
    // table[i-1][j], once needed, kept while moving left.
    let mut up = None;
    while value > 0 {
        if reference[i - 1] == candidate[j - 1] {
            lcs.push(i - 1);
            i -= 1;
            j -= 1;
            value -= 1;
            up = None;
        } else if grows(i, j) {
            // Left is value - 1, so up (the max) is value: up.
            i -= 1;
            up = None;
        } else {
            let above = *up.get_or_insert_with(|| prefix_value(row(i - 1), j));
            if value > above {
                // table[i][j-1] = value > table[i-1][j]: left.
                up = Some(above - usize::from(grows(i - 1, j)));
                j -= 1;
            } else {
                i -= 1;
                up = None;
            }
        }
    }
}

/// [`backtrack`] for a candidate of at most 64 tokens (one word a row),
/// the common case of sentences, with plain shifts for the bit reads.
fn backtrack_one_word(rows: &[u64], reference: &[u32], candidate: &[u32], lcs: &mut Vec<usize>) {
    // table[i][j]: the zeros among the first j bits of row i.
    let value_at = |row: u64, j: usize| (!row & (u64::MAX >> (64 - j))).count_ones() as usize;
    let (mut i, mut j) = (reference.len(), candidate.len());
    let mut value = value_at(rows[i], j);
    let mut up = None;
    while value > 0 {
        if reference[i - 1] == candidate[j - 1] {
            lcs.push(i - 1);
            i -= 1;
            j -= 1;
            value -= 1;
            up = None;
        } else if (rows[i] >> (j - 1)) & 1 == 0 {
            i -= 1;
            up = None;
        } else {
            let above = *up.get_or_insert_with(|| value_at(rows[i - 1], j));
            if value > above {
                up = Some(above - ((!rows[i - 1] >> (j - 1)) & 1) as usize);
                j -= 1;
            } else {
                i -= 1;
                up = None;
            }
        }
    }
}

#[cfg(test)]
mod tests;
