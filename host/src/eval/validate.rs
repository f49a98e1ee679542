//! `assay validate`: can this judge be trusted? Every mock response of a
//! validation file is judged against the expectations its wanted results
//! name, with each expectation's own matcher (any key, not only `gist`;
//! `--key` swaps in another), and the judge's decisions are compared with
//! the wanted ones: weighted agreement per mock response, per category and
//! overall, and a confusion matrix.
//!
//! Each mock response compiles into a job for the one scheduler that asks
//! no agent: its one turn replays the mock response's text (the job's
//! [`Recording`], over [`Connection::Replay`]) and checks it with the
//! expectations its wanted
//! results name. The agreement is an aggregating reporter of the run's
//! events ([`Agreement`]).

use crate::agent::{AgentResponse, Agents};
use crate::case::Connection;
use crate::errors::{CaseError, ErrorKind};
use crate::eval::expectations::{PlannedExpectations, judged, plan_expectations};
use crate::eval::score::{CategoryTallies, Tally, add_to_categories, merge_categories};
use crate::formats::Validation;
use crate::job::{CaseResult, CaseSource, Job, LoadedCase, Recording, RunError, Turn};
use crate::plugin::Registry;
use crate::run::{EventKind, Reporter, RunEvent, RunOptions, Runner};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

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

/// Validates judges against validation files, on the one scheduler.
pub struct Validator {
    registry: Arc<Registry>,
    agents: Agents,
    key: Option<String>,
    jobs: usize,
}

impl Validator {
    /// A validator judging with `registry`'s matchers; `key` (from `--key`)
    /// judges every expectation instead of its own matcher; `jobs` mock
    /// responses are judged at once. `agents` is the run's (a validation
    /// asks none: its answers are replayed).
    pub fn new(registry: Arc<Registry>, agents: Agents, key: Option<String>, jobs: usize) -> Validator {
        Validator { registry, agents, key, jobs }
    }

    /// Validates every file (or reports why it cannot be); `reporter` sees
    /// the run's events (each mock response is a case).
    pub async fn run(
        &self,
        validations: Vec<Result<Validation, CaseError>>,
        reporter: &mut dyn Reporter,
    ) -> ValidateReport {
        let (jobs, mut agreement) = validation_jobs(validations, self.key.as_deref(), self.registry.as_ref());
        let options = RunOptions { jobs: self.jobs, ..RunOptions::default() };
        let runner = Runner::new(self.registry.clone(), self.agents.clone(), options);
        runner.run(CaseSource::loaded(jobs), &mut (&mut agreement, reporter)).await;
        agreement.into_report()
    }

    /// [`Validator::run`] on a runtime of its own.
    pub fn run_blocking(
        &self,
        validations: Vec<Result<Validation, CaseError>>,
        reporter: &mut dyn Reporter,
    ) -> ValidateReport {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
        runtime.block_on(self.run(validations, reporter))
    }
}

/// Compiles validation files into jobs for the scheduler, one per mock
/// response (a file that cannot run, into one job reported as an error),
/// and the reporter that measures the agreement.
pub fn validation_jobs(
    validations: Vec<Result<Validation, CaseError>>,
    key: Option<&str>,
    registry: &Registry,
) -> (Vec<LoadedCase>, Agreement) {
    let mut agreement = Agreement { files: Vec::new(), by_id: HashMap::new() };
    let mut jobs = Vec::new();
    for validation in validations {
        let planned = validation.and_then(|v| {
            let plan =
                plan_expectations(&v.scenario, key, registry).map_err(|kind| CaseError::new(&v.scenario.file, kind))?;
            Ok((v, plan))
        });
        let file = agreement.files.len();
        match planned {
            Ok((validation, plan)) => {
                let stem = validation.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let mut mocks = Vec::new();
                for (mock, response) in validation.mock_responses.iter().enumerate() {
                    let id = agreement.claim(format!("{stem}/{}", response.id), (file, mock));
                    let positions = positions(&validation, mock);
                    let checks = positions.iter().flat_map(|&p| plan[p].iter().cloned()).collect();
                    let answer = AgentResponse { text: Some(response.content.clone()), ..AgentResponse::default() };
                    let recording = Recording::one(&validation.file, &Connection::Replay, answer);
                    jobs.push(LoadedCase::Ready(Box::new(Job {
                        id,
                        file: validation.file.clone(),
                        agent: String::new(),
                        connections: vec![Connection::Replay],
                        success_ratio: Default::default(),
                        timeout: None,
                        metadata: Vec::new(),
                        turns: vec![Turn::new("", checks)],
                        recording: Some(Arc::new(recording)),
                        prerequisite: None,
                        grouped: None,
                    })));
                    mocks.push(None);
                }
                agreement.files.push(FileEntry::Planned { validation: Box::new(validation), plan, mocks });
            }
            Err(error) => {
                let stem = error.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let id = agreement.claim(stem, (file, 0));
                agreement.files.push(FileEntry::Broken { file: error.file.clone(), error: None });
                jobs.push(LoadedCase::Broken { id, error });
            }
        }
    }
    (jobs, agreement)
}

/// The positions (in the scenario) of the expectations mock response
/// `mock` has wanted results for.
fn positions(validation: &Validation, mock: usize) -> Vec<usize> {
    let expectations = &validation.scenario.expectations;
    validation.mock_responses[mock]
        .wanted
        .iter()
        .map(|w| expectations.iter().position(|e| e.id == w.expectation_id).expect("checked when read"))
        .collect()
}

/// The agreement of `assay validate`, from the run's events: each mock
/// response's judgments as its case finishes, the totals at the end.
pub struct Agreement {
    /// One per validation file, in the order given.
    files: Vec<FileEntry>,
    /// Case id → (file, mock response).
    by_id: HashMap<String, (usize, usize)>,
}

/// A validation file and what is known of it so far.
enum FileEntry {
    /// Planned: each mock response's result once its case finished.
    Planned { validation: Box<Validation>, plan: PlannedExpectations, mocks: Vec<Option<Result<MockResult, RunError>>> },
    /// It cannot run: its case says why.
    Broken { file: PathBuf, error: Option<RunError> },
}

impl Agreement {
    /// A case id for `id`, unique in the run.
    fn claim(&mut self, mut id: String, place: (usize, usize)) -> String {
        while self.by_id.contains_key(&id) {
            id.push('\'');
        }
        self.by_id.insert(id.clone(), place);
        id
    }

    fn finished(&mut self, case: &CaseResult) {
        let Some(&(file, mock)) = self.by_id.get(&case.id) else { return };
        match &mut self.files[file] {
            FileEntry::Planned { validation, plan, mocks } => {
                mocks[mock] = Some(judge_mock(validation, plan, mock, case));
            }
            FileEntry::Broken { error, .. } => *error = case.error.clone(),
        }
    }

    /// Every file's agreement, in the order given, and the totals. A mock
    /// response the run did not get to (it was cancelled) is an error of its
    /// file.
    pub fn into_report(self) -> ValidateReport {
        let mut report = ValidateReport::default();
        for entry in self.files {
            let result = match entry {
                FileEntry::Broken { file, error } => ValidationResult {
                    scenario_id: String::new(),
                    file,
                    agreement: Tally::default(),
                    categories: CategoryTallies::new(),
                    confusion: Confusion::default(),
                    mock_responses: Vec::new(),
                    error: Some(error.unwrap_or_else(not_run)),
                },
                FileEntry::Planned { validation, mocks, .. } => file_result(&validation, mocks),
            };
            report.agreement.merge(&result.agreement);
            merge_categories(&mut report.categories, &result.categories);
            report.confusion.merge(&result.confusion);
            report.files.push(result);
        }
        report
    }
}

impl Reporter for Agreement {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        if let EventKind::CaseFinished(case) = event.kind {
            self.finished(case);
        }
        Ok(())
    }
}

fn not_run() -> RunError {
    RunError { kind: ErrorKind::NotRun, message: "it was not run: the run was cancelled".into() }
}

/// A file's agreement from its mock responses' results.
fn file_result(validation: &Validation, mocks: Vec<Option<Result<MockResult, RunError>>>) -> ValidationResult {
    let mut result = ValidationResult {
        scenario_id: validation.scenario.id.clone(),
        file: validation.file.clone(),
        agreement: Tally::default(),
        categories: CategoryTallies::new(),
        confusion: Confusion::default(),
        mock_responses: Vec::new(),
        error: None,
    };
    for mock in mocks {
        match mock {
            Some(Ok(mock)) => {
                for judgment in &mock.judgments {
                    result.agreement.add(judgment.weight, judgment.agrees);
                    add_to_categories(&mut result.categories, &judgment.categories, judgment.weight, judgment.agrees);
                    result.confusion.add(judgment.wanted_result, judgment.actual_result);
                }
                result.mock_responses.push(mock);
            }
            Some(Err(error)) => result.error = Some(error),
            None => result.error = Some(not_run()),
        }
    }
    result
}

/// Mock response `index`'s judgments from its case: the checks of each
/// expectation it names, against the wanted result.
fn judge_mock(
    validation: &Validation,
    plan: &PlannedExpectations,
    index: usize,
    case: &CaseResult,
) -> Result<MockResult, RunError> {
    let mock = &validation.mock_responses[index];
    let expectations = &validation.scenario.expectations;
    let interaction = case.samples.first().and_then(|s| s.runs.first()).and_then(|r| r.interactions.first());
    let checks = match (interaction, &case.error) {
        (_, Some(error)) => return Err(error.clone()),
        (Some(interaction), None) => &interaction.checks,
        (None, None) => return Err(RunError { kind: ErrorKind::Internal, message: "no answer was judged".into() }),
    };
    let positions = positions(validation, index);
    let sizes: Vec<usize> = positions.iter().map(|&p| plan[p].len()).collect();
    let mut agreement = Tally::default();
    let judgments = mock
        .wanted
        .iter()
        .zip(positions)
        .zip(judged(checks, &sizes))
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
    Ok(MockResult { mock_response_id: mock.id.clone(), agreement, judgments })
}
