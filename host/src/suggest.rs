//! "Did you mean …?": the closest known word to a mistyped one.

/// The candidate closest to `word` (case-insensitively), if it is close
/// enough to be a likely typo: an edit distance of at most a third of the
/// word's length, and at least 2.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let word = word.to_ascii_lowercase();
    let (distance, best) =
        candidates.into_iter().map(|c| (strsim::damerau_levenshtein(&word, c), c)).min_by_key(|(d, _)| *d)?;
    (distance <= (word.len() / 3).max(2)).then(|| best.to_owned())
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn suggests_only_close_words() {
        let keys = ["keywords", "value", "less", "greater"];
        assert_eq!(nearest("keywordz", keys).as_deref(), Some("keywords"));
        assert_eq!(nearest("VALEU", keys).as_deref(), Some("value"));
        assert_eq!(nearest("banana", keys), None);
        assert_eq!(nearest("x", []), None);
    }
}
