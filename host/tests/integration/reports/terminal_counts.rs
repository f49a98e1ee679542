//! Counts in what the binary prints read as English: `1 test case`,
//! `2 test cases`, `1 error`, `(1 check)`, `1/1 sample passed`.

use crate::util::{assay, stderr, stdout};
use std::path::Path;

const ONE_CHECK: &str =
    r#"{ "agent": "echo", "interactions": [ { "text": "x", "response": { "text": { "value": "x" } } } ] }"#;
const TWO_CHECKS: &str = r#"{ "agent": "echo", "interactions": [ { "text": "x", "response": { "text": { "value": "x", "keywords": "x" } } } ] }"#;
/// An agent nobody serves: an error case.
const ERROR: &str =
    r#"{ "agent": "nobody", "interactions": [ { "text": "x", "response": { "text": { "value": "x" } } } ] }"#;
/// Decided by its first sample (1 of 3 needed), which passes.
const ONE_SAMPLE: &str = r#"{ "agent": "echo", "success_ratio": "1/3", "interactions": [ { "text": "x", "response": { "text": { "value": "x" } } } ] }"#;

fn run(cases: &Path, args: &[&str]) -> std::process::Output {
    let results = cases.join("results");
    let mut all = vec!["run", cases.to_str().unwrap(), "--results", results.to_str().unwrap()];
    all.extend_from_slice(args);
    assay(&all)
}

#[test]
fn one_case_check_error_and_sample_are_singular() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.hocon"), ONE_CHECK).unwrap();
    let output = run(dir.path(), &[]);
    let text = stdout(&output);
    assert!(text.starts_with("Running 1 test case\n"), "{text}");
    assert!(text.contains("] 1 test case: 1 passed, 0 failed, 0 flaky, 0 errors\n"), "{text}");
    let listed = stdout(&assay(&["run", dir.path().to_str().unwrap(), "--list"]));
    assert!(listed.ends_with("success_ratio 1/1  (1 check)\n"), "{listed}");

    std::fs::write(dir.path().join("one.hocon"), ERROR).unwrap();
    let text = stdout(&run(dir.path(), &[]));
    assert!(text.contains("] 1 test case: 0 passed, 0 failed, 0 flaky, 1 error\n"), "{text}");

    std::fs::write(dir.path().join("one.hocon"), ONE_SAMPLE).unwrap();
    let output = run(dir.path(), &["--verbose"]);
    assert!(stdout(&output).contains(" (1/1 sample passed, needed 1)"), "{}{}", stdout(&output), stderr(&output));
}

#[test]
fn two_cases_checks_and_errors_are_plural() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.hocon"), TWO_CHECKS).unwrap();
    std::fs::write(dir.path().join("b.hocon"), ERROR).unwrap();
    std::fs::write(dir.path().join("c.hocon"), ERROR).unwrap();
    let text = stdout(&run(dir.path(), &[]));
    assert!(text.starts_with("Running 3 test cases\n"), "{text}");
    assert!(text.contains("] 3 test cases: 1 passed, 0 failed, 0 flaky, 2 errors\n"), "{text}");
    let listed = stdout(&assay(&["run", dir.path().join("a.hocon").to_str().unwrap(), "--list"]));
    assert!(listed.ends_with("success_ratio 1/1  (2 checks)\n"), "{listed}");
}
