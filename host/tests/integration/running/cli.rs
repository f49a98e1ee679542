//! The `assay plugins` and `assay check` commands, run as a user would.

use crate::util::{assay, stderr, stdout};

#[test]
fn plugins_lists_the_builtin_stock_plugin_and_its_keys() {
    let output = assay(&["plugins"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("stock 0.1.0 (built-in `stock`)\n  sha256 "), "{text}");
    for key in ["value", "less", "greater", "keywords"] {
        assert!(text.contains(&format!("\n  {key:<12} ")), "{key} missing from {text}");
    }
}

#[test]
fn check_prints_a_passing_verdict() {
    let output = assay(&["check", "--key", "keywords", "--actual", "\"the Beatles\"", "--expected", "\"Beatles\""]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "PASS keywords: found \"Beatles\" in a 11-character string\n");
}

#[test]
fn check_fails_with_the_message_and_exit_code_1() {
    let output = assay(&["check", "--key", "keywords", "--actual", "\"the Stones\"", "--expected", "\"Beatles\""]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "FAIL keywords: \"Beatles\" does not occur in a 10-character string\n");
}

#[test]
fn check_negates_and_prints_json() {
    let output = assay(&["check", "--key", "not_value", "--actual", "5", "--expected", "5.0", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(verdict["pass"], false);
    assert_eq!(verdict["outcome"], "fail");
    assert_eq!(verdict["message"], "5 equals 5.0");
    assert_eq!(verdict["score"], serde_json::Value::Null);
    assert_eq!(verdict["extras"], serde_json::Value::Null);
}

#[test]
fn check_reports_a_type_mismatch_as_an_error() {
    let output = assay(&["check", "--key", "greater", "--actual", "\"5\"", "--expected", "4", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(verdict["outcome"], "error");
    assert_eq!(verdict["error_kind"], "rejected");
}

#[test]
fn check_suggests_the_nearest_key_for_a_typo() {
    let output = assay(&["check", "--key", "keywordz", "--actual", "\"x\"", "--expected", "\"y\""]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: unknown matcher key `keywordz`: did you mean `keywords`?\n");
}

#[test]
fn check_rejects_bad_json_as_a_usage_error() {
    let output = assay(&["check", "--key", "value", "--actual", "the Beatles", "--expected", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).starts_with("error: --actual is not valid JSON: "), "{}", stderr(&output));
}

#[test]
fn check_loads_an_extra_plugin_from_a_file() {
    let output = assay(&[
        "check",
        "--plugin",
        "fixtures/plugins/hostile/hostile.wasm",
        "--key",
        "count",
        "--actual",
        "1",
        "--expected",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "PASS count: call 1\n");
}

#[test]
fn plan_prints_each_case_and_reports_bad_files_without_stopping() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    std::fs::write(
        dir.path().join("nested/good.hocon"),
        r#"{ "agent": "math_guy", "interactions": [ { "text": "times", "sly_data": { "x": 847, "y": 23 },
            "response": { "sly_data": { "equals": { "value": [19481.0], "not_less": 19000 } } } } ] }"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("typo.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "hi", "response": { "text": { "keywordz": "hi" } } } ] }"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.hocon"), "{ \"agent\": \"echo\",\n  \"interactions\": [ \n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a case").unwrap();
    let output = assay(&["plan", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "nested/good  agent math_guy  connections direct  success_ratio 1/1  (2 checks)\n  1. \"times\"\n     sly_data.equals              value          19481.0\n     sly_data.equals              not_less       19000\n"
    );
    let errors = stderr(&output);
    let broken = dir.path().join("broken.hocon");
    let typo = dir.path().join("typo.hocon");
    assert!(errors.contains(&format!("error: `{}`: HOCON syntax error at ", broken.display())), "{errors}");
    assert!(
        errors.contains(&format!(
            "error: `{}`: unknown matcher key `keywordz` at `interactions[0].response.text.keywordz` (did you mean `keywords`?)",
            typo.display()
        )),
        "{errors}"
    );
    assert!(errors.ends_with("error: 2 of 3 test case files could not be planned\n"), "{errors}");
}

#[test]
fn plan_json_gives_the_model_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("case.hocon");
    std::fs::write(&file, r#"agent = echo, connections = [direct, http], interactions = [{ text = hi, response { text { not_keywords = [x, y] } } }]"#).unwrap();
    let output = assay(&["plan", "--json", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(value["case"]["agent"], "echo");
    assert_eq!(value["case"]["connections"], serde_json::json!(["direct", "http"]));
    assert_eq!(value["case"]["success_ratio"], "1/1");
    let checks = &value["plan"]["interactions"][0];
    assert_eq!(checks[1], serde_json::json!({"target": "text", "key": "keywords", "negated": true, "expected": "y"}));
}

#[test]
fn plan_with_no_case_files_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = assay(&["plan", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: no test case files (*.hocon) or suite files (*.suite.toml) found\n");
    let output = assay(&["plan", "no/such/dir"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: `no/such/dir` does not exist\n");
}
