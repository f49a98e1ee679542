//! The evaluation workflows end to end, against the demo agents and the
//! test judge server: `assay assess` (failure modes, with and without the
//! judge), `assay eval` (weighted scores per scenario and category) and
//! `assay validate` (agreement and the confusion matrix), each asserting
//! the JSON it writes and that a second identical run sends the judge
//! nothing.

use crate::judge::judge_server;
use crate::util::{assay_with_judge, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

/// A folder with one file of `name` holding `text`, and folders for the
/// results and the caches.
pub(crate) struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub(crate) fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        Project { dir }
    }

    pub(crate) fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    /// Runs `assay COMMAND ARGS --results results/RUN --cache-dir cache`.
    pub(crate) fn run(&self, judge: Option<&str>, command: &str, args: &[&str], run: &str) -> Output {
        let results = self.path(&format!("results/{run}"));
        let cache = self.path("cache");
        let base = [command, "--results", &results, "--cache-dir", &cache];
        assay_with_judge(judge, &[&base[..], args].concat())
    }

    pub(crate) fn json(&self, run: &str, name: &str) -> Value {
        let path = Path::new(&self.path(&format!("results/{run}"))).join(name);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
            .unwrap()
    }
}

pub(crate) fn show(output: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", stdout(output), stderr(output))
}

pub(crate) const FLAKY_CASE: &str = r#"{
    "agent": "flaky",
    "success_ratio": "2/4",
    "interactions": [ { "text": "are you stable?", "response": { "text": { "value": "pass" } } } ]
}"#;

#[test]
fn assess_runs_every_sample_and_groups_the_failures() {
    let project = Project::new(&[("flaky.hocon", FLAKY_CASE)]);
    let output = project.run(None, "assess", &[&project.path("flaky.hocon")], "one");
    // 2 of 4 samples pass, 2 are needed: met (flaky), exit 0.
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let text = stdout(&output);
    assert!(text.contains("flaky (agent flaky): 2/4 samples passed, 2 needed: flaky"), "{text}");
    assert!(
        text.contains("2 of 4 samples (50%), 2 times: interactions[0].text value \"pass\": \"…\" does not equal \"…\""),
        "{text}"
    );

    let assessment = &project.json("one", "assess.json")["cases"][0];
    assert_eq!(assessment["samples"], 4, "no early stopping: {assessment}");
    assert_eq!((assessment["passed"].as_u64(), assessment["failed"].as_u64()), (Some(2), Some(2)));
    assert_eq!(assessment["status"], "flaky");
    let modes = assessment["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 1, "{assessment}");
    assert_eq!(modes[0]["samples"], 2);
    assert_eq!(modes[0]["occurrences"], 2);
    assert_eq!(modes[0]["percent"], 50.0);
    assert_eq!(
        modes[0]["examples"],
        json!([{ "sample": 1, "message": "\"fail\" does not equal \"pass\"", "actual": "fail" }])
    );
    let failed_samples: Vec<u64> =
        assessment["failures"].as_array().unwrap().iter().map(|f| f["sample"].as_u64().unwrap()).collect();
    assert_eq!(failed_samples, [1, 3]);
    assert!(assessment.get("llm_modes").is_none());
    // The raw run is kept too: one line per case, with all four samples.
    let lines = std::fs::read_to_string(project.path("results/one/results.jsonl")).unwrap();
    let case: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(case["samples"].as_array().unwrap().len(), 4);
}

#[test]
fn assess_asks_the_judge_for_modes_and_a_rerun_is_free() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("flaky.hocon", FLAKY_CASE)]);
    let output = project.run(Some(&url), "assess", &["--llm-modes", &project.path("flaky.hocon")], "first");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        stdout(&output)
            .contains("Failure modes as the judge classified them:\n    2 of 4 samples (50%), 2 times: Fails value")
    );
    let assessment = &project.json("first", "assess.json")["cases"][0];
    let llm_modes = assessment["llm_modes"].as_array().unwrap();
    assert_eq!(llm_modes.len(), 1, "{assessment}");
    assert_eq!(
        (llm_modes[0]["description"].as_str(), llm_modes[0]["samples"].as_u64()),
        (Some("Fails value"), Some(2))
    );
    for failure in assessment["failures"].as_array().unwrap() {
        assert_eq!(failure["llm_mode"], 0, "{failure}");
    }
    // The first failure found a new mode; the second was told it and chose
    // it by number.
    let prompts: Vec<String> =
        judge.requests.lock().unwrap().iter().map(|r| judge_server::prompt(r).to_owned()).collect();
    assert_eq!(prompts.len(), 2);
    assert!(prompts[0].contains("KNOWN FAILURE MODES:\n(none yet)"), "{}", prompts[0]);
    assert!(prompts[1].contains("KNOWN FAILURE MODES:\n1. Fails value"), "{}", prompts[1]);
    assert!(prompts[0].contains("THE TEST: interactions[0].text satisfies `value` with \"pass\"."), "{}", prompts[0]);

    let output = project.run(Some(&url), "assess", &["--llm-modes", &project.path("flaky.hocon")], "second");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(judge_server::count(&judge), 2, "every answer of the rerun came from the cache");
    assert_eq!(project.json("second", "assess.json")["cases"][0]["llm_modes"], assessment["llm_modes"]);
}

#[test]
fn assess_groups_failed_requests_and_reports_an_unmet_ratio() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let case = r#"{ "agent": "echo", "connections": "http", "success_ratio": "1/3",
                    "interactions": [ { "text": "hi", "response": { "text": { "value": "hi" } } } ] }"#;
    let project = Project::new(&[("down.hocon", case)]);
    let url = format!("http://127.0.0.1:{port}");
    let output = project.run(None, "assess", &["--agent-url", &url, &project.path("down.hocon")], "down");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let assessment = &project.json("down", "assess.json")["cases"][0];
    assert_eq!((assessment["samples"].as_u64(), assessment["passed"].as_u64()), (Some(3), Some(0)));
    let modes = assessment["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 1, "one mode for the three refused requests: {assessment}");
    assert_eq!(modes[0]["samples"], 3);
    let description = modes[0]["description"].as_str().unwrap();
    assert!(description.starts_with("interactions[0] request: unreachable: "), "{description}");
}

#[test]
fn assess_without_a_judge_refuses_llm_modes() {
    let project = Project::new(&[("flaky.hocon", FLAKY_CASE)]);
    let output = project.run(None, "assess", &["--llm-modes", &project.path("flaky.hocon")], "x");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--llm-modes needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL"));
}

pub(crate) const BLAND_FOOD: &str = "\
scenario_id: bland_food
problem: Your food is bland because it lacks spices. Add salt and cook it longer.
agent: echo
expectations:
  - expectation_id: spices
    statement: mentions spices
    weight: 2
    categories: [problem_finding]
  - expectation_id: pepper
    statement: mentions pepper
    categories: [solution_finding]
  - expectation_id: salt
    statement: says to add salt
    key: keywords
    expected: salt
    weight: 3
    categories: [solution_finding]
";

pub(crate) const WEATHER: &str = r#"{
    scenario_id: weather
    problem: "It rains."
    agent: echo
    expectations: [ { expectation_id: sunny, statement: "mentions sun", categories: [problem_finding] } ]
}"#;

#[test]
fn eval_scores_scenarios_and_categories_by_weight() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("bland.yaml", BLAND_FOOD), ("weather.hocon", WEATHER)]);
    let output = project.run(Some(&url), "eval", &[&project.path("")], "first");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let text = stdout(&output);
    assert!(text.contains("bland_food (agent echo): 0.83 (5/6)"), "{text}");
    assert!(
        text.contains("   MISS pepper (weight 1, gist): the judge found the text does not meet \"mentions pepper\""),
        "{text}"
    );
    assert!(text.contains("Overall: 0.71 (5/7)"), "{text}");

    let report = project.json("first", "eval.json");
    let bland = &report["scenarios"][0];
    assert_eq!(bland["scenario_id"], "bland_food");
    assert_eq!(bland["score"], json!({ "score": 5.0 / 6.0, "matched_weight": 5, "total_weight": 6, "errors": 0 }));
    assert_eq!(bland["categories"]["problem_finding"]["matched_weight"], 2);
    // Only matched expectations count towards a category: salt (3) matched,
    // pepper (1) did not.
    assert_eq!(
        bland["categories"]["solution_finding"],
        json!({ "score": 0.75, "matched_weight": 3, "total_weight": 4, "errors": 0 })
    );
    let matched: Vec<Value> =
        bland["samples"][0]["expectations"].as_array().unwrap().iter().map(|e| e["matched"].clone()).collect();
    assert_eq!(matched, [json!(true), json!(false), json!(true)]);
    assert_eq!(
        bland["samples"][0]["response"],
        "Your food is bland because it lacks spices. Add salt and cook it longer."
    );
    assert_eq!(report["scenarios"][1]["score"]["score"], 0.0);
    assert_eq!(
        report["categories"]["problem_finding"],
        json!({ "score": 2.0 / 3.0, "matched_weight": 2, "total_weight": 3, "errors": 0 })
    );
    assert_eq!(report["overall"]["matched_weight"], 5);
    assert_eq!(report["overall"]["total_weight"], 7);
    // spices, pepper and sunny went to the judge; salt is a keywords check.
    assert_eq!(judge_server::count(&judge), 3);

    // The same run again: the same scores, and the judge hears nothing.
    let output = project.run(Some(&url), "eval", &["--min-score", "0.5", &project.path("")], "second");
    assert_eq!(output.status.code(), Some(1), "weather scores 0, below --min-score: {}", show(&output));
    assert_eq!(project.json("second", "eval.json")["overall"], report["overall"]);
    assert_eq!(judge_server::count(&judge), 3);
}

#[test]
fn eval_runs_samples_and_counts_each() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("bland.yaml", BLAND_FOOD)]);
    let output =
        project.run(Some(&url), "eval", &["--samples", "3", "--no-judge-cache", &project.path("bland.yaml")], "s");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let report = project.json("s", "eval.json");
    assert_eq!(report["scenarios"][0]["samples"].as_array().unwrap().len(), 3);
    assert_eq!(report["overall"]["matched_weight"], 15);
    assert_eq!(report["overall"]["total_weight"], 18);
    assert_eq!(judge_server::count(&judge), 6, "two judged expectations per sample, uncached");
}

#[test]
fn eval_reports_what_could_not_be_judged() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{dead}/v1");
    let no_agent = "scenario_id: lost\nproblem: p\nexpectations: [{expectation_id: e, statement: mentions p}]\n";
    let project = Project::new(&[("bland.yaml", BLAND_FOOD), ("lost.yaml", no_agent)]);
    let output = project.run(Some(&url), "eval", &[&project.path("")], "errors");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let report = project.json("errors", "eval.json");
    let bland = &report["scenarios"][0];
    // The judge is down: the two gist expectations are errors, out of the
    // score; salt (keywords) still counts.
    assert_eq!(bland["score"], json!({ "score": 1.0, "matched_weight": 3, "total_weight": 3, "errors": 2 }));
    let message = bland["samples"][0]["expectations"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("cannot reach the judge at http://127.0.0.1:{dead}/v1/chat/completions")),
        "{message}"
    );
    let lost = &report["scenarios"][1];
    assert_eq!(lost["error"]["kind"], "no-agent");
    assert!(lost["error"]["message"].as_str().unwrap().contains("Consider `agent: NAME`"), "{lost}");
    // `--to` names the agent for every scenario.
    let output = project.run(None, "eval", &["--to", "echo", "--key", "keywords", &project.path("lost.yaml")], "to");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(project.json("to", "eval.json")["overall"]["matched_weight"], 0, "\"mentions p\" is not in \"p\"");
}

#[test]
fn eval_names_the_file_and_key_of_a_bad_scenario() {
    let bad = BLAND_FOOD.replace("key: keywords", "key: keywrods");
    let project = Project::new(&[("bad.yaml", &bad)]);
    let output = project.run(None, "eval", &[&project.path("bad.yaml")], "bad");
    assert_eq!(output.status.code(), Some(1));
    let error = project.json("bad", "eval.json")["scenarios"][0]["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        error.contains("bad.yaml`: unknown matcher key `keywrods` at `expectations[2].key` (did you mean `keywords`?)"),
        "{error}"
    );
}

pub(crate) const VALIDATION: &str = "\
scenario:
  scenario_id: bland_food
  problem: my food is bland
  expectations:
    - {expectation_id: spices, statement: mentions spices, categories: [problem_finding]}
    - {expectation_id: salt, statement: mentions salt, key: keywords, expected: salt, categories: [solution_finding]}
    - {expectation_id: pepper, statement: mentions pepper}
mock_responses:
  - mock_response_id: good
    mock_response_content: It lacks spices; add salt.
    wanted_results:
      - {expectation_id: spices, wanted_result: true, weight: 2}
      - {expectation_id: salt, wanted_result: true}
      - {expectation_id: pepper, wanted_result: false}
  - mock_response_id: wrong
    mock_response_content: The weather is nice.
    wanted_results:
      - {expectation_id: spices, wanted_result: true}
      - {expectation_id: salt, wanted_result: false}
";

#[test]
fn validate_measures_agreement_with_the_wanted_results() {
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("check.yaml", VALIDATION)]);
    let output = project.run(Some(&url), "validate", &[&project.path("check.yaml")], "first");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let text = stdout(&output);
    assert!(text.contains("  wrong: 0.50 (1/2)\n    spices: wanted match, judged no match (gist): "), "{text}");
    assert!(text.contains("  wanted match                2                1"), "{text}");
    assert!(text.contains("Agreement: 0.83 (5/6)"), "{text}");

    let report = project.json("first", "validate.json");
    assert_eq!(report["agreement"], json!({ "score": 5.0 / 6.0, "matched_weight": 5, "total_weight": 6, "errors": 0 }));
    assert_eq!(
        report["confusion"],
        json!({ "true_positive": 2, "false_positive": 0, "true_negative": 2, "false_negative": 1, "errors": 0 })
    );
    assert_eq!(
        report["categories"]["problem_finding"],
        json!({ "score": 2.0 / 3.0, "matched_weight": 2, "total_weight": 3, "errors": 0 })
    );
    assert_eq!(report["categories"]["solution_finding"]["score"], 1.0);
    let file = &report["files"][0];
    assert_eq!(file["mock_responses"][0]["agreement"]["score"], 1.0);
    let judgment = &file["mock_responses"][1]["judgments"][0];
    assert_eq!(judgment["expectation_id"], "spices");
    assert_eq!((judgment["wanted_result"].as_bool(), judgment["actual_result"].as_bool()), (Some(true), Some(false)));
    assert_eq!(judgment["agrees"], false);
    // salt is judged by keywords: the judge heard spices and pepper for
    // `good`, spices for `wrong`.
    assert_eq!(judge_server::count(&judge), 3);

    let output = project.run(Some(&url), "validate", &[&project.path("check.yaml")], "second");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(project.json("second", "validate.json")["agreement"], report["agreement"]);
    assert_eq!(judge_server::count(&judge), 3, "the rerun came from the cache");
}

#[test]
fn validate_checks_any_matcher_key() {
    // `--key gist` sends salt to the judge too (with its statement): the
    // same decisions, two more requests.
    let judge = judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[("check.yaml", VALIDATION)]);
    let output = project.run(
        Some(&url),
        "validate",
        &["--key", "gist", "--no-judge-cache", &project.path("check.yaml")],
        "gist",
    );
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(project.json("gist", "validate.json")["agreement"]["matched_weight"], 5);
    assert_eq!(judge_server::count(&judge), 5);
    // A matcher that always says "match": not_keywords of statements no
    // response contains. It agrees only where a match was wanted (4 of 6).
    let output = project.run(None, "validate", &["--key", "not_keywords", &project.path("check.yaml")], "not");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let report = project.json("not", "validate.json");
    assert_eq!(report["confusion"]["true_positive"], 3);
    assert_eq!(report["confusion"]["false_positive"], 2);
    assert_eq!(report["agreement"]["matched_weight"], 4);
    let output = project.run(
        None,
        "validate",
        &["--key", "not_keywords", "--min-agreement", "0.9", &project.path("check.yaml")],
        "min",
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn validate_counts_judge_errors_apart() {
    let garbage = crate::fake_server::FakeServer::start(|_| crate::fake_server::Reply::status(200, "not json"));
    let url = format!("{}/v1", garbage.url());
    let project = Project::new(&[("check.yaml", VALIDATION)]);
    let output = project.run(Some(&url), "validate", &["--no-judge-cache", &project.path("check.yaml")], "garbage");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let report = project.json("garbage", "validate.json");
    assert_eq!(report["confusion"]["errors"], 3);
    // salt (keywords) is still judged: 2 agreements of weight 1.
    assert_eq!(report["agreement"], json!({ "score": 1.0, "matched_weight": 2, "total_weight": 2, "errors": 3 }));
    let message = report["files"][0]["mock_responses"][0]["judgments"][0]["message"].as_str().unwrap();
    assert!(message.contains("answered something that is not a chat completion: not json"), "{message}");
}

#[test]
fn validate_skips_scenario_files_and_needs_a_validation() {
    let project = Project::new(&[("bland.yaml", BLAND_FOOD)]);
    let output = project.run(None, "validate", &[&project.path("")], "none");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no validation files found"), "{}", stderr(&output));
    assert!(stderr(&output).contains("Consider `assay eval` for scenario files"), "{}", stderr(&output));
}

/// What a reporter subscribed to `assay eval` saw.
#[derive(Default)]
struct Watcher {
    events: Vec<String>,
    /// (case id, key of each check of each sample).
    checks: Vec<(String, Vec<String>)>,
}

impl assay::run::Reporter for Watcher {
    fn report(&mut self, event: &assay::run::RunEvent<'_>) -> std::io::Result<()> {
        use assay::run::EventKind;
        let name = match event.kind {
            EventKind::RunStarted { cases } => format!("run started ({cases})"),
            EventKind::CaseStarted { id } => format!("started {id}"),
            EventKind::SampleFinished { case, index, .. } => format!("sample {index} of {case}"),
            EventKind::CaseSlow { id, .. } => format!("slow {id}"),
            EventKind::CaseFinished(case) => {
                for sample in &case.samples {
                    let keys = sample.runs[0].interactions[0].checks.iter().map(|c| c.key.clone()).collect();
                    self.checks.push((case.id.clone(), keys));
                }
                format!("finished {}", case.id)
            }
            EventKind::RunFinished(_) => "run finished".to_owned(),
        };
        self.events.push(name);
        Ok(())
    }
}

#[test]
fn a_reporter_subscribed_to_eval_sees_every_expectation_of_every_sample() {
    use assay::eval::{EvalOptions, Evaluator};
    use assay::formats::{ScenarioFile, read_scenario_file};
    let scenario = "scenario_id: band\nproblem: The Beatles were from Liverpool\nagent: echo\nexpectations:\n  \
        - {expectation_id: band, statement: names the band, key: keywords, expected: Beatles}\n  \
        - {expectation_id: city, statement: names the city, key: keywords, expected: [Liverpool, The]}\n  \
        - {expectation_id: year, statement: names the year, key: not_keywords, expected: \"1960\"}\n";
    let project = Project::new(&[("band.yaml", scenario)]);
    let ScenarioFile::Scenario(scenario) =
        read_scenario_file(Path::new(&project.path("band.yaml")), &Default::default()).unwrap()
    else {
        panic!("a scenario")
    };
    let runtime = crate::util::runtime();
    let registry = std::sync::Arc::new(assay::plugin::Registry::with_builtins(runtime).unwrap());
    let catalog = assay::agent::AgentCatalog::with_demo_agents(runtime.clone(), assay::sandbox::Limits::default());
    let agents = assay::agent::Agents::new(catalog, assay::agent::HttpAgents::new(Default::default()).unwrap());
    let options = EvalOptions { samples: 2, ..EvalOptions::default() };
    let mut watcher = Watcher::default();
    let report = Evaluator::new(registry, agents, options).run_blocking(vec![Ok(scenario)], &mut watcher);

    // The run's own events, in order: the scenario is one case of two
    // samples.
    assert_eq!(watcher.events.first().map(String::as_str), Some("run started (1)"));
    assert_eq!(watcher.events[1], "started band");
    let samples: Vec<&String> = watcher.events.iter().filter(|e| e.starts_with("sample")).collect();
    assert_eq!(samples.len(), 2);
    assert_eq!(&watcher.events[watcher.events.len() - 2..], ["finished band", "run finished"]);
    // Every expectation's checks, in every sample (a list of expected
    // values is one check each).
    let every = ["keywords", "keywords", "keywords", "not_keywords"].map(String::from).to_vec();
    assert_eq!(watcher.checks, [("band".to_owned(), every.clone()), ("band".to_owned(), every)]);
    // And the scores the same run gave.
    assert_eq!(report.overall.matched, 6);
    assert_eq!(report.overall.total, 6);
}
