//! The matcher: parameters, defaults, messages, extras and errors. The
//! numbers themselves are checked against rouge-score in
//! `tests/reference.rs`.

use super::*;
use serde_json::json;

fn run(actual: Json, expected: Json) -> Result<Verdict, String> {
    Rouge::evaluate("rouge", &Actual::value(actual), &expected)
}

#[test]
fn string_expected_is_the_reference_with_defaults() {
    let v = run(json!("The quick brown dog jumps on the log."), json!("The quick brown fox jumps over the lazy dog"))
        .unwrap();
    // rouge1 F 0.70588…, rouge2 F 0.26666…, rougeL F 0.58823… (rouge-score).
    let mean = (0.7058823529411765 + 0.26666666666666666 + 0.5882352941176471) / 3.0;
    assert_eq!(v.score, Some(mean));
    assert!(v.pass);
    assert_eq!(
        v.message,
        "ROUGE mean F 0.52 (rouge1 0.71, rouge2 0.27, rougeL 0.59) for 8 response tokens against 9 reference \
         tokens; threshold 0.5"
    );
    let extras = v.extras.unwrap();
    assert_eq!(extras.as_object().unwrap().keys().collect::<Vec<_>>(), ["rouge1", "rouge2", "rougeL"]);
    assert_eq!(
        extras["rouge1"],
        json!({"precision": 0.75, "recall": 0.6666666666666666, "fmeasure": 0.7058823529411765})
    );
}

#[test]
fn object_parameters() {
    let v = run(
        json!("the dies were lying"),
        json!({"reference": "The die was lying", "types": ["rougeL", "rouge1", "rougeL"], "use_stemmer": true, "min": 0.8}),
    )
    .unwrap();
    // Stemmed: [the, die, were, lie] against [the, die, wa, lie]: 3 of 4.
    assert_eq!(v.score, Some(0.75));
    assert!(!v.pass);
    assert_eq!(
        v.message,
        "ROUGE mean F 0.75 (rougeL 0.75, rouge1 0.75) for 4 response tokens against 4 reference tokens, stemmed; \
         threshold 0.8"
    );
    assert_eq!(v.extras.unwrap().as_object().unwrap().len(), 2);

    let v = run(json!("a b\nc"), json!({"reference": "a b c", "types": ["rougeLsum"], "threshold": 1})).unwrap();
    assert_eq!(v.score, Some(1.0));
    assert!(v.pass);
}

#[test]
fn empty_texts_score_zero() {
    for (actual, reference) in [("", "words"), ("words", ""), ("", ""), ("?!", "...")] {
        let v = run(json!(actual), json!(reference)).unwrap();
        assert_eq!(v.score, Some(0.0), "{actual:?} / {reference:?}");
        assert!(!v.pass);
        let v = run(json!(actual), json!({"reference": reference, "threshold": 0})).unwrap();
        assert!(v.pass, "a threshold of 0 passes anything");
    }
}

#[test]
fn messages_keep_the_side_of_the_threshold() {
    // rouge1 F = 2·(2/3)·(2/4)/(2/3 + 2/4) = 0.571428…: two decimals, or
    // as many as it takes not to cross the threshold.
    let v = run(json!("a b c"), json!({"reference": "a b d e", "types": ["rouge1"], "threshold": 0.5})).unwrap();
    assert!(v.pass);
    assert!(v.message.starts_with("ROUGE mean F 0.57 (rouge1 0.57)"), "{}", v.message);
    let v = run(json!("a b c"), json!({"reference": "a b d e", "types": ["rouge1"], "threshold": 0.5714})).unwrap();
    assert!(v.pass);
    assert!(v.message.starts_with("ROUGE mean F 0.5714 (rouge1 0.57)"), "{}", v.message);
}

#[test]
fn errors_name_what_is_accepted() {
    let cases = [
        (json!("x"), json!({"types": ["rouge1"]}), "rouge needs the parameter `reference` (a string)"),
        (
            json!("x"),
            json!({"reference": "x", "stemmer": true}),
            "rouge has no parameter `stemmer` (its parameters: reference, types, use_stemmer, threshold, min)",
        ),
        (
            json!("x"),
            json!({"reference": "x", "types": ["rouge1", "rougel"]}),
            "rouge has no type \"rougel\" (its types: rouge1 … rouge9, rougeL, rougeLsum)",
        ),
        (
            json!("x"),
            json!({"reference": "x", "types": []}),
            "rouge needs `types` to be a non-empty list of type names (its types: rouge1 … rouge9, rougeL, \
             rougeLsum), found the list []",
        ),
        (
            json!("x"),
            json!({"reference": "x", "types": "rouge1"}),
            "rouge needs `types` to be a non-empty list of type names (its types: rouge1 … rouge9, rougeL, \
             rougeLsum), found the string \"rouge1\"",
        ),
        (
            json!("x"),
            json!({"reference": "x", "types": [1]}),
            "rouge needs `types` to be a list of type names, element 0 is the number 1",
        ),
        (
            json!("x"),
            json!({"reference": "x", "use_stemmer": "yes"}),
            "rouge needs `use_stemmer` to be true or false, found the string \"yes\"",
        ),
        (
            json!("x"),
            json!({"reference": "x", "threshold": 2}),
            "rouge needs `threshold` to be a number between 0 and 1, found the number 2",
        ),
        (
            json!("x"),
            json!({"reference": "x", "threshold": 0.5, "min": 0.5}),
            "rouge takes `threshold` or its alias `min`, not both",
        ),
        (json!("x"), json!({"reference": 5}), "rouge needs `reference` to be a string, found the number 5"),
        (
            json!("x"),
            json!(5),
            "rouge needs a string or an object of parameters (reference, types, use_stemmer, threshold, min), found \
             the number 5",
        ),
        (json!(5), json!("x"), "rouge scores a string, found the number 5"),
        (json!(["a"]), json!("x"), "rouge scores a string, found a list of 1 elements"),
    ];
    for (actual, expected, message) in cases {
        assert_eq!(run(actual.clone(), expected.clone()).unwrap_err(), message, "{actual} / {expected}");
    }
    assert_eq!(
        Rouge::evaluate("rouge_l", &Actual::text("x"), &json!("x")).unwrap_err(),
        "the rouge plugin has no matcher `rouge_l`"
    );
}

#[test]
fn describes_one_key() {
    let info = Rouge::describe();
    assert_eq!(info.name, "rouge");
    assert_eq!(info.matchers.len(), 1);
    assert_eq!(info.matchers[0].0, "rouge");
}
