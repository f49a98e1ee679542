//! Kyma's current scenario format: one file, one `id`, several queries,
//! each a scenario of its own.
//!
//! ```yaml
//! id: test-pod-1
//! description: the Pod cannot list Pods: its Role is missing
//! agent: companion                 # optional (assay's): `assay eval --to AGENT` wins
//! queries:
//!   - user_query: Why is the Pod in error state?
//!     resource: {kind: Pod, api_version: v1, name: pod-check, namespace: test-pod-1}
//!     expectations:
//!       - name: pod_error
//!         statement: points out that the Pod is in an error state
//!         threshold: 0.5            # optional, in (0, 1]
//!         required: true            # optional, default true
//! ```
//!
//! The query at index `i` (0-based) of `queries` is the scenario
//! `ID/i` (`test-pod-1/0`): its `user_query` is the problem, asked after
//! the file's earlier queries in one conversation (as Kyma's runner asks
//! them: a follow-up question keeps its context), its `resource` goes to
//! the agent as the private data `{"resource": …}`, and each expectation is
//! judged by `gist` against its `statement` (weight 1, no categories) on
//! the answer to its own query. Two expectations of one query may share a
//! name (Kyma's runner accepts it): the second is reported as `NAME (2)`. A file with `id` or `queries` is read in this format; one
//! that also has a key of the seed's formats is an error naming both.

use super::{DEFAULT_EXPECTATION_KEY, Expectation, Scenario, join, optional_string, required_string};
use crate::errors::CaseErrorKind;
use crate::formats::hocon::reject_unknown_keys;
use serde_json::{Map, Value};
use std::path::Path;

/// The keys that make a file Kyma's.
const KYMA_ONLY_KEYS: &[&str] = &["id", "queries"];
/// The keys of the seed's scenario and validation formats that Kyma's does
/// not have.
const SEED_ONLY_KEYS: &[&str] = &["scenario_id", "problem", "expectations", "scenario", "mock_responses"];
const FILE_KEYS: &[&str] = &["id", "description", "agent", "queries"];
const QUERY_KEYS: &[&str] = &["user_query", "resource", "expectations"];
const EXPECTATION_KEYS: &[&str] = &["name", "statement", "threshold", "required"];

/// Whether a file's root object is in Kyma's format (has `id` or
/// `queries`).
pub(super) fn is_kyma(root: &Map<String, Value>) -> bool {
    KYMA_ONLY_KEYS.iter().any(|key| root.contains_key(*key))
}

/// The scenario ID of the query at `index` of the file `id`.
pub(super) fn query_id(id: &str, index: usize) -> String {
    format!("{id}/{index}")
}

/// Reads a Kyma file's root object into one scenario per query.
pub(super) fn read_queries(mut root: Map<String, Value>, file: &Path) -> Result<Vec<Scenario>, CaseErrorKind> {
    reject_mixed_formats(&root)?;
    reject_unknown_keys(&root, FILE_KEYS, "")?;
    let id = required_string(&mut root, "id", "", "the scenario's unique id, e.g. `test-pod-1`")?;
    optional_string(&mut root, "description", "")?;
    let agent = optional_string(&mut root, "agent", "")?;
    let queries = non_empty_list(root.remove("queries"), "queries", "the list of queries", "query")?;
    let mut asked = Vec::new();
    let mut scenarios = Vec::new();
    for (i, query) in queries.into_iter().enumerate() {
        let at = format!("queries[{i}]");
        let (problem, sly_data, expectations) = read_query(query, &at)?;
        let conversation = asked.clone();
        asked.push((problem.clone(), sly_data.clone()));
        scenarios.push(Scenario {
            id: query_id(&id, i),
            file: file.to_owned(),
            problem,
            agent: agent.clone(),
            sly_data,
            conversation,
            expectations,
        });
    }
    Ok(scenarios)
}

/// A file with keys of both formats: which it has, and how to fix it.
fn reject_mixed_formats(root: &Map<String, Value>) -> Result<(), CaseErrorKind> {
    let named = |keys: &[&str]| {
        let present: Vec<String> =
            keys.iter().filter(|key| root.contains_key(**key)).map(|key| format!("`{key}`")).collect();
        present.join(", ")
    };
    let seed = named(SEED_ONLY_KEYS);
    if seed.is_empty() {
        return Ok(());
    }
    let first = SEED_ONLY_KEYS.iter().find(|key| root.contains_key(**key)).copied().unwrap_or_default();
    Err(CaseErrorKind::Invalid {
        path: first.to_owned(),
        message: format!(
            "the file mixes Kyma's format ({}) with the scenario format ({seed})\n\nConsider one format per file: Kyma's has `id`, `description` and `queries` (each with `user_query`, `resource` and `expectations`); the scenario format has `scenario_id`, `problem` and `expectations`",
            named(KYMA_ONLY_KEYS)
        ),
    })
}

type Query = (String, Option<Map<String, Value>>, Vec<Expectation>);

fn read_query(value: Value, at: &str) -> Result<Query, CaseErrorKind> {
    let Value::Object(mut map) = value else { return Err(CaseErrorKind::wrong_type(at, "a dictionary", &value)) };
    reject_unknown_keys(&map, QUERY_KEYS, at)?;
    let problem = required_string(&mut map, "user_query", at, "what the user asks the agent")?;
    let sly_data = match map.remove("resource") {
        None | Some(Value::Null) => None,
        Some(Value::Object(resource)) => Some(Map::from_iter([("resource".to_owned(), Value::Object(resource))])),
        Some(other) => {
            return Err(CaseErrorKind::wrong_type(
                &join(at, "resource"),
                "a dictionary (e.g. `{kind: Pod, api_version: v1, name: NAME, namespace: NS}`)",
                &other,
            ));
        }
    };
    let at_expectations = join(at, "expectations");
    let items =
        non_empty_list(map.remove("expectations"), &at_expectations, "the list of expectations", "expectation")?;
    let mut expectations: Vec<Expectation> = Vec::new();
    for (j, item) in items.into_iter().enumerate() {
        let item_at = format!("{at_expectations}[{j}]");
        let mut expectation = read_expectation(item, &item_at)?;
        if expectations.iter().any(|e| e.id == expectation.id) {
            let name = expectation.id.clone();
            expectation.id = (2..)
                .map(|n| format!("{name} ({n})"))
                .find(|id| expectations.iter().all(|e| e.id != *id))
                .expect("a free name");
        }
        expectations.push(expectation);
    }
    Ok((problem, sly_data, expectations))
}

fn read_expectation(value: Value, at: &str) -> Result<Expectation, CaseErrorKind> {
    let Value::Object(mut map) = value else { return Err(CaseErrorKind::wrong_type(at, "a dictionary", &value)) };
    reject_unknown_keys(&map, EXPECTATION_KEYS, at)?;
    let id = required_string(&mut map, "name", at, "the expectation's name, unique in its query")?;
    let statement = required_string(&mut map, "statement", at, "what a good answer does, in plain words")?;
    let threshold = threshold(map.remove("threshold"), &join(at, "threshold"))?;
    let required = match map.remove("required") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(required)) => required,
        Some(other) => return Err(CaseErrorKind::wrong_type(&join(at, "required"), "true or false", &other)),
    };
    Ok(Expectation {
        id,
        expected: Value::String(statement.clone()),
        statement,
        weight: 1,
        categories: Vec::new(),
        key: DEFAULT_EXPECTATION_KEY.to_owned(),
        threshold,
        required,
    })
}

/// A threshold: a score in (0, 1]. Zero is refused, as it would be met by
/// any answer, wrong or right.
fn threshold(value: Option<Value>, at: &str) -> Result<Option<f64>, CaseErrorKind> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(t) if t > 0.0 && t <= 1.0 => Ok(Some(t)),
            _ => Err(CaseErrorKind::Invalid {
                path: at.into(),
                message: format!(
                    "{n} is not a score in (0, 1]\n\nConsider a fraction such as 0.5: the share of the answers that must meet the statement"
                ),
            }),
        },
        Some(other) => Err(CaseErrorKind::wrong_type(at, "a number in (0, 1], e.g. 0.5", &other)),
    }
}

/// A list that must hold at least one `item`.
fn non_empty_list(value: Option<Value>, at: &str, what: &'static str, item: &str) -> Result<Vec<Value>, CaseErrorKind> {
    match value {
        Some(Value::Array(items)) if !items.is_empty() => Ok(items),
        Some(Value::Array(_)) => Err(CaseErrorKind::Invalid {
            path: at.into(),
            message: format!("the list is empty; give at least one {item}"),
        }),
        Some(other) => Err(CaseErrorKind::wrong_type(at, &format!("a list of {item}s"), &other)),
        None => Err(CaseErrorKind::Missing { path: at.into(), what }),
    }
}

#[cfg(test)]
mod tests;
