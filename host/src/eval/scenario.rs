//! `assay eval`: each scenario's problem goes to the agent (once per
//! sample), every expectation is judged on the answer, and the weighted
//! scores are reported per scenario, per category and overall.
//!
//! A scenario's score is the weight of its matched expectations over the
//! weight of the expectations judged, summed over its samples; a category's
//! score is the same over every expectation in it. An expectation that
//! could not be judged (judge down, agent error) is an error: counted and
//! reported, and in neither the numerator nor the denominator.

use crate::agent::{Agents, ChatRequest};
use crate::case::{Connection, Scenario};
use crate::errors::CaseError;
use crate::eval::expectations::{PlannedExpectations, judge_text, plan_expectations};
use crate::eval::score::{CategoryTallies, Tally, add_to_categories, merge_categories};
use crate::plugin::Registry;
use crate::run::{RunError, panic_message};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// How scenarios are evaluated.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The agent to ask, over every scenario's own `agent`.
    pub agent: Option<String>,
    /// The connection to the agent (default `direct`).
    pub connection: Connection,
    /// How many times each problem is asked (default 1).
    pub samples: u32,
    /// How many requests run at once.
    pub jobs: usize,
    /// The bound on one request.
    pub timeout: Option<Duration>,
    /// A matcher key that judges every expectation instead of its own.
    pub key: Option<String>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            agent: None,
            connection: Connection::Direct,
            samples: 1,
            jobs: crate::run::RunOptions::default().jobs,
            timeout: None,
            key: None,
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
    /// Each time the problem was asked.
    pub samples: Vec<ScenarioSample>,
    /// Why it could not be evaluated at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
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
    /// Whether it matched; `null` when it could not be judged.
    pub matched: Option<bool>,
    /// What the judge said.
    pub message: String,
    /// Its weight.
    pub weight: u32,
    /// Its categories.
    pub categories: Vec<String>,
}

/// Evaluates scenarios against agents.
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

    /// Evaluates every scenario (or reports why it cannot be).
    pub async fn run(&self, scenarios: Vec<Result<Scenario, CaseError>>) -> EvalReport {
        let semaphore = Arc::new(Semaphore::new(self.options.jobs.max(1)));
        let mut pending = Vec::new();
        for scenario in scenarios {
            let planned = scenario.and_then(|s| {
                let plan = plan_expectations(&s, self.options.key.as_deref(), self.registry.as_ref())
                    .map_err(|kind| CaseError::new(&s.file, kind))?;
                Ok((s, plan))
            });
            pending.push(match planned {
                Err(error) => Err(error),
                Ok((scenario, plan)) => Ok(self.start(Arc::new(scenario), Arc::new(plan), &semaphore)),
            });
        }
        let mut report = EvalReport::default();
        for entry in pending {
            let result = match entry {
                Err(error) => broken(error),
                Ok((scenario, agent, samples)) => {
                    let mut collected = Vec::new();
                    for sample in samples {
                        collected.push(sample.await.expect("a scenario sample does not panic"));
                    }
                    tally(&scenario, agent, collected, self.options.key.as_deref())
                }
            };
            report.overall.merge(&result.score);
            merge_categories(&mut report.categories, &result.categories);
            report.scenarios.push(result);
        }
        report
    }

    /// Starts every sample of one scenario.
    fn start(
        &self,
        scenario: Arc<Scenario>,
        plan: Arc<PlannedExpectations>,
        semaphore: &Arc<Semaphore>,
    ) -> (Arc<Scenario>, Result<String, RunError>, Vec<tokio::task::JoinHandle<SampleRun>>) {
        let Some(agent) = self.options.agent.clone().or_else(|| scenario.agent.clone()) else {
            let error = RunError {
                kind: "no-agent".into(),
                message: format!(
                    "scenario `{}` names no agent\n\nConsider `agent: NAME` in {}, or `--to NAME`",
                    scenario.id,
                    scenario.file.display()
                ),
            };
            return (scenario, Err(error), Vec::new());
        };
        let samples = (0..self.options.samples.max(1))
            .map(|index| {
                let task = SampleTask {
                    agents: self.agents.clone(),
                    registry: self.registry.clone(),
                    scenario: scenario.clone(),
                    plan: plan.clone(),
                    agent: agent.clone(),
                    connection: self.options.connection,
                    timeout: self.options.timeout,
                    index,
                };
                let semaphore = semaphore.clone();
                tokio::spawn(async move {
                    let _permit = semaphore.acquire_owned().await.expect("the semaphore is never closed");
                    task.run().await
                })
            })
            .collect();
        (scenario, Ok(agent), samples)
    }

    /// [`Evaluator::run`] on a runtime of its own.
    pub fn run_blocking(&self, scenarios: Vec<Result<Scenario, CaseError>>) -> EvalReport {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
        runtime.block_on(self.run(scenarios))
    }
}

/// One sample's raw outcome: the answer, or why there is none, and the
/// judgments.
struct SampleRun {
    index: u32,
    response: Result<String, RunError>,
    judged: Vec<crate::eval::expectations::Judged>,
}

struct SampleTask {
    agents: Agents,
    registry: Arc<Registry>,
    scenario: Arc<Scenario>,
    plan: Arc<PlannedExpectations>,
    agent: String,
    connection: Connection,
    timeout: Option<Duration>,
    index: u32,
}

impl SampleTask {
    async fn run(self) -> SampleRun {
        let request = ChatRequest {
            agent: self.agent.clone(),
            text: self.scenario.problem.clone(),
            metadata: vec![("x-assay-sample".to_owned(), self.index.to_string())],
            ..ChatRequest::default()
        };
        let call = self.agents.chat(self.connection, request, self.timeout);
        let answer = match self.timeout {
            None => call.await,
            Some(limit) => match tokio::time::timeout(limit, call).await {
                Ok(answer) => answer,
                Err(_) => {
                    let message = format!("the agent did not answer within {} s", limit.as_secs_f64());
                    return SampleRun {
                        index: self.index,
                        response: Err(RunError { kind: "interaction-timeout".into(), message }),
                        judged: Vec::new(),
                    };
                }
            },
        };
        let text = match answer {
            Ok(response) => response.text.unwrap_or_default(),
            Err(error) => {
                let error = RunError { kind: error.kind.kind().to_owned(), message: error.to_string() };
                return SampleRun { index: self.index, response: Err(error), judged: Vec::new() };
            }
        };
        let (registry, plan) = (self.registry.clone(), self.plan.clone());
        let judging = tokio::task::spawn_blocking(move || {
            let (judged, _logs) = judge_text(&text, &plan, &registry);
            (judged, text)
        });
        match judging.await {
            Ok((judged, text)) => SampleRun { index: self.index, response: Ok(text), judged },
            // A bug (or an embedder's capability with one) is reported, not
            // lost.
            Err(error) => {
                let message = format!(
                    "internal error: judging the answer stopped ({}); this is a bug in assay, please report it",
                    panic_message(error)
                );
                SampleRun {
                    index: self.index,
                    response: Err(RunError { kind: "internal".into(), message }),
                    judged: Vec::new(),
                }
            }
        }
    }
}

/// Scores one scenario's samples.
fn tally(
    scenario: &Scenario,
    agent: Result<String, RunError>,
    runs: Vec<SampleRun>,
    key: Option<&str>,
) -> ScenarioResult {
    let mut result = ScenarioResult {
        scenario_id: scenario.id.clone(),
        file: scenario.file.clone(),
        agent: agent.as_ref().cloned().unwrap_or_default(),
        score: Tally::default(),
        categories: CategoryTallies::new(),
        samples: Vec::new(),
        error: agent.err(),
    };
    for run in runs {
        let (response, error) = match run.response {
            Ok(text) => (Some(text), None),
            Err(error) => (None, Some(error)),
        };
        let mut expectations = Vec::new();
        for (i, expectation) in scenario.expectations.iter().enumerate() {
            let (matched, message) = match run.judged.get(i) {
                Some(judged) => (judged.matched(), judged.message.clone()),
                None => (None, "not judged: the agent gave no answer".to_owned()),
            };
            result.score.add(expectation.weight, matched);
            add_to_categories(&mut result.categories, &expectation.categories, expectation.weight, matched);
            expectations.push(ExpectationResult {
                expectation_id: expectation.id.clone(),
                key: key.unwrap_or(&expectation.key).to_owned(),
                matched,
                message,
                weight: expectation.weight,
                categories: expectation.categories.clone(),
            });
        }
        result.samples.push(ScenarioSample { index: run.index, response, error, expectations });
    }
    result
}

fn broken(error: CaseError) -> ScenarioResult {
    ScenarioResult {
        scenario_id: error.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        file: error.file.clone(),
        agent: String::new(),
        score: Tally::default(),
        categories: CategoryTallies::new(),
        samples: Vec::new(),
        error: Some(RunError { kind: "bad-file".into(), message: error.to_string() }),
    }
}
