//! Expectations as checks: each expectation of a scenario planned into
//! checks on a response's text, and a text judged against all of them with
//! one batched dispatch (so a judge plugin sees them in one call).

use crate::case::Scenario;
use crate::check::{self, Check, CheckResult, KeySet, Outcome, PluginLog, ResponseView, Target, plan_entry};
use crate::errors::CaseErrorKind;
use crate::plugin::Registry;
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

/// How a text fared against one expectation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Judged {
    /// Pass when every check of the expectation passed; error when one
    /// could not be evaluated.
    pub outcome: Outcome,
    /// The checks' messages.
    pub message: String,
    /// The checks.
    pub checks: Vec<CheckResult>,
}

impl Judged {
    /// Whether it matched, or `None` when it could not be judged.
    pub fn matched(&self) -> Option<bool> {
        match self.outcome {
            Outcome::Pass => Some(true),
            Outcome::Fail => Some(false),
            Outcome::Error => None,
        }
    }
}

/// Judges `text` against every planned expectation.
pub(crate) fn judge_text(
    text: &str,
    planned: &PlannedExpectations,
    registry: &Registry,
) -> (Vec<Judged>, Vec<PluginLog>) {
    let flat: Vec<Check> = planned.iter().flatten().cloned().collect();
    let view = ResponseView { text: Some(text), ..ResponseView::default() };
    let (results, logs) = check::evaluate(&flat, &view, registry);
    let mut results = results.into_iter();
    let judged = planned
        .iter()
        .map(|checks| {
            let checks: Vec<CheckResult> = results.by_ref().take(checks.len()).collect();
            let outcome = if checks.iter().any(|c| c.verdict.outcome == Outcome::Error) {
                Outcome::Error
            } else if checks.iter().all(|c| c.verdict.passed()) {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            let message = checks.iter().map(|c| c.verdict.message.as_str()).collect::<Vec<_>>().join("; ");
            Judged { outcome, message, checks }
        })
        .collect();
    (judged, logs)
}
