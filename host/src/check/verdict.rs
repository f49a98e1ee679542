//! The [`Verdict`] of one check: a plugin's evaluation with the host's rules
//! applied (negation for `not_<key>`, rejections and faults as errors).

use crate::errors::ErrorKind;
use crate::plugin::{Evaluation, EvaluationError};
use serde::Serialize;

/// Whether a check passed, failed, or could not be evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The check holds.
    Pass,
    /// The check does not hold.
    Fail,
    /// The check could not be evaluated (type mismatch, missing capability,
    /// plugin fault, agent error). Counts as a failure, never negated.
    Error,
}

/// The verdict of one check.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// Pass, fail or error.
    pub outcome: Outcome,
    /// The score the plugin gave, if any (not inverted by negation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// What was found, as a person can act on it.
    pub message: String,
    /// The plugin's machine-readable detail, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extras: Option<serde_json::Value>,
    /// An error's cause (`deadline`, `memory`, `rejected`, ...), for error
    /// verdicts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// Whether a host cap cut the plugin's output.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

impl Verdict {
    /// Applies the host's rules to a plugin's answer: `negated` inverts a
    /// pass or fail; a rejection or fault is an error either way.
    pub fn from_plugin(answer: Result<Evaluation, EvaluationError>, negated: bool) -> Verdict {
        match answer {
            Ok(evaluation) => Verdict {
                outcome: if evaluation.pass != negated { Outcome::Pass } else { Outcome::Fail },
                score: evaluation.score,
                message: evaluation.message,
                extras: evaluation.extras,
                error_kind: None,
                truncated: evaluation.truncated,
            },
            Err(error) => {
                let kind = match &error {
                    EvaluationError::Rejected(_) => ErrorKind::Rejected,
                    EvaluationError::Fault { fault, .. } => fault.kind(),
                };
                Verdict::error(kind, error.to_string())
            }
        }
    }

    /// An error verdict.
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Verdict {
        Verdict {
            outcome: Outcome::Error,
            score: None,
            message: message.into(),
            extras: None,
            error_kind: Some(kind),
            truncated: false,
        }
    }

    /// A failing verdict decided by the host (e.g. a missing target).
    pub fn fail(message: impl Into<String>) -> Verdict {
        Verdict {
            outcome: Outcome::Fail,
            score: None,
            message: message.into(),
            extras: None,
            error_kind: None,
            truncated: false,
        }
    }

    /// Whether the check passed.
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Fault;
    use std::time::Duration;

    fn evaluation(pass: bool) -> Evaluation {
        Evaluation { pass, score: Some(0.25), message: "m".into(), extras: None, truncated: false }
    }

    #[test]
    fn negation_inverts_pass_and_fail_only() {
        assert_eq!(Verdict::from_plugin(Ok(evaluation(true)), false).outcome, Outcome::Pass);
        assert_eq!(Verdict::from_plugin(Ok(evaluation(true)), true).outcome, Outcome::Fail);
        assert_eq!(Verdict::from_plugin(Ok(evaluation(false)), true).outcome, Outcome::Pass);
        assert_eq!(Verdict::from_plugin(Ok(evaluation(false)), true).score, Some(0.25));
        let rejected = Verdict::from_plugin(Err(EvaluationError::Rejected("bad".into())), true);
        assert_eq!(
            (rejected.outcome, rejected.error_kind, rejected.message.as_str()),
            (Outcome::Error, Some(ErrorKind::Rejected), "bad")
        );
        let fault = EvaluationError::Fault { plugin: "p".into(), fault: Fault::Deadline(Duration::from_secs(2)) };
        let faulted = Verdict::from_plugin(Err(fault), true);
        assert_eq!(faulted.outcome, Outcome::Error);
        assert_eq!(faulted.error_kind, Some(ErrorKind::Deadline));
        assert_eq!(faulted.message, "plugin `p` exceeded its deadline of 2000 ms and was stopped");
    }
}
