//! Checks on a response, planned from HOCON and evaluated through the real
//! plugins: targets, missing targets, negation, batching across plugins.

use crate::util::{load, quick_limits, runtime};
use assay::check::{CheckResult, Outcome, plan_response};
use assay::plugin::Registry;
use assay::plugin::{ResponseView, evaluate};
use assay::sandbox::ComponentOptions;
use serde_json::{Map, Value, json};

fn checks(hocon: &str, registry: &Registry) -> Vec<assay::check::Check> {
    let response: Map<String, Value> = hocon::parse(hocon).unwrap().deserialize().unwrap();
    plan_response(&response, "response", registry, &assay::case::KeyLines::NONE).unwrap()
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn line(result: &CheckResult) -> String {
    let outcome = match result.verdict.outcome {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Error => "error",
    };
    format!("{outcome} {} {}: {}", result.target, result.key, result.verdict.message)
}

#[test]
fn every_part_of_a_response_with_negation_and_missing_targets() {
    let registry = Registry::with_builtins(runtime()).unwrap();
    let planned = checks(
        r#"
        text { keywords: ["Beatles", "Stones"], not_keywords: "Stones" }
        structure {
            answer { keywords: "Beatles" }
            running_cost { value: 3, greater: 2.5, not_less: "3" }
            missing { value: 1 }
            band { members { value: 4 } }
        }
        sly_data { equals { value: 19481.0 }, x { y { value: 1 } } }
        "#,
        &registry,
    );
    let structure = object(json!({"answer": "The Beatles", "running_cost": 3.0, "band": {"name": "x"}}));
    let sly_data = object(json!({"equals": 19481, "x": 5}));
    let response = ResponseView {
        text: Some("It was the Beatles."),
        sly_data: Some(&sly_data),
        structure: Some(&structure),
        ..ResponseView::default()
    };
    let (results, logs) = evaluate(&planned, &response, &registry);
    let lines: Vec<String> = results.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            "pass text keywords: found \"Beatles\" in a 19-character string",
            "fail text keywords: \"Stones\" does not occur in a 19-character string",
            "pass text not_keywords: \"Stones\" does not occur in a 19-character string",
            "pass structure.answer keywords: found \"Beatles\" in a 11-character string",
            "pass structure.running_cost value: 3.0 equals 3",
            "pass structure.running_cost greater: 3.0 is greater than 2.5",
            "error structure.running_cost not_less: less cannot compare the number 3.0 with the string \"3\": compare numbers with numbers and strings with strings",
            "fail structure.missing value: structure.missing is missing: structure has no key `missing` (it has answer, running_cost, band)",
            "fail structure.band.members value: structure.band.members is missing: structure.band has no key `members` (it has name)",
            "pass sly_data.equals value: 19481 equals 19481.0",
            "fail sly_data.x.y value: sly_data.x.y is missing: sly_data.x is the number 5, not a dictionary",
        ]
    );
    assert_eq!(results[0].actual.as_deref(), Some("It was the Beatles."));
    assert_eq!(results[4].actual.as_deref(), Some("3.0"));
    assert_eq!(results[7].actual, None);
    assert_eq!(results[1].expected, json!("Stones"));
    assert!(logs.is_empty());
}

#[test]
fn a_response_without_a_part_says_so() {
    let registry = Registry::with_builtins(runtime()).unwrap();
    let planned =
        checks(r#"text { keywords: "x" }, structure { answer { value: 1 } }, sly_data { a { value: 1 } }"#, &registry);
    let (results, _) = evaluate(&planned, &ResponseView::default(), &registry);
    let lines: Vec<String> = results.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            "fail text keywords: the response has no text",
            "fail structure.answer value: structure.answer is missing: the response has no structure",
            "fail sly_data.a value: sly_data.a is missing: the response has no sly_data",
        ]
    );
}

#[test]
fn checks_of_several_plugins_keep_their_order_and_a_fault_stays_in_its_plugin() {
    let mut registry = Registry::with_builtins(runtime()).unwrap();
    registry
        .add(
            load("plugins/hostile/hostile.wasm", ComponentOptions { limits: quick_limits(), ..Default::default() })
                .unwrap(),
        )
        .unwrap();
    let planned = checks(r#"text { keywords: "a", count: 1, value: "abc", panic: 1, not_value: "x" }"#, &registry);
    let response = ResponseView { text: Some("abc"), ..Default::default() };
    let (results, _) = evaluate(&planned, &response, &registry);
    let outcomes: Vec<Outcome> = results.iter().map(|r| r.verdict.outcome).collect();
    // The hostile batch (count, panic) faults as a whole; the stock batch is unharmed.
    assert_eq!(outcomes, [Outcome::Pass, Outcome::Error, Outcome::Pass, Outcome::Error, Outcome::Pass]);
    assert!(results[1].verdict.message.starts_with("plugin `hostile` panicked: at "), "{}", results[1].verdict.message);
    assert_eq!(results[3].verdict.error_kind, Some(assay::errors::ErrorKind::Panic));
}

#[test]
fn long_actual_values_are_cut_in_results() {
    let registry = Registry::with_builtins(runtime()).unwrap();
    let long = "é".repeat(1000);
    let planned = checks(r#"text { keywords: "x" }"#, &registry);
    let response = ResponseView { text: Some(&long), ..Default::default() };
    let (results, _) = evaluate(&planned, &response, &registry);
    let actual = results[0].actual.as_deref().unwrap();
    assert_eq!(actual.chars().count(), 301);
    assert!(actual.ends_with('…'));
}
