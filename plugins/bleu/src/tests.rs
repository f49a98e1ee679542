//! Checks against sacrebleu 2.6.0: every number in `CASES`, `TOKENIZE` and
//! the fuzz checksums is printed by `reference/bleu_reference.py`.

use super::*;
use serde_json::json;

/// One sacrebleu result: BLEU (0–100), counts, totals and precisions as
/// sacrebleu reports them (add-k counts and totals include the added k).
struct Case {
    name: &'static str,
    hypothesis: &'static str,
    references: &'static [&'static str],
    /// The extra parameters, as JSON.
    options: &'static str,
    bleu: f64,
    counts: &'static [f64],
    totals: &'static [f64],
    precisions: &'static [f64],
    bp: f64,
    sys_len: usize,
    ref_len: usize,
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    Case { name: "cat_exp", hypothesis: "The cat sat on the mat.", references: &["The cat is on the mat."], options: "{}", bleu: 48.892302243490086, counts: &[6.0, 4.0, 2.0, 1.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[85.71428571428571, 66.66666666666667, 40.0, 25.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "cat_none", hypothesis: "The cat sat on the mat.", references: &["The cat is on the mat."], options: "{\"smooth_method\": \"none\"}", bleu: 48.892302243490086, counts: &[6.0, 4.0, 2.0, 1.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[85.71428571428571, 66.66666666666667, 40.0, 25.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "cat_floor", hypothesis: "The cat sat on the mat.", references: &["The cat is on the mat."], options: "{\"smooth_method\": \"floor\"}", bleu: 48.892302243490086, counts: &[6.0, 4.0, 2.0, 1.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[85.71428571428571, 66.66666666666667, 40.0, 25.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "cat_floor_0.5", hypothesis: "The cat sat on the mat.", references: &["The cat is on the mat."], options: "{\"smooth_method\": \"floor\", \"smooth_value\": 0.5}", bleu: 48.892302243490086, counts: &[6.0, 4.0, 2.0, 1.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[85.71428571428571, 66.66666666666667, 40.0, 25.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "cat_addk", hypothesis: "The cat sat on the mat.", references: &["The cat is on the mat."], options: "{\"smooth_method\": \"add-k\"}", bleu: 59.15463685222679, counts: &[6.0, 5.0, 3.0, 2.0], totals: &[7.0, 7.0, 6.0, 5.0], precisions: &[85.71428571428571, 71.42857142857143, 50.0, 40.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "cat_addk_2", hypothesis: "The cat sat on the mat.", references: &["The cat is on the mat."], options: "{\"smooth_method\": \"add-k\", \"smooth_value\": 2}", bleu: 65.46536707079773, counts: &[6.0, 6.0, 4.0, 3.0], totals: &[7.0, 8.0, 7.0, 6.0], precisions: &[85.71428571428571, 75.0, 57.142857142857146, 50.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "no_4gram_match_none", hypothesis: "the quick brown fox jumps", references: &["the quick red fox leaps over"], options: "{\"smooth_method\": \"none\"}", bleu: 0.0, counts: &[3.0, 1.0, 0.0, 0.0], totals: &[5.0, 4.0, 3.0, 2.0], precisions: &[60.0, 25.0, 0.0, 0.0], bp: 0.8187307530779819, sys_len: 5, ref_len: 6 },
    Case { name: "no_4gram_match_exp", hypothesis: "the quick brown fox jumps", references: &["the quick red fox leaps over"], options: "{}", bleu: 19.3576934939088, counts: &[3.0, 1.0, 0.0, 0.0], totals: &[5.0, 4.0, 3.0, 2.0], precisions: &[60.0, 25.0, 16.666666666666668, 12.5], bp: 0.8187307530779819, sys_len: 5, ref_len: 6 },
    Case { name: "no_4gram_match_floor", hypothesis: "the quick brown fox jumps", references: &["the quick red fox leaps over"], options: "{\"smooth_method\": \"floor\"}", bleu: 10.29499418829739, counts: &[3.0, 1.0, 0.0, 0.0], totals: &[5.0, 4.0, 3.0, 2.0], precisions: &[60.0, 25.0, 3.3333333333333335, 5.0], bp: 0.8187307530779819, sys_len: 5, ref_len: 6 },
    Case { name: "papineni_multi_ref", hypothesis: "It is a guide to action which ensures that the military always obeys the commands of the party.", references: &["It is a guide to action that ensures that the military will forever heed Party commands.", "It is the guiding principle which guarantees the military forces always being under the command of the Party.", "It is the practical guide for the army always to heed the directions of the party."], options: "{}", bleu: 54.017258985951415, counts: &[18.0, 11.0, 8.0, 5.0], totals: &[19.0, 18.0, 17.0, 16.0], precisions: &[94.73684210526316, 61.111111111111114, 47.05882352941177, 31.25], bp: 1.0, sys_len: 19, ref_len: 19 },
    Case { name: "papineni_multi_ref_none", hypothesis: "It is a guide to action which ensures that the military always obeys the commands of the party.", references: &["It is a guide to action that ensures that the military will forever heed Party commands.", "It is the guiding principle which guarantees the military forces always being under the command of the Party.", "It is the practical guide for the army always to heed the directions of the party."], options: "{\"smooth_method\": \"none\"}", bleu: 54.017258985951415, counts: &[18.0, 11.0, 8.0, 5.0], totals: &[19.0, 18.0, 17.0, 16.0], precisions: &[94.73684210526316, 61.111111111111114, 47.05882352941177, 31.25], bp: 1.0, sys_len: 19, ref_len: 19 },
    Case { name: "closest_ref_len_tie_shorter", hypothesis: "a b c d e", references: &["a b c d", "a b c d e f", "x y"], options: "{}", bleu: 100.00000000000004, counts: &[5.0, 4.0, 3.0, 2.0], totals: &[5.0, 4.0, 3.0, 2.0], precisions: &[100.0, 100.0, 100.0, 100.0], bp: 1.0, sys_len: 5, ref_len: 4 },
    Case { name: "identical", hypothesis: "Paris is the capital of France.", references: &["Paris is the capital of France."], options: "{}", bleu: 100.00000000000004, counts: &[7.0, 6.0, 5.0, 4.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[100.0, 100.0, 100.0, 100.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "short_hypothesis", hypothesis: "the", references: &["the cat"], options: "{}", bleu: 36.78794411714425, counts: &[1.0, 0.0, 0.0, 0.0], totals: &[1.0, 0.0, 0.0, 0.0], precisions: &[100.0, 0.0, 0.0, 0.0], bp: 0.36787944117144233, sys_len: 1, ref_len: 2 },
    Case { name: "short_hypothesis_no_effective_order", hypothesis: "the cat", references: &["the cat sat"], options: "{\"effective_order\": false}", bleu: 0.0, counts: &[2.0, 1.0, 0.0, 0.0], totals: &[2.0, 1.0, 0.0, 0.0], precisions: &[100.0, 100.0, 0.0, 0.0], bp: 0.6065306597126334, sys_len: 2, ref_len: 3 },
    Case { name: "empty_hypothesis", hypothesis: "", references: &["the cat"], options: "{}", bleu: 0.0, counts: &[0.0, 0.0, 0.0, 0.0], totals: &[0.0, 0.0, 0.0, 0.0], precisions: &[0.0, 0.0, 0.0, 0.0], bp: 0.0, sys_len: 0, ref_len: 2 },
    Case { name: "empty_reference", hypothesis: "the cat", references: &[""], options: "{}", bleu: 0.0, counts: &[0.0, 0.0, 0.0, 0.0], totals: &[2.0, 1.0, 0.0, 0.0], precisions: &[0.0, 0.0, 0.0, 0.0], bp: 1.0, sys_len: 2, ref_len: 0 },
    Case { name: "both_empty", hypothesis: "", references: &[""], options: "{}", bleu: 0.0, counts: &[0.0, 0.0, 0.0, 0.0], totals: &[0.0, 0.0, 0.0, 0.0], precisions: &[0.0, 0.0, 0.0, 0.0], bp: 1.0, sys_len: 0, ref_len: 0 },
    Case { name: "no_match", hypothesis: "dogs bark", references: &["cats meow"], options: "{}", bleu: 0.0, counts: &[0.0, 0.0, 0.0, 0.0], totals: &[2.0, 1.0, 0.0, 0.0], precisions: &[0.0, 0.0, 0.0, 0.0], bp: 1.0, sys_len: 2, ref_len: 2 },
    Case { name: "punctuation_13a", hypothesis: "Hello, world! It's 3.14 -- e.g. (a test) & more; x-1 \"quoted\" &amp; 1,000.5 ...", references: &["Hello world! It is 3.14 - e.g. (a test) & more: x-1 \"quoted\" & 1,000.5 ..."], options: "{}", bleu: 66.16626919250143, counts: &[23.0, 18.0, 15.0, 13.0], totals: &[27.0, 26.0, 25.0, 24.0], precisions: &[85.18518518518519, 69.23076923076923, 60.0, 54.166666666666664], bp: 1.0, sys_len: 27, ref_len: 27 },
    Case { name: "punctuation_none", hypothesis: "Hello, world! It's 3.14 -- e.g. (a test) & more; x-1 \"quoted\" &amp; 1,000.5 ...", references: &["Hello world! It is 3.14 - e.g. (a test) & more: x-1 \"quoted\" & 1,000.5 ..."], options: "{\"tokenize\": \"none\"}", bleu: 21.989282626654578, counts: &[10.0, 5.0, 2.0, 1.0], totals: &[15.0, 14.0, 13.0, 12.0], precisions: &[66.66666666666667, 35.714285714285715, 15.384615384615385, 8.333333333333334], bp: 0.9355069850316178, sys_len: 15, ref_len: 16 },
    Case { name: "lowercase", hypothesis: "THE Cat sat on the MAT.", references: &["the cat sat on the mat."], options: "{\"lowercase\": true}", bleu: 100.00000000000004, counts: &[7.0, 6.0, 5.0, 4.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[100.0, 100.0, 100.0, 100.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "mixed_case", hypothesis: "THE Cat sat on the MAT.", references: &["the cat sat on the mat."], options: "{}", bleu: 26.269098944241588, counts: &[4.0, 2.0, 1.0, 0.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[57.142857142857146, 33.333333333333336, 20.0, 12.5], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "bigrams_only", hypothesis: "the cat sat on the mat", references: &["the cat is on the mat"], options: "{\"max_ngram_order\": 2}", bleu: 70.71067811865471, counts: &[5.0, 3.0], totals: &[6.0, 5.0], precisions: &[83.33333333333333, 60.0], bp: 1.0, sys_len: 6, ref_len: 6 },
    Case { name: "six_grams", hypothesis: "one two three four five six seven", references: &["one two three four five six eight"], options: "{\"max_ngram_order\": 6}", bleu: 72.30200263994837, counts: &[6.0, 5.0, 4.0, 3.0, 2.0, 1.0], totals: &[7.0, 6.0, 5.0, 4.0, 3.0, 2.0], precisions: &[85.71428571428571, 83.33333333333333, 80.0, 75.0, 66.66666666666667, 50.0], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "unicode", hypothesis: "Müller’s café – naïve résumé, 東京は大きい。", references: &["Müller's café - naive résumé, 東京は大きい。"], options: "{}", bleu: 26.269098944241588, counts: &[4.0, 2.0, 1.0, 0.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[57.142857142857146, 33.333333333333336, 20.0, 12.5], bp: 1.0, sys_len: 7, ref_len: 7 },
    Case { name: "newlines_and_skipped", hypothesis: "multi-\nline text <skipped> here\nand there", references: &["multiline text here and there"], options: "{}", bleu: 100.00000000000004, counts: &[5.0, 4.0, 3.0, 2.0], totals: &[5.0, 4.0, 3.0, 2.0], precisions: &[100.0, 100.0, 100.0, 100.0], bp: 1.0, sys_len: 5, ref_len: 5 },
    Case { name: "odd_whitespace", hypothesis: "a\u{a0}b\u{1c}c\u{2003}d  e\te", references: &["a b c d e e"], options: "{}", bleu: 100.00000000000004, counts: &[6.0, 5.0, 4.0, 3.0], totals: &[6.0, 5.0, 4.0, 3.0], precisions: &[100.0, 100.0, 100.0, 100.0], bp: 1.0, sys_len: 6, ref_len: 6 },
    Case { name: "repeated_words_clipped", hypothesis: "the the the the the the the", references: &["the cat is on the mat"], options: "{\"smooth_method\": \"none\"}", bleu: 0.0, counts: &[2.0, 0.0, 0.0, 0.0], totals: &[7.0, 6.0, 5.0, 4.0], precisions: &[28.571428571428573, 0.0, 0.0, 0.0], bp: 1.0, sys_len: 7, ref_len: 6 },
    Case { name: "multi_ref_addk_lowercase", hypothesis: "The Quick brown fox.", references: &["the quick brown dog.", "A quick brown fox!"], options: "{\"smooth_method\": \"add-k\", \"lowercase\": true}", bleu: 66.87403049764218, counts: &[5.0, 4.0, 3.0, 1.0], totals: &[5.0, 5.0, 4.0, 3.0], precisions: &[100.0, 80.0, 75.0, 33.333333333333336], bp: 1.0, sys_len: 5, ref_len: 5 },
];

/// The expected value for a case: the references and the options as
/// parameters.
fn expected(case: &Case) -> Json {
    let mut params: Json = serde_json::from_str(case.options).unwrap();
    params["references"] = json!(case.references);
    params
}

#[test]
fn matches_sacrebleu() {
    for case in CASES {
        let v = BleuMatcher::evaluate("bleu", &Actual::text(case.hypothesis), &expected(case))
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let extras = v.extras.as_ref().unwrap();
        let name = case.name;
        let bleu = extras["bleu"].as_f64().unwrap();
        assert!((bleu - case.bleu).abs() < 1e-9, "{name}: BLEU {bleu}, sacrebleu {}", case.bleu);
        assert_eq!(v.score.unwrap(), (case.bleu / 100.0).min(1.0), "{name}");
        assert_eq!(extras["bp"].as_f64().unwrap(), case.bp, "{name}");
        assert_eq!(extras["sys_len"], json!(case.sys_len), "{name}");
        assert_eq!(extras["ref_len"], json!(case.ref_len), "{name}");
        let precisions: Vec<f64> =
            extras["precisions"].as_array().unwrap().iter().map(|p| p.as_f64().unwrap() * 100.0).collect();
        assert_eq!(precisions.len(), case.precisions.len(), "{name}");
        for (got, want) in precisions.iter().zip(case.precisions) {
            assert!((got - want).abs() < 1e-9, "{name}: precisions {precisions:?}, sacrebleu {:?}", case.precisions);
        }
        // sacrebleu adds k to the counts and totals of orders above 1 (when
        // anything matched); the plugin reports the raw counts.
        let k = match (extras["smooth_method"].as_str(), extras["smooth_value"].as_f64()) {
            (Some("add-k"), Some(k)) if extras["counts"][0] != json!(0) => k,
            _ => 0.0,
        };
        let smoothed = |key: &str| -> Vec<f64> {
            extras[key]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, c)| c.as_f64().unwrap() + if i > 0 { k } else { 0.0 })
                .collect()
        };
        assert_eq!(smoothed("counts"), case.counts, "{name}: counts");
        assert_eq!(smoothed("totals"), case.totals, "{name}: totals");
    }
}

/// The 13a tokenizer's output for tricky inputs, after sacrebleu's rstrip.
#[rustfmt::skip]
const TOKENIZE: &[(&str, &str)] = &[
    ("Hello, world!", "Hello , world !"),
    ("It's 3.14, e.g. 1,000.5 and 5. and .5 or x.y", "It's 3.14 , e . g . 1,000.5 and 5 . and . 5 or x . y"),
    ("a.. b,, 1.. 2,3 .5 5. x-1-2-y 10-20 -3", "a . . b , , 1 . . 2,3 . 5 5 . x-1 - 2 - y 10 - 20 -3"),
    ("&quot;quoted&quot; &amp;amp; &lt;tag&gt; & plain", "\" quoted \" & amp ; < tag > & plain"),
    ("multi-\nline <skipped> text\n", "multiline text"),
    ("{braces} [brackets] `tick` ~tilde^ _under_ @at #hash $5 %p *star +plus =eq ?q |pipe \\back /slash", "{ braces } [ brackets ] ` tick ` ~ tilde ^ _ under _ @ at # hash $ 5 % p * star + plus = eq ? q | pipe \\ back / slash"),
    ("  leading and trailing spaces   ", "leading and trailing spaces"),
    ("tab\tand\u{a0}nbsp and\u{1c}file-sep", "tab and nbsp and file-sep"),
    ("Müller’s café – naïve 東京。", "Müller’s café – naïve 東京。"),
    ("end with period .", "end with period ."),
    ("", ""),
    ("...", ". . ."),
    ("1.2.3 a,b,c 1,2,3", "1.2.3 a , b , c 1,2,3"),
];

#[test]
fn tokenizer_13a_matches_sacrebleu() {
    for (input, want) in TOKENIZE {
        assert_eq!(tokenize_13a(tokenize::rstrip(input)), *want, "{input:?}");
    }
}

/// The reference script's generator: a 64-bit LCG with Knuth's MMIX
/// constants.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % bound as u64) as usize
    }
}

fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3))
}

/// 2,000 random lines of symbols, digits, entities, `<skipped>`, newlines
/// and odd whitespace tokenize exactly as sacrebleu tokenizes them.
#[test]
fn tokenizer_fuzz_matches_sacrebleu() {
    let pieces = [
        "a",
        "b",
        "Z",
        "é",
        "東",
        "1",
        "2",
        "0",
        ".",
        ",",
        "-",
        "&",
        "amp;",
        "quot;",
        "lt;",
        "&gt;",
        "<skipped>",
        "\n",
        " ",
        "  ",
        "\t",
        "\u{a0}",
        "\u{1c}",
        "'",
        "\"",
        "(",
        ")",
        "!",
        "?",
        "$",
        "/",
        "\\",
        "~",
        "_",
        "`",
        ";",
        ":",
        "@",
        "#",
        "%",
        "+",
        "=",
        "[",
        "]",
        "{",
        "}",
        "|",
        "^",
        "*",
        "’",
    ];
    let mut rng = Lcg(7);
    let mut hash = 0xcbf29ce484222325;
    for _ in 0..2000 {
        let len = rng.next(25);
        let line: String = (0..len).map(|_| pieces[rng.next(pieces.len())]).collect();
        let tokens = tokenize_13a(tokenize::rstrip(&line));
        hash = fnv1a(hash, format!("{tokens}\n").as_bytes());
    }
    assert_eq!(hash, FUZZ_TOKENIZER_HASH);
}

/// 300 random hypotheses with one to three references over a small
/// vocabulary: the sum of sacrebleu's scores for each smoothing method.
#[test]
fn bleu_fuzz_matches_sacrebleu() {
    let words = ["the", "cat", "sat", "on", "mat", "a", "dog", ".", ",", "ran"];
    let mut rng = Lcg(11);
    let mut sums = [0.0; 4];
    let methods = [Smoothing::None, Smoothing::Floor(0.1), Smoothing::AddK(1.0), Smoothing::Exp];
    for _ in 0..300 {
        let sentence = |rng: &mut Lcg| {
            let len = rng.next(12);
            (0..len).map(|_| words[rng.next(words.len())]).collect::<Vec<_>>().join(" ")
        };
        let hypothesis = sentence(&mut rng);
        let count = 1 + rng.next(3);
        let references: Vec<String> = (0..count).map(|_| sentence(&mut rng)).collect();
        let references: Vec<&str> = references.iter().map(String::as_str).collect();
        for (sum, smoothing) in sums.iter_mut().zip(methods) {
            *sum += sentence_bleu(&hypothesis, &references, &Options { smoothing, ..Options::default() }).score;
        }
    }
    for (sum, want) in sums.iter().zip(FUZZ_BLEU_SUMS) {
        assert!((sum - want).abs() < 1e-9, "{sums:?} vs {FUZZ_BLEU_SUMS:?}");
    }
}

/// `reference/bleu_reference.py`: "tokenizer fuzz".
const FUZZ_TOKENIZER_HASH: u64 = 0xa97cf87737243f89;

/// `reference/bleu_reference.py`: "bleu fuzz", for none, floor, add-k, exp.
const FUZZ_BLEU_SUMS: [f64; 4] = [423.2217673151156, 1957.2747035754608, 5939.564733947804, 3468.3466530315004];

fn check(actual: &str, expected: Json) -> Result<Verdict, String> {
    BleuMatcher::evaluate("bleu", &Actual::text(actual), &expected)
}

#[test]
fn scalar_expected_is_one_reference_with_the_defaults() {
    let v = check("The cat sat on the mat.", json!("The cat is on the mat.")).unwrap();
    assert!(!v.pass);
    assert_eq!(v.score, Some(48.892302243490086 / 100.0));
    assert_eq!(
        v.message,
        "BLEU 0.49 (n-gram precisions 0.857/0.667/0.400/0.250, brevity penalty 1.000, 7 hypothesis tokens, \
         reference length 7); threshold 0.5"
    );
    let extras = v.extras.unwrap();
    assert_eq!(extras["counts"], json!([6, 4, 2, 1]));
    assert_eq!(extras["totals"], json!([7, 6, 5, 4]));
    assert_eq!(extras["tokenize"], json!("13a"));
    assert_eq!(extras["smooth_method"], json!("exp"));
    assert_eq!(extras["effective_order"], json!(4));
    assert_eq!(extras["threshold"], json!(0.5));
    assert!(extras.get("smooth_value").is_none());
}

#[test]
fn threshold_min_and_messages() {
    let v = check("The cat sat on the mat.", json!({"reference": "The cat is on the mat.", "threshold": 0.4})).unwrap();
    assert!(v.pass);
    assert!(v.message.ends_with("; threshold 0.4"), "{}", v.message);
    let v = check("The cat sat on the mat.", json!({"reference": "The cat is on the mat.", "min": 0.4})).unwrap();
    assert!(v.pass);
    let v = check("Paris is the capital of France.", json!("Paris is the capital of France.")).unwrap();
    assert!(v.pass);
    assert_eq!(v.score, Some(1.0));
    assert_eq!(
        v.message,
        "BLEU 1.0 (n-gram precisions 1.000/1.000/1.000/1.000, brevity penalty 1.000, 7 hypothesis tokens, \
         reference length 7); threshold 0.5"
    );
    let v = check("the", json!({"references": ["the cat", "a cat"], "threshold": 0.3})).unwrap();
    assert!(v.pass);
    assert_eq!(
        v.message,
        "BLEU 0.37 (n-gram precisions 1.000/0.000/0.000/0.000, brevity penalty 0.368, 1 hypothesis token, \
         reference length 2 (closest of 2)); threshold 0.3"
    );
    assert_eq!(v.extras.unwrap()["effective_order"], json!(1));
    let v = check("", json!("the cat")).unwrap();
    assert!(!v.pass);
    assert_eq!(v.score, Some(0.0));
}

#[test]
fn smoothing_value_is_reported() {
    let v = check("a b", json!({"reference": "a c", "smooth_method": "floor"})).unwrap();
    let extras = v.extras.unwrap();
    assert_eq!(extras["smooth_method"], json!("floor"));
    assert_eq!(extras["smooth_value"], json!(0.1));
    let v = check("a b", json!({"reference": "a c", "smooth_method": "add-k", "smooth_value": 3})).unwrap();
    assert_eq!(v.extras.unwrap()["smooth_value"], json!(3.0));
}

#[test]
fn bad_parameters_are_errors() {
    let rows = [
        (
            json!({"reference": "a", "order": 2}),
            "bleu has no parameter `order` (its parameters: reference, references, threshold, min, max_ngram_order, \
             tokenize, lowercase, smooth_method, smooth_value, effective_order)",
        ),
        (json!({"threshold": 0.2}), "bleu needs `reference` (a string) or `references` (a list of strings)"),
        (json!({"reference": "a", "references": ["b"]}), "bleu takes `reference` or `references`, not both"),
        (json!({"references": []}), "bleu needs `references` to be a non-empty list of strings, found the list []"),
        (
            json!({"references": "a"}),
            "bleu needs `references` to be a non-empty list of strings, found the string \"a\"",
        ),
        (json!({"references": ["a", 1]}), "bleu needs `references` to be a list of strings, element 1 is the number 1"),
        (json!({"reference": ["a"]}), "bleu needs `reference` to be a string, found the list [\"a\"]"),
        (
            json!(3),
            "bleu needs a string or an object of parameters (reference, references, threshold, min, max_ngram_order, \
             tokenize, lowercase, smooth_method, smooth_value, effective_order), found the number 3",
        ),
        (json!({"reference": "a", "tokenize": "intl"}), "bleu has no tokenizer \"intl\" (its tokenizers: 13a, none)"),
        (
            json!({"reference": "a", "smooth_method": "add-one"}),
            "bleu has no smoothing method \"add-one\" (its methods: none, floor, add-k, exp)",
        ),
        (
            json!({"reference": "a", "smooth_value": 0.2}),
            "bleu's `smooth_value` applies to the smoothing methods floor and add-k, and the method is exp",
        ),
        (
            json!({"reference": "a", "smooth_method": "floor", "smooth_value": -1}),
            "bleu needs `smooth_value` to be a non-negative number, found the number -1",
        ),
        (json!({"reference": "a", "max_ngram_order": 0}), "bleu needs `max_ngram_order` between 1 and 10, found 0"),
        (
            json!({"reference": "a", "max_ngram_order": "4"}),
            "bleu needs `max_ngram_order` to be a non-negative whole number, found the string \"4\"",
        ),
        (json!({"reference": "a", "lowercase": 1}), "bleu needs `lowercase` to be true or false, found the number 1"),
        (
            json!({"reference": "a", "threshold": 50}),
            "bleu needs `threshold` to be a number between 0 and 1, found the number 50",
        ),
        (
            json!({"reference": "a", "threshold": 0.5, "min": 0.5}),
            "bleu takes `threshold` or its alias `min`, not both",
        ),
    ];
    for (expected, message) in rows {
        assert_eq!(check("a", expected.clone()).unwrap_err(), message, "{expected}");
    }
}

#[test]
fn the_actual_must_be_a_string() {
    let error = BleuMatcher::evaluate("bleu", &Actual::value(json!({"text": "a"})), &json!("a")).unwrap_err();
    assert_eq!(error, "bleu scores a string, found an object with 1 keys");
    assert_eq!(
        BleuMatcher::evaluate("rouge", &Actual::text("a"), &json!("a")).unwrap_err(),
        "the bleu plugin has no matcher `rouge`"
    );
    assert_eq!(BleuMatcher::describe().matchers[0].0, "bleu");
}

/// A long hypothesis (10,000 words) against two long references is quick.
#[test]
fn long_inputs() {
    let mut rng = Lcg(3);
    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
    let mut text = |n: usize| (0..n).map(|_| words[rng.next(words.len())]).collect::<Vec<_>>().join(" ");
    let (hypothesis, a, b) = (text(10_000), text(9_000), text(11_000));
    let bleu = sentence_bleu(&hypothesis, &[&a, &b], &Options::default());
    assert_eq!(bleu.sys_len, 10_000);
    assert_eq!(bleu.ref_len, 9_000);
    assert!(bleu.score > 0.0 && bleu.score < 100.0);
}
