//! `assay eval`: each scenario's problem goes to the agent (once per
//! sample), every expectation is judged on the answer, and the weighted
//! scores are reported per scenario, per category and overall.
//!
//! A scenario compiles into a job for the one scheduler (one turn: the
//! problem, checked by every expectation's checks in one batch), and the
//! scores are an aggregating reporter of the run's events
//! ([`ScenarioScores`]): any other reporter sees the same cases.
//!
//! A scenario's score is the weight of its matched expectations over the
//! weight of the expectations judged, summed over its samples; a category's
//! score is the same over every expectation in it. An expectation that
//! could not be judged (judge down, agent error) is an error: counted and
//! reported, and in neither the numerator nor the denominator.
//!
//! A scenario with required expectations (Kyma's format) also passes or
//! fails: see [`crate::eval::gate`] for thresholds and the gate.

use crate::agent::Agents;
use crate::case::{Connection, SuccessRatio};
use crate::errors::{CaseError, CaseErrorKind, ErrorKind};
use crate::eval::expectations::{judged, plan_expectations};
use crate::eval::gate::{ExpectationScore, answer_value, expectation_score, meets, passed};
use crate::eval::score::{CategoryTallies, Tally, add_to_categories, merge_categories};
use crate::formats::Scenario;
use crate::job::{CaseResult, CaseSource, Job, LoadedCase, RunError, Turn};
use crate::plugin::Registry;
use crate::run::{EventKind, Reporter, RunEvent, RunOptions, RunTimeout, Runner};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How scenarios are evaluated.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The agent to ask, over every scenario's own `agent`.
    pub agent: Option<String>,
    /// The agent to ask when neither `agent` nor the scenario names one
    /// (`[scenarios] agent` of assay.toml, through
    /// [`crate::Project::evaluator`]).
    pub default_agent: Option<String>,
    /// The connection to the agent (default: `[scenarios] connection` of
    /// assay.toml, through [`crate::Project::evaluator`], else `direct`).
    pub connection: Option<Connection>,
    /// How many times each problem is asked (default 1).
    pub samples: u32,
    /// How many requests run at once.
    pub jobs: usize,
    /// The bound on each sample's whole time (`--timeout`; a scenario is
    /// one request), instead of the run's default.
    pub timeout: Option<Duration>,
    /// A matcher key that judges every expectation instead of its own.
    pub key: Option<String>,
    /// The bound on each sample's whole time when `timeout` sets none
    /// (default [`crate::run::DEFAULT_CASE_TIMEOUT`]; `[cases]
    /// timeout_in_seconds` of assay.toml, through
    /// [`crate::Project::evaluator`]).
    pub default_timeout: Duration,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            agent: None,
            default_agent: None,
            connection: None,
            samples: 1,
            jobs: crate::run::RunOptions::default().jobs,
            timeout: None,
            key: None,
            default_timeout: crate::run::DEFAULT_CASE_TIMEOUT,
        }
    }
}

/// The outcome of `assay eval`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EvalReport {
    /// Every scenario, in the order given.
    pub scenarios: Vec<ScenarioResult>,
    /// Scores by category over every scenario.
    pub categories: CategoryTallies,
    /// The score over every expectation of every scenario.
    pub overall: Tally,
}

impl EvalReport {
    /// Whether anything could not be evaluated: a bad file, an agent
    /// error, an expectation that could not be judged.
    pub fn has_errors(&self) -> bool {
        self.scenarios.iter().any(|s| s.error.is_some() || s.score.errors > 0)
    }

    /// Whether a scenario failed: a required expectation was not met.
    pub fn has_failures(&self) -> bool {
        self.scenarios.iter().any(|s| s.passed == Some(false))
    }
}

/// One scenario's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioResult {
    /// Its `scenario_id` (or the file's id when the file could not be read).
    pub scenario_id: String,
    /// Its file.
    pub file: PathBuf,
    /// The agent asked.
    pub agent: String,
    /// Its weighted score over every sample.
    pub score: Tally,
    /// Its scores by category.
    pub categories: CategoryTallies,
    /// Whether every required expectation was met; absent when none is
    /// required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// Each expectation's score over the samples, in order.
    pub expectations: Vec<ExpectationScore>,
    /// Each time the problem was asked.
    pub samples: Vec<ScenarioSample>,
    /// Why it could not be evaluated at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
}

impl ScenarioResult {
    /// The result of a scenario that was never evaluated: `error` says why
    /// (a file that could not be read, a cancelled run).
    fn unevaluated(scenario_id: String, file: PathBuf, error: Option<RunError>) -> ScenarioResult {
        ScenarioResult {
            scenario_id,
            file,
            agent: String::new(),
            score: Tally::default(),
            categories: CategoryTallies::new(),
            passed: None,
            expectations: Vec::new(),
            samples: Vec::new(),
            error,
        }
    }
}

/// One answer to the problem and its judgments.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioSample {
    /// 0-based.
    pub index: u32,
    /// The answer's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// Why there is no answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// Each expectation's judgment (empty without an answer).
    pub expectations: Vec<ExpectationResult>,
}

/// How an answer fared against one expectation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExpectationResult {
    /// The expectation.
    pub expectation_id: String,
    /// The matcher key that judged it.
    pub key: String,
    /// Whether it matched (its value reached its threshold, if it has
    /// one); `null` when it could not be judged.
    pub matched: Option<bool>,
    /// The answer's value on it: its score in [0, 1] with a threshold,
    /// else 1 or 0 for the verdict; `null` when it could not be judged.
    pub score: Option<f64>,
    /// What the judge said.
    pub message: String,
    /// Its weight.
    pub weight: u32,
    /// Its categories.
    pub categories: Vec<String>,
}

/// Evaluates scenarios against agents, on the one scheduler.
pub struct Evaluator {
    registry: Arc<Registry>,
    agents: Agents,
    options: EvalOptions,
}

impl Evaluator {
    /// An evaluator judging with `registry`'s matchers.
    pub fn new(registry: Arc<Registry>, agents: Agents, options: EvalOptions) -> Evaluator {
        Evaluator { registry, agents, options }
    }

    /// Evaluates every scenario (or reports why it cannot be); `reporter`
    /// sees the run's events (each scenario is a case whose samples hold
    /// every expectation's checks).
    pub async fn run(&self, scenarios: Vec<Result<Scenario, CaseError>>, reporter: &mut dyn Reporter) -> EvalReport {
        let (jobs, mut scores) = scenario_jobs(scenarios, &self.options, self.registry.as_ref());
        let sample_timeout = self.options.timeout.map(|length| RunTimeout { length, set_by: "--timeout" });
        let options = RunOptions {
            jobs: self.options.jobs,
            exhaustive: true,
            sample_timeout,
            default_timeout: self.options.default_timeout,
            ..RunOptions::default()
        };
        let runner = Runner::new(self.registry.clone(), self.agents.clone(), options);
        runner.run(CaseSource::loaded(jobs), &mut (&mut scores, reporter)).await;
        scores.into_report()
    }

    /// [`Evaluator::run`] on a runtime of its own.
    pub fn run_blocking(&self, scenarios: Vec<Result<Scenario, CaseError>>, reporter: &mut dyn Reporter) -> EvalReport {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
        runtime.block_on(self.run(scenarios, reporter))
    }
}

/// Compiles scenarios into jobs for the scheduler (a scenario that cannot
/// run, into one reported as an error), and the reporter that scores them.
pub fn scenario_jobs(
    scenarios: Vec<Result<Scenario, CaseError>>,
    options: &EvalOptions,
    registry: &Registry,
) -> (Vec<LoadedCase>, ScenarioScores) {
    let mut scores = ScenarioScores { key: options.key.clone(), entries: Vec::new(), by_id: HashMap::new() };
    let mut jobs = Vec::new();
    for scenario in scenarios {
        let planned = scenario.and_then(|scenario| {
            let plan = plan_expectations(&scenario, options.key.as_deref(), registry)
                .map_err(|kind| CaseError::new(&scenario.file, kind))?;
            let agent =
                options.agent.clone().or_else(|| scenario.agent.clone()).or_else(|| options.default_agent.clone());
            let agent = agent.ok_or_else(|| {
                CaseError::new(&scenario.file, CaseErrorKind::NoAgent { scenario: scenario.id.clone() })
            })?;
            Ok((scenario, plan, agent))
        });
        match planned {
            Ok((scenario, plan, agent)) => {
                let id = scores.claim(&scenario.id, &scenario.file);
                let checks = plan.iter().flatten().cloned().collect();
                // The conversation before the problem (a Kyma file's earlier
                // queries) is asked first, unchecked, in the same conversation.
                let mut turns: Vec<Turn> = scenario
                    .conversation
                    .iter()
                    .map(|(text, sly_data)| Turn { sly_data: sly_data.clone(), ..Turn::new(text.clone(), Vec::new()) })
                    .collect();
                turns.push(Turn { sly_data: scenario.sly_data.clone(), ..Turn::new(scenario.problem.clone(), checks) });
                let samples = options.samples.max(1);
                jobs.push(LoadedCase::Ready(Box::new(Job {
                    id: id.clone(),
                    file: scenario.file.clone(),
                    agent,
                    connections: vec![options.connection.clone().unwrap_or(Connection::Direct)],
                    success_ratio: SuccessRatio { required: samples, samples },
                    timeout: None,
                    metadata: Vec::new(),
                    turns,
                    recording: None,
                    prerequisite: None,
                    grouped: None,
                })));
                scores.expect(
                    id,
                    Pending::Scenario { sizes: plan.iter().map(Vec::len).collect(), scenario: Box::new(scenario) },
                );
            }
            Err(error) => {
                let stem = unread_scenario_id(&error);
                let id = scores.claim(&stem, &error.file);
                scores.expect(id.clone(), Pending::Broken { scenario_id: stem });
                jobs.push(LoadedCase::Broken { id, error });
            }
        }
    }
    (jobs, scores)
}

/// The id a scenario is known by before it runs (what `--shard` cuts
/// by): its `scenario_id`, or for a file that cannot be read, the file's
/// stem, as the case reporting its error is named.
pub fn scenario_id(scenario: &Result<Scenario, CaseError>) -> String {
    match scenario {
        Ok(scenario) => scenario.id.clone(),
        Err(error) => unread_scenario_id(error),
    }
}

/// The id of a scenario whose file cannot be read: the file's stem.
fn unread_scenario_id(error: &CaseError) -> String {
    error.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The scores of `assay eval`, from the run's events: each scenario's
/// result as its case finishes, and the totals at the end.
pub struct ScenarioScores {
    key: Option<String>,
    /// One per scenario, in the order given.
    entries: Vec<(String, Entry)>,
    by_id: HashMap<String, usize>,
}

/// What a scenario is waiting for, or has.
enum Entry {
    Pending(Pending),
    Done(ScenarioResult),
}

/// A scenario not yet finished.
enum Pending {
    /// A scenario run as a job; `sizes` are how many checks each
    /// expectation has, in order.
    Scenario { scenario: Box<Scenario>, sizes: Vec<usize> },
    /// A scenario that cannot run: its case reports why.
    Broken { scenario_id: String },
}

impl ScenarioScores {
    /// A case id for `id`, unique in the run (another file's scenario of
    /// the same id gets its file in the case id).
    fn claim(&mut self, id: &str, file: &std::path::Path) -> String {
        let mut case_id = id.to_owned();
        if self.by_id.contains_key(&case_id) {
            case_id = format!("{id} ({})", file.display());
        }
        while self.by_id.contains_key(&case_id) {
            case_id.push('\'');
        }
        self.by_id.insert(case_id.clone(), self.entries.len());
        case_id
    }

    fn expect(&mut self, id: String, pending: Pending) {
        self.entries.push((id, Entry::Pending(pending)));
    }

    /// Every scenario's result, in the order given, and the totals. A
    /// scenario the run did not get to (it was cancelled) is an error.
    pub fn into_report(self) -> EvalReport {
        let mut report = EvalReport::default();
        for (id, entry) in self.entries {
            let result = match entry {
                Entry::Done(result) => result,
                Entry::Pending(pending) => {
                    let (scenario_id, file) = match pending {
                        Pending::Scenario { scenario, .. } => (scenario.id, scenario.file),
                        Pending::Broken { scenario_id } => (scenario_id, PathBuf::new()),
                    };
                    let message = format!("scenario `{id}` was not run: the run was cancelled");
                    ScenarioResult::unevaluated(scenario_id, file, Some(RunError { kind: ErrorKind::NotRun, message }))
                }
            };
            report.overall.merge(&result.score);
            merge_categories(&mut report.categories, &result.categories);
            report.scenarios.push(result);
        }
        report
    }

    fn finished(&mut self, case: &CaseResult) {
        let Some(&index) = self.by_id.get(&case.id) else { return };
        let entry = &mut self.entries[index].1;
        if let Entry::Pending(pending) = entry {
            let result = match pending {
                Pending::Scenario { scenario, sizes } => tally(scenario, sizes, case, self.key.as_deref()),
                Pending::Broken { scenario_id } => {
                    ScenarioResult::unevaluated(scenario_id.clone(), case.file.clone(), case.error.clone())
                }
            };
            *entry = Entry::Done(result);
        }
    }
}

impl Reporter for ScenarioScores {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        if let EventKind::CaseFinished(case) = event.kind {
            self.finished(case);
        }
        Ok(())
    }
}

/// Scores one scenario's case: every sample's answer against every
/// expectation (an expectation is its checks together), and each
/// expectation over the samples.
fn tally(scenario: &Scenario, sizes: &[usize], case: &CaseResult, key: Option<&str>) -> ScenarioResult {
    let mut result = ScenarioResult {
        scenario_id: scenario.id.clone(),
        file: scenario.file.clone(),
        agent: case.agent.clone(),
        score: Tally::default(),
        categories: CategoryTallies::new(),
        passed: None,
        expectations: Vec::new(),
        samples: Vec::new(),
        error: case.error.clone(),
    };
    // The values of the answers that judged each expectation.
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); scenario.expectations.len()];
    for sample in &case.samples {
        // The problem's answer is the last (an earlier failure ends the
        // conversation, and is then the last).
        let interaction = sample.runs.first().and_then(|run| run.interactions.last());
        let (response, error, judged) = match interaction {
            Some(interaction) if interaction.error.is_none() => {
                let text = interaction.response.as_ref().and_then(|r| r.text.clone()).unwrap_or_default();
                (Some(text), None, judged(&interaction.checks, sizes))
            }
            Some(interaction) => (None, interaction.error.clone(), Vec::new()),
            None => (None, None, Vec::new()),
        };
        let mut expectations = Vec::new();
        for (i, expectation) in scenario.expectations.iter().enumerate() {
            let (score, message) = match judged.get(i) {
                Some(judged) => (answer_value(expectation, judged), judged.message.clone()),
                None => (None, "not judged: the agent gave no answer".to_owned()),
            };
            values[i].extend(score);
            let matched = score.map(|score| meets(expectation, score));
            result.score.add(expectation.weight, matched);
            add_to_categories(&mut result.categories, &expectation.categories, expectation.weight, matched);
            expectations.push(ExpectationResult {
                expectation_id: expectation.id.clone(),
                key: key.unwrap_or(&expectation.key).to_owned(),
                matched,
                score,
                message,
                weight: expectation.weight,
                categories: expectation.categories.clone(),
            });
        }
        result.samples.push(ScenarioSample { index: sample.index, response, error, expectations });
    }
    result.expectations =
        scenario.expectations.iter().zip(&values).map(|(e, values)| expectation_score(e, values)).collect();
    result.passed = passed(&result.expectations);
    result
}
