//! The check planner: a `response` block into a flat list of [`Check`]s.
//!
//! Rules (from the seed document and DESIGN.md):
//! - `text` holds a test dictionary: every key names a matcher.
//! - `sly_data` and `structure` hold data keys at the first level; deeper, a
//!   key naming a matcher (or `not_` + one) is an assertion and anything else
//!   a nested data key.
//! - A matcher's value is a scalar (one check), a list (one check per
//!   element, all must pass) or a dictionary (the matcher's parameters).
//! - Matcher names are case-insensitive; data keys are not.
//! - Every dictionary of a response block checks something: an empty
//!   `text`, `sly_data` or `structure`, or a data key holding no test
//!   (`sly_data { a { valeu {} } }`, a typo that would otherwise pass in
//!   silence), is an error naming its path, with the nearest key suggested.

use crate::case::{Connection, KeyLines, TestCase};
use crate::errors::{CaseErrorKind, describe_json as describe};
use crate::sandbox::Grader;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;

/// The names a case may use: the keys a planner may treat as matchers, and
/// the connections configured beyond the built-in ones.
pub trait KeySet {
    /// Whether `key` (lowercase, without `not_`) names a matcher.
    fn has_key(&self, key: &str) -> bool;
    /// The known key or `not_` form closest to a mistyped one.
    fn suggest(&self, key: &str) -> Option<String>;
    /// The `[plugins.NAME]` entry of `assay.toml` that would provide `key`,
    /// when a first-party plugin does (default: none known).
    fn provider_entry(&self, _key: &str) -> Option<String> {
        None
    }
    /// The names of the connections configured as `[connections.NAME]`
    /// (default: none).
    fn connection_names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Which part of a response a check looks at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The answer's text.
    Text,
    /// A value inside the returned sly_data, by key path.
    SlyData(Vec<String>),
    /// A value inside the answer's structure, by key path.
    Structure(Vec<String>),
    /// How long the agent took to answer, in milliseconds (a number):
    /// promptfoo's `latency` assertion.
    Latency,
    /// What the answer cost, as the connection reports it (a number):
    /// promptfoo's `cost` assertion.
    Cost,
    /// The value the turn's `N`-th derivation computed from the answer
    /// (`crate::job::Turn::derived`: promptfoo's `transform`).
    Derived(usize),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (root, path) = match self {
            Target::Text => return f.write_str("text"),
            Target::Latency => return f.write_str("latency_ms"),
            Target::Cost => return f.write_str("cost"),
            Target::Derived(index) => return write!(f, "derived[{index}]"),
            Target::SlyData(path) => ("sly_data", path),
            Target::Structure(path) => ("structure", path),
        };
        f.write_str(root)?;
        for key in path {
            write!(f, ".{key}")?;
        }
        Ok(())
    }
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One check: a matcher key applied to one target with one expected value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// What it looks at.
    pub target: Target,
    /// The matcher key, lowercase, without `not_`.
    pub key: String,
    /// Whether the verdict is negated (`not_<key>`).
    pub negated: bool,
    /// The expected value: a scalar, one list element, or a parameter
    /// dictionary.
    pub expected: Value,
    /// `expected` as JSON text, computed once.
    #[serde(skip)]
    pub expected_json: String,
    /// Whether its verdict decides the interaction's pass or fail (a
    /// suite's `gate = false` check is evaluated and recorded, but never
    /// fails its case; case files' checks always gate).
    #[serde(skip_serializing_if = "is_true")]
    pub gate: bool,
    /// The judge and embeddings its plugin call uses in place of the
    /// plugin's own, if it has its own (a promptfoo grading provider).
    #[serde(skip)]
    pub grader: Option<Grader>,
    /// The line of its file that asks for it, when its reader knows.
    #[serde(skip)]
    pub line: Option<u32>,
}

fn is_true(value: &bool) -> bool {
    *value
}

impl Check {
    /// A gating check of `key` (not negated) on `target` with `expected`,
    /// with no grader of its own and no line.
    pub fn new(key: &str, target: Target, expected: Value) -> Check {
        Check {
            target,
            key: key.to_owned(),
            negated: false,
            expected_json: expected.to_string(),
            expected,
            gate: true,
            grader: None,
            line: None,
        }
    }

    /// The key as the user wrote it, with its `not_` prefix if negated.
    pub fn display_key(&self) -> String {
        if self.negated { format!("not_{}", self.key) } else { self.key.clone() }
    }
}

/// The checks of every interaction of a case, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CasePlan {
    /// `interactions[i]` holds the checks on the i-th response.
    pub interactions: Vec<Vec<Check>>,
}

impl CasePlan {
    /// How many checks in all.
    pub fn check_count(&self) -> usize {
        self.interactions.iter().map(Vec::len).sum()
    }
}

/// Plans every interaction of a case.
pub fn plan_case(case: &TestCase, keys: &dyn KeySet) -> Result<CasePlan, CaseErrorKind> {
    check_connections(&case.connections, keys)?;
    let interactions = case
        .interactions
        .iter()
        .enumerate()
        .map(|(i, interaction)| {
            plan_response(&interaction.response, &format!("interactions[{i}].response"), keys, &case.key_lines)
        })
        .collect::<Result<_, _>>()?;
    Ok(CasePlan { interactions })
}

/// Every connection a case names must be built in or configured.
pub fn check_connections(connections: &[Connection], keys: &dyn KeySet) -> Result<(), CaseErrorKind> {
    let Some((index, unknown)) = connections.iter().enumerate().find_map(|(i, connection)| match connection {
        Connection::Named(name) if !keys.connection_names().iter().any(|known| known == name.as_ref()) => {
            Some((i, name))
        }
        _ => None,
    }) else {
        return Ok(());
    };
    let configured = keys.connection_names();
    let known: Vec<&str> =
        Connection::BUILT_IN.iter().map(Connection::name).chain(configured.iter().map(String::as_str)).collect();
    Err(CaseErrorKind::UnknownKey {
        path: if connections.len() == 1 { "connections".into() } else { format!("connections[{index}]") },
        key: unknown.to_string(),
        what: "connection",
        suggestion: crate::suggest::nearest(unknown, known.iter().copied()),
        known: format!("{} (and any [connections.NAME] of assay.toml)", known.join(", ")),
    })
}

/// Plans one `response` block; `path` names it in errors, and each check's
/// line is its path's in `lines`.
pub fn plan_response(
    response: &Map<String, Value>,
    path: &str,
    keys: &dyn KeySet,
    lines: &KeyLines,
) -> Result<Vec<Check>, CaseErrorKind> {
    let mut checks = Vec::new();
    for (part, value) in response {
        let at = format!("{path}.{part}");
        let Value::Object(tests) = value else {
            return Err(CaseErrorKind::wrong_type(&at, "a dictionary of tests, e.g. { keywords: \"Beatles\" }", value));
        };
        if tests.is_empty() && ["text", "sly_data", "structure"].contains(&part.as_str()) {
            return Err(CaseErrorKind::Invalid {
                path: at,
                message: format!(
                    "it is empty, so it checks nothing\n\nConsider a test, e.g. {part} {}, or leaving `{part}` out",
                    if part == "text" { "{ keywords: \"…\" }" } else { "{ answer { value: 5 } }" }
                ),
            });
        }
        match part.as_str() {
            "text" => plan_tests(tests, Target::Text, &at, keys, lines, &mut checks)?,
            "sly_data" | "structure" => {
                for (key, nested) in tests {
                    let target = if part == "sly_data" {
                        Target::SlyData(vec![key.clone()])
                    } else {
                        Target::Structure(vec![key.clone()])
                    };
                    plan_data_key(key, nested, target, &format!("{at}.{key}"), keys, lines, &mut checks)?;
                }
            }
            other => {
                return Err(CaseErrorKind::UnknownKey {
                    path: at.clone(),
                    key: other.to_owned(),
                    what: "response part",
                    suggestion: crate::suggest::nearest(other, ["text", "sly_data", "structure"]),
                    known: "text, sly_data, structure".into(),
                });
            }
        }
    }
    Ok(checks)
}

/// Plans one matcher entry outside a response block: `key` as written
/// (`not_` forms allowed, case-insensitive) with its `expected` value,
/// against `target`. A list is one check per element, all of which must
/// pass. `at` names the entry in errors.
pub fn plan_entry(
    key: &str,
    expected: &Value,
    target: Target,
    at: &str,
    keys: &dyn KeySet,
) -> Result<Vec<Check>, CaseErrorKind> {
    let Some((base, negated)) = matcher_key(key, keys) else {
        return Err(unknown_matcher(at.to_owned(), key, keys));
    };
    let mut checks = Vec::new();
    push_checks(&base, negated, expected, &target, at, &KeyLines::NONE, &mut checks)?;
    Ok(checks)
}

/// The error for `key` at `path`, which no loaded plugin provides: with the
/// nearest known key, and the first-party plugin that provides it if one
/// does.
fn unknown_matcher(path: String, key: &str, keys: &dyn KeySet) -> CaseErrorKind {
    CaseErrorKind::UnknownMatcher {
        path,
        key: key.to_owned(),
        suggestion: keys.suggest(key),
        first_party: keys.provider_entry(key),
    }
}

/// A data key's value must be a dictionary of tests and nested data keys.
fn plan_data_key(
    key: &str,
    value: &Value,
    target: Target,
    at: &str,
    keys: &dyn KeySet,
    lines: &KeyLines,
    checks: &mut Vec<Check>,
) -> Result<(), CaseErrorKind> {
    let Value::Object(entries) = value else {
        // Either a test no loaded plugin provides (the likeliest mistake
        // of someone adopting a plugin: it is not loaded) or a data key
        // written without its tests: both readings are said.
        let hint = match keys.suggest(key) {
            Some(s) => format!(" (did you mean `{s}`?)"),
            None => String::new(),
        };
        return Err(CaseErrorKind::Invalid {
            path: at.to_owned(),
            message: format!(
                "it is {}: as a test, no loaded plugin provides `{key}`{hint}; as a data key, it would hold a \
                 dictionary of tests, e.g. {key} {{ value: 5 }}\n\n{}",
                describe(value),
                crate::errors::load_plugin_hint(key)
            ),
        });
    };
    if entries.is_empty() {
        let hint = match keys.suggest(key) {
            Some(s) => format!(" (did you mean the test `{s}`?)"),
            None => String::new(),
        };
        return Err(CaseErrorKind::Invalid {
            path: at.to_owned(),
            message: format!(
                "the data key `{key}` holds no test, so it checks nothing{hint}\n\nConsider a test for it, e.g. {key} {{ value: 5 }}"
            ),
        });
    }
    for (entry, nested) in entries {
        let entry_at = format!("{at}.{entry}");
        if let Some((base, negated)) = matcher_key(entry, keys) {
            push_checks(&base, negated, nested, &target, &entry_at, lines, checks)?;
        } else {
            let mut nested_target = target.clone();
            match &mut nested_target {
                Target::SlyData(path) | Target::Structure(path) => path.push(entry.clone()),
                Target::Latency | Target::Cost | Target::Derived(_) => {
                    unreachable!("data keys nest only in sly_data and structure")
                }
                Target::Text => unreachable!("text has no data keys"),
            }
            plan_data_key(entry, nested, nested_target, &entry_at, keys, lines, checks)?;
        }
    }
    Ok(())
}

/// Every key of a `text` dictionary must name a matcher.
fn plan_tests(
    tests: &Map<String, Value>,
    target: Target,
    at: &str,
    keys: &dyn KeySet,
    lines: &KeyLines,
    checks: &mut Vec<Check>,
) -> Result<(), CaseErrorKind> {
    for (key, value) in tests {
        let entry_at = format!("{at}.{key}");
        let Some((base, negated)) = matcher_key(key, keys) else {
            return Err(unknown_matcher(entry_at, key, keys));
        };
        push_checks(&base, negated, value, &target, &entry_at, lines, checks)?;
    }
    Ok(())
}

/// Splits a matcher's value into checks: a list is one check per element,
/// each at its element's line in `lines`.
fn push_checks(
    key: &str,
    negated: bool,
    value: &Value,
    target: &Target,
    at: &str,
    lines: &KeyLines,
    checks: &mut Vec<Check>,
) -> Result<(), CaseErrorKind> {
    let listed = value.is_array();
    let expected: Vec<&Value> = match value {
        Value::Array(items) if items.is_empty() => {
            return Err(CaseErrorKind::Invalid {
                path: at.to_owned(),
                message: "the list is empty, so it checks nothing; give at least one expected value".into(),
            });
        }
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    for (index, value) in expected.into_iter().enumerate() {
        let line = match listed {
            true => lines.line_of(&format!("{at}[{index}]")),
            false => lines.line_of(at),
        };
        checks.push(Check { negated, line, ..Check::new(key, target.clone(), value.clone()) });
    }
    Ok(())
}

/// `(base key, negated)` when `key` names a matcher or its `not_` form.
fn matcher_key(key: &str, keys: &dyn KeySet) -> Option<(String, bool)> {
    let lower = key.to_ascii_lowercase();
    if keys.has_key(&lower) {
        return Some((lower, false));
    }
    let base = lower.strip_prefix("not_")?;
    keys.has_key(base).then(|| (base.to_owned(), true))
}

#[cfg(test)]
mod tests;
