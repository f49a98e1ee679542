//! Expectations as checks: each expectation of a scenario planned into
//! checks on a response's text (the scheduler then evaluates all of them in
//! one batch, so a judge plugin sees them in one call), and the results
//! grouped back into expectations.

use crate::check::{Check, CheckResult, KeySet, Outcome, Target, plan_entry};
use crate::errors::CaseErrorKind;
use crate::formats::Scenario;
use serde_json::Value;

/// The checks of each expectation of a scenario, in order.
pub(crate) type PlannedExpectations = Vec<Vec<Check>>;

/// Plans every expectation of `scenario`. `key` (from `--key`) replaces
/// each expectation's matcher, which then gets the statement.
pub(crate) fn plan_expectations(
    scenario: &Scenario,
    key: Option<&str>,
    keys: &dyn KeySet,
) -> Result<PlannedExpectations, CaseErrorKind> {
    scenario
        .expectations
        .iter()
        .enumerate()
        .map(|(i, expectation)| {
            let (key, expected) = match key {
                Some(key) => (key, Value::String(expectation.statement.clone())),
                None => (expectation.key.as_str(), expectation.expected.clone()),
            };
            plan_entry(key, &expected, Target::Text, &format!("expectations[{i}].key"), keys)
        })
        .collect()
}

/// How an answer fared against one expectation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Judged {
    /// Pass when every check of the expectation passed; error when one
    /// could not be evaluated.
    pub outcome: Outcome,
    /// The answer's score on it, in [0, 1]: the lowest of its checks'
    /// scores ([`unit_score`]); `None` when one could not be evaluated.
    pub score: Option<f64>,
    /// The checks' messages.
    pub message: String,
    /// The checks.
    pub checks: Vec<CheckResult>,
}

impl Judged {
    /// Whether it matched, or `None` when it could not be judged.
    pub fn matched(&self) -> Option<bool> {
        Judged::matched_of(self.outcome)
    }

    /// Whether `outcome` is a match, or `None` when it is an error.
    pub fn matched_of(outcome: Outcome) -> Option<bool> {
        match outcome {
            Outcome::Pass => Some(true),
            Outcome::Fail => Some(false),
            Outcome::Error => None,
        }
    }
}

/// The results of an answer's checks, in expectation order, grouped back
/// into the expectations they were planned from (`sizes[i]` checks each).
pub(crate) fn judged(checks: &[CheckResult], sizes: &[usize]) -> Vec<Judged> {
    let mut checks = checks.iter();
    sizes
        .iter()
        .map(|&size| {
            let checks: Vec<CheckResult> = checks.by_ref().take(size).cloned().collect();
            let outcome = if checks.iter().any(|c| c.verdict.outcome == Outcome::Error) {
                Outcome::Error
            } else if checks.iter().all(|c| c.verdict.passed()) {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            let message = checks.iter().map(|c| c.verdict.message.as_str()).collect::<Vec<_>>().join("; ");
            let score = (outcome != Outcome::Error).then(|| checks.iter().map(unit_score).fold(1.0, f64::min));
            Judged { outcome, score, message, checks }
        })
        .collect()
}

/// A check's score in [0, 1]: the matcher's own score when it gives one
/// (turned around, `1 - score`, for a `not_` key), else 1 for a pass and 0
/// for a fail (a judge such as `gist` gives only a verdict).
pub(crate) fn unit_score(check: &CheckResult) -> f64 {
    match check.verdict.score {
        Some(score) if check.key.starts_with("not_") => (1.0 - score).clamp(0.0, 1.0),
        Some(score) => score.clamp(0.0, 1.0),
        None if check.verdict.passed() => 1.0,
        None => 0.0,
    }
}
