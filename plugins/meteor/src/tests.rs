//! The matcher: parameters, defaults, messages, extras and errors. The
//! numbers themselves are checked against nltk in `tests/reference.rs`.

use super::*;
use serde_json::json;

const HYP1: &str = "It is a guide to action which ensures that the military always obeys the commands of the party";
const REF1: &str = "It is a guide to action that ensures that the military will forever heed Party commands";
const REF2: &str =
    "It is the guiding principle which guarantees the military forces always being under the command of the Party";

fn run(actual: Json, expected: Json) -> Result<Verdict, String> {
    MeteorMatcher::evaluate("meteor", &Actual::value(actual), &expected)
}

#[test]
fn string_expected_is_the_reference_with_defaults() {
    let v = run(json!(HYP1), json!(REF1)).unwrap();
    // nltk: meteor_score([REF1.split()], HYP1.split(), wordnet=NoWordNet()).
    assert_eq!(v.score, Some(0.6944444444444445));
    assert!(v.pass);
    assert_eq!(
        v.message,
        "METEOR 0.69 (precision 0.67, recall 0.75, 12 matches in 6 chunks, fragmentation penalty 0.06) for 18 \
         response tokens against 16 reference tokens; threshold 0.5"
    );
    let extras = v.extras.unwrap();
    assert_eq!(extras["matches"], 12);
    assert_eq!(extras["chunks"], 6);
    assert_eq!(extras["penalty"], json!(0.0625));
    assert_eq!(extras["reference_index"], 0);
    for key in ["precision", "recall", "fmean"] {
        assert!(extras[key].is_f64(), "{key}");
    }
}

#[test]
fn several_references_the_best_counts() {
    let v = run(json!(HYP1), json!({"references": [REF2, REF1], "min": 0.7})).unwrap();
    assert_eq!(v.score, Some(0.6944444444444445));
    assert!(!v.pass);
    assert!(v.message.ends_with("against the best of 2 references (#2, 16 tokens); threshold 0.7"), "{}", v.message);
    assert_eq!(v.extras.unwrap()["reference_index"], 1);
}

#[test]
fn weights_are_parameters() {
    let v = run(json!(HYP1), json!({"reference": REF1, "alpha": 0.5, "beta": 2, "gamma": 0.3})).unwrap();
    // nltk with alpha=0.5, beta=2.0, gamma=0.3.
    assert_eq!(v.score, Some(0.6529411764705884));
    let v = run(json!("b a"), json!({"reference": "a b", "gamma": 0, "threshold": 1})).unwrap();
    assert_eq!(v.score, Some(1.0));
    assert!(v.pass);
}

#[test]
fn empty_texts_score_zero() {
    for (actual, reference) in [("", "words"), ("words", ""), ("", ""), ("x y", "a b")] {
        let v = run(json!(actual), json!(reference)).unwrap();
        assert_eq!(v.score, Some(0.0), "{actual:?} / {reference:?}");
        assert!(!v.pass);
        assert!(run(json!(actual), json!({"reference": reference, "threshold": 0})).unwrap().pass);
    }
    let v = run(json!(""), json!("one")).unwrap();
    assert_eq!(
        v.message,
        "METEOR 0.0 (precision 0.0, recall 0.0, 0 matches in 0 chunks, fragmentation penalty 0.0) for 0 \
         response tokens against 1 reference token; threshold 0.5"
    );
}

#[test]
fn errors_name_what_is_accepted() {
    let cases = [
        (json!({"alpha": 0.5}), "meteor needs `reference` (a string) or `references` (a list of strings)"),
        (json!({"reference": "x", "references": ["y"]}), "meteor takes `reference` or `references`, not both"),
        (json!({"references": []}), "meteor needs `references` to be a non-empty list of strings, found the list []"),
        (
            json!({"references": "x"}),
            "meteor needs `references` to be a non-empty list of strings, found the string \"x\"",
        ),
        (
            json!({"references": ["x", 3]}),
            "meteor needs `references` to be a list of strings, element 1 is the number 3",
        ),
        (
            json!({"reference": "x", "delta": 1}),
            "meteor has no parameter `delta` (its parameters: reference, references, alpha, beta, gamma, threshold, min)",
        ),
        (
            json!({"reference": "x", "alpha": 1.5}),
            "meteor needs `alpha` to be a number between 0 and 1, found the number 1.5",
        ),
        (
            json!({"reference": "x", "gamma": "high"}),
            "meteor needs `gamma` to be a number between 0 and 1, found the string \"high\"",
        ),
        (json!({"reference": "x", "beta": -1}), "meteor needs `beta` to be a non-negative number, found the number -1"),
        (
            json!({"reference": "x", "threshold": 1.2}),
            "meteor needs `threshold` to be a number between 0 and 1, found the number 1.2",
        ),
        (
            json!({"reference": "x", "min": 0.2, "threshold": 0.2}),
            "meteor takes `threshold` or its alias `min`, not both",
        ),
        (json!({"reference": ["x"]}), "meteor needs `reference` to be a string, found the list [\"x\"]"),
        (
            json!(["x"]),
            "meteor needs a string or an object of parameters (reference, references, alpha, beta, gamma, threshold, \
             min), found the list [\"x\"]",
        ),
    ];
    for (expected, message) in cases {
        assert_eq!(run(json!("x"), expected.clone()).unwrap_err(), message, "{expected}");
    }
    assert_eq!(run(json!(3), json!("x")).unwrap_err(), "meteor scores a string, found the number 3");
    assert_eq!(
        MeteorMatcher::evaluate("bleu", &Actual::text("x"), &json!("x")).unwrap_err(),
        "the meteor plugin has no matcher `bleu`"
    );
}

#[test]
fn describes_one_key() {
    let info = MeteorMatcher::describe();
    assert_eq!(info.name, "meteor");
    assert_eq!(info.matchers.len(), 1);
    assert_eq!(info.matchers[0].0, "meteor");
}
