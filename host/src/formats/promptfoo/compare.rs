//! promptfoo's `select-best` and `max-score`: a test's outputs on every
//! prompt × provider compared with one another ([`crate::job::CaseGroup`]),
//! after the test's other assertions, as promptfoo decides them. The
//! config reader puts these assertions last (`Test::put_comparisons_last`)
//! so that the checks, the assertions and their results keep one order.

use crate::check::{Check, KeySet, Target};
use crate::errors::describe_json;
use crate::formats::promptfoo::config::{Test, is_comparison};
use crate::job::{CompareRule, MaxScore, SELECT_BEST_KEY, SelectBest};
use crate::template::NunjucksTemplate;
use serde_json::{Map, Value, json};

/// promptfoo 0.123.1's `SELECT_BEST_PROMPT`: one system message.
const SELECT_BEST_PROMPT: &str = "You are comparing multiple pieces of text to see which best fits the following criteria: {{criteria}}\n\nHere are the pieces of text:\n\n{% for output in outputs %}\n<Text index=\"{{ loop.index0 }}\">\n{{ output }}\n</Text>\n{% endfor %}\n\nOutput the index of the text that best fits the criteria. You must output a single integer.";

/// The type of `assertion`, if it has one.
fn kind(assertion: &Map<String, Value>) -> Option<&str> {
    assertion.get("type").and_then(Value::as_str)
}

/// The rules of `test`'s comparison assertions, or why they cannot run.
/// `members` is how many outputs they compare; `grader` gives a grading
/// provider's grader (for `select-best`'s judge).
pub fn rules(
    test: &Test,
    members: usize,
    grader: &dyn Fn(&Value) -> Result<crate::sandbox::Grader, String>,
    keys: &dyn KeySet,
) -> Result<Vec<CompareRule>, String> {
    let own: Vec<&str> = test.asserts.iter().filter_map(kind).filter(|k| !is_comparison(k)).collect();
    let mut rules = Vec::new();
    for (i, assertion) in test.asserts.iter().enumerate() {
        let Some(kind) = kind(assertion).filter(|k| is_comparison(k)) else { continue };
        let at = format!("assert[{i}]");
        if kind.starts_with("not-") {
            return Err(format!(
                "{at} is `{kind}`, which promptfoo never runs (it compares only `select-best` and `max-score`); \
                 drop the `not-`"
            ));
        }
        if test.scoring.is_some() {
            return Err(format!(
                "{at} (`{kind}`) with an `assertScoringFunction` is not supported: the function decides the test \
                 before the comparison; keep one of them"
            ));
        }
        if test.output_transform().is_some() || assertion.contains_key("transform") {
            return Err(format!(
                "{at} (`{kind}`) compares the providers' answers, and assay does not compare transformed outputs; \
                 drop the `transform`"
            ));
        }
        if members < 2 {
            return Err(format!(
                "{at} (`{kind}`) must have at least two outputs to compare between; this test runs on one prompt \
                 and provider"
            ));
        }
        let line = test.assert_lines.get(i).copied().flatten();
        let rule = match kind {
            "select-best" => select_best(test, assertion, &at, grader, keys, line)?,
            _ => max_score(assertion, &own, &at, line)?,
        };
        rules.push(rule);
    }
    // promptfoo decides every select-best before any max-score.
    rules.sort_by_key(|rule| matches!(rule, CompareRule::MaxScore(_)));
    Ok(rules)
}

/// A `select-best` assertion's rule.
fn select_best(
    test: &Test,
    assertion: &Map<String, Value>,
    at: &str,
    grader: &dyn Fn(&Value) -> Result<crate::sandbox::Grader, String>,
    keys: &dyn KeySet,
    line: Option<u32>,
) -> Result<CompareRule, String> {
    let criteria = match assertion.get("value") {
        Some(Value::String(criteria)) => criteria.clone(),
        other => {
            let found = other.map_or("missing".to_owned(), describe_json);
            return Err(format!("{at} (`select-best`) must have a string value, the criteria; it is {found}"));
        }
    };
    if !keys.has_key(SELECT_BEST_KEY) {
        return Err(format!(
            "{at} (`select-best`) needs the key `{SELECT_BEST_KEY}` of the promptfoo assertions plugin, which is not \
             loaded\n\nConsider [plugins.promptfoo] path = \"plugins/promptfoo/promptfoo.wasm\" in assay.toml"
        ));
    }
    let rubric = assertion.get("rubricPrompt").or_else(|| test.options.get("rubricPrompt"));
    let sources = match rubric {
        None => vec![SELECT_BEST_PROMPT.to_owned()],
        Some(rubric) => messages(&super::rubric_text(rubric)),
    };
    let messages = sources
        .iter()
        .map(|source| NunjucksTemplate::parse(source))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| format!("{at}: its rubricPrompt: {e}"))?;
    let mut check = Check::new(SELECT_BEST_KEY, Target::Text, json!({}));
    if let Some(provider) = assertion.get("provider").or_else(|| test.options.get("provider")) {
        check.grader = Some(grader(provider).map_err(|e| format!("{at}: {e}"))?);
    }
    let vars = test.vars.clone();
    Ok(CompareRule::SelectBest(SelectBest { criteria, messages, vars, check, line }))
}

/// A rubric prompt's message contents: each message of a JSON list of
/// chat messages, or the whole text.
fn messages(rubric: &str) -> Vec<String> {
    match serde_json::from_str::<Value>(rubric) {
        Ok(Value::Array(list)) => list
            .iter()
            .map(|message| match &message["content"] {
                Value::String(content) => content.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => vec![rubric.to_owned()],
    }
}

/// A `max-score` assertion's rule: its `value`'s `method` (`average` or
/// `sum`), `weights` by assertion type and `threshold`, over the checks of
/// the test's other assertions (`own`, their types in order).
fn max_score(assertion: &Map<String, Value>, own: &[&str], at: &str, line: Option<u32>) -> Result<CompareRule, String> {
    let empty = Map::new();
    let value = match assertion.get("value") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(value)) => value,
        Some(other) => {
            return Err(format!(
                "{at} (`max-score`) has the value {}; it takes an object of `method`, `weights` and `threshold`",
                describe_json(other)
            ));
        }
    };
    if let Some(key) = value.keys().find(|k| !["method", "weights", "threshold"].contains(&k.as_str())) {
        return Err(format!(
            "{at}.value has `{key}`, which max-score does not read: it reads `method`, `weights` and `threshold`"
        ));
    }
    let sum = match value.get("method") {
        None => false,
        Some(Value::String(method)) if method == "sum" => true,
        Some(Value::String(method)) if method == "average" => false,
        Some(other) => return Err(format!("{at}.value.method is {}, not `average` or `sum`", describe_json(other))),
    };
    let by_type = match value.get("weights") {
        None => Map::new(),
        Some(Value::Object(weights)) => weights.clone(),
        Some(other) => {
            return Err(format!("{at}.value.weights is {}, not weights by assertion type", describe_json(other)));
        }
    };
    let mut weights = Vec::with_capacity(own.len());
    for kind in own {
        weights.push(match by_type.get(*kind) {
            None => 1.0,
            Some(weight) => weight.as_f64().ok_or_else(|| format!("{at}.value.weights.{kind} is not a number"))?,
        });
    }
    let threshold = match value.get("threshold") {
        None => None,
        Some(threshold) => Some(threshold.as_f64().ok_or_else(|| format!("{at}.value.threshold is not a number"))?),
    };
    let expected = Value::Object(value.clone());
    Ok(CompareRule::MaxScore(MaxScore { weights, sum, threshold, expected, line }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_prompt_lists_every_output_by_index() {
        let template = NunjucksTemplate::parse(SELECT_BEST_PROMPT).unwrap();
        let vars = json!({ "criteria": "funniest", "outputs": ["one", "two"] });
        let text = template.render(vars.as_object().unwrap()).unwrap();
        assert!(
            text.starts_with(
                "You are comparing multiple pieces of text to see which best fits the following criteria: funniest"
            ),
            "{text}"
        );
        assert!(
            text.contains("<Text index=\"0\">\none\n</Text>") && text.contains("<Text index=\"1\">\ntwo\n</Text>"),
            "{text}"
        );
    }
}
