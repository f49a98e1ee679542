//! The tokenizer and the alignment's details; the scores themselves are
//! compared with nltk in `tests/reference.rs`.

use super::*;

#[test]
fn tokenizer_splits_like_python_str_split() {
    // Every character Python 3.11's `str.isspace()` accepts.
    let python_whitespace = [
        0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
        0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
    ];
    for c in (0..=0x10ffff).filter_map(char::from_u32) {
        assert_eq!(is_python_whitespace(c), python_whitespace.contains(&u32::from(c)), "U+{:04X}", u32::from(c));
    }
    assert_eq!(tokenize("  The CAT,\tsat\u{a0}on\u{1c}ΣΟΦΙΑΣ\n"), ["the", "cat,", "sat", "on", "σοφιας"]);
    assert!(tokenize(" \u{3000}\n").is_empty());
}

#[test]
fn each_hypothesis_word_takes_the_latest_free_reference_word() {
    // nltk aligns from the last hypothesis word to the first, each to the
    // latest free reference word: nltk's alignment is (0, 0), (1, 2),
    // (2, 3), (3, 1), so `cat sat` is one chunk of three.
    let m = single_meteor("the the cat sat", "the cat sat the", Weights::default());
    assert_eq!(align("the the cat sat", "the cat sat the"), [(0, 0), (1, 2), (2, 3), (3, 1)]);
    assert_eq!((m.matches, m.chunks), (4, 3));
}

#[test]
fn stem_matching_uses_only_words_left_by_exact_matching() {
    let m = single_meteor("runs running", "running runner", Weights::default());
    // `running` matches exactly; `runner` (stem `runner`) does not match
    // `runs` (stem `run`).
    assert_eq!((m.matches, m.chunks), (1, 1));
    let m = single_meteor("runs jumped", "running jumps", Weights::default());
    assert_eq!((m.matches, m.chunks), (2, 1));
}

#[test]
fn zero_divisions_score_zero() {
    for (reference, hypothesis) in [("", "words"), ("words", ""), ("", ""), ("a b", "c d")] {
        let m = single_meteor(reference, hypothesis, Weights::default());
        assert_eq!((m.score, m.fmean, m.penalty, m.chunks, m.matches), (0.0, 0.0, 0.0, 0, 0));
    }
    let m = single_meteor("", "two words", Weights::default());
    assert_eq!((m.precision, m.recall, m.hypothesis_tokens, m.reference_tokens), (0.0, 0.0, 2, 0));
}

#[test]
fn the_first_of_equal_references_counts() {
    let (best, m) = meteor(&["a cat", "the cat", "the cat"], "the cat", Weights::default()).unwrap();
    assert_eq!(best, 1);
    assert_eq!(m.matches, 2);
    assert_eq!(meteor(&[], "x", Weights::default()), None);
}
