//! `javascript`: promptfoo's `javascript` assertions (promptfoo 0.123.1),
//! run by a JavaScript engine written in Rust (Boa) inside this component:
//! no Node, and nothing the component could reach outside it (it imports
//! only the host's log).
//!
//! The key is `pf_javascript` (promptfoo's `not-javascript` is the host's
//! `not_pf_javascript`), checked on the answer's text. Its expected value
//! is an object:
//!
//! - `value`: the code as the config wrote it, vars rendered in (promptfoo
//!   renders it as a Nunjucks template): one line is an expression (or
//!   declarations then an expression) whose value is returned, several
//!   lines are a function body; or, for a file, the `file://` reference;
//! - `file` (for `file://path.js[:function]`): `{"name", "source",
//!   "function"}`, the module's text read by the host; the module is
//!   CommonJS (`module.exports = …`) or an ES module (`export …`);
//! - `threshold`: the least passing score when the function returns a
//!   number (without one, more than 0 passes);
//! - `context`: promptfoo's second argument, `{prompt, vars, test, config,
//!   provider, providerResponse}` as far as the host knows them.
//!
//! The function returns a boolean, a number (the score), a GradingResult
//! `{pass, score, reason}` or a promise of one of these; a throw fails the
//! assertion (both forms) with the error, as in promptfoo, but for a
//! `file://` module's function, whose throw (or a module that does not
//! load) promptfoo makes the test's error: an error verdict here. Each verdict
//! carries promptfoo's `not-` verdict in its extras (`"negated": {"pass",
//! "score", "reason"}`), which the host uses for `not_pf_javascript`.
//!
//! `pf_is_sql` and `pf_contains_sql` (`sql.rs`) are promptfoo's `is-sql`
//! and `contains-sql`, its own code over node-sql-parser, in the same engine.
//!
//! Its second key, `pf_js_value` (`value.rs`), runs promptfoo's JavaScript
//! that computes a value rather than a verdict (a config or tests module, a
//! test generator, `transformVars`, `transform`) and gives the value back
//! in its extras. A `.ts` module has its types stripped first
//! (`typescript.rs`).
//!
//! The engine is in `engine.rs` (with `modules.js`, how a `file://`
//! module's function is found), the globals of its sandbox in `sandbox.rs`,
//! the one-line rule in `body.rs`, promptfoo's grading in `grade.rs`.

mod body;
mod engine;
mod grade;
#[cfg(target_arch = "wasm32")]
mod random;
mod sandbox;
mod sql;
mod typescript;
mod value;

use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use engine::Script;
use grade::{Grade, Returned, grade};
use serde_json::{Map, json};

/// The key, and what it checks.
pub const KEY: (&str, &str) =
    ("pf_javascript", "promptfoo javascript: the assertion's JavaScript function passes (run sandboxed, without Node)");

/// The `javascript` plugin.
pub struct JavaScript;

impl Matcher for JavaScript {
    fn describe() -> PluginInfo {
        PluginInfo::new("javascript", env!("CARGO_PKG_VERSION"))
            .matcher(KEY.0, KEY.1)
            .matcher(value::KEY.0, value::KEY.1)
            .matcher(sql::KEYS[0].0, sql::KEYS[0].1)
            .matcher(sql::KEYS[1].0, sql::KEYS[1].1)
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        if key == value::KEY.0 {
            return value::evaluate(actual, expected);
        }
        if sql::KEYS.iter().any(|(sql, _)| *sql == key) {
            return sql::evaluate(key, actual, expected);
        }
        if key != KEY.0 {
            return Err(format!("the javascript plugin has no key `{key}`"));
        }
        let expected = Expected::read(expected)?;
        let output = match actual.as_str() {
            Some(text) => Json::String(text.to_owned()),
            None => actual.as_json()?.clone(),
        };
        Ok(verdict(&run(&expected, &output)?, &expected))
    }
}

export_matcher!(JavaScript);

/// The parts of the expected value.
#[derive(Debug)]
struct Expected<'a> {
    /// The code (trailing spaces removed, as promptfoo does), or the
    /// `file://` reference.
    value: &'a str,
    /// The module of a `file://` reference: name, text, function.
    file: Option<(&'a str, &'a str, Option<&'a str>)>,
    threshold: Option<f64>,
    context: Json,
}

impl<'a> Expected<'a> {
    fn read(expected: &'a Json) -> Result<Expected<'a>, String> {
        let Some(object) = expected.as_object() else {
            return Err(format!(
                "pf_javascript: the expected value is {expected}, not an object with `value` (the code); the host \
                 writes it from a promptfoo `javascript` assertion"
            ));
        };
        let value = match object.get("value") {
            Some(Json::String(code)) => code.trim_end(),
            Some(other) => return Err(format!("pf_javascript: `value` is {other}, not JavaScript code")),
            None => return Err("pf_javascript: the expected value has no `value` (the code)".to_owned()),
        };
        let file = match object.get("file") {
            None | Some(Json::Null) => None,
            Some(Json::Object(file)) => {
                let text = |key: &str| file.get(key).and_then(Json::as_str);
                let (Some(name), Some(source)) = (text("name"), text("source")) else {
                    return Err("pf_javascript: `file` needs `name` and `source`".to_owned());
                };
                Some((name, source, text("function")))
            }
            Some(other) => return Err(format!("pf_javascript: `file` is {other}, not a module")),
        };
        let threshold = match object.get("threshold") {
            None | Some(Json::Null) => None,
            Some(Json::Number(n)) => n.as_f64(),
            Some(other) => return Err(format!("pf_javascript: `threshold` is {other}, not a number")),
        };
        let context = match object.get("context") {
            None | Some(Json::Null) => Json::Object(Map::new()),
            Some(context @ Json::Object(_)) => context.clone(),
            Some(other) => return Err(format!("pf_javascript: `context` is {other}, not an object")),
        };
        Ok(Expected { value, file, threshold, context })
    }
}

/// Runs the assertion's function on `output`; `Err` for what promptfoo
/// makes the test's error (see [`engine::run`]).
fn run(expected: &Expected<'_>, output: &Json) -> Result<Returned, String> {
    let script = match expected.file {
        Some((name, source, function)) => Script::File { name, source, function },
        None => {
            let body = body::function_body(expected.value);
            return engine::run(Script::Inline { body: &body }, output, &expected.context);
        }
    };
    engine::run(script, output, &expected.context)
}

/// The verdict of both forms: the assertion's as the verdict, its `not-`
/// form's in the extras. Scores outside 0..=1 (a function may return any
/// number) are clamped, promptfoo's own kept as `promptfoo_score`.
fn verdict(returned: &Returned, expected: &Expected<'_>) -> Verdict {
    let Grade { pass, score, reason } = grade(returned, false, expected.threshold, expected.value);
    let negated = grade(returned, true, expected.threshold, expected.value);
    let clamp = |score: f64| if score.is_nan() { 0.0 } else { score.clamp(0.0, 1.0) };
    let mut extras = json!({
        "negated": { "pass": negated.pass, "score": clamp(negated.score), "reason": negated.reason },
    });
    if clamp(score) != score {
        extras["promptfoo_score"] = json!(score);
    }
    if clamp(negated.score) != negated.score {
        extras["negated"]["promptfoo_score"] = json!(negated.score);
    }
    Verdict::new(pass, reason).with_score(clamp(score)).with_extras(extras)
}

#[cfg(test)]
mod tests;
