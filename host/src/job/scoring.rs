//! [`ScoredBy`]: a turn decided by a function of its checks' results
//! rather than by each check (promptfoo's `assertScoringFunction`). The
//! function is a plugin's check that computes a value (the `javascript`
//! plugin's `pf_js_value`, or the Python runner's `pf_py_value`): it is given the checks' named scores (each
//! metric's weighted mean) and a context (`threshold`, `componentResults`,
//! `tokensUsed`), and its value is a GradingResult (`pass`, `score`,
//! `reason`), which becomes the turn's last check result and decides it.

use crate::check::check_score;
use crate::check::{Check, CheckResult, Outcome, Verdict};
use crate::errors::ErrorKind;
use serde_json::{Map, Value, json};

/// What scores a turn after its checks.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredBy {
    /// The function, as a check computing a value (its expected value's
    /// `args` get the context).
    pub check: Check,
    /// What the function is called in results: the check's expected value
    /// as written (`file://scoring.js`).
    pub label: String,
    /// Each check's metric, if it names one, in check order.
    pub metrics: Vec<Option<String>>,
    /// Each check's weight, in check order.
    pub weights: Vec<f64>,
    /// The test's `threshold`, which the function is told.
    pub threshold: Option<f64>,
    /// Each check's assertion as written, for `componentResults`.
    pub assertions: Vec<Value>,
}

impl ScoredBy {
    /// The function's call on `checks` (the turn's, in order): the check
    /// with the context in its arguments, and the named scores it reads.
    pub fn call(&self, checks: &[CheckResult]) -> (Check, Value) {
        let (named, _) = named_scores(checks, &self.weights, &self.metrics);
        let components = component_results(checks, &self.assertions);
        let mut context = json!({
            "componentResults": components,
            "tokensUsed": {"total": 0, "prompt": 0, "completion": 0, "cached": 0},
        });
        // Without a threshold, promptfoo's `context.threshold` is undefined.
        if let Some(threshold) = self.threshold {
            context["threshold"] = json!(threshold);
        }
        let mut check = self.check.clone();
        if let Some(object) = check.expected.as_object_mut() {
            object.insert("args".into(), json!([context]));
        }
        check.expected_json = check.expected.to_string();
        (check, Value::Object(named))
    }

    /// The turn's deciding result from what the function gave: its
    /// GradingResult, or promptfoo's "Scoring function error" (a throw, or
    /// a value that is no GradingResult); a fault of the plugin itself
    /// (its deadline, its memory) stays an error.
    pub fn verdict(&self, given: Result<Value, Verdict>) -> CheckResult {
        let scoring_error =
            |message: &str| Verdict { score: Some(0.0), ..Verdict::fail(format!("Scoring function error: {message}")) };
        let verdict = match given {
            Ok(value) => match grading_result(&value) {
                Some((pass, score, reason)) => Verdict {
                    outcome: if pass { Outcome::Pass } else { Outcome::Fail },
                    score: Some(score.clamp(0.0, 1.0)),
                    message: reason,
                    extras: Some(json!({ "promptfoo_score": score })),
                    error_kind: None,
                    truncated: false,
                },
                None => scoring_error("assertion scoring function must return a GradingResult"),
            },
            Err(verdict) if verdict.error_kind == Some(ErrorKind::Rejected) => {
                let message = verdict.message.split_once("failed: ").map_or(verdict.message.as_str(), |(_, m)| m);
                scoring_error(message)
            }
            Err(verdict) => verdict,
        };
        CheckResult {
            target: "scoring".into(),
            key: self.check.key.clone(),
            expected: Value::String(self.label.clone()),
            actual: None,
            actual_is_answer: false,
            verdict,
            gate: true,
            line: None,
        }
    }
}

/// Each metric's weighted mean score over `checks` (promptfoo's
/// normalized `namedScores`), and each metric's summed weight: a check
/// counts toward the metric it names (`metrics`, in check order) with its
/// weight (`weights`).
pub fn named_scores(
    checks: &[CheckResult],
    weights: &[f64],
    metrics: &[Option<String>],
) -> (Map<String, Value>, Map<String, Value>) {
    let mut sums: Map<String, Value> = Map::new();
    let mut summed_weights: Map<String, Value> = Map::new();
    for ((check, weight), metric) in checks.iter().zip(weights).zip(metrics) {
        let Some(metric) = metric else { continue };
        let add = |map: &mut Map<String, Value>, amount: f64| {
            let sum = map.get(metric).and_then(Value::as_f64).unwrap_or(0.0);
            map.insert(metric.clone(), json!(sum + amount));
        };
        add(&mut sums, check_score(check) * weight);
        add(&mut summed_weights, *weight);
    }
    let means = sums
        .into_iter()
        .map(|(metric, sum)| {
            let weight = summed_weights.get(&metric).and_then(Value::as_f64).unwrap_or(0.0);
            let mean = if weight > 0.0 { sum.as_f64().unwrap_or(0.0) / weight } else { 0.0 };
            (metric, json!(mean))
        })
        .collect();
    (means, summed_weights)
}

/// promptfoo's `componentResults`: each check's pass, score and reason
/// with the assertion it checked (`assertions`, in check order).
pub fn component_results<A: serde::Serialize>(checks: &[CheckResult], assertions: &[A]) -> Vec<Value> {
    checks
        .iter()
        .zip(assertions)
        .map(|(check, assertion)| {
            json!({
                "pass": check.verdict.passed(),
                "score": check_score(check),
                "reason": check.verdict.message,
                "assertion": assertion,
            })
        })
        .collect()
}

/// promptfoo's `isGradingResult`: `pass` a boolean, `score` a number,
/// `reason` a string.
fn grading_result(value: &Value) -> Option<(bool, f64, String)> {
    let pass = value.get("pass")?.as_bool()?;
    let score = value.get("score")?.as_f64()?;
    let reason = value.get("reason")?.as_str()?.to_owned();
    Some((pass, score, reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Target;

    fn result(score: f64, pass: bool) -> CheckResult {
        let outcome = if pass { Outcome::Pass } else { Outcome::Fail };
        let verdict = Verdict { outcome, score: Some(score), ..Verdict::fail(if pass { "p" } else { "f" }) };
        CheckResult {
            target: "text".into(),
            key: "k".into(),
            expected: json!(1),
            actual: None,
            actual_is_answer: false,
            verdict,
            gate: true,
            line: None,
        }
    }

    fn scored() -> ScoredBy {
        let expected = json!({"mode": "transform", "code": "x"});
        ScoredBy {
            check: Check::new("pf_js_value", Target::Derived(0), expected),
            label: "file://s.js".into(),
            metrics: vec![Some("a".into()), Some("a".into()), None, Some("b".into())],
            weights: vec![1.0, 3.0, 1.0, 2.0],
            threshold: Some(0.5),
            assertions: vec![json!({"type": "x"}); 4],
        }
    }

    #[test]
    fn the_function_gets_each_metrics_weighted_mean_and_the_results() {
        let checks = [result(1.0, true), result(0.0, false), result(0.5, true), result(0.25, false)];
        let (check, named) = scored().call(&checks);
        assert_eq!(named, json!({"a": 0.25, "b": 0.25}));
        let context = &check.expected["args"][0];
        assert_eq!(context["threshold"], 0.5);
        assert_eq!(context["componentResults"].as_array().unwrap().len(), 4);
        assert_eq!(
            context["componentResults"][1],
            json!({"pass": false, "score": 0.0, "reason": "f", "assertion": {"type": "x"}})
        );
        assert_eq!(check.expected_json, check.expected.to_string());
    }

    #[test]
    fn a_grading_result_decides_and_anything_else_fails_as_promptfoo_says() {
        let decided = scored().verdict(Ok(json!({"pass": true, "score": 1.2, "reason": "fine"})));
        assert_eq!((decided.verdict.outcome, decided.verdict.score), (Outcome::Pass, Some(1.0)));
        assert_eq!(decided.verdict.message, "fine");
        let wrong = scored().verdict(Ok(json!(0.9)));
        assert_eq!(wrong.verdict.outcome, Outcome::Fail);
        assert_eq!(
            wrong.verdict.message,
            "Scoring function error: assertion scoring function must return a GradingResult"
        );
        let thrown = Verdict::error(ErrorKind::Rejected, "derived[0] (the value this check reads) failed: Error: boom");
        assert_eq!(scored().verdict(Err(thrown)).verdict.message, "Scoring function error: Error: boom");
        let fault = Verdict::error(ErrorKind::Deadline, "plugin `javascript` exceeded its deadline");
        assert_eq!(scored().verdict(Err(fault)).verdict.outcome, Outcome::Error);
    }
}
