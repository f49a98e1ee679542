//! The gate on a scenario (Kyma's `threshold` and `required`): each
//! expectation's score over the samples against its threshold, and the
//! scenario passing when every required expectation meets its own.
//!
//! An answer's value on an expectation is its score (the lowest of its
//! checks' scores: the matcher's own, or 1 for a pass and 0 for a fail)
//! when the expectation has a threshold, else its verdict (1 or 0). The
//! expectation's score is the mean value over the samples that judged it,
//! and it is met when that reaches the threshold (1 without one: every
//! judged answer matched). With a pass/fail judge such as `gist`, the score
//! is the share of the samples whose answer met the statement. A scenario
//! with no required expectation has no verdict (`passed` is absent): its
//! weighted score is what counts, as in the seed's format.

use crate::eval::expectations::Judged;
use crate::formats::Expectation;
use serde::Serialize;

/// How far below a threshold a mean may fall and still meet it, so that 2
/// of 3 samples meet a threshold of 2/3 whatever the rounding.
const TOLERANCE: f64 = 1e-9;

/// An expectation's score over every sample of its scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExpectationScore {
    /// The expectation.
    pub expectation_id: String,
    /// The mean value of the answers that judged it; `null` when none did.
    pub score: Option<f64>,
    /// The score that meets it; absent: every judged answer must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Whether its scenario fails when it is not met.
    pub required: bool,
    /// Whether its score reaches the threshold; `null` when no answer
    /// judged it.
    pub met: Option<bool>,
}

/// One answer's value on `expectation`, or `None` when it could not be
/// judged.
pub(crate) fn answer_value(expectation: &Expectation, judged: &Judged) -> Option<f64> {
    match expectation.threshold {
        Some(_) => judged.score,
        None => judged.matched().map(|matched| if matched { 1.0 } else { 0.0 }),
    }
}

/// Whether `value` (one answer's, or the mean over samples) meets
/// `expectation`'s threshold.
pub(crate) fn meets(expectation: &Expectation, value: f64) -> bool {
    value + TOLERANCE >= expectation.threshold.unwrap_or(1.0)
}

/// `expectation`'s score from the values of the answers that judged it.
pub(crate) fn expectation_score(expectation: &Expectation, values: &[f64]) -> ExpectationScore {
    let score = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
    ExpectationScore {
        expectation_id: expectation.id.clone(),
        score,
        threshold: expectation.threshold,
        required: expectation.required,
        met: score.map(|score| meets(expectation, score)),
    }
}

/// Whether the scenario passed: every required expectation met (one no
/// answer judged fails it); `None` when none is required.
pub(crate) fn passed(scores: &[ExpectationScore]) -> Option<bool> {
    let mut required = scores.iter().filter(|s| s.required).peekable();
    required.peek()?;
    Some(required.all(|s| s.met == Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Outcome;
    use serde_json::Value;

    fn expectation(threshold: Option<f64>, required: bool) -> Expectation {
        Expectation {
            id: "e".into(),
            statement: "s".into(),
            weight: 1,
            categories: Vec::new(),
            key: "gist".into(),
            expected: Value::Null,
            threshold,
            required,
        }
    }

    fn judged(outcome: Outcome, score: Option<f64>) -> Judged {
        Judged { outcome, score, message: String::new(), checks: Vec::new() }
    }

    #[test]
    fn a_threshold_applies_to_the_score_and_without_one_the_verdict_decides() {
        let half = expectation(Some(0.5), true);
        // A matcher's score of 0.6 that its own verdict failed still meets 0.5.
        let value = answer_value(&half, &judged(Outcome::Fail, Some(0.6))).unwrap();
        assert!(meets(&half, value));
        assert!(!meets(&half, answer_value(&half, &judged(Outcome::Pass, Some(0.4))).unwrap()));
        // Without a threshold the verdict decides, whatever the score.
        let plain = expectation(None, true);
        assert_eq!(answer_value(&plain, &judged(Outcome::Fail, Some(0.9))), Some(0.0));
        assert!(meets(&plain, answer_value(&plain, &judged(Outcome::Pass, Some(0.1))).unwrap()));
        assert_eq!(answer_value(&half, &judged(Outcome::Error, None)), None);
    }

    #[test]
    fn the_score_over_samples_is_the_mean_and_the_threshold_gates_it() {
        // A pass/fail judge over four samples: the share that met it.
        let half = expectation(Some(0.5), true);
        let score = expectation_score(&half, &[1.0, 0.0, 1.0, 0.0]);
        assert_eq!((score.score, score.met), (Some(0.5), Some(true)));
        let most = expectation(Some(0.75), true);
        assert_eq!(expectation_score(&most, &[1.0, 0.0, 1.0, 0.0]).met, Some(false));
        // Two of three meets 2/3 despite the rounding of the mean.
        assert_eq!(expectation_score(&expectation(Some(2.0 / 3.0), true), &[1.0, 1.0, 0.0]).met, Some(true));
        // Without a threshold every judged answer must match.
        assert_eq!(expectation_score(&expectation(None, true), &[1.0, 1.0, 0.0]).met, Some(false));
        assert_eq!(expectation_score(&half, &[]).met, None);
    }

    #[test]
    fn only_required_expectations_gate_the_scenario() {
        let score = |required, met| ExpectationScore {
            expectation_id: "e".into(),
            score: None,
            threshold: None,
            required,
            met,
        };
        assert_eq!(passed(&[score(true, Some(true)), score(false, Some(false))]), Some(true));
        assert_eq!(passed(&[score(true, Some(true)), score(true, Some(false))]), Some(false));
        assert_eq!(passed(&[score(true, None)]), Some(false), "a required expectation no answer judged fails");
        assert_eq!(passed(&[score(false, Some(false))]), None, "nothing required: no verdict");
    }
}
