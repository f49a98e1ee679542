//! Counting things in what assay prints: `1 test case`, `2 test cases`.
//! Every noun counted in a message is a regular English plural (an `s`).

/// `noun`, with an `s` unless `n` is 1: for `3 of 4 samples`, where the
/// number comes separately.
pub fn noun(n: usize, noun: &str) -> String {
    if n == 1 { noun.to_owned() } else { format!("{noun}s") }
}

/// `n` and `noun`, plural unless `n` is 1: `1 test case`, `0 errors`.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {}", self::noun(n, noun))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(0, "error"), "0 errors");
        assert_eq!(count(1, "test case"), "1 test case");
        assert_eq!(count(2, "test case"), "2 test cases");
        assert_eq!(noun(1, "sample"), "sample");
        assert_eq!(noun(11, "sample"), "samples");
    }
}
