//! What a `javascript` assertion's function gave, graded as promptfoo
//! grades it (promptfoo 0.123.1, `normalizeJavascriptAssertionResult` and
//! the `catch` of `handleJavascript`), for the assertion and for its `not-`
//! form at once: the host picks the form.

/// What the assertion's function gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Returned {
    /// A boolean.
    Bool(bool),
    /// A number (any: promptfoo 0.123.1 takes `NaN` and infinities too).
    Number(f64),
    /// A GradingResult: `{pass, score, reason}`.
    Grading {
        /// Its `pass`.
        pass: bool,
        /// Its `score`.
        score: f64,
        /// Its `reason`.
        reason: String,
    },
    /// It threw (or returned what promptfoo refuses, which promptfoo
    /// throws for): the error's message and stack.
    Threw {
        /// `err.message`.
        message: String,
        /// `err.stack`, or what stands for it.
        stack: String,
    },
}

/// One form's grade: promptfoo's `pass`, `score` and `reason`.
#[derive(Clone, Debug, PartialEq)]
pub struct Grade {
    /// Whether the assertion passes.
    pub pass: bool,
    /// Its score (promptfoo's number: not clamped).
    pub score: f64,
    /// Why, as promptfoo says it.
    pub reason: String,
}

/// Grades `returned` for the assertion (`inverse` false) or its `not-`
/// form, with the assertion's `threshold` and `rendered` code (the value
/// as rendered, which promptfoo adds to failure reasons).
pub fn grade(returned: &Returned, inverse: bool, threshold: Option<f64>, rendered: &str) -> Grade {
    let with_code = |reason: String| if rendered.is_empty() { reason } else { format!("{reason}\n{rendered}") };
    let failure = |raw: bool| with_code(format!("Custom function returned {raw}"));
    match *returned {
        Returned::Bool(raw) => {
            let pass = raw != inverse;
            let reason = if pass { "Assertion passed".to_owned() } else { failure(raw) };
            Grade { pass, score: if pass { 1.0 } else { 0.0 }, reason }
        }
        Returned::Number(score) => {
            let raw = match threshold {
                None => score > 0.0,
                Some(threshold) => score >= threshold,
            };
            let pass = raw != inverse;
            let reason = if pass { "Assertion passed".to_owned() } else { failure(raw) };
            Grade { pass, score, reason }
        }
        Returned::Grading { pass: raw, score, ref reason } => {
            let pass = raw != inverse;
            let reason = match (pass == raw, pass) {
                (true, _) => reason.clone(),
                (false, true) => "Assertion passed".to_owned(),
                // Unlike the other forms, no code is added here.
                (false, false) => format!("Custom function returned {raw}"),
            };
            Grade { pass, score, reason }
        }
        Returned::Threw { ref message, ref stack } => Grade {
            pass: false,
            score: 0.0,
            reason: with_code(format!("Custom function threw error: {message}\nStack Trace: {stack}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(returned: Returned, threshold: Option<f64>) -> [(bool, f64, String); 2] {
        [false, true].map(|inverse| {
            let Grade { pass, score, reason } = grade(&returned, inverse, threshold, "output.length");
            (pass, score, reason)
        })
    }

    #[test]
    fn booleans_pass_or_fail_with_scores_one_and_zero() {
        assert_eq!(
            both(Returned::Bool(true), None),
            [
                (true, 1.0, "Assertion passed".into()),
                (false, 0.0, "Custom function returned true\noutput.length".into())
            ]
        );
        assert_eq!(
            both(Returned::Bool(false), Some(0.9))[0],
            (false, 0.0, "Custom function returned false\noutput.length".into())
        );
    }

    #[test]
    fn numbers_are_scores_that_pass_above_zero_or_from_the_threshold_on() {
        // No threshold: more than 0 passes; the `not-` form keeps the score.
        assert_eq!(both(Returned::Number(0.25), None)[0], (true, 0.25, "Assertion passed".into()));
        assert_eq!(
            both(Returned::Number(0.25), None)[1],
            (false, 0.25, "Custom function returned true\noutput.length".into())
        );
        assert!(!both(Returned::Number(0.0), None)[0].0);
        // A threshold: from it on passes.
        assert!(both(Returned::Number(0.5), Some(0.5))[0].0);
        assert_eq!(
            both(Returned::Number(0.4), Some(0.5))[0],
            (false, 0.4, "Custom function returned false\noutput.length".into())
        );
        assert_eq!(both(Returned::Number(0.4), Some(0.5))[1], (true, 0.4, "Assertion passed".into()));
    }

    #[test]
    fn grading_results_keep_their_reason_unless_negated() {
        let result = Returned::Grading { pass: false, score: 0.3, reason: "too short".into() };
        assert_eq!(both(result, None), [(false, 0.3, "too short".into()), (true, 0.3, "Assertion passed".into())]);
        let result = Returned::Grading { pass: true, score: 0.9, reason: "fine".into() };
        assert_eq!(both(result, None)[1], (false, 0.9, "Custom function returned true".into()));
    }

    #[test]
    fn a_throw_fails_both_forms_with_the_error() {
        let threw = Returned::Threw { message: "boom".into(), stack: "Error: boom\n    at <main>".into() };
        let reason =
            "Custom function threw error: boom\nStack Trace: Error: boom\n    at <main>\noutput.length".to_owned();
        assert_eq!(both(threw, None), [(false, 0.0, reason.clone()), (false, 0.0, reason)]);
    }
}
