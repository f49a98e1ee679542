//! Scenario and validation files (the prompt-engineering workflow of the
//! seed document `004`), in YAML, HOCON or JSON:
//!
//! - a [`Scenario`] hands a `problem` to the agent and judges its answer
//!   against weighted, categorized [`Expectation`]s (`assay eval`);
//! - a [`Validation`] holds a scenario and [`MockResponse`]s, each with the
//!   results a trustworthy judge should give (`assay validate`).
//!
//! ```yaml
//! scenario_id: bland_food
//! problem: my food is bland
//! agent: chef                      # optional: `assay eval --to AGENT` wins
//! expectations:
//!   - expectation_id: missing_spices
//!     statement: points out that spices are missing
//!     weight: 2                     # a positive integer, default 1
//!     categories: [problem_finding]
//!   - expectation_id: mentions_salt
//!     statement: mentions salt
//!     key: keywords                 # any matcher key; default gist
//!     expected: salt                # what the matcher gets; default the statement
//! ```
//!
//! A validation file has `scenario` (the scenario inline, or the path of a
//! scenario file relative to it) and `mock_responses`, each with
//! `mock_response_id`, `mock_response_content` and `wanted_results`
//! (`expectation_id`, `wanted_result`, `weight`).
//!
//! A file with `id` or `queries` is in Kyma's current format instead (see
//! [`kyma`]): each of its queries is a scenario. A file mixing the keys of
//! both formats is an error naming them.

use crate::case::{CaseEnv, FileAccess};
use crate::errors::{CaseError, CaseErrorKind};
use crate::formats::hocon::{parse_object, read_text, reject_unknown_keys};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

mod kyma;

/// The matcher key that judges an expectation when it names none.
pub const DEFAULT_EXPECTATION_KEY: &str = "gist";

/// A problem for the agent and what a good answer does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    /// `scenario_id`; in Kyma's format, the file's `id`, `/` and the
    /// query's 0-based index (`test-pod-1/0`).
    pub id: String,
    /// The file it was read from.
    pub file: PathBuf,
    /// What the agent is asked.
    pub problem: String,
    /// The agent to ask, if the file names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Private data sent with the problem (a Kyma query's `resource`
    /// arrives as `{"resource": …}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sly_data: Option<Map<String, Value>>,
    /// What is asked first, in the same conversation, before the problem:
    /// a Kyma query's earlier queries in its file (each with its private
    /// data), as Kyma's runner asks a file's queries as one conversation.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conversation: Vec<(String, Option<Map<String, Value>>)>,
    /// What a good answer does, in order.
    pub expectations: Vec<Expectation>,
}

/// One thing a good answer does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expectation {
    /// `expectation_id` (Kyma's `name`), unique in its scenario.
    pub id: String,
    /// The statement a judge checks the answer against.
    pub statement: String,
    /// How much it counts (a positive integer, default 1).
    pub weight: u32,
    /// The categories its score counts towards.
    pub categories: Vec<String>,
    /// The matcher key that judges it, as written (default `gist`; `not_`
    /// forms allowed).
    pub key: String,
    /// The expected value the matcher gets: `expected`, else the statement.
    pub expected: Value,
    /// The score over the samples that meets it (Kyma's `threshold`, in
    /// (0, 1]); `None`: every judged answer must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Whether its scenario fails when it is not met (Kyma's `required`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// A scenario and mock responses with the results a judge should give.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Validation {
    /// The file it was read from.
    pub file: PathBuf,
    /// The scenario whose expectations are checked (its problem is not
    /// used).
    pub scenario: Scenario,
    /// The responses to check.
    pub mock_responses: Vec<MockResponse>,
}

/// A response written to test the judge.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MockResponse {
    /// `mock_response_id`, unique in its file.
    pub id: String,
    /// `mock_response_content`: the text the judge sees.
    pub content: String,
    /// What the judge should decide, per expectation.
    pub wanted: Vec<WantedResult>,
}

/// What a trustworthy judge decides for one expectation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WantedResult {
    /// The expectation, by id.
    pub expectation_id: String,
    /// Whether the response should match it.
    pub wanted: bool,
    /// How much agreement on it counts (a positive integer, default 1).
    pub weight: u32,
}

/// What a scenario-format file holds.
#[derive(Clone, Debug, PartialEq)]
pub enum ScenarioFile {
    /// A scenario.
    Scenario(Scenario),
    /// A file in Kyma's current format: one scenario per query, in order.
    Queries(Vec<Scenario>),
    /// A validation set.
    Validation(Validation),
}

const SCENARIO_KEYS: &[&str] = &["scenario_id", "problem", "agent", "description", "expectations"];
const EXPECTATION_KEYS: &[&str] = &["expectation_id", "statement", "weight", "categories", "key", "expected"];
const VALIDATION_KEYS: &[&str] = &["scenario", "mock_responses", "description"];
const MOCK_RESPONSE_KEYS: &[&str] = &["mock_response_id", "mock_response_content", "wanted_results"];
const WANTED_RESULT_KEYS: &[&str] = &["expectation_id", "wanted_result", "actual_result", "weight"];

/// Reads a scenario or validation file (a validation file has
/// `mock_responses`; a file with `id` or `queries` is in Kyma's format).
/// `${VAR}` in HOCON reads the variables `env` makes visible.
pub fn read_scenario_file(path: &Path, env: &CaseEnv) -> Result<ScenarioFile, CaseError> {
    let root = parse_file(path, env)?;
    if kyma::is_kyma(&root) {
        kyma::read_queries(root, path).map(ScenarioFile::Queries).map_err(|kind| CaseError::new(path, kind))
    } else if root.contains_key("mock_responses") {
        read_validation(root, path, env).map(ScenarioFile::Validation)
    } else {
        read_scenario(root, path).map(ScenarioFile::Scenario).map_err(|kind| CaseError::new(path, kind))
    }
}

/// The file's root object, parsed by its extension: `.yaml`/`.yml` as YAML,
/// `.json` as JSON, anything else as HOCON.
fn parse_file(path: &Path, env: &CaseEnv) -> Result<Map<String, Value>, CaseError> {
    let fail = |kind| CaseError::new(path, kind);
    let text = read_text(&FileAccess::anywhere(), path).map_err(fail)?;
    let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let root = match extension.as_str() {
        "yaml" | "yml" => yaml_serde::from_str::<Value>(&text).map_err(|e| {
            fail(CaseErrorKind::YamlSyntax {
                line: e.location().map(|l| (l.line(), l.column())),
                message: e.to_string(),
            })
        })?,
        "json" => serde_json::from_str::<Value>(&text)
            .map_err(|e| fail(CaseErrorKind::Syntax { line: Some((e.line(), e.column())), message: e.to_string() }))?,
        _ => Value::Object(parse_object(&text, env).map_err(fail)?),
    };
    match root {
        Value::Object(map) => Ok(map),
        other => Err(fail(CaseErrorKind::wrong_type("(the file)", "a dictionary of keys", &other))),
    }
}

fn read_scenario(mut root: Map<String, Value>, file: &Path) -> Result<Scenario, CaseErrorKind> {
    reject_unknown_keys(&root, SCENARIO_KEYS, "")?;
    let id = required_string(&mut root, "scenario_id", "", "the scenario's unique id")?;
    let problem = required_string(&mut root, "problem", "", "what the agent is asked")?;
    let agent = optional_string(&mut root, "agent", "")?;
    optional_string(&mut root, "description", "")?;
    let items = match root.remove("expectations") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) => {
            return Err(CaseErrorKind::Invalid {
                path: "expectations".into(),
                message: "the list is empty; a scenario needs at least one expectation".into(),
            });
        }
        Some(other) => return Err(CaseErrorKind::wrong_type("expectations", "a list of expectations", &other)),
        None => return Err(CaseErrorKind::Missing { path: "expectations".into(), what: "the list of expectations" }),
    };
    let mut expectations: Vec<Expectation> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let expectation = read_expectation(item, &format!("expectations[{i}]"))?;
        if expectations.iter().any(|e| e.id == expectation.id) {
            return Err(CaseErrorKind::Invalid {
                path: format!("expectations[{i}].expectation_id"),
                message: format!("`{}` is used twice; ids must be unique in a scenario", expectation.id),
            });
        }
        expectations.push(expectation);
    }
    Ok(Scenario { id, file: file.to_owned(), problem, agent, sly_data: None, conversation: Vec::new(), expectations })
}

fn read_expectation(value: Value, at: &str) -> Result<Expectation, CaseErrorKind> {
    let Value::Object(mut map) = value else { return Err(CaseErrorKind::wrong_type(at, "a dictionary", &value)) };
    reject_unknown_keys(&map, EXPECTATION_KEYS, at)?;
    let id = required_string(&mut map, "expectation_id", at, "the expectation's unique id")?;
    let statement = required_string(&mut map, "statement", at, "what a good answer does, in plain words")?;
    let weight = weight(map.remove("weight"), &format!("{at}.weight"))?;
    let categories = match map.remove("categories") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(one)) => vec![one],
        Some(Value::Array(items)) => items
            .into_iter()
            .enumerate()
            .map(|(j, item)| match item {
                Value::String(category) if !category.trim().is_empty() => Ok(category),
                other => Err(CaseErrorKind::wrong_type(&format!("{at}.categories[{j}]"), "a category name", &other)),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(CaseErrorKind::wrong_type(&format!("{at}.categories"), "a list of names", &other)),
    };
    let key = optional_string(&mut map, "key", at)?.unwrap_or_else(|| DEFAULT_EXPECTATION_KEY.to_owned());
    let expected = match map.remove("expected") {
        None | Some(Value::Null) => Value::String(statement.clone()),
        Some(value) => value,
    };
    Ok(Expectation { id, statement, weight, categories, key, expected, threshold: None, required: false })
}

fn read_validation(mut root: Map<String, Value>, file: &Path, env: &CaseEnv) -> Result<Validation, CaseError> {
    let fail = |kind| CaseError::new(file, kind);
    reject_unknown_keys(&root, VALIDATION_KEYS, "").map_err(fail)?;
    optional_string(&mut root, "description", "").map_err(fail)?;
    let scenario = match root.remove("scenario") {
        Some(Value::Object(inline)) => read_scenario(inline, file).map_err(|kind| fail(prefixed(kind, "scenario")))?,
        Some(Value::String(relative)) => {
            let path = scenario_path(file, &relative).map_err(fail)?;
            // Parsed here rather than by `read_scenario_file`, so that a
            // validation file naming itself (or another validation file)
            // is an error, not an endless recursion.
            let root = parse_file(&path, env)?;
            if root.contains_key("mock_responses") {
                return Err(fail(CaseErrorKind::Invalid {
                    path: "scenario".into(),
                    message: format!("`{relative}` is a validation file, not a scenario"),
                }));
            }
            read_scenario(root, &path).map_err(|kind| CaseError::new(&path, kind))?
        }
        Some(other) => {
            return Err(fail(CaseErrorKind::wrong_type(
                "scenario",
                "the scenario (a dictionary) or the path of a scenario file",
                &other,
            )));
        }
        None => return Err(fail(CaseErrorKind::Missing { path: "scenario".into(), what: "the scenario to validate" })),
    };
    let items = match root.remove("mock_responses") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) => {
            return Err(fail(CaseErrorKind::Invalid {
                path: "mock_responses".into(),
                message: "the list is empty; give at least one mock response".into(),
            }));
        }
        Some(other) => {
            return Err(fail(CaseErrorKind::wrong_type("mock_responses", "a list of mock responses", &other)));
        }
        None => unreachable!("only files with mock_responses are read as validations"),
    };
    let known: Vec<&str> = scenario.expectations.iter().map(|e| e.id.as_str()).collect();
    let mut mock_responses: Vec<MockResponse> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let at = format!("mock_responses[{i}]");
        let mock = read_mock_response(item, &at, &known).map_err(fail)?;
        if mock_responses.iter().any(|m| m.id == mock.id) {
            return Err(fail(CaseErrorKind::Invalid {
                path: format!("{at}.mock_response_id"),
                message: format!("`{}` is used twice; ids must be unique in a file", mock.id),
            }));
        }
        mock_responses.push(mock);
    }
    Ok(Validation { file: file.to_owned(), scenario, mock_responses })
}

/// The scenario file a validation file names: a path relative to the
/// validation file that stays inside its folder (after symbolic links), so
/// that a validation file cannot have any other file on the machine read
/// (and its text sent to the judge).
fn scenario_path(file: &Path, relative: &str) -> Result<PathBuf, CaseErrorKind> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let outside = |why: String| CaseErrorKind::Invalid {
        path: "scenario".into(),
        message: format!(
            "`{relative}` {why}; a validation file may name only scenario files in its own folder or below\n\nConsider moving the scenario next to the validation file"
        ),
    };
    let path = dir.join(relative);
    let (Ok(dir), Ok(canonical)) = (dir.canonicalize(), path.canonicalize()) else {
        return Err(CaseErrorKind::Invalid {
            path: "scenario".into(),
            message: format!("no scenario file `{}`", path.display()),
        });
    };
    if Path::new(relative).is_absolute() {
        return Err(outside("is an absolute path".into()));
    }
    if !canonical.starts_with(&dir) {
        return Err(outside(format!("leads out of the folder, to `{}`", canonical.display())));
    }
    Ok(path)
}

fn read_mock_response(value: Value, at: &str, known: &[&str]) -> Result<MockResponse, CaseErrorKind> {
    let Value::Object(mut map) = value else { return Err(CaseErrorKind::wrong_type(at, "a dictionary", &value)) };
    reject_unknown_keys(&map, MOCK_RESPONSE_KEYS, at)?;
    let id = required_string(&mut map, "mock_response_id", at, "the mock response's unique id")?;
    let content = match map.remove("mock_response_content") {
        Some(Value::String(content)) => content,
        Some(other) => {
            return Err(CaseErrorKind::wrong_type(&format!("{at}.mock_response_content"), "a string", &other));
        }
        None => {
            return Err(CaseErrorKind::Missing {
                path: format!("{at}.mock_response_content"),
                what: "the text of the mock response",
            });
        }
    };
    let items = match map.remove("wanted_results") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) => {
            return Err(CaseErrorKind::Invalid {
                path: format!("{at}.wanted_results"),
                message: "the list is empty, so this response checks nothing".into(),
            });
        }
        Some(other) => {
            return Err(CaseErrorKind::wrong_type(&format!("{at}.wanted_results"), "a list of wanted results", &other));
        }
        None => {
            return Err(CaseErrorKind::Missing {
                path: format!("{at}.wanted_results"),
                what: "what the judge should decide for each expectation",
            });
        }
    };
    let mut wanted: Vec<WantedResult> = Vec::new();
    let mut seen = HashSet::new();
    for (j, item) in items.into_iter().enumerate() {
        let item_at = format!("{at}.wanted_results[{j}]");
        let Value::Object(mut map) = item else {
            return Err(CaseErrorKind::wrong_type(&item_at, "a dictionary", &item));
        };
        reject_unknown_keys(&map, WANTED_RESULT_KEYS, &item_at)?;
        let expectation_id = required_string(&mut map, "expectation_id", &item_at, "the expectation it is about")?;
        if !known.contains(&expectation_id.as_str()) {
            return Err(CaseErrorKind::UnknownKey {
                path: format!("{item_at}.expectation_id"),
                key: expectation_id.clone(),
                what: "expectation",
                suggestion: crate::suggest::nearest(&expectation_id, known.iter().copied()),
                known: known.join(", "),
            });
        }
        if !seen.insert(expectation_id.clone()) {
            return Err(CaseErrorKind::Invalid {
                path: format!("{item_at}.expectation_id"),
                message: format!("`{expectation_id}` has two wanted results in this mock response"),
            });
        }
        let wanted_result = match map.remove("wanted_result") {
            Some(Value::Bool(b)) => b,
            Some(other) => {
                return Err(CaseErrorKind::wrong_type(&format!("{item_at}.wanted_result"), "true or false", &other));
            }
            None => {
                return Err(CaseErrorKind::Missing {
                    path: format!("{item_at}.wanted_result"),
                    what: "whether the response should match the expectation (true or false)",
                });
            }
        };
        match map.remove("actual_result") {
            None | Some(Value::Null) => {}
            Some(other) => {
                return Err(CaseErrorKind::wrong_type(
                    &format!("{item_at}.actual_result"),
                    "null (assay fills it in; leave it out)",
                    &other,
                ));
            }
        }
        let weight = weight(map.remove("weight"), &format!("{item_at}.weight"))?;
        wanted.push(WantedResult { expectation_id, wanted: wanted_result, weight });
    }
    Ok(MockResponse { id, content, wanted })
}

/// A positive integer weight; 1 when absent.
fn weight(value: Option<Value>, at: &str) -> Result<u32, CaseErrorKind> {
    match value {
        None | Some(Value::Null) => Ok(1),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(w) if w >= 1 && w <= u64::from(u32::MAX) => Ok(w as u32),
            _ => {
                Err(CaseErrorKind::Invalid { path: at.into(), message: format!("{n} is not a positive whole number") })
            }
        },
        Some(other) => Err(CaseErrorKind::wrong_type(at, "a positive whole number", &other)),
    }
}

fn required_string(
    map: &mut Map<String, Value>,
    key: &str,
    at: &str,
    what: &'static str,
) -> Result<String, CaseErrorKind> {
    let path = join(at, key);
    match map.remove(key) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text),
        Some(Value::String(_)) => Err(CaseErrorKind::Invalid { path, message: "it is empty".into() }),
        // Ids written as numbers (`scenario_id: 7`) read as their text.
        Some(Value::Number(n)) if key.ends_with("_id") => Ok(n.to_string()),
        Some(other) => Err(CaseErrorKind::wrong_type(&path, "a string", &other)),
        None => Err(CaseErrorKind::Missing { path, what }),
    }
}

fn optional_string(map: &mut Map<String, Value>, key: &str, at: &str) -> Result<Option<String>, CaseErrorKind> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(CaseErrorKind::wrong_type(&join(at, key), "a string", &other)),
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() { key.to_owned() } else { format!("{at}.{key}") }
}

/// Puts `scenario.` in front of a path inside an inline scenario.
fn prefixed(kind: CaseErrorKind, prefix: &str) -> CaseErrorKind {
    let at = |path: String| format!("{prefix}.{path}");
    match kind {
        CaseErrorKind::UnknownKey { path, key, what, suggestion, known } => {
            CaseErrorKind::UnknownKey { path: at(path), key, what, suggestion, known }
        }
        CaseErrorKind::WrongType { path, expected, found } => {
            CaseErrorKind::WrongType { path: at(path), expected, found }
        }
        CaseErrorKind::Invalid { path, message } => CaseErrorKind::Invalid { path: at(path), message },
        CaseErrorKind::Missing { path, what } => CaseErrorKind::Missing { path: at(path), what },
        other => other,
    }
}

#[cfg(test)]
mod tests;
