use super::*;
use serde_json::json;

fn check(actual: &str, expected: Json) -> Result<Verdict, String> {
    Levenshtein::evaluate("levenshtein", &Actual::text(actual), &expected)
}

/// Distances and similarities from rapidfuzz 3.14.6 and python-Levenshtein
/// 0.27.5 (which agree): `reference/levenshtein_reference.py` prints these
/// rows.
#[test]
fn reference_cases() {
    let rows: &[(&str, &str, bool, usize, f64)] = &[
        ("kitten", "sitting", true, 3, 0.5714285714285714),
        ("", "", true, 0, 1.0),
        ("", "abc", true, 3, 0.0),
        ("abc", "", true, 3, 0.0),
        ("flaw", "lawn", true, 2, 0.5),
        ("The Beatles were from Liverpool", "The Beatles came from Liverpool.", true, 4, 0.875),
        ("Motörhead", "Motorhead", true, 1, 0.8888888888888888),
        ("naïve café", "naive cafe", true, 2, 0.8),
        ("café", "cafe\u{301}", true, 2, 0.6),
        ("日本語のテキスト", "日本語テキスト", true, 1, 0.875),
        ("😀😃😄", "😀😄", true, 1, 0.6666666666666667),
        ("👨\u{200d}👩\u{200d}👧", "👨\u{200d}👩\u{200d}👦", true, 1, 0.8),
        ("Ελληνικά", "ελληνικα", true, 2, 0.75),
        ("HELLO World", "hello world", false, 0, 1.0),
        ("HELLO World", "hello world", true, 6, 0.4545454545454546),
        ("ΟΔΟΣ", "οδος", false, 0, 1.0),
        ("Straße", "STRASSE", false, 2, 0.7142857142857143),
        ("İstanbul", "istanbul", false, 1, 0.8888888888888888),
        ("abcdef", "azced", true, 3, 0.5),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac",
            true,
            1,
            0.9803921568627451,
        ),
        ("sunday", "saturday", true, 3, 0.625),
    ];
    for &(a, b, case_sensitive, distance, similarity) in rows {
        let got = compare(a, b, case_sensitive);
        assert_eq!(got.distance, distance, "{a:?} vs {b:?}");
        assert!((got.similarity - similarity).abs() < 1e-12, "{a:?} vs {b:?}: {got:?}");
        // Symmetric.
        assert_eq!(compare(b, a, case_sensitive).distance, distance, "{b:?} vs {a:?}");
    }
}

/// The reference script's generator: a 64-bit LCG with Knuth's MMIX
/// constants, so that both sides draw the same strings.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % bound as u64) as usize
    }

    fn string(&mut self, alphabet: &[char], max_len: usize) -> Vec<char> {
        let len = self.next(max_len + 1);
        (0..len).map(|_| alphabet[self.next(alphabet.len())]).collect()
    }
}

const FUZZ_ALPHABET: &str = "abcé🙂日本ßİ \u{301}";

/// 500 random pairs over an alphabet with multi-byte characters and a
/// combining mark: the sum of distances matches rapidfuzz's (8579), and every
/// distance matches the plain full-matrix definition.
#[test]
fn fuzz_matches_rapidfuzz_and_the_full_matrix() {
    let alphabet: Vec<char> = FUZZ_ALPHABET.chars().collect();
    let mut rng = Lcg(20240601);
    let mut total = 0;
    for _ in 0..500 {
        let a = rng.string(&alphabet, 30);
        let b = rng.string(&alphabet, 30);
        let d = distance_chars(&a, &b);
        assert_eq!(d, full_matrix(&a, &b), "{a:?} vs {b:?}");
        total += d;
    }
    assert_eq!(total, 8579);
}

/// The textbook definition, a full (n+1)×(m+1) matrix.
fn full_matrix(a: &[char], b: &[char]) -> usize {
    let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
        }
    }
    d[a.len()][b.len()]
}

/// Two 10,000-character strings (continuing the fuzz generator): rapidfuzz
/// says 7582.
#[test]
fn long_inputs() {
    let alphabet: Vec<char> = FUZZ_ALPHABET.chars().collect();
    let mut rng = Lcg(20240601);
    for _ in 0..1000 {
        rng.string(&alphabet, 30);
    }
    let a: Vec<char> = (0..10_000).map(|_| alphabet[rng.next(alphabet.len())]).collect();
    let b: Vec<char> = (0..10_000).map(|_| alphabet[rng.next(alphabet.len())]).collect();
    assert_eq!(distance_chars(&a, &b), 7582);
}

#[test]
fn distance_counts_characters_not_bytes() {
    assert_eq!(distance("ö", "o"), 1);
    assert_eq!(distance("🙂", ""), 1);
    assert_eq!(distance("日本", "本日"), 2);
}

#[test]
fn scalar_expected_uses_the_default_threshold() {
    let v = check("The Beatles were from Liverpool", json!("The Beatles came from Liverpool.")).unwrap();
    assert!(v.pass);
    assert_eq!(v.score, Some(0.875));
    assert_eq!(v.message, "Levenshtein similarity 0.88 (distance 4 over 32 characters); threshold 0.8");
    assert_eq!(
        v.extras.unwrap(),
        json!({
            "similarity": 0.875,
            "distance": 4,
            "actual_length": 31,
            "reference_length": 32,
            "case_sensitive": true,
            "threshold": 0.8,
        })
    );

    let v = check("kitten", json!("sitting")).unwrap();
    assert!(!v.pass);
    assert_eq!(v.message, "Levenshtein similarity 0.57 (distance 3 over 7 characters); threshold 0.8");
}

#[test]
fn threshold_and_its_alias_min() {
    let v = check("kitten", json!({"reference": "sitting", "threshold": 0.5})).unwrap();
    assert!(v.pass);
    assert_eq!(v.message, "Levenshtein similarity 0.57 (distance 3 over 7 characters); threshold 0.5");
    let v = check("kitten", json!({"reference": "sitting", "min": 0.6})).unwrap();
    assert!(!v.pass);
    assert_eq!(v.message, "Levenshtein similarity 0.57 (distance 3 over 7 characters); threshold 0.6");
    // Exactly at the threshold passes.
    assert!(check("flaw", json!({"reference": "lawn", "threshold": 0.5})).unwrap().pass);
    assert!(check("", json!({"reference": "", "threshold": 1})).unwrap().pass);
}

#[test]
fn scores_near_the_threshold_show_enough_digits() {
    // 1 − 1/5000 = 0.9998, which two decimals would show as 1.0.
    let reference = "a".repeat(5000);
    let actual = format!("{}b", "a".repeat(4999));
    let v = check(&actual, json!({"reference": reference, "threshold": 1})).unwrap();
    assert!(!v.pass);
    assert_eq!(v.message, "Levenshtein similarity 0.9998 (distance 1 over 5000 characters); threshold 1");
}

#[test]
fn max_distance_decides_instead_of_the_threshold() {
    let v = check("kitten", json!({"reference": "sitting", "max_distance": 3})).unwrap();
    assert!(v.pass);
    assert_eq!(v.score.unwrap(), 0.5714285714285714);
    assert_eq!(v.message, "Levenshtein distance 3 over 7 characters (similarity 0.57); max_distance 3");
    let extras = v.extras.unwrap();
    assert_eq!(extras["max_distance"], json!(3));
    assert!(extras.get("threshold").is_none());

    let v = check("kitten", json!({"reference": "sitting", "max_distance": 2})).unwrap();
    assert!(!v.pass);
    assert_eq!(v.message, "Levenshtein distance 3 over 7 characters (similarity 0.57); max_distance 2");
    assert!(check("same", json!({"reference": "same", "max_distance": 0})).unwrap().pass);
    assert!(check("a", json!({"reference": "b", "max_distance": 1.0})).unwrap().pass);
    assert_eq!(
        check("a", json!({"reference": "a", "max_distance": 1, "threshold": 0.5})).unwrap_err(),
        "levenshtein takes either a similarity threshold (threshold or min) or max_distance, but both were given"
    );
}

#[test]
fn case_insensitive() {
    let v = check("HELLO World", json!({"reference": "hello world", "case_sensitive": false})).unwrap();
    assert!(v.pass);
    assert_eq!(v.message, "Levenshtein similarity 1.0 (distance 0 over 11 characters, ignoring case); threshold 0.8");
    let v = check("HELLO World", json!({"reference": "hello world", "case_sensitive": true})).unwrap();
    assert!(!v.pass);
    assert_eq!(v.message, "Levenshtein similarity 0.45 (distance 6 over 11 characters); threshold 0.8");
}

#[test]
fn empty_strings() {
    let v = check("", json!("")).unwrap();
    assert!(v.pass);
    assert_eq!(v.score, Some(1.0));
    assert_eq!(v.message, "Levenshtein similarity 1.0 (distance 0 over 0 characters); threshold 0.8");
    let v = check("", json!("a")).unwrap();
    assert!(!v.pass);
    assert_eq!(v.message, "Levenshtein similarity 0.0 (distance 1 over 1 character); threshold 0.8");
}

#[test]
fn bad_parameters_are_errors_naming_the_known_ones() {
    let known = "(its parameters: reference, threshold, min, max_distance, case_sensitive)";
    assert_eq!(
        check("a", json!({"reference": "a", "treshold": 0.5})).unwrap_err(),
        format!("levenshtein has no parameter `treshold` {known}")
    );
    assert_eq!(
        check("a", json!({"threshold": 0.5})).unwrap_err(),
        "levenshtein needs the parameter `reference` (a string)"
    );
    assert_eq!(
        check("a", json!(5)).unwrap_err(),
        "levenshtein needs a string or an object of parameters (reference, threshold, min, max_distance, case_sensitive), \
         found the number 5"
    );
    assert_eq!(
        check("a", json!({"reference": 5})).unwrap_err(),
        "levenshtein needs `reference` to be a string, found the number 5"
    );
    assert_eq!(
        check("a", json!({"reference": "a", "threshold": 1.5})).unwrap_err(),
        "levenshtein needs `threshold` to be a number between 0 and 1, found the number 1.5"
    );
    assert_eq!(
        check("a", json!({"reference": "a", "min": "high"})).unwrap_err(),
        "levenshtein needs `min` to be a number between 0 and 1, found the string \"high\""
    );
    assert_eq!(
        check("a", json!({"reference": "a", "min": 0.5, "threshold": 0.5})).unwrap_err(),
        "levenshtein takes `threshold` or its alias `min`, not both"
    );
    assert_eq!(
        check("a", json!({"reference": "a", "max_distance": -1})).unwrap_err(),
        "levenshtein needs `max_distance` to be a non-negative whole number, found the number -1"
    );
    assert_eq!(
        check("a", json!({"reference": "a", "max_distance": 1.5})).unwrap_err(),
        "levenshtein needs `max_distance` to be a non-negative whole number, found the number 1.5"
    );
    assert_eq!(
        check("a", json!({"reference": "a", "case_sensitive": "no"})).unwrap_err(),
        "levenshtein needs `case_sensitive` to be true or false, found the string \"no\""
    );
}

#[test]
fn the_actual_must_be_a_string() {
    let error = Levenshtein::evaluate("levenshtein", &Actual::value(json!(42)), &json!("42")).unwrap_err();
    assert_eq!(error, "levenshtein compares strings, found the number 42");
    let error = Levenshtein::evaluate("levenshtein", &Actual::value(json!(["a"])), &json!("a")).unwrap_err();
    assert_eq!(error, "levenshtein compares strings, found a list of 1 elements");
}

#[test]
fn describe_and_unknown_key() {
    let info = Levenshtein::describe();
    assert_eq!(info.name, "levenshtein");
    assert_eq!(info.matchers.len(), 1);
    assert_eq!(info.matchers[0].0, "levenshtein");
    assert_eq!(
        Levenshtein::evaluate("bleu", &Actual::text("a"), &json!("a")).unwrap_err(),
        "the levenshtein plugin has no matcher `bleu`"
    );
}
