use super::*;
use serde_json::json;

/// Writes `text` as `name` in a fresh folder and reads it.
fn read(name: &str, text: &str) -> Result<ScenarioFile, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    read_scenario_file(&path, &CaseEnv::empty()).map_err(|e| e.to_string())
}

fn scenario(name: &str, text: &str) -> Scenario {
    match read(name, text).unwrap() {
        ScenarioFile::Scenario(scenario) => scenario,
        other => panic!("not a scenario: {other:?}"),
    }
}

const BLAND_FOOD: &str = "\
scenario_id: bland_food
problem: my food is bland
agent: chef
expectations:
  - expectation_id: missing_spices
    statement: points out that spices are missing
    weight: 2
    categories: [problem_finding]
  - expectation_id: add_salt
    statement: points out that salt should be added
    categories: solution_finding
  - expectation_id: says_salt
    statement: mentions salt
    key: keywords
    expected: salt
";

#[test]
fn reads_a_yaml_scenario_with_defaults() {
    let scenario = scenario("bland.yaml", BLAND_FOOD);
    assert_eq!(scenario.id, "bland_food");
    assert_eq!(scenario.problem, "my food is bland");
    assert_eq!(scenario.agent.as_deref(), Some("chef"));
    let [spices, salt, keyword] = &scenario.expectations[..] else { panic!("three expectations") };
    assert_eq!((spices.weight, spices.categories.as_slice()), (2, &["problem_finding".to_owned()][..]));
    assert_eq!((spices.key.as_str(), &spices.expected), ("gist", &json!("points out that spices are missing")));
    assert_eq!((salt.weight, salt.categories.as_slice()), (1, &["solution_finding".to_owned()][..]));
    assert_eq!((keyword.key.as_str(), &keyword.expected), ("keywords", &json!("salt")));
}

#[test]
fn hocon_and_json_read_the_same_scenario() {
    let hocon = scenario(
        "bland.hocon",
        r#"{ scenario_id: bland_food, problem: "my food is bland", agent: chef,
             expectations: [
               { expectation_id: missing_spices, statement: "points out that spices are missing", weight: 2,
                 categories: [problem_finding] },
               { expectation_id: add_salt, statement: "points out that salt should be added",
                 categories: solution_finding },
               { expectation_id: says_salt, statement: "mentions salt", key: keywords, expected: salt } ] }"#,
    );
    let yaml = scenario("bland.yaml", BLAND_FOOD);
    assert_eq!(hocon.expectations, yaml.expectations);
    let json_text = serde_json::to_string(&serde_json::json!({
        "scenario_id": "x", "problem": "p", "expectations": [{ "expectation_id": "e", "statement": "s" }]
    }))
    .unwrap();
    assert_eq!(scenario("x.json", &json_text).expectations[0].key, "gist");
}

#[test]
fn errors_name_the_file_and_the_key_path() {
    let error = read("bad.yaml", "scenario_id: x\nproblem: p\nexpectations:\n  - expectation_id: a\n    statment: s\n")
        .unwrap_err();
    assert!(error.contains("bad.yaml"), "{error}");
    assert!(
        error.contains("unknown key `statment` at `expectations[0].statment` (did you mean `statement`?)"),
        "{error}"
    );

    let error =
        read("w.yaml", "scenario_id: x\nproblem: p\nexpectations:\n  - {expectation_id: a, statement: s, weight: 0}\n")
            .unwrap_err();
    assert!(error.contains("invalid `expectations[0].weight`: 0 is not a positive whole number"), "{error}");

    let error = read(
        "w.yaml",
        "scenario_id: x\nproblem: p\nexpectations:\n  - {expectation_id: a, statement: s, weight: 1.5}\n",
    )
    .unwrap_err();
    assert!(error.contains("1.5 is not a positive whole number"), "{error}");

    let error = read("d.yaml", "scenario_id: x\nproblem: p\nexpectations:\n  - {expectation_id: a, statement: s}\n  - {expectation_id: a, statement: t}\n")
        .unwrap_err();
    assert!(error.contains("`a` is used twice"), "{error}");

    let error = read("m.yaml", "scenario_id: x\nexpectations: []\n").unwrap_err();
    assert!(error.contains("missing `problem`: what the agent is asked"), "{error}");

    let error = read("e.yaml", "scenario_id: x\nproblem: p\nexpectations: []\n").unwrap_err();
    assert!(error.contains("a scenario needs at least one expectation"), "{error}");
}

#[test]
fn yaml_syntax_errors_have_a_location() {
    let error = read("s.yaml", "scenario_id: x\nproblem: [unclosed\n").unwrap_err();
    assert!(error.starts_with("`"), "{error}");
    assert!(error.contains("s.yaml`: YAML syntax error at "), "{error}");
    let error = read("list.yaml", "- a\n- b\n").unwrap_err();
    assert!(error.contains("must be a dictionary of keys, but it is the list"), "{error}");
}

const VALIDATION: &str = "\
scenario:
  scenario_id: bland_food
  problem: my food is bland
  expectations:
    - expectation_id: missing_spices
      statement: points out that spices are missing
      categories: [problem_finding]
    - expectation_id: add_salt
      statement: points out that salt should be added
mock_responses:
  - mock_response_id: simple_response
    mock_response_content: Your food is bland because it lacks spices. Add some salt.
    wanted_results:
      - expectation_id: missing_spices
        wanted_result: true
        actual_result: null
        weight: 3
      - expectation_id: add_salt
        wanted_result: true
  - mock_response_id: off_topic
    mock_response_content: The weather is nice.
    wanted_results:
      - {expectation_id: missing_spices, wanted_result: false}
";

#[test]
fn reads_a_validation_file() {
    let ScenarioFile::Validation(validation) = read("v.yaml", VALIDATION).unwrap() else { panic!("a validation") };
    assert_eq!(validation.scenario.id, "bland_food");
    assert_eq!(validation.mock_responses.len(), 2);
    let simple = &validation.mock_responses[0];
    assert_eq!(simple.id, "simple_response");
    assert_eq!(
        simple.wanted,
        [
            WantedResult { expectation_id: "missing_spices".into(), wanted: true, weight: 3 },
            WantedResult { expectation_id: "add_salt".into(), wanted: true, weight: 1 },
        ]
    );
    assert!(!validation.mock_responses[1].wanted[0].wanted);
}

#[test]
fn a_validation_may_name_its_scenario_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bland.yaml"), BLAND_FOOD).unwrap();
    let path = dir.path().join("check.yaml");
    std::fs::write(
        &path,
        "scenario: bland.yaml\nmock_responses:\n  - mock_response_id: r\n    mock_response_content: salt\n    wanted_results: [{expectation_id: says_salt, wanted_result: true}]\n",
    )
    .unwrap();
    let ScenarioFile::Validation(validation) = read_scenario_file(&path, &CaseEnv::empty()).unwrap() else {
        panic!("a validation")
    };
    assert_eq!(validation.scenario.expectations.len(), 3);
    assert_eq!(validation.scenario.file, dir.path().join("bland.yaml"));
}

#[test]
fn a_wanted_result_must_name_a_known_expectation() {
    let text = VALIDATION
        .replace("expectation_id: add_salt\n        wanted_result", "expectation_id: add_slat\n        wanted_result");
    let error = read("v.yaml", &text).unwrap_err();
    assert!(
        error.contains(
            "unknown expectation `add_slat` at `mock_responses[0].wanted_results[1].expectation_id` (did you mean `add_salt`?); the known ones are missing_spices, add_salt"
        ),
        "{error}"
    );
    let text = VALIDATION.replace("actual_result: null", "actual_result: true");
    let error = read("v.yaml", &text).unwrap_err();
    assert!(error.contains("actual_result` must be null (assay fills it in; leave it out)"), "{error}");
    let text = VALIDATION.replace("  problem: my food is bland\n", "");
    let error = read("v.yaml", &text).unwrap_err();
    assert!(error.contains("missing `scenario.problem`"), "{error}");
}

/// A validation file whose `scenario` is `scenario`, in `dir`.
fn validation_naming(dir: &Path, scenario: &str) -> PathBuf {
    let path = dir.join("check.yaml");
    std::fs::write(
        &path,
        format!(
            "scenario: {scenario}\nmock_responses:\n  - mock_response_id: r\n    mock_response_content: salt\n    wanted_results: [{{expectation_id: says_salt, wanted_result: true}}]\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_validation_naming_itself_is_an_error_not_an_endless_recursion() {
    let dir = tempfile::tempdir().unwrap();
    let path = validation_naming(dir.path(), "check.yaml");
    let error = read_scenario_file(&path, &CaseEnv::empty()).unwrap_err().to_string();
    assert!(error.ends_with("invalid `scenario`: `check.yaml` is a validation file, not a scenario"), "{error}");
}

#[test]
fn a_validation_may_not_name_a_file_outside_its_folder() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("bland.yaml"), BLAND_FOOD).unwrap();
    let inner = outer.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    let path = validation_naming(&inner, "../bland.yaml");
    let error = read_scenario_file(&path, &CaseEnv::empty()).unwrap_err().to_string();
    assert!(error.contains("invalid `scenario`: `../bland.yaml` leads out of the folder"), "{error}");
    assert!(error.contains("a validation file may name only scenario files in its own folder or below"), "{error}");
    let absolute = outer.path().join("bland.yaml");
    let path = validation_naming(&inner, &absolute.display().to_string());
    let error = read_scenario_file(&path, &CaseEnv::empty()).unwrap_err().to_string();
    assert!(error.contains("is an absolute path"), "{error}");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outer.path().join("bland.yaml"), inner.join("link.yaml")).unwrap();
        let path = validation_naming(&inner, "link.yaml");
        let error = read_scenario_file(&path, &CaseEnv::empty()).unwrap_err().to_string();
        assert!(error.contains("leads out of the folder"), "{error}");
    }
}
