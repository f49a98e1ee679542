//! Differential test: every line of `nltk_porter.txt` (written by
//! `reference/make_fixture.py` with NLTK itself) must stem identically.

use assay_porter::{Mode, PorterStemmer};

const FIXTURE: &str = include_str!("nltk_porter.txt");

#[test]
fn every_fixture_word_stems_as_nltk_does() {
    let original = PorterStemmer::new(Mode::Original);
    let nltk = PorterStemmer::new(Mode::NltkExtensions);
    let mut failures = Vec::new();
    let mut words = 0;
    for line in FIXTURE.lines().filter(|line| !line.starts_with('#')) {
        let fields: Vec<&str> = line.split(' ').collect();
        let [word, want_original, want_nltk] = fields[..] else {
            panic!("malformed fixture line {line:?}");
        };
        words += 1;
        let (got_original, got_nltk) = (original.stem(word), nltk.stem(word));
        if got_original != want_original || got_nltk != want_nltk {
            failures.push(format!(
                "{word}: original {got_original:?} (nltk {want_original:?}), extensions {got_nltk:?} (nltk {want_nltk:?})"
            ));
        }
    }
    assert!(words > 5000, "the fixture holds only {words} words");
    assert!(failures.is_empty(), "{} of {words} words differ:\n{}", failures.len(), failures.join("\n"));
}
