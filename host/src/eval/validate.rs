//! `assay validate`: can this judge be trusted? Every mock response of a
//! validation file is judged against the expectations its wanted results
//! name, with each expectation's own matcher (any key, not only `gist`;
//! `--key` swaps in another), and the judge's decisions are compared with
//! the wanted ones: weighted agreement per mock response, per category and
//! overall, and a confusion matrix.

use crate::case::Validation;
use crate::errors::CaseError;
use crate::eval::expectations::{PlannedExpectations, judge_text, plan_expectations};
use crate::eval::score::{CategoryTallies, Tally, add_to_categories, merge_categories};
use crate::plugin::Registry;
use crate::run::{RunError, panic_message};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The outcome of `assay validate`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ValidateReport {
    /// Every validation file, in the order given.
    pub files: Vec<ValidationResult>,
    /// Weighted agreement over every judgment.
    pub agreement: Tally,
    /// Weighted agreement by category.
    pub categories: CategoryTallies,
    /// Wanted versus actual over every judgment.
    pub confusion: Confusion,
}

impl ValidateReport {
    /// Whether anything could not be validated.
    pub fn has_errors(&self) -> bool {
        self.files.iter().any(|f| f.error.is_some()) || self.confusion.errors > 0
    }
}

/// One validation file's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValidationResult {
    /// The scenario it validates against.
    pub scenario_id: String,
    /// The file.
    pub file: PathBuf,
    /// Weighted agreement over the file.
    pub agreement: Tally,
    /// Weighted agreement by category.
    pub categories: CategoryTallies,
    /// Wanted versus actual over the file.
    pub confusion: Confusion,
    /// Each mock response.
    pub mock_responses: Vec<MockResult>,
    /// Why the file could not be validated at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
}

/// How the judge did on one mock response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MockResult {
    /// `mock_response_id`.
    pub mock_response_id: String,
    /// Weighted agreement on it.
    pub agreement: Tally,
    /// One judgment per wanted result.
    pub judgments: Vec<Judgment>,
}

/// The judge's decision on one (mock response, expectation) pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judgment {
    /// The expectation.
    pub expectation_id: String,
    /// The matcher key that judged.
    pub key: String,
    /// What a trustworthy judge decides.
    pub wanted_result: bool,
    /// What this judge decided; `null` when it could not.
    pub actual_result: Option<bool>,
    /// Whether the two agree; `null` when the judge could not decide.
    pub agrees: Option<bool>,
    /// The wanted result's weight.
    pub weight: u32,
    /// The expectation's categories.
    pub categories: Vec<String>,
    /// What the judge said.
    pub message: String,
}

/// Wanted versus actual results, as counts (unweighted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// Wanted a match, got one.
    pub true_positive: u64,
    /// Wanted no match, got one.
    pub false_positive: u64,
    /// Wanted no match, got none.
    pub true_negative: u64,
    /// Wanted a match, got none.
    pub false_negative: u64,
    /// The judge could not decide.
    pub errors: u64,
}

impl Confusion {
    fn add(&mut self, wanted: bool, actual: Option<bool>) {
        match (wanted, actual) {
            (true, Some(true)) => self.true_positive += 1,
            (false, Some(true)) => self.false_positive += 1,
            (false, Some(false)) => self.true_negative += 1,
            (true, Some(false)) => self.false_negative += 1,
            (_, None) => self.errors += 1,
        }
    }

    fn merge(&mut self, other: &Confusion) {
        self.true_positive += other.true_positive;
        self.false_positive += other.false_positive;
        self.true_negative += other.true_negative;
        self.false_negative += other.false_negative;
        self.errors += other.errors;
    }
}

/// Validates judges against validation files.
pub struct Validator {
    registry: Arc<Registry>,
    key: Option<String>,
    jobs: usize,
}

impl Validator {
    /// A validator judging with `registry`'s matchers; `key` (from `--key`)
    /// judges every expectation instead of its own matcher; `jobs` mock
    /// responses are judged at once.
    pub fn new(registry: Arc<Registry>, key: Option<String>, jobs: usize) -> Validator {
        Validator { registry, key, jobs }
    }

    /// Validates every file (or reports why it cannot be).
    pub async fn run(&self, validations: Vec<Result<Validation, CaseError>>) -> ValidateReport {
        let semaphore = Arc::new(Semaphore::new(self.jobs.max(1)));
        let mut pending = Vec::new();
        for validation in validations {
            let planned = validation.and_then(|v| {
                let plan = plan_expectations(&v.scenario, self.key.as_deref(), self.registry.as_ref())
                    .map_err(|kind| CaseError::new(&v.scenario.file, kind))?;
                Ok((v, plan))
            });
            pending.push(planned.map(|(validation, plan)| {
                let (validation, plan) = (Arc::new(validation), Arc::new(plan));
                let tasks: Vec<_> = (0..validation.mock_responses.len())
                    .map(|index| {
                        let (validation, plan, registry) = (validation.clone(), plan.clone(), self.registry.clone());
                        let semaphore = semaphore.clone();
                        tokio::spawn(async move {
                            let _permit = semaphore.acquire_owned().await.expect("the semaphore is never closed");
                            tokio::task::spawn_blocking(move || judge_mock(&validation, &plan, index, &registry))
                                .await
                                .unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()))
                        })
                    })
                    .collect();
                (validation, tasks)
            }));
        }
        let mut report = ValidateReport::default();
        for entry in pending {
            let result = match entry {
                Err(error) => broken(error),
                Ok((validation, tasks)) => {
                    let mut result = ValidationResult {
                        scenario_id: validation.scenario.id.clone(),
                        file: validation.file.clone(),
                        agreement: Tally::default(),
                        categories: CategoryTallies::new(),
                        confusion: Confusion::default(),
                        mock_responses: Vec::new(),
                        error: None,
                    };
                    for (index, task) in tasks.into_iter().enumerate() {
                        // A judging task that panicked (a bug, or an
                        // embedder's capability with one) is reported, not
                        // lost.
                        let mock = match task.await {
                            Ok(mock) => mock,
                            Err(error) => {
                                let message = format!(
                                    "internal error: judging mock response {} stopped ({}); this is a bug in assay, please report it",
                                    validation.mock_responses[index].id,
                                    panic_message(error)
                                );
                                result.error = Some(RunError { kind: "internal".into(), message });
                                continue;
                            }
                        };
                        for judgment in &mock.judgments {
                            result.agreement.add(judgment.weight, judgment.agrees);
                            add_to_categories(
                                &mut result.categories,
                                &judgment.categories,
                                judgment.weight,
                                judgment.agrees,
                            );
                            result.confusion.add(judgment.wanted_result, judgment.actual_result);
                        }
                        result.mock_responses.push(mock);
                    }
                    result
                }
            };
            report.agreement.merge(&result.agreement);
            merge_categories(&mut report.categories, &result.categories);
            report.confusion.merge(&result.confusion);
            report.files.push(result);
        }
        report
    }

    /// [`Validator::run`] on a runtime of its own.
    pub fn run_blocking(&self, validations: Vec<Result<Validation, CaseError>>) -> ValidateReport {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
        runtime.block_on(self.run(validations))
    }
}

/// Judges mock response `index` against the expectations it names.
fn judge_mock(validation: &Validation, plan: &PlannedExpectations, index: usize, registry: &Registry) -> MockResult {
    let mock = &validation.mock_responses[index];
    let expectations = &validation.scenario.expectations;
    // Only the expectations this response has wanted results for.
    let positions: Vec<usize> = mock
        .wanted
        .iter()
        .map(|w| expectations.iter().position(|e| e.id == w.expectation_id).expect("checked when read"))
        .collect();
    let subset: PlannedExpectations = positions.iter().map(|&p| plan[p].clone()).collect();
    let (judged, _logs) = judge_text(&mock.content, &subset, registry);
    let mut agreement = Tally::default();
    let judgments = mock
        .wanted
        .iter()
        .zip(positions)
        .zip(judged)
        .map(|((wanted, position), judged)| {
            let expectation = &expectations[position];
            let actual = judged.matched();
            let agrees = actual.map(|a| a == wanted.wanted);
            agreement.add(wanted.weight, agrees);
            let key = judged.checks.first().map(|c| c.key.clone()).unwrap_or_else(|| expectation.key.clone());
            Judgment {
                expectation_id: expectation.id.clone(),
                key,
                wanted_result: wanted.wanted,
                actual_result: actual,
                agrees,
                weight: wanted.weight,
                categories: expectation.categories.clone(),
                message: judged.message,
            }
        })
        .collect();
    MockResult { mock_response_id: mock.id.clone(), agreement, judgments }
}

fn broken(error: CaseError) -> ValidationResult {
    ValidationResult {
        scenario_id: String::new(),
        file: error.file.clone(),
        agreement: Tally::default(),
        categories: CategoryTallies::new(),
        confusion: Confusion::default(),
        mock_responses: Vec::new(),
        error: Some(RunError { kind: "bad-file".into(), message: error.to_string() }),
    }
}
