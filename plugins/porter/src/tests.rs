//! The paper's examples and NLTK's irregularities; `tests/nltk_parity.rs`
//! compares thousands of words with NLTK itself.

use super::{Mode, PorterStemmer};

const ORIGINAL: PorterStemmer = PorterStemmer::new(Mode::Original);
const NLTK: PorterStemmer = PorterStemmer::new(Mode::NltkExtensions);

#[test]
fn paper_examples_in_both_modes() {
    let examples = [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("cats", "cat"),
        ("feed", "feed"),
        ("agreed", "agre"),
        ("plastered", "plaster"),
        ("motoring", "motor"),
        ("sing", "sing"),
        ("conflated", "conflat"),
        ("hopping", "hop"),
        ("falling", "fall"),
        ("filing", "file"),
        ("relational", "relat"),
        ("conditional", "condit"),
        ("digitizer", "digit"),
        ("triplicate", "triplic"),
        ("electrical", "electr"),
        ("goodness", "good"),
        ("adjustment", "adjust"),
        ("adoption", "adopt"),
        ("probate", "probat"),
        ("rate", "rate"),
        ("cease", "ceas"),
        ("controll", "control"),
        ("roll", "roll"),
        ("generously", "gener"),
    ];
    for (word, stem) in examples {
        assert_eq!(ORIGINAL.stem(word), stem, "original: {word}");
        assert_eq!(NLTK.stem(word), stem, "nltk: {word}");
    }
}

#[test]
fn modes_differ_where_nltk_extends_the_paper() {
    let rows = [
        // (word, original, nltk)
        ("dies", "di", "die"),
        ("died", "di", "die"),
        ("spied", "spi", "spi"),
        ("skies", "ski", "sky"),
        ("dying", "dy", "die"),
        ("enjoy", "enjoi", "enjoy"),
        ("happy", "happi", "happi"),
        ("sky", "sky", "sky"),
        ("is", "i", "is"),
        ("as", "a", "as"),
        ("by", "by", "by"),
        ("conformabli", "conform", "conform"),
        ("vileli", "vile", "vile"),
        ("radically", "radic", "radic"),
        ("archaeology", "archaeologi", "archaeolog"),
    ];
    for (word, original, nltk) in rows {
        assert_eq!(ORIGINAL.stem(word), original, "original: {word}");
        assert_eq!(NLTK.stem(word), nltk, "nltk: {word}");
    }
}

#[test]
fn lowercases_like_python_and_counts_code_points() {
    assert_eq!(NLTK.stem("Running"), "run");
    assert_eq!(NLTK.stem("SKIES"), "sky");
    // Two characters as written, three once lowercased: left alone.
    assert_eq!(NLTK.stem("İs"), "i\u{307}s");
    assert_eq!(ORIGINAL.stem("İs"), "i\u{307}");
    // Python lowercases a word-final sigma to ς.
    assert_eq!(NLTK.stem("ΣΟΦΙΑΣ"), "σοφια\u{3c2}");
    assert_eq!(NLTK.stem("naïve"), "naïv");
}

#[test]
fn degenerate_words() {
    for stemmer in [ORIGINAL, NLTK] {
        assert_eq!(stemmer.stem(""), "");
        assert_eq!(stemmer.stem("yyyyyyyy"), stemmer.stem("yyyyyyyy"));
        // NLTK's `*d` rule marker also matches literally.
        assert_eq!(stemmer.stem("foo*ding"), "food");
    }
    assert_eq!(ORIGINAL.stem("s"), "");
    assert_eq!(NLTK.stem("s"), "s");
    let long = "y".repeat(100_000);
    assert!(!NLTK.stem(&long).is_empty());
}

#[test]
fn default_mode_is_nltk_extensions() {
    assert_eq!(PorterStemmer::default().mode(), Mode::NltkExtensions);
}
