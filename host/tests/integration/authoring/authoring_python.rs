//! Python metric plugins: `assay plugin new --python` scaffolds a metric in
//! the OpenSearch assistant tests' convention that runs as a script and
//! passes its unit tests; `assay plugin build` says how to install the
//! pinned componentize-py when it is missing; and the committed fixture
//! `fixtures/plugins/seed-metric-py/` (built by its `build.sh` with
//! `assay plugin build`, not at test time: a build takes a minute) runs its
//! seed-convention metric unchanged, as a script and through `assay run`,
//! and maps every shape `evaluate` returns, and every way it fails, onto a
//! verdict.

use crate::hostile::hostile_support::{Project, assay_command as hostile_assay, log_text, path, warm, warm_plugin};
use crate::util::{assay_command, fixture, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// The committed fixture component.
const COMPONENT: &str = "fixtures/plugins/seed-metric-py/seed-metric-py.wasm";

/// `python3` with `args` in `dir`.
fn python(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("python3").args(args).current_dir(dir).env("PYTHONDONTWRITEBYTECODE", "1").output();
    output.expect("python3 runs (the Python plugins need it, as .ci/run does)")
}

#[test]
fn a_python_scaffold_runs_as_the_seed_calls_it_and_passes_its_unit_tests() {
    let temp = tempfile::tempdir().unwrap();
    let made = assay_command().args(["plugin", "new", "--python", "word-check"]).current_dir(temp.path()).output();
    let made = made.unwrap();
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let printed = stdout(&made);
    assert!(printed.starts_with("Created the Python plugin `word-check` in word-check with the key `word_check`"));
    let steps: Vec<&str> = printed
        .lines()
        .skip_while(|line| *line != "Next:")
        .skip(1)
        .filter(|line| line.starts_with("  "))
        .map(|line| line.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(steps, ["cd word-check", "python3 -m unittest", "assay plugin build"], "{printed}");
    let dir = temp.path().join("word-check");
    let project = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap();
    assert!(project.contains("metrics = [\"word_check.py\"]"), "{project}");

    let scored = python(&dir, &["word_check.py", "The cat sat.", r#"{"expected": "the dog sat"}"#]);
    assert!(scored.status.success(), "{}", stderr(&scored));
    let scored: Value = serde_json::from_str(&stdout(&scored)).unwrap();
    assert_eq!(scored["missing"], json!(["dog"]));
    assert!((scored["score"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9, "{scored}");

    let tested = python(&dir, &["-m", "unittest"]);
    assert!(tested.status.success(), "{}", stderr(&tested));
    assert!(stderr(&tested).contains("Ran 4 tests"), "{}", stderr(&tested));
}

#[test]
fn a_python_plugin_refuses_the_rust_sdk_flag() {
    let temp = tempfile::tempdir().unwrap();
    let refused =
        assay_command().args(["plugin", "new", "--python", "x", "--sdk", "sdk"]).current_dir(temp.path()).output();
    let refused = refused.unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("'--python' cannot be used with '--sdk"), "{}", stderr(&refused));
    assert!(!temp.path().join("x").exists());
}

#[test]
fn building_without_componentize_py_says_which_command_installs_it() {
    let temp = tempfile::tempdir().unwrap();
    let made = assay_command().args(["plugin", "new", "--python", "word-check"]).current_dir(temp.path()).output();
    assert!(made.unwrap().status.success());
    let venv = temp.path().join("venv");
    let built = assay_command()
        .args(["plugin", "build", "word-check"])
        .current_dir(temp.path())
        .env("COMPONENTIZE_PY_VENV", &venv)
        .output()
        .unwrap();
    assert_eq!(built.status.code(), Some(2), "{}", stderr(&built));
    let venv = venv.display();
    let expected = format!(
        "failed to find componentize-py 0.25.1 in `{venv}` (there is no Python there)\n\nConsider installing it there (from PyPI, with Python 3.10 or later):\n  python3 -m venv {venv} && {venv}/bin/pip install componentize-py==0.25.1\n"
    );
    assert!(stderr(&built).contains(&expected), "{}", stderr(&built));
    assert!(!temp.path().join("word-check/word-check.wasm").exists());
}

#[test]
fn building_a_folder_whose_pyproject_lists_no_metric_is_a_usage_error() {
    let temp = tempfile::tempdir().unwrap();
    std::fs::write(temp.path().join("pyproject.toml"), "[project]\nname = \"m\"\n").unwrap();
    let built = assay_command().args(["plugin", "build", "."]).current_dir(temp.path()).output().unwrap();
    assert_eq!(built.status.code(), Some(2), "{}", stderr(&built));
    assert!(stderr(&built).contains("pyproject.toml`: it lists no metric files"), "{}", stderr(&built));
}

#[test]
fn the_fixture_metric_runs_unchanged_as_the_seeds_runner_calls_it() {
    let dir = fixture("plugins/seed-metric-py");
    let printed = python(&dir, &["answer_length.py", "one two", r#"{"expected": "one two three four"}"#]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    let printed: Value = serde_json::from_str(&stdout(&printed)).unwrap();
    assert_eq!(printed, json!({"score": 0.5, "output_words": 2, "expected_words": 4}));
}

#[test]
fn the_fixture_metric_decides_a_case_of_assay_run_and_its_extras_are_recorded() {
    let project = Project::new(&format!("[plugins.seed]\npath = \"{}\"\n", path(COMPONENT)));
    warm(&project.config());
    // echo answers the text it is sent: 3 words against 4 expected.
    let check = |threshold: f64| {
        format!(r#""answer_length": {{ "expected": "one two three four", "threshold": {threshold} }}"#)
    };
    project.simple_case("close", "echo", "one two three", &check(0.7), None);
    project.simple_case("far", "echo", "one two three", &check(0.8), None);
    project.simple_case(
        "tolerant",
        "echo",
        "one two three",
        r#""answer_length": { "expected": "a b c d", "tolerance": 1, "threshold": 1 }"#,
        None,
    );
    let run = project.run(&[]);
    assert_eq!(run.finished.code, Some(1), "{}", run.describe());
    let case =
        |id: &str| run.results.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("{id}: {}", run.describe()));
    for (id, status) in [("close", "passed"), ("far", "failed"), ("tolerant", "passed")] {
        assert_eq!(case(id)["status"], status, "{id}: {}", case(id));
    }
    let check = &case("far")["samples"][0]["runs"][0]["interactions"][0]["checks"][0];
    assert_eq!(check["key"], "answer_length", "{check}");
    assert_eq!(check["score"], 0.75, "{check}");
    assert_eq!(check["message"], "`answer_length` scored 0.75, threshold 0.8", "{check}");
    assert_eq!(check["extras"], json!({"output_words": 3, "expected_words": 4}), "{check}");
}

/// `assay check` of `result_shapes` on the `actual` (JSON) with `expected`,
/// through the binary: the test process never compiles the Python
/// component itself (its memory would show in the peak memory every child
/// it forks reports, which the hostile-memory tests measure).
fn check_on(actual: &str, expected: &Value) -> Value {
    warm_plugin(COMPONENT);
    let expected = expected.to_string();
    let args = ["check", "--plugin", COMPONENT, "--key", "result_shapes", "--actual", actual, "--expected", &expected];
    let output = hostile_assay(&args).arg("--json").output().unwrap();
    serde_json::from_str(&stdout(&output)).unwrap_or_else(|e| panic!("{expected}: {e}: {}", stderr(&output)))
}

/// `result_shapes` asked to return what `expected` says, on the text `hi`.
fn shape(expected: &Value) -> Value {
    check_on(r#""hi""#, expected)
}

/// The verdict's pass, score, message and extras, which must be one.
fn verdict(expected: Value) -> (bool, Option<f64>, String, Option<Value>) {
    let verdict = shape(&expected);
    assert!(verdict["outcome"] == "pass" || verdict["outcome"] == "fail", "{expected}: {verdict}");
    let extras = Some(verdict["extras"].clone()).filter(|e| !e.is_null());
    (verdict["pass"].as_bool().unwrap(), verdict["score"].as_f64(), verdict["message"].as_str().unwrap().into(), extras)
}

/// The error message, which must be one the plugin gave.
fn refused(expected: Value) -> String {
    let verdict = shape(&expected);
    assert_eq!(
        (&verdict["outcome"], &verdict["error_kind"]),
        (&json!("error"), &json!("rejected")),
        "{expected}: {verdict}"
    );
    verdict["message"].as_str().unwrap().to_owned()
}

#[test]
fn the_plugin_describes_a_key_per_metric_file_summed_up_by_its_docstring() {
    warm_plugin(COMPONENT);
    let listed = hostile_assay(&["plugins", "--plugin", COMPONENT]).output().unwrap();
    let listed = stdout(&listed);
    assert!(listed.contains("seed-metric-py 0.1.0"), "{listed}");
    let answer_length =
        "answer_length answer_length: how close the answer's length is to the expected answer's, in words.";
    assert!(listed.contains(answer_length), "{listed}");
    assert!(
        listed.contains("result_shapes result_shapes: returns whatever the check asks for, to test the glue."),
        "{listed}"
    );
}

#[test]
fn true_and_false_are_the_verdict_with_the_score_one_or_zero() {
    assert_eq!(verdict(json!({"return": "true"})), (true, Some(1.0), "`result_shapes` returned true".into(), None));
    assert_eq!(verdict(json!({"return": "false"})), (false, Some(0.0), "`result_shapes` returned false".into(), None));
}

#[test]
fn a_number_is_the_score_passing_from_the_threshold_default_one_half() {
    let scored = |value: Value, threshold: Option<f64>| {
        let mut expected = json!({"return": "number", "value": value});
        if let Some(threshold) = threshold {
            expected["threshold"] = json!(threshold);
        }
        let (pass, score, message, extras) = verdict(expected);
        assert_eq!(extras, None);
        (pass, score.unwrap(), message)
    };
    assert_eq!(scored(json!(0.5), None), (true, 0.5, "`result_shapes` scored 0.5, threshold 0.5".into()));
    assert_eq!(scored(json!(0.49), None), (false, 0.49, "`result_shapes` scored 0.49, threshold 0.5".into()));
    assert!(!scored(json!(0.7), Some(0.8)).0);
    assert_eq!(scored(json!(1), Some(1.0)), (true, 1.0, "`result_shapes` scored 1, threshold 1".into()));
    assert!(scored(json!(0), Some(0.0)).0);
}

#[test]
fn a_dict_gives_its_score_and_every_other_key_as_extras() {
    let (pass, score, message, extras) = verdict(json!({"return": "dict", "value": 0.25, "threshold": 0.2}));
    assert_eq!((pass, score, message.as_str()), (true, Some(0.25), "`result_shapes` scored 0.25, threshold 0.2"));
    assert_eq!(extras, Some(json!({"detail": "d", "n": 2})));
    let (pass, score, _, extras) = verdict(json!({"return": "dict", "value": true}));
    assert_eq!((pass, score, extras), (true, Some(1.0), Some(json!({"detail": "d", "n": 2}))));
}

#[test]
fn extras_nested_deeper_than_64_levels_are_dropped_so_that_the_results_line_reads_back() {
    // An `assay:plugin@0.2.0` plugin's extras, JSON text: `echo` returns
    // the expected value among them, here 70 lists deep.
    let deep = (0..70).fold(json!(1), |value, _| json!([value]));
    let dropped = shape(&json!({"return": "echo", "k": deep}));
    assert_eq!(dropped["extras"], Value::Null, "{dropped}");
    let message = dropped["message"].as_str().unwrap();
    assert!(message.ends_with(" [extras dropped: nested deeper than 64 lists and objects]"), "{dropped}");
    let shallow = (0..60).fold(json!(1), |value, _| json!([value]));
    let (_, _, _, extras) = verdict(json!({"return": "echo", "k": shallow}));
    assert_eq!(extras.unwrap()["expected"]["k"], shallow);
}

#[test]
fn a_string_is_read_as_the_seeds_runner_reads_a_metrics_output() {
    let string = |value: &str| verdict(json!({"return": "string", "value": value}));
    assert!(string("true\n").0);
    assert_eq!(string("false").1, Some(0.0));
    assert_eq!(string(" 0.8 ").1, Some(0.8));
    let (pass, score, _, extras) = string(r#"{"score": 0.3, "rouge1": 0.4}"#);
    assert_eq!((pass, score, extras), (false, Some(0.3), Some(json!({"rouge1": 0.4}))));
}

#[test]
fn the_output_is_the_text_and_an_expected_value_not_an_object_is_wrapped() {
    let (_, _, _, extras) = verdict(json!({"return": "echo", "k": [1]}));
    assert_eq!(extras, Some(json!({"output": "hi", "expected": {"return": "echo", "k": [1]}})));
    // An expected value that is not an object reaches `evaluate` as
    // {"expected": VALUE}: here no `return`, so result_shapes raises.
    let message = refused(json!("plain"));
    assert!(message.starts_with("`result_shapes.py` raised KeyError: 'unknown return None'"), "{message}");
    // A JSON actual reaches it as its JSON text.
    let verdict = check_on(r#"{"a": 1}"#, &json!({"return": "echo"}));
    assert_eq!(verdict["extras"]["output"], json!(r#"{"a":1}"#), "{verdict}");
}

#[test]
fn a_result_of_another_type_is_an_error_naming_what_it_was() {
    let shapes = "true or false, a number in [0, 1], or a dict with `score`";
    assert_eq!(
        refused(json!({"return": "list"})),
        format!("`result_shapes.py` returned the list [1, 2], not {shapes}")
    );
    assert_eq!(
        refused(json!({"return": "none"})),
        format!("`result_shapes.py` returned the NoneType None, not {shapes}")
    );
    assert_eq!(
        refused(json!({"return": "string", "value": "great"})),
        format!("`result_shapes.py` returned the string 'great', which is not {shapes}")
    );
    assert_eq!(
        refused(json!({"return": "string", "value": "[0.5]"})),
        format!("`result_shapes.py` returned the string '[0.5]', which is not {shapes}")
    );
    assert_eq!(
        refused(json!({"return": "dict_no_score"})),
        format!("`result_shapes.py` returned a dict without `score` (its keys: `detail`); return {shapes}")
    );
    assert_eq!(
        refused(json!({"return": "dict", "value": "high"})),
        "`result_shapes.py` returned a dict whose `score` is the str 'high', not a number in [0, 1] or true/false"
    );
}

#[test]
fn a_score_outside_zero_to_one_or_nan_is_an_error() {
    let number = |value: Value| refused(json!({"return": "number", "value": value}));
    assert_eq!(number(json!(1.5)), "`result_shapes.py` returned the score 1.5, outside [0, 1]");
    assert_eq!(number(json!(-0.1)), "`result_shapes.py` returned the score -0.1, outside [0, 1]");
    assert_eq!(refused(json!({"return": "inf"})), "`result_shapes.py` returned the score inf, outside [0, 1]");
    assert_eq!(
        refused(json!({"return": "nan"})),
        "`result_shapes.py` returned the score NaN; a score is a number in [0, 1]"
    );
    assert_eq!(
        refused(json!({"return": "string", "value": "NaN"})),
        "`result_shapes.py` returned the score NaN; a score is a number in [0, 1]"
    );
    assert!(
        refused(json!({"return": "dict_nan_extra"}))
            .starts_with("`result_shapes.py` returned extras that are not JSON: ")
    );
    assert_eq!(
        refused(json!({"return": "true", "threshold": 2})),
        "`result_shapes` needs `threshold` as a number in [0, 1], found 2"
    );
}

#[test]
fn an_exception_is_an_error_and_its_traceback_goes_to_the_log_as_does_what_it_prints() {
    assert_eq!(
        refused(json!({"return": "raise"})),
        "`result_shapes.py` raised ValueError: asked to raise (its traceback is in the plugin's log)"
    );
    assert_eq!(
        refused(json!({"return": "exit"})),
        "`result_shapes.py` raised SystemExit: 3 (its traceback is in the plugin's log)"
    );

    let project = Project::new(&format!("[plugins.seed]\npath = \"{}\"\n", path(COMPONENT)));
    warm(&project.config());
    project.simple_case("raise", "echo", "hi", r#""result_shapes": { "return": "raise" }"#, None);
    project.simple_case("print", "echo", "hi", r#""result_shapes": { "return": "print" }"#, None);
    let run = project.run(&[]);
    let interaction = |id: &str| {
        let case = run.results.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("{id}: {}", run.describe()));
        case["samples"][0]["runs"][0]["interactions"][0].clone()
    };
    let raised = log_text(&interaction("raise"), "seed-metric-py", "stderr");
    assert!(raised.contains("Traceback (most recent call last)"), "{raised}");
    assert!(raised.contains("ValueError: asked to raise"), "{raised}");
    assert_eq!(log_text(&interaction("print"), "seed-metric-py", "stdout"), "printed by result_shapes");
    assert_eq!(interaction("print")["passed"], true, "{}", run.describe());
}
