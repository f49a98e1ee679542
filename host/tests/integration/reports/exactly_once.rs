//! Every admitted case is reported exactly once, even when its task dies:
//! an embedder's judge that panics inside a plugin's call takes down the
//! case's task, and the run reports that case as an internal error while
//! every other case is reported as usual.

use crate::util::{Collect, Served, run_dir, runtime};
use assay::agent::{AgentCatalog, Agents, HttpAgents, HttpSettings};
use assay::job::CaseResult;
use assay::plugin::Registry;
use assay::run::RunOptions;
use assay::sandbox::host::CapabilitySpend;
use assay::sandbox::host::judge::Judge;
use assay::sandbox::{Answered, Capabilities, Limits};
use std::sync::Arc;

/// An embedder's judge with a bug.
struct PanickingJudge;

impl Judge for PanickingJudge {
    fn complete(&self, _prompt: &str, _: &CapabilitySpend) -> Answered<String> {
        panic!("the embedder's judge has a bug");
    }
}

fn run_cases(connection: &str, agent_url: Option<&str>) -> (Vec<CaseResult>, assay::run::RunSummary) {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, response: &str| {
        let text = format!(
            r#"{{ "agent": "echo", "connections": ["{connection}"],
                 "interactions": [ {{ "text": "The Beatles", "response": {{ "text": {response} }} }} ] }}"#
        );
        std::fs::write(dir.path().join(name), text).unwrap();
    };
    write("asks_the_judge.hocon", r#"{ "gist": "mentions a band" }"#);
    write("plain.hocon", r#"{ "keywords": "Beatles" }"#);
    write("failing.hocon", r#"{ "value": "The Rolling Stones" }"#);

    let mut registry = Registry::new();
    let capabilities = Capabilities { judge: Some(Arc::new(PanickingJudge)), embeddings: None };
    registry.add_builtins(runtime(), &capabilities).unwrap();
    let http = HttpSettings { base_url: agent_url.unwrap_or("http://127.0.0.1:9").to_owned(), ..Default::default() };
    run_dir(Arc::new(registry), dir.path(), http, RunOptions::default())
}

fn assert_reported_once_each(results: &[CaseResult], summary: &assay::run::RunSummary) {
    let mut ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["asks_the_judge", "failing", "plain"]);
    let status = |id: &str| results.iter().find(|r| r.id == id).unwrap();
    assert_eq!(status("plain").status.name(), "passed");
    assert_eq!(status("failing").status.name(), "failed");
    let died = status("asks_the_judge");
    assert_eq!(died.status.name(), "error");
    let error = died.error.as_ref().unwrap();
    assert_eq!(error.kind, assay::errors::ErrorKind::Internal);
    assert!(
        error.message.starts_with(
            "internal error: the case's task stopped before deciding it (it panicked: the embedder's judge has a bug)"
        ),
        "{}",
        error.message
    );
    assert_eq!((summary.cases, summary.passed, summary.failed, summary.errors), (3, 1, 1, 1));
    // Reported once each: nothing for the ledger to complain about.
    assert_eq!(summary.internal_errors, Vec::<String>::new());
    assert!(!summary.success(false));
}

#[test]
fn a_case_whose_task_panics_in_process_is_an_internal_error_and_the_others_are_reported() {
    let (results, summary) = run_cases("direct", None);
    assert_reported_once_each(&results, &summary);
}

#[test]
fn a_case_whose_task_panics_over_http_is_an_internal_error_and_the_others_are_reported() {
    let served = Served::start(&["echo"]);
    let (results, summary) = run_cases("http", Some(&served.url));
    assert_reported_once_each(&results, &summary);
}

/// A registry whose `gist` asks the panicking judge.
fn panicking_registry() -> Arc<Registry> {
    let mut registry = Registry::new();
    let capabilities = Capabilities { judge: Some(Arc::new(PanickingJudge)), embeddings: None };
    registry.add_builtins(runtime(), &capabilities).unwrap();
    Arc::new(registry)
}

#[test]
fn a_scenario_whose_judging_panics_is_an_internal_error_and_eval_goes_on() {
    use assay::eval::{EvalOptions, Evaluator};
    use assay::formats::{ScenarioFile, read_scenario_file};
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, key: &str| {
        let text = format!(
            "scenario_id: {name}\nproblem: The Beatles\nagent: echo\nexpectations:\n  - expectation_id: e\n    statement: mentions the band\n    key: {key}\n    expected: Beatles\n"
        );
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&path, text).unwrap();
        match read_scenario_file(&path, &Default::default()).unwrap() {
            ScenarioFile::Scenario(scenario) => Ok(scenario),
            ScenarioFile::Validation(_) | ScenarioFile::Queries(_) => unreachable!(),
        }
    };
    let scenarios = vec![write("judged", "gist"), write("plain", "keywords")];
    let catalog = AgentCatalog::with_demo_agents(runtime().clone(), Limits::default());
    let agents = Agents::new(catalog, HttpAgents::new(HttpSettings::default()).unwrap());
    let evaluator = Evaluator::new(panicking_registry(), agents, EvalOptions::default());
    // Scenarios run on the one scheduler: its guarantee holds for them too.
    let mut collect = Collect::default();
    let report = evaluator.run_blocking(scenarios, &mut collect);
    let ids: Vec<&str> = report.scenarios.iter().map(|s| s.scenario_id.as_str()).collect();
    assert_eq!(ids, ["judged", "plain"]);
    assert_eq!(collect.0.len(), 2, "each scenario is reported once as a case");
    let error = report.scenarios[0].error.as_ref().unwrap();
    assert_eq!(error.kind, assay::errors::ErrorKind::Internal);
    assert!(error.message.contains("it panicked: the embedder's judge has a bug"), "{}", error.message);
    assert_eq!(report.scenarios[1].samples[0].expectations[0].matched, Some(true));
    assert!(report.has_errors());
}

#[test]
fn a_mock_response_whose_judging_panics_is_an_internal_error_and_validate_goes_on() {
    use assay::eval::Validator;
    use assay::formats::{ScenarioFile, read_scenario_file};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("validation.yaml");
    std::fs::write(
        &path,
        "scenario:\n  scenario_id: band\n  problem: name a band\n  expectations:\n    - expectation_id: e\n      statement: names a band\nmock_responses:\n  - mock_response_id: m\n    mock_response_content: The Beatles\n    wanted_results:\n      - {expectation_id: e, wanted_result: true}\n",
    )
    .unwrap();
    let validation = match read_scenario_file(&path, &Default::default()).unwrap() {
        ScenarioFile::Validation(validation) => validation,
        ScenarioFile::Scenario(_) | ScenarioFile::Queries(_) => unreachable!(),
    };
    let catalog = AgentCatalog::with_demo_agents(runtime().clone(), Limits::default());
    let agents = Agents::new(catalog, HttpAgents::new(HttpSettings::default()).unwrap());
    let validator = Validator::new(panicking_registry(), agents, None, 2);
    let mut collect = Collect::default();
    let report = validator.run_blocking(vec![Ok(validation)], &mut collect);
    assert_eq!(collect.0.len(), 1, "the mock response is reported once as a case");
    let error = report.files[0].error.as_ref().unwrap();
    assert_eq!(error.kind, assay::errors::ErrorKind::Internal);
    assert!(
        error.message.starts_with(
            "internal error: the case's task stopped before deciding it (it panicked: the embedder's judge has a bug)"
        ),
        "{}",
        error.message
    );
    assert!(report.has_errors());
}
