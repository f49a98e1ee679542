//! promptfoo's `assert` entries as checks: `type: contains` is the key
//! `pf_contains` (`-` as `_`), `not-contains` its negation `not_pf_contains`,
//! checked on the answer's text (`latency` on the interaction's latency in
//! ms, `cost` on its cost) with the expected value `{"value", "threshold",
//! "prompt", "rubric_prompt"}` that the `promptfoo` plugin reads; `python`
//! is the key `pf_python` of the embedded Python runner (`python.rs`), and
//! `javascript` the `javascript` plugin's `pf_javascript` (its expected
//! value made in `javascript.rs`). `weight` and `metric` stay with the
//! case, for the test's grading and named scores. `transform`s and
//! assertion sets are errors naming the test and what to do instead.

use crate::check::{Check, KeySet, Target, plan_entry};
use crate::formats::promptfoo::javascript::{self, ScriptContext};
use crate::formats::promptfoo::python::{self, PythonScope};
use crate::template::{NunjucksTemplate, is_template};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The templates in the tests' assertions (the strings of `value`s and
/// `metric`s that hold template syntax), parsed once each: a test's var
/// combinations share theirs, and every case renders them.
#[derive(Debug, Default)]
pub struct AssertTemplates(HashMap<String, Result<NunjucksTemplate, String>>);

impl AssertTemplates {
    /// The templates of `asserts`, the tests' assertions.
    pub fn of<'a>(asserts: impl Iterator<Item = &'a Map<String, Value>>) -> AssertTemplates {
        fn add(templates: &mut HashMap<String, Result<NunjucksTemplate, String>>, value: &Value) {
            match value {
                Value::String(text) if is_template(text) && !templates.contains_key(text) => {
                    templates.insert(text.clone(), NunjucksTemplate::parse(text));
                }
                Value::Array(items) => items.iter().for_each(|item| add(templates, item)),
                Value::Object(map) => map.values().for_each(|item| add(templates, item)),
                _ => {}
            }
        }
        let mut templates = HashMap::new();
        for assertion in asserts {
            for key in ["value", "metric"] {
                if let Some(value) = assertion.get(key) {
                    add(&mut templates, value);
                }
            }
        }
        AssertTemplates(templates)
    }

    /// The texts parsed, in no order.
    #[cfg(any(test, feature = "internals"))] // for tests
    pub fn sources(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// `text` rendered with `vars` (parsed now if it was not when the
    /// config was read).
    pub fn render(&self, text: &str, vars: &Map<String, Value>) -> Result<String, String> {
        match self.0.get(text) {
            Some(Ok(template)) => template.render(vars),
            Some(Err(error)) => Err(error.clone()),
            None => NunjucksTemplate::parse(text)?.render(vars),
        }
    }
}

/// The assertion types the `promptfoo` plugin implements without the
/// judge, as promptfoo names them ([`plugin_types`] adds the others).
const TYPES: &[&str] = &[
    "equals",
    "contains",
    "icontains",
    "contains-any",
    "contains-all",
    "icontains-any",
    "icontains-all",
    "starts-with",
    "regex",
    "is-json",
    "contains-json",
    "is-valid-openai-tools-call",
    "is-valid-openai-function-call",
    "levenshtein",
    "rouge-n",
    "bleu",
    "similar",
    "latency",
    "cost",
];

/// Every type the `promptfoo` plugin implements: [`TYPES`], then
/// [`MODEL_GRADED`].
pub fn plugin_types() -> impl Iterator<Item = &'static str> {
    TYPES.iter().chain(MODEL_GRADED).copied()
}

/// The script assertion types assay runs, each in its own sandboxed
/// runner (`python`: `plugins/python/`).
pub const SCRIPT_TYPES: &[&str] = &["python", "javascript"];

/// The types the `javascript` plugin runs with promptfoo's own JavaScript
/// (`is-sql` and `contains-sql`, over node-sql-parser): `pf_is_sql`,
/// `pf_contains_sql`.
const SQL_TYPES: &[&str] = &["is-sql", "contains-sql"];

/// The types whose plugin asks the judge the rendered prompt (the
/// `promptfoo` plugin's too).
const MODEL_GRADED: &[&str] = &[
    "llm-rubric",
    "model-graded-closedqa",
    "factuality",
    "g-eval",
    "conversation-relevance",
    "answer-relevance",
    "context-recall",
    "context-relevance",
    "context-faithfulness",
];

/// One assertion, planned.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The check.
    pub check: Check,
    /// Its weight in the test's score (default 1).
    pub weight: f64,
}

/// What a test gives its script assertions: its `python` ones and its
/// `javascript` ones.
#[derive(Clone, Copy)]
pub struct Scripts<'a> {
    /// For `python` assertions.
    pub python: &'a PythonScope<'a>,
    /// For `javascript` assertions.
    pub javascript: &'a ScriptContext<'a>,
}

/// Plans `assertion` (the `index`-th of a test) on the answer to `prompt`,
/// with `vars` filled into its value (and `script`, what a `javascript`
/// assertion's context holds besides); the error says what is wrong.
pub fn plan(
    assertion: &Map<String, Value>,
    index: usize,
    vars: &Vars<'_>,
    prompt: &str,
    rubric_prompt: Option<&str>,
    scripts: &Scripts<'_>,
    keys: &dyn KeySet,
) -> Result<Planned, String> {
    let Scripts { python, javascript: script } = *scripts;
    let at = format!("assert[{index}]");
    let Some(kind) = assertion.get("type").and_then(Value::as_str) else {
        return Err(format!("{at} has no `type`"));
    };
    if assertion.contains_key("contextTransform") {
        return Err(format!(
            "{at} has a `contextTransform`, JavaScript that finds context-* assertions' context in the \
             answer, which assay does not run; give the test a `context` var instead"
        ));
    }
    if let Some(key) = kind.strip_prefix("assay:") {
        return assay_key(assertion, key, &at, vars, keys);
    }
    let (negated, base) = match kind.strip_prefix("not-") {
        Some(base) => (true, base),
        None => (false, kind),
    };
    if base == "assert-set" {
        return Err(format!("{at} is `{kind}`, which assay does not support; list its assertions in the test"));
    }
    let supported = || plugin_types().chain(SCRIPT_TYPES.iter().copied()).chain(SQL_TYPES.iter().copied());
    if !supported().any(|known| known == base) {
        return Err(format!(
            "{at}: `{kind}` is not an assertion type assay supports; it supports {} and their `not-` forms",
            supported().collect::<Vec<_>>().join(", ")
        ));
    }
    for key in assertion.keys() {
        if !["type", "value", "threshold", "weight", "metric", "rubricPrompt", "config", "provider", "transform"]
            .contains(&key.as_str())
        {
            return Err(format!(
                "{at} has `{key}`, which assay does not read; an assertion has `type`, `value`, `threshold`, \
                 `weight`, `metric`, `rubricPrompt`, `config`, `provider` and `transform`"
            ));
        }
    }
    let number = |key: &str| -> Result<Option<f64>, String> {
        match assertion.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(Value::String(s)) => {
                s.trim().parse().map(Some).map_err(|_| format!("{at}.{key} `{s}` is not a number"))
            }
            Some(other) => Err(format!("{at}.{key} is {other}, not a number")),
        }
    };
    let threshold = number("threshold")?;
    let weight = number("weight")?.unwrap_or(1.0);
    if weight < 0.0 || !weight.is_finite() {
        return Err(format!("{at}.weight {weight} is not a weight (0 or more)"));
    }
    // The named score is counted by promptfoo's output (`output.rs`); its
    // template must render.
    match assertion.get("metric") {
        None | Some(Value::Null) => {}
        Some(Value::String(metric)) => drop(vars.render(metric).map_err(|e| format!("{at}.metric: {e}"))?),
        Some(other) => return Err(format!("{at}.metric is {other}, not a name")),
    }
    let mut expected = Map::new();
    if base == "python" {
        expected = python::expected(assertion, &at, negated, &|value| vars.fill(value), prompt, python)?;
    } else if base == "javascript" {
        let Some(Value::String(code)) = assertion.get("value") else {
            return Err(format!("{at} (`{kind}`) needs a `value`: the JavaScript code, or a `file://` module"));
        };
        let rendered = || match is_template(code) {
            true => vars.render(code).map_err(|e| format!("{at}.value: {e}")),
            false => Ok(code.clone()),
        };
        expected = javascript::expected(assertion, &at, code, rendered, threshold, prompt, script)?;
    } else if let Some(value) = assertion.get("value") {
        expected.insert("value".into(), vars.fill(value).map_err(|e| format!("{at}.value: {e}"))?);
    }
    if let Some(threshold) = threshold.filter(|_| base != "javascript") {
        expected.insert("threshold".into(), json!(threshold));
    }
    match (base, assertion.get("config")) {
        (_, None | Some(Value::Null)) | ("python" | "javascript", _) => {}
        ("conversation-relevance", Some(Value::Object(config))) => {
            if let Some(key) = config.keys().find(|key| *key != "windowSize") {
                return Err(format!(
                    "{at}.config has `{key}`; a `conversation-relevance` assertion's config has `windowSize`"
                ));
            }
            if let Some(window) = config.get("windowSize") {
                expected.insert("window_size".into(), window.clone());
            }
        }
        (_, Some(_)) => {
            return Err(format!("{at} (`{kind}`) has a `config`, which this type does not read; remove it"));
        }
    }
    if base == "is-valid-openai-function-call" {
        // promptfoo asks the provider to validate: an openai provider
        // checks the call against its `functions`; others cannot.
        let validates = script.provider_id.starts_with("openai:");
        let functions = script.provider_config.get("functions").cloned().unwrap_or(Value::Null);
        expected.insert("functions".into(), if validates { functions } else { Value::Bool(false) });
    }
    if base == "conversation-relevance" {
        // A test's `_conversation` (its earlier turns, `{input, output}`)
        // is what is judged, in windows; without it, the prompt and answer.
        if let Some(conversation) = vars.values.get("_conversation").filter(|c| !c.is_null()) {
            expected.insert("conversation".into(), conversation.clone());
        }
        if assertion.contains_key("rubricPrompt") || rubric_prompt.is_some() {
            return Err(format!(
                "{at} (`{kind}`) with a `rubricPrompt` is not supported; assay asks promptfoo's own conversation prompt"
            ));
        }
    }
    if base == "answer-relevance" || base.starts_with("context-") {
        rag_inputs(&mut expected, base, &at, vars.values)?;
    }
    if MODEL_GRADED.contains(&base) {
        expected.insert("prompt".into(), Value::String(prompt.to_owned()));
        let own = assertion.get("rubricPrompt").map(super::rubric_text);
        if let Some(rubric) = own.as_deref().or(rubric_prompt) {
            let rubric = vars.fill_rubric(rubric, base).map_err(|e| format!("{at}: its rubricPrompt: {e}"))?;
            expected.insert("rubric_prompt".into(), Value::String(rubric));
        }
    }
    let target = match base {
        "latency" => Target::Latency,
        "cost" => Target::Cost,
        _ => Target::Text,
    };
    let key = format!("{}pf_{}", if negated { "not_" } else { "" }, base.replace('-', "_"));
    let base_key = key.trim_start_matches("not_");
    if (base_key == javascript::KEY || SQL_TYPES.contains(&base)) && !keys.has_key(base_key) {
        return Err(format!(
            "{at} (`{kind}`) needs the key `{base_key}` of the javascript plugin, which is not loaded\n\n\
             Consider [plugins.javascript] path = \"plugins/javascript/javascript.wasm\" in assay.toml, or --plugin \
             plugins/javascript/javascript.wasm"
        ));
    }
    if !keys.has_key(base_key) {
        return Err(format!(
            "{at} (`{kind}`) needs the key `{base_key}` of the promptfoo assertions plugin, which is not loaded\n\n\
             Consider [plugins.promptfoo] path = \"plugins/promptfoo/promptfoo.wasm\" in assay.toml, or --plugin \
             plugins/promptfoo/promptfoo.wasm"
        ));
    }
    let mut checks = plan_entry(&key, &Value::Object(expected), target, &at, keys).map_err(|e| e.to_string())?;
    let check = checks.pop().ok_or_else(|| format!("{at} plans no check"))?;
    Ok(Planned { check, weight })
}

/// The retrieval types' inputs from the test's vars, as promptfoo reads
/// them: `query` (a text; `context-relevance` and `context-faithfulness`
/// need it, `answer-relevance` falls back to the prompt) and `context` (a
/// text or texts; `context-recall` falls back to the prompt).
fn rag_inputs(
    expected: &mut Map<String, Value>,
    base: &str,
    at: &str,
    vars: &Map<String, Value>,
) -> Result<(), String> {
    match vars.get("query") {
        Some(Value::String(query)) => drop(expected.insert("query".into(), Value::String(query.clone()))),
        _ if matches!(base, "context-relevance" | "context-faithfulness") => {
            return Err(format!("{at} (`{base}`) needs the test's `query` var: the user's question, as text"));
        }
        _ => {}
    }
    if base == "answer-relevance" {
        return Ok(());
    }
    // promptfoo reads a context that is empty or missing as none.
    let valid = match vars.get("context") {
        None | Some(Value::Null) => base == "context-recall",
        Some(Value::String(text)) if text.is_empty() => base == "context-recall",
        Some(Value::String(_)) => true,
        Some(Value::Array(items)) => {
            !items.is_empty() && items.iter().all(|item| item.as_str().is_some_and(|text| !text.is_empty()))
        }
        Some(_) => false,
    };
    if !valid {
        return Err(format!(
            "{at} (`{base}`) needs the test's `context` var: a non-empty text or list of texts (the retrieved \
             context); assay does not run `contextTransform`"
        ));
    }
    if let Some(context) = vars.get("context").filter(|c| !c.is_null() && c.as_str() != Some("")) {
        expected.insert("context".into(), context.clone());
    }
    Ok(())
}

/// `type: assay:KEY`: any assay matcher key (`not_` forms too, a plugin's
/// own, the one a `javascript` assertion was rewritten into), its `value`
/// the check's expected value as the matcher takes it, filled with `vars`.
fn assay_key(
    assertion: &Map<String, Value>,
    key: &str,
    at: &str,
    vars: &Vars<'_>,
    keys: &dyn KeySet,
) -> Result<Planned, String> {
    let Some(value) = assertion.get("value") else {
        return Err(format!("{at} (`assay:{key}`) has no `value`, the check's expected value"));
    };
    if let Some(other) = assertion.keys().find(|k| !["type", "value", "weight", "metric"].contains(&k.as_str())) {
        return Err(format!(
            "{at} (`assay:{key}`) has `{other}`; an `assay:KEY` assertion has `value`, `weight` and `metric`"
        ));
    }
    let weight = match assertion.get("weight") {
        None => 1.0,
        Some(weight) => {
            weight.as_f64().filter(|w| *w >= 0.0).ok_or_else(|| format!("{at}.weight is not a weight (0 or more)"))?
        }
    };
    if let Some(Value::String(metric)) = assertion.get("metric") {
        vars.render(metric).map_err(|e| format!("{at}.metric: {e}"))?;
    }
    let expected = vars.fill(value).map_err(|e| format!("{at}.value: {e}"))?;
    if expected.is_array() {
        return Err(format!("{at} (`assay:{key}`): a list value would be several checks; write one assertion each"));
    }
    let mut checks = plan_entry(key, &expected, Target::Text, at, keys).map_err(|e| e.to_string())?;
    let check = checks.pop().ok_or_else(|| format!("{at} plans no check"))?;
    Ok(Planned { check, weight })
}

/// A test's vars, and the templates its assertions' values are
/// (promptfoo renders assertion values as templates).
pub struct Vars<'a> {
    /// The vars.
    pub values: &'a Map<String, Value>,
    /// The templates, parsed when the config was read.
    pub templates: &'a AssertTemplates,
}

impl Vars<'_> {
    /// A string filled with the vars.
    fn render(&self, text: &str) -> Result<String, String> {
        self.templates.render(text, self.values)
    }

    /// A `rubricPrompt` with the test's vars filled in, as promptfoo fills
    /// them; what the grader fills itself (`{{output}}`, `{{rubric}}`,
    /// `{{input}}`, `{{criteria}}`, `{{ideal}}`, `{{completion}}`, and the
    /// retrieval type `base`'s own: `{{answer}}`, `{{context}}`,
    /// `{{groundTruth}}`, `{{query}}`, `{{question}}`, `{{statements}}`) is
    /// left for it.
    fn fill_rubric(&self, text: &str, base: &str) -> Result<String, String> {
        if !is_template(text) {
            return Ok(text.to_owned());
        }
        let mut vars = self.values.clone();
        let retrieval: &[&str] = match base {
            "answer-relevance" => &["answer"],
            "context-recall" => &["context", "groundTruth"],
            "context-relevance" => &["context", "query"],
            "context-faithfulness" => &["question", "answer", "context", "statements"],
            _ => &[],
        };
        for own in ["output", "rubric", "input", "criteria", "ideal", "completion"].iter().chain(retrieval) {
            vars.insert((*own).to_owned(), Value::String(format!("{{{{{own}}}}}")));
        }
        NunjucksTemplate::parse(text)?.render(&vars)
    }

    /// A value with every string in it filled with the vars.
    pub(super) fn fill(&self, value: &Value) -> Result<Value, String> {
        Ok(match value {
            Value::String(text) if is_template(text) => Value::String(self.render(text)?),
            Value::Array(items) => Value::Array(items.iter().map(|item| self.fill(item)).collect::<Result<_, _>>()?),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| Ok((k.clone(), self.fill(v)?))).collect::<Result<_, String>>()?)
            }
            other => other.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rubric_prompt_gets_the_test_s_vars_and_keeps_what_the_grader_fills() {
        let values = json!({"topic": "owls", "output": "not this"});
        let templates = AssertTemplates::default();
        let vars = Vars { values: values.as_object().unwrap(), templates: &templates };
        let rubric = "Judge {{ output }} on {{ topic | upper }} by {{rubric}}";
        assert_eq!(vars.fill_rubric(rubric, "llm-rubric").unwrap(), "Judge {{output}} on OWLS by {{rubric}}");
        assert_eq!(vars.fill_rubric("plain", "llm-rubric").unwrap(), "plain");
    }

    #[test]
    fn the_retrieval_types_take_query_and_context_from_the_vars_as_promptfoo_does() {
        let inputs = |base: &str, vars: Value| {
            let mut expected = Map::new();
            rag_inputs(&mut expected, base, "assert[0]", vars.as_object().unwrap()).map(|()| Value::Object(expected))
        };
        let both = json!({"query": "q?", "context": ["a", "b"]});
        assert_eq!(inputs("context-relevance", both.clone()).unwrap(), both);
        assert_eq!(inputs("answer-relevance", both).unwrap(), json!({"query": "q?"}));
        // context-recall falls back to the prompt (the plugin's) where the
        // context is missing or empty; the others need it.
        assert_eq!(inputs("context-recall", json!({"context": ""})).unwrap(), json!({}));
        let missing = inputs("context-faithfulness", json!({"query": "q?", "context": ""})).unwrap_err();
        assert!(missing.contains("assert[0] (`context-faithfulness`) needs the test's `context` var"), "{missing}");
        let odd = inputs("context-recall", json!({"context": ["a", 3]})).unwrap_err();
        assert!(odd.contains("a non-empty text or list of texts"), "{odd}");
        let no_query = inputs("context-relevance", json!({"context": "c"})).unwrap_err();
        assert!(no_query.contains("needs the test's `query` var"), "{no_query}");
    }
}
