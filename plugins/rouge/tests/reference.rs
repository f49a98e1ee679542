//! Every case of `rouge_reference.json` (Google's rouge-score 0.1.2, written
//! by `reference/rouge_reference.py`) must come out bit for bit identical.

use assay_plugin_rouge::{RougeType, rouge_scores, tokenize};
use serde_json::Value;

const FIXTURE: &str = include_str!("rouge_reference.json");

/// A Python `repr` of a float, parsed exactly.
fn number(value: &Value) -> f64 {
    value.as_str().expect("numbers are stored as strings").parse().expect("a float")
}

#[test]
fn every_case_matches_rouge_score_exactly() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    assert_eq!(fixture["rouge_score"], "0.1.2");
    let types: Vec<RougeType> =
        fixture["types"].as_array().unwrap().iter().map(|t| RougeType::parse(t.as_str().unwrap()).unwrap()).collect();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 12);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let reference = case["reference"].as_str().unwrap();
        let prediction = case["prediction"].as_str().unwrap();
        let use_stemmer = case["use_stemmer"].as_bool().unwrap();
        let scores = rouge_scores(reference, prediction, &types, use_stemmer);
        for (rouge_type, score) in types.iter().zip(&scores) {
            let want = &case["scores"][rouge_type.name()];
            let got = [score.precision, score.recall, score.fmeasure];
            let wanted = [number(&want["precision"]), number(&want["recall"]), number(&want["fmeasure"])];
            assert_eq!(got.map(f64::to_bits), wanted.map(f64::to_bits), "{name}, {rouge_type}: {got:?} != {wanted:?}");
        }
        for (text, field) in [(reference, "reference_tokens"), (prediction, "prediction_tokens")] {
            if let Some(tokens) = case.get(field) {
                let want: Vec<&str> = tokens.as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
                assert_eq!(tokenize(text, use_stemmer), want, "{name}: {field}");
            }
        }
    }
}
