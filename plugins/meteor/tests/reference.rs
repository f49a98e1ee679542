//! Every case of `meteor_reference.json` (nltk 3.10.4's METEOR with no
//! WordNet synonyms, written by `reference/meteor_reference.py`) must come
//! out the same: scores within 1e-12 (bit-identical natively; `powf` in a
//! WebAssembly build may round its last bit differently from glibc's
//! `pow`), match and chunk counts and alignments exactly.

use assay_plugin_meteor::{Weights, align, meteor, single_meteor};
use serde_json::Value;

const FIXTURE: &str = include_str!("meteor_reference.json");

/// A Python `repr` of a float, parsed exactly.
fn number(value: &Value) -> f64 {
    value.as_str().expect("numbers are stored as strings").parse().expect("a float")
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-12
}

#[test]
fn every_case_matches_nltk() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    assert_eq!(fixture["nltk"], "3.10.4");
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 12);
    let mut bit_identical = true;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let references: Vec<&str> =
            case["references"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        let hypothesis = case["hypothesis"].as_str().unwrap();
        let w = &case["weights"];
        let weights = Weights {
            alpha: w["alpha"].as_f64().unwrap(),
            beta: w["beta"].as_f64().unwrap(),
            gamma: w["gamma"].as_f64().unwrap(),
        };
        let (_, best) = meteor(&references, hypothesis, weights).unwrap();
        let want = number(&case["score"]);
        assert!(close(best.score, want), "{name}: {} != {want}", best.score);
        bit_identical &= best.score.to_bits() == want.to_bits();
        for (reference, expected) in references.iter().zip(case["per_reference"].as_array().unwrap()) {
            let m = single_meteor(reference, hypothesis, weights);
            let want = number(&expected["score"]);
            assert!(close(m.score, want), "{name}, {reference:.40}: {} != {want}", m.score);
            bit_identical &= m.score.to_bits() == want.to_bits();
            assert_eq!(m.matches as u64, expected["matches"].as_u64().unwrap(), "{name}: matches");
            assert_eq!(m.chunks as u64, expected["chunks"].as_u64().unwrap(), "{name}: chunks");
            if let Some(alignment) = expected.get("alignment") {
                let want: Vec<(usize, usize)> = alignment
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|pair| (pair[0].as_u64().unwrap() as usize, pair[1].as_u64().unwrap() as usize))
                    .collect();
                assert_eq!(align(reference, hypothesis), want, "{name}: alignment");
            }
        }
    }
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        assert!(bit_identical, "with glibc's pow, as Python's, every score is bit-identical");
    }
}
