//! `assay eval` on Kyma's current scenario format, end to end: the
//! fixture under `fixtures/scenarios/kyma/` against the `echo` agent and
//! the test judge (each query a scenario, its resource sent to the agent),
//! required expectations gating a query and optional ones only recorded,
//! a threshold on the share of samples, located errors, and every real
//! Kyma scenario under `../shared/reference/kyma/` read.

use crate::evaluation::workflows::{Project, show};
use crate::judge::judge_server;
use crate::util::{root, stdout};
use assay::case::{CaseEnv, discover_with};
use assay::formats::SCENARIO_EXTENSIONS;
use assay::formats::{ScenarioFile, read_scenario_file};
use serde_json::{Value, json};

fn fixture_folder() -> String {
    root().join("fixtures/scenarios/kyma").to_str().unwrap().to_owned()
}

#[test]
fn the_kyma_fixture_runs_each_query_as_a_scenario_and_passes() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[]);
    let output = project.run(Some(&url), "eval", &["--to", "echo", &fixture_folder()], "fixture");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let text = stdout(&output);
    assert!(text.contains("test-pod-2/0 (agent echo): 0.67 (2/3), passed\n"), "{text}");
    assert!(text.contains("  optional partial_yaml: score 0.00, threshold 0.50: NOT MET\n"), "{text}");
    assert!(text.contains("test-pod-2/1 (agent echo): 0.50 (1/2), passed\n"), "{text}");
    assert!(text.contains("Passed: 2 of 2 scenarios with required expectations"), "{text}");

    let report = project.json("fixture", "eval.json");
    let first = &report["scenarios"][0];
    assert_eq!(first["scenario_id"], "test-pod-2/0");
    assert_eq!(first["passed"], true);
    assert_eq!(
        first["expectations"],
        json!([
            { "expectation_id": "pod_stuck", "score": 1.0, "threshold": 0.5, "required": true, "met": true },
            { "expectation_id": "secret_named", "score": 1.0, "threshold": 0.5, "required": true, "met": true },
            { "expectation_id": "partial_yaml", "score": 0.0, "threshold": 0.5, "required": false, "met": false },
        ])
    );
    assert_eq!(first["samples"][0]["expectations"][0]["key"], "gist");
    assert_eq!(report["scenarios"][1]["scenario_id"], "test-pod-2/1");
    assert_eq!(report["overall"], json!({ "score": 0.6, "matched_weight": 3, "total_weight": 5, "errors": 0 }));
    assert_eq!(judge_server::count(&judge), 5, "every statement went to the judge once");

    // The resource went to the agent as the private data `{"resource": …}`
    // (echo returns it on its answer, which results.jsonl records).
    let lines = std::fs::read_to_string(project.path("results/fixture/results.jsonl")).unwrap();
    let case: Value =
        lines.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|c| c["id"] == "test-pod-2/0").unwrap();
    let response = &case["samples"][0]["runs"][0]["interactions"][0]["response"];
    assert_eq!(
        response["sly_data"],
        json!({ "resource": { "kind": "Pod", "api_version": "v1", "name": "pod-secret", "namespace": "test-pod-2" } }),
        "{case}"
    );
}

const GATED: &str = "\
id: test-svc-3
description: two queries, one missing an optional expectation and one a required one
queries:
  - user_query: The Service has no endpoints.
    expectations:
      - {name: service, statement: mentions Service, threshold: 0.5, required: true}
      - {name: selector, statement: mentions selector, threshold: 0.5, required: false}
  - user_query: The Service has no endpoints.
    expectations:
      - {name: service, statement: mentions Service, threshold: 0.5, required: true}
      - {name: selector, statement: mentions selector, threshold: 0.5, required: true}
";

#[test]
fn a_file_s_queries_are_one_conversation_as_kyma_s_runner_asks_them() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[]);
    let output = project.run(Some(&url), "eval", &["--to", "echo", &fixture_folder()], "talk");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let lines = std::fs::read_to_string(project.path("results/talk/results.jsonl")).unwrap();
    let cases: Vec<Value> = lines.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let second = cases.iter().find(|case| case["id"] == "test-pod-2/1").expect("the second query ran");
    let interactions = second["samples"][0]["runs"][0]["interactions"].as_array().unwrap();
    // The first query asked again, then the follow-up in the same
    // conversation: the echo agent counts the turns it has seen.
    assert_eq!(interactions.len(), 2, "{second}");
    assert_eq!(interactions[1]["response"]["structure"]["turn"], 2, "{second}");
    assert!(interactions[0]["checks"].as_array().unwrap().is_empty());
}

#[test]
fn assay_toml_gives_scenarios_that_name_no_agent_their_agent_and_connection() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("assay.toml", "[scenarios]\nagent = \"echo\"\nconnection = \"direct\"\n")]);
    let config = project.path("assay.toml");
    // Kyma's files name no agent: no `--to` is needed.
    let output = project.run(Some(&url), "eval", &["--config", &config, &fixture_folder()], "defaults");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(stdout(&output).contains("test-pod-2/0 (agent echo)"), "{}", show(&output));
    // A connection that is none is named, with the connections there are.
    std::fs::write(&config, "[scenarios]\nconnection = \"kyma\"\n").unwrap();
    let output = project.run(Some(&url), "eval", &["--config", &config, &fixture_folder()], "bad");
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    assert!(
        show(&output).contains("[scenarios] connection") && show(&output).contains("`kyma` is no connection"),
        "{}",
        show(&output)
    );
    // Without either, the error says where to give one.
    std::fs::write(&config, "").unwrap();
    let output = project.run(Some(&url), "eval", &["--config", &config, &fixture_folder()], "none");
    assert!(show(&output).contains("[scenarios] agent = \"NAME\""), "{}", show(&output));
}

#[test]
fn a_missed_required_expectation_fails_its_query_and_an_optional_one_is_only_recorded() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("svc.yaml", GATED)]);
    let output = project.run(Some(&url), "eval", &["--to", "echo", &project.path("svc.yaml")], "gated");
    assert_eq!(output.status.code(), Some(1), "a query failed: {}", show(&output));
    let text = stdout(&output);
    assert!(text.contains("test-svc-3/0 (agent echo): 0.50 (1/2), passed\n"), "{text}");
    assert!(
        text.contains("test-svc-3/1 (agent echo): 0.50 (1/2), FAILED: a required expectation was not met\n"),
        "{text}"
    );
    assert!(text.contains("  required selector: score 0.00, threshold 0.50: NOT MET\n"), "{text}");
    assert!(text.contains("Passed: 1 of 2 scenarios with required expectations"), "{text}");
    let report = project.json("gated", "eval.json");
    assert_eq!(
        (report["scenarios"][0]["passed"].as_bool(), report["scenarios"][1]["passed"].as_bool()),
        (Some(true), Some(false))
    );
    // Both queries score the same: the gate, not the score, tells them apart.
    assert_eq!(report["scenarios"][0]["score"], report["scenarios"][1]["score"]);
    assert_eq!(report["scenarios"][0]["expectations"][1]["met"], false);
}

#[test]
fn a_threshold_applies_to_the_share_of_samples_that_met_the_statement() {
    // `flaky` answers "pass" in even samples and "fail" in odd ones: over
    // four samples, "mentions pass" is met by half of them.
    let file = |threshold: &str| {
        format!(
            "id: coin\nqueries:\n  - user_query: toss\n    expectations:\n      - {{name: heads, statement: mentions pass, threshold: {threshold}}}\n"
        )
    };
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("half.yaml", &file("0.5")), ("most.yaml", &file("0.75"))]);
    let half =
        project.run(Some(&url), "eval", &["--to", "flaky", "--samples", "4", &project.path("half.yaml")], "half");
    assert_eq!(half.status.code(), Some(0), "{}", show(&half));
    let report = project.json("half", "eval.json");
    let scenario = &report["scenarios"][0];
    assert_eq!(scenario["expectations"][0]["score"], 0.5, "{scenario}");
    assert_eq!(scenario["expectations"][0]["met"], true);
    let matched: Vec<Value> =
        scenario["samples"].as_array().unwrap().iter().map(|s| s["expectations"][0]["matched"].clone()).collect();
    assert_eq!(matched, [json!(true), json!(false), json!(true), json!(false)]);

    let most =
        project.run(Some(&url), "eval", &["--to", "flaky", "--samples", "4", &project.path("most.yaml")], "most");
    assert_eq!(most.status.code(), Some(1), "half the samples do not reach 0.75: {}", show(&most));
    let scenario = &project.json("most", "eval.json")["scenarios"][0];
    assert_eq!(
        (scenario["expectations"][0]["met"].as_bool(), scenario["passed"].as_bool()),
        (Some(false), Some(false))
    );
    assert!(stdout(&most).contains("  required heads: score 0.50, threshold 0.75: NOT MET"), "{}", show(&most));
}

#[test]
fn a_bad_kyma_file_is_an_error_naming_the_query_and_key() {
    let project = Project::new(&[
        ("typo.yaml", &GATED.replace("required: false", "requierd: false")),
        ("threshold.yaml", &GATED.replace("threshold: 0.5, required: false", "threshold: 50, required: false")),
        ("mixed.yaml", &format!("scenario_id: x\n{GATED}")),
    ]);
    let output = project.run(None, "eval", &["--to", "echo", &project.path("")], "bad");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let report = project.json("bad", "eval.json");
    let error = |id: &str| {
        let scenario = report["scenarios"].as_array().unwrap().iter().find(|s| s["scenario_id"] == id).unwrap();
        assert_eq!(scenario["error"]["kind"], "bad-file", "{scenario}");
        scenario["error"]["message"].as_str().unwrap().to_owned()
    };
    let typo = error("typo");
    assert!(
        typo.contains(
            "typo.yaml`: unknown key `requierd` at `queries[0].expectations[1].requierd` (did you mean `required`?)"
        ),
        "{typo}"
    );
    let threshold = error("threshold");
    assert!(
        threshold.contains("invalid `queries[0].expectations[1].threshold`: 50 is not a score in (0, 1]"),
        "{threshold}"
    );
    let mixed = error("mixed");
    assert!(
        mixed.contains("mixes Kyma's format (`id`, `queries`) with the scenario format (`scenario_id`)"),
        "{mixed}"
    );
}

#[test]
#[ignore = "reads Kyma's scenario files in ../shared/reference/kyma, which is not part of this repository"]
fn every_kyma_reference_scenario_reads() {
    let folder = root().join("../shared/reference/kyma");
    assert!(folder.is_dir(), "{} does not exist: this test needs Kyma's scenario files there", folder.display());
    let files = discover_with(std::slice::from_ref(&folder), SCENARIO_EXTENSIONS).unwrap();
    assert!(!files.is_empty(), "no scenario files in {}", folder.display());
    for file in &files {
        let read = read_scenario_file(&file.path, &CaseEnv::empty()).unwrap_or_else(|e| panic!("{e}"));
        let ScenarioFile::Queries(scenarios) = read else { panic!("{}: not in Kyma's format", file.path.display()) };
        assert!(!scenarios.is_empty());
        for scenario in &scenarios {
            assert!(
                scenario.sly_data.as_ref().is_some_and(|data| data["resource"]["kind"].is_string()),
                "{scenario:?}"
            );
            assert!(scenario.expectations.iter().all(|e| e.threshold.is_some()), "{scenario:?}");
        }
    }
    // The one the issue names, exactly.
    let role_missing =
        read_scenario_file(&folder.join("scenario_01_bitnami_role_missing.yml"), &CaseEnv::empty()).unwrap();
    let ScenarioFile::Queries(scenarios) = role_missing else { panic!("Kyma's format") };
    let [query] = &scenarios[..] else { panic!("one query") };
    assert_eq!(query.id, "test-pod-1/0");
    assert_eq!(query.problem, "Why is the Pod in error state?");
    let required: Vec<(&str, bool)> = query.expectations.iter().map(|e| (e.id.as_str(), e.required)).collect();
    assert_eq!(
        required,
        [
            ("pod_error", true),
            ("pod_no_permissions", true),
            ("permission_role", true),
            ("permission_role_missing", false),
            ("step_by_step_guide", false),
            ("partial_yaml", false),
        ]
    );
}
