//! The matcher side of the SDK: the [`Matcher`] trait, the values it reads and
//! the verdict it returns, plus [`evaluate_batch`], the loop the component
//! export runs (natively testable like everything else here).

use std::cell::OnceCell;

pub use serde_json::Value as Json;

/// A matcher plugin: it names its keys and evaluates one check at a time.
///
/// Both functions are plain Rust, so the logic is tested natively; the
/// [`export_matcher!`](crate::export_matcher) line makes the type the
/// component's export.
pub trait Matcher {
    /// Names the plugin, its version and every key it implements.
    fn describe() -> PluginInfo;

    /// Evaluates one check of `key` (lowercase, never `not_`-prefixed).
    ///
    /// Return `Ok` with a verdict whose message states facts (the host may
    /// negate it), or `Err` when the check cannot be evaluated at all (a
    /// type mismatch, a bad parameter): the host reports that as an error
    /// verdict and never negates it.
    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String>;
}

/// What a plugin says about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginInfo {
    /// The plugin's name.
    pub name: String,
    /// The plugin's version.
    pub version: String,
    /// Every key with its one-line summary.
    pub matchers: Vec<(String, String)>,
}

impl PluginInfo {
    /// A plugin with no keys yet.
    pub fn new(name: &str, version: &str) -> Self {
        PluginInfo { name: name.to_owned(), version: version.to_owned(), matchers: Vec::new() }
    }

    /// Adds a key and its one-line summary.
    pub fn matcher(mut self, key: &str, summary: &str) -> Self {
        self.matchers.push((key.to_owned(), summary.to_owned()));
        self
    }
}

/// The outcome of one check.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Whether the check holds.
    pub pass: bool,
    /// An optional score in [0, 1].
    pub score: Option<f64>,
    /// A factual statement a person can act on.
    pub message: String,
    /// Optional machine-readable detail.
    pub extras: Option<Json>,
}

impl Verdict {
    /// A verdict with a message and no score.
    pub fn new(pass: bool, message: impl Into<String>) -> Self {
        Verdict { pass, score: None, message: message.into(), extras: None }
    }

    /// Attaches a score in [0, 1].
    pub fn with_score(mut self, score: f64) -> Self {
        self.score = Some(score);
        self
    }

    /// Attaches machine-readable detail.
    pub fn with_extras(mut self, extras: Json) -> Self {
        self.extras = Some(extras);
        self
    }
}

/// The value a check looks at.
///
/// Plain strings arrive as text; everything else arrives as JSON and is
/// parsed on first use, once per batch however many checks read it.
#[derive(Debug)]
pub struct Actual {
    text: Option<String>,
    json: Option<String>,
    parsed: OnceCell<Result<Json, String>>,
}

impl Actual {
    /// A plain-text actual value.
    pub fn text(text: impl Into<String>) -> Self {
        Actual { text: Some(text.into()), json: None, parsed: OnceCell::new() }
    }

    /// An actual value given as JSON text.
    pub fn json(json: impl Into<String>) -> Self {
        Actual { text: None, json: Some(json.into()), parsed: OnceCell::new() }
    }

    /// An actual value from a parsed JSON value (convenient in tests).
    pub fn value(value: Json) -> Self {
        match value {
            Json::String(text) => Actual::text(text),
            other => {
                let actual = Actual::json(other.to_string());
                let _ = actual.parsed.set(Ok(other));
                actual
            }
        }
    }

    /// The value as a string slice, when it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.text {
            Some(text) => Some(text),
            None => self.as_json().ok()?.as_str(),
        }
    }

    /// The value as parsed JSON (a text actual becomes a JSON string).
    pub fn as_json(&self) -> Result<&Json, String> {
        self.parsed
            .get_or_init(|| match (&self.text, &self.json) {
                (Some(text), _) => Ok(Json::String(text.clone())),
                (None, Some(json)) => {
                    serde_json::from_str(json).map_err(|e| format!("the actual value is not valid JSON: {e}"))
                }
                (None, None) => unreachable!("an Actual always holds text or JSON"),
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A short description for messages: the JSON type and, for strings, the
    /// length in characters, e.g. `a 42-character string`, `the number 5`.
    pub fn describe(&self) -> String {
        match self.as_json() {
            Ok(value) => describe_value(value),
            Err(e) => e,
        }
    }
}

/// A short description of a JSON value for messages.
fn describe_value(value: &Json) -> String {
    match value {
        Json::Null => "null".to_owned(),
        Json::Bool(b) => format!("the boolean {b}"),
        Json::Number(n) => format!("the number {n}"),
        Json::String(s) => format!("a {}-character string", s.chars().count()),
        Json::Array(a) => format!("a list of {} elements", a.len()),
        Json::Object(o) => format!("an object with {} keys", o.len()),
    }
}

/// One check of a batch, with `actual` an index into the batch's actuals.
#[derive(Clone, Debug)]
pub struct Check {
    /// The key, lowercase, without `not_`.
    pub key: String,
    /// Index into the batch's actual values.
    pub actual: u32,
    /// The expected value as JSON text.
    pub expected: String,
}

/// Evaluates a batch whose checks' expected values are JSON text: each
/// actual is parsed at most once, each check's expected value is parsed and
/// handed to `M::evaluate`. Unparseable input becomes an `Err` for that
/// check only. (The component export gets the expected values already
/// typed, and runs [`evaluate_one`] on each.)
pub fn evaluate_batch<M: Matcher>(actuals: &[Actual], checks: &[Check]) -> Vec<Result<Verdict, String>> {
    checks
        .iter()
        .map(|check| {
            let expected =
                serde_json::from_str(&check.expected).map_err(|e| format!("the expected value is not valid JSON: {e}"));
            evaluate_one::<M>(actuals, &check.key, check.actual, expected)
        })
        .collect()
}

/// Evaluates one check of a batch: `expected` is its expected value, or why
/// there is none; `actual` an index into `actuals`.
#[doc(hidden)]
pub fn evaluate_one<M: Matcher>(
    actuals: &[Actual],
    key: &str,
    actual: u32,
    expected: Result<Json, String>,
) -> Result<Verdict, String> {
    let found =
        actuals.get(actual as usize).ok_or_else(|| format!("check refers to actual #{actual} of {}", actuals.len()))?;
    M::evaluate(key, found, &expected?)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Equal;

    impl Matcher for Equal {
        fn describe() -> PluginInfo {
            PluginInfo::new("equal", "0.0.1").matcher("equal", "JSON equality")
        }

        fn evaluate(_key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
            Ok(Verdict::new(actual.as_json()? == expected, actual.describe()))
        }
    }

    #[test]
    fn batch_shares_actuals_and_keeps_order() {
        let actuals = [Actual::text("hi"), Actual::json("[1,2]")];
        let checks = [
            Check { key: "equal".into(), actual: 1, expected: "[1,2]".into() },
            Check { key: "equal".into(), actual: 0, expected: "\"ho\"".into() },
            Check { key: "equal".into(), actual: 0, expected: "\"hi\"".into() },
        ];
        let verdicts = evaluate_batch::<Equal>(&actuals, &checks);
        let passes: Vec<bool> = verdicts.iter().map(|v| v.as_ref().unwrap().pass).collect();
        assert_eq!(passes, [true, false, true]);
        assert_eq!(verdicts[0].as_ref().unwrap().message, "a list of 2 elements");
    }

    #[test]
    fn bad_json_and_bad_index_fail_only_their_check() {
        let actuals = [Actual::json("{oops"), Actual::text("ok")];
        let checks = [
            Check { key: "equal".into(), actual: 0, expected: "1".into() },
            Check { key: "equal".into(), actual: 1, expected: "nope".into() },
            Check { key: "equal".into(), actual: 9, expected: "1".into() },
            Check { key: "equal".into(), actual: 1, expected: "\"ok\"".into() },
        ];
        let verdicts = evaluate_batch::<Equal>(&actuals, &checks);
        assert!(verdicts[0].as_ref().unwrap_err().starts_with("the actual value is not valid JSON"));
        assert!(verdicts[1].as_ref().unwrap_err().starts_with("the expected value is not valid JSON"));
        assert_eq!(verdicts[2].as_ref().unwrap_err(), "check refers to actual #9 of 2");
        assert!(verdicts[3].as_ref().unwrap().pass);
    }

    #[test]
    fn text_actual_reads_as_json_string() {
        let actual = Actual::text("Beatles");
        assert_eq!(actual.as_str(), Some("Beatles"));
        assert_eq!(actual.as_json().unwrap(), &Json::String("Beatles".into()));
        assert_eq!(actual.describe(), "a 7-character string");
        assert_eq!(Actual::json("\"x\"").as_str(), Some("x"));
        assert_eq!(Actual::value(serde_json::json!(5)).describe(), "the number 5");
    }
}
