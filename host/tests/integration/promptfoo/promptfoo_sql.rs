//! promptfoo's `is-sql` and `contains-sql`, run by the embedded
//! `javascript` plugin (promptfoo's own checking code over node-sql-parser,
//! in the sandboxed engine) through the `assay` binary: every verdict and
//! reason of the fixture is promptfoo 0.123.1's own, recorded with
//! `NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules node
//! benches/promptfoo_eval.mjs fixtures/promptfoo/sql/promptfooconfig.yaml
//! fixtures/promptfoo/sql/promptfoo-output.json`.

use crate::util::{assay_command, stderr, stdout};
use serde_json::Value;
use std::collections::BTreeMap;

const RECORDED: &str = include_str!("../../../../fixtures/promptfoo/sql/promptfoo-output.json");

/// Each result's (pass, the reasons of its assertions) by description.
fn verdicts(document: &Value) -> BTreeMap<String, (bool, Vec<String>)> {
    let results = document["results"]["results"].as_array().expect("results.results");
    results
        .iter()
        .map(|r| {
            let components = r["gradingResult"]["componentResults"].as_array().cloned().unwrap_or_default();
            let reasons = components.iter().map(|c| c["reason"].as_str().unwrap_or_default().to_owned()).collect();
            (r["testCase"]["description"].as_str().unwrap().to_owned(), (r["success"].as_bool().unwrap(), reasons))
        })
        .collect()
}

#[test]
fn is_sql_and_contains_sql_give_promptfoos_verdicts_and_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let results = dir.path().join("results");
    let output = assay_command()
        .args(["run", "fixtures/promptfoo/sql/promptfooconfig.yaml", "--results", results.to_str().unwrap()])
        .args(["-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(stdout(&output).contains("20 test cases: 8 passed, 12 failed"), "{}{}", stdout(&output), stderr(&output));
    let ours: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    let theirs: Value = serde_json::from_str(RECORDED).unwrap();
    let (ours, theirs) = (verdicts(&ours), verdicts(&theirs));
    assert_eq!(ours.len(), 20);
    for (test, expected) in &theirs {
        assert_eq!(&ours[test], expected, "{test}");
    }
}

#[test]
fn an_is_sql_value_that_is_not_an_object_is_the_tests_error_as_in_promptfoo() {
    let dir = crate::promptfoo::promptfoo_suite::suite(
        "prompts: ['SELECT 1']\nproviders: [echo]\ntests: [{assert: [{type: is-sql, value: MySQL}]}]\n",
        &[],
    );
    let ran = crate::promptfoo::promptfoo_suite::run(dir.path(), &[]);
    let check = &ran.lines[0]["samples"][0]["runs"][0]["interactions"][0]["checks"][0];
    assert_eq!(check["outcome"], "error", "{check}");
    assert!(check["message"].as_str().unwrap().contains("is-sql assertion must have a object value."), "{check}");
}
