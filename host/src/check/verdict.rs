//! The [`Verdict`] of one check: a plugin's evaluation with the host's rules
//! applied (negation for `not_<key>`, rejections and faults as errors; see
//! `plugin::verdict_of`), and the [`CheckResult`] a report shows.

use crate::errors::ErrorKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a check passed, failed, or could not be evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One evaluated check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// What it looked at, e.g. `structure.answer`.
    pub target: String,
    /// The key as written, with `not_` if negated.
    pub key: String,
    /// The expected value.
    pub expected: Value,
    /// The actual value, cut to a preview ([`actual_preview`]); absent when
    /// the target was missing, or when it is the interaction's answer text
    /// (`actual_is_answer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// Whether the actual value is the preview of the interaction's answer
    /// text (its `response.text`), which results keep once rather than in
    /// each check that looked at it: `actual` is then absent, and
    /// `InteractionResult::actual_of` gives it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub actual_is_answer: bool,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Whether the verdict decides pass or fail: results show `"gate":
    /// false` for a suite's non-gating check, and nothing for the others.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub gate: bool,
    /// The line of the case's file that asks for the check, when it did
    /// not pass and its reader knows the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// One check's score for a weighted pass rule: its matcher's, unless it
/// has none, or the check is negated and the plugin stated no negated
/// verdict of its own (the `promptfoo` plugin states promptfoo's, whose
/// `not-` scores are its own): then 1 for a pass, 0 otherwise.
pub fn check_score(check: &CheckResult) -> f64 {
    let verdict = &check.verdict;
    let negation_declared = verdict.extras.as_ref().is_some_and(|extras| extras.get("negated").is_some());
    match verdict.score {
        Some(score) if verdict.outcome != Outcome::Error && (!check.key.starts_with("not_") || negation_declared) => {
            score
        }
        _ => f64::from(u8::from(verdict.passed())),
    }
}

/// The most characters of an actual value a check's result keeps.
pub const ACTUAL_PREVIEW_CHARS: usize = 300;

/// A check's actual value as its result keeps it: the first
/// [`ACTUAL_PREVIEW_CHARS`] characters, and `…` when there were more.
pub fn actual_preview(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(ACTUAL_PREVIEW_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &text[..cut])),
    }
}

fn is_true(value: &bool) -> bool {
    *value
}

/// A check read back without `gate` gated.
fn yes() -> bool {
    true
}

impl CheckResult {
    /// Whether it lets its interaction pass: a gating check that passed,
    /// or a non-gating one whatever its outcome (an error included: it is
    /// recorded, and flagged by reports, but decides nothing).
    pub fn lets_pass(&self) -> bool {
        !self.gate || self.verdict.passed()
    }
}

/// A verdict as one check's answer: what `assay check --json` prints and
/// `assay serve` answers for each check of `POST /v1/check`. Every field
/// is present (`null` when the verdict has none), so that callers need not
/// guess.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckAnswer<'a> {
    /// Whether the check passed.
    pub pass: bool,
    /// Pass, fail or error.
    pub outcome: Outcome,
    /// The plugin's score, if any.
    pub score: Option<f64>,
    /// What was found.
    pub message: &'a str,
    /// The plugin's machine-readable detail, if any.
    pub extras: Option<&'a Value>,
    /// An error's cause, for error verdicts.
    pub error_kind: Option<ErrorKind>,
}

impl Verdict {
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

    /// The verdict as one check's answer (`assay check --json`, `assay
    /// serve`).
    pub fn answer(&self) -> CheckAnswer<'_> {
        CheckAnswer {
            pass: self.passed(),
            outcome: self.outcome,
            score: self.score,
            message: &self.message,
            extras: self.extras.as_ref(),
            error_kind: self.error_kind,
        }
    }
}
