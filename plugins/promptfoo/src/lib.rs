//! `promptfoo`: promptfoo's assertion types as assay matchers, with
//! promptfoo's pass and score semantics (promptfoo 0.123.1). Each type `t`
//! is the key `pf_t` with `-` as `_` (`pf_contains_any`, `pf_rouge_n`, ...);
//! promptfoo's `not-t` is assay's `not_pf_t`.
//!
//! The expected value of every key is an object: `{"value": …,
//! "threshold": …, "prompt": …, "rubric_prompt": …}`, each optional as the
//! type allows (`prompt` is the rendered prompt the model-graded types
//! quote). A missing or malformed part is an error verdict naming the key and
//! what to write.
//!
//! The host negates a `not_` verdict's pass; promptfoo's `not-` forms also
//! change the score (and some types ignore `not-`), so every verdict carries
//! promptfoo's own `not-` verdict in its extras as `"negated": {"pass",
//! "score"}`, which the host uses for `not_` keys.

mod graded;
mod js;
mod metrics;
mod rag;
mod schema;
mod text;
mod treebank;

use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use serde_json::json;

/// Every key, with what it checks.
pub const KEYS: &[(&str, &str)] = &[
    ("pf_equals", "promptfoo equals: the output is the value (or, for a JSON value, deep-equals it)"),
    ("pf_contains", "promptfoo contains: the output contains the value"),
    ("pf_icontains", "promptfoo icontains: the output contains the value, ignoring case"),
    ("pf_contains_any", "promptfoo contains-any: the output contains one of the values"),
    ("pf_contains_all", "promptfoo contains-all: the output contains every value"),
    ("pf_icontains_any", "promptfoo icontains-any: contains-any ignoring case"),
    ("pf_icontains_all", "promptfoo icontains-all: contains-all ignoring case"),
    ("pf_starts_with", "promptfoo starts-with: the output starts with the value"),
    ("pf_regex", "promptfoo regex: the output matches the JavaScript regular expression"),
    ("pf_is_json", "promptfoo is-json: the output is JSON (conforming to the schema in value, if any)"),
    ("pf_contains_json", "promptfoo contains-json: the output contains a JSON object (conforming to the schema)"),
    (
        "pf_is_valid_openai_tools_call",
        "promptfoo is-valid-openai-tools-call: the output is OpenAI tool calls (shape only)",
    ),
    (
        "pf_is_valid_openai_function_call",
        "promptfoo is-valid-openai-function-call: the output is a function call conforming to the provider's functions",
    ),
    ("pf_levenshtein", "promptfoo levenshtein: edit distance to the value at most the threshold (default 5)"),
    ("pf_rouge_n", "promptfoo rouge-n: ROUGE-1 F-score against the value at least the threshold (default 0.75)"),
    ("pf_bleu", "promptfoo bleu: BLEU-4 against the value(s) at least the threshold (default 0.5)"),
    ("pf_similar", "promptfoo similar: embedding cosine similarity at least the threshold (default 0.75)"),
    (
        "pf_select_best",
        "promptfoo select-best: the index of the output the judge picks (the host compares a test's outputs with it)",
    ),
    ("pf_llm_rubric", "promptfoo llm-rubric: the judge grades the output against the rubric"),
    (
        "pf_model_graded_closedqa",
        "promptfoo model-graded-closedqa: the judge decides whether the output meets the criterion",
    ),
    ("pf_factuality", "promptfoo factuality: the judge compares the output's facts with the reference answer"),
    (
        "pf_g_eval",
        "promptfoo g-eval: the judge writes evaluation steps for each criterion, then scores the output 0-10",
    ),
    (
        "pf_conversation_relevance",
        "promptfoo conversation-relevance: the judge decides whether each window's last answer is relevant",
    ),
    (
        "pf_answer_relevance",
        "promptfoo answer-relevance: questions the judge derives from the output are close to the query (embeddings)",
    ),
    (
        "pf_context_recall",
        "promptfoo context-recall: the judge attributes the expected answer's sentences to the context",
    ),
    ("pf_context_relevance", "promptfoo context-relevance: the share of the context the judge finds the query needs"),
    (
        "pf_context_faithfulness",
        "promptfoo context-faithfulness: the context supports the statements the judge finds in the output",
    ),
    ("pf_latency", "promptfoo latency: the response took at most threshold milliseconds"),
    ("pf_cost", "promptfoo cost: the response cost at most threshold"),
];

/// The outcome of one assertion as promptfoo gives it, for both forms.
#[derive(Clone, Debug, PartialEq)]
pub struct Graded {
    /// promptfoo's `pass` for the type.
    pub pass: bool,
    /// promptfoo's `score` for the type.
    pub score: f64,
    /// Why, for a person.
    pub reason: String,
    /// promptfoo's `pass` and `score` for the `not-` form.
    pub negated: (bool, f64),
}

impl Graded {
    /// A pass/fail type: score 1 or 0, and the `not-` form the opposite.
    fn binary(pass: bool, reason: impl Into<String>) -> Graded {
        Graded {
            pass,
            score: f64::from(u8::from(pass)),
            reason: reason.into(),
            negated: (!pass, f64::from(u8::from(!pass))),
        }
    }

    /// A scored type: passes when `score` reaches `threshold`; the `not-`
    /// form passes below it and scores `1 − score`.
    fn scored(score: f64, threshold: f64, name: &str) -> Graded {
        let pass = score >= threshold;
        let relation = if pass { "is at least" } else { "is below" };
        let shown = js::number_to_string(score);
        Graded {
            pass,
            score,
            reason: format!("{name} {shown} {relation} threshold {threshold}"),
            negated: (!pass, 1.0 - score),
        }
    }

    /// The verdict: assay's scores lie in 0..=1, so a score outside (a
    /// judge's `score: 1.7`, a cosine of `1.0000000000000002`) is clamped,
    /// and promptfoo's own number kept in the extras as `promptfoo_score`.
    fn verdict(self) -> Verdict {
        let (negated_pass, negated_score) = self.negated;
        let clamp = |score: f64| if score.is_nan() { 0.0 } else { score.clamp(0.0, 1.0) };
        let mut extras = json!({ "negated": { "pass": negated_pass, "score": clamp(negated_score) } });
        if clamp(self.score) != self.score {
            extras["promptfoo_score"] = json!(self.score);
        }
        if clamp(negated_score) != negated_score {
            extras["negated"]["promptfoo_score"] = json!(negated_score);
        }
        Verdict::new(self.pass, self.reason).with_score(clamp(self.score)).with_extras(extras)
    }
}

/// The parts of a `pf_*` expected value.
#[derive(Debug)]
pub struct Expected<'a> {
    key: &'a str,
    value: Option<&'a Json>,
    threshold: Option<f64>,
    prompt: Option<&'a str>,
    rubric_prompt: Option<&'a str>,
    /// `conversation-relevance`'s turns (a test's `_conversation`).
    conversation: Option<&'a Json>,
    /// `conversation-relevance`'s window (`config.windowSize`).
    window_size: Option<&'a Json>,
    /// `is-valid-openai-function-call`'s provider functions (`false`: a
    /// provider that cannot check calls).
    functions: Option<&'a Json>,
    /// The RAG types' query (the test's `query` var).
    query: Option<&'a str>,
    /// The RAG types' context (the test's `context` var: a text or texts).
    context: Option<&'a Json>,
}

impl<'a> Expected<'a> {
    /// Reads `{"value", "threshold", "prompt", "rubric_prompt"}` (and
    /// `conversation-relevance`'s `conversation` and `window_size`).
    fn parse(key: &'a str, expected: &'a Json) -> Result<Self, String> {
        let Json::Object(map) = expected else {
            return Err(format!(
                "{key} takes an object such as {{\"value\": …, \"threshold\": …}}, found {}",
                assay_plugin_sdk::params::describe(expected)
            ));
        };
        const KEYS: &[&str] = &[
            "value",
            "threshold",
            "prompt",
            "rubric_prompt",
            "conversation",
            "window_size",
            "functions",
            "query",
            "context",
        ];
        if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{key} does not take `{unknown}`: its object has value, threshold, prompt and rubric_prompt"
            ));
        }
        let threshold = match map.get("threshold") {
            None | Some(Json::Null) => None,
            Some(Json::Number(n)) => n.as_f64(),
            Some(other) => {
                return Err(format!(
                    "{key}'s threshold is a number, found {}",
                    assay_plugin_sdk::params::describe(other)
                ));
            }
        };
        let text = |name: &str| -> Result<Option<&'a str>, String> {
            match map.get(name) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::String(text)) => Ok(Some(text.as_str())),
                Some(other) => {
                    Err(format!("{key}'s {name} is a string, found {}", assay_plugin_sdk::params::describe(other)))
                }
            }
        };
        Ok(Expected {
            key,
            value: map.get("value").filter(|v| !v.is_null()),
            threshold,
            prompt: text("prompt")?,
            rubric_prompt: text("rubric_prompt")?,
            conversation: map.get("conversation").filter(|v| !v.is_null()),
            window_size: map.get("window_size").filter(|v| !v.is_null()),
            functions: map.get("functions").filter(|v| !v.is_null()),
            query: text("query")?,
            context: map.get("context").filter(|v| !v.is_null()),
        })
    }

    /// The value, or an error saying what to write.
    fn value(&self, what: &str) -> Result<&'a Json, String> {
        self.value.ok_or_else(|| format!("{} needs `value`: {what}", self.key))
    }

    /// The value as a string, or an error saying what to write.
    fn string(&self, what: &str) -> Result<&'a str, String> {
        match self.value {
            Some(Json::String(text)) => Ok(text),
            Some(other) => {
                Err(format!("{}'s value is {what}, found {}", self.key, assay_plugin_sdk::params::describe(other)))
            }
            None => Err(format!("{} needs `value`: {what}", self.key)),
        }
    }

    /// The threshold within `range`, or `default`.
    fn threshold_in(&self, range: std::ops::RangeInclusive<f64>, default: f64) -> Result<f64, String> {
        match self.threshold {
            None => Ok(default),
            Some(t) if range.contains(&t) => Ok(t),
            Some(t) => Err(format!(
                "{}'s threshold {t} is outside {}..={}: write a threshold in that range",
                self.key,
                range.start(),
                range.end()
            )),
        }
    }

    /// The required threshold (latency, cost), at least 0.
    fn required_threshold(&self, unit: &str) -> Result<f64, String> {
        match self.threshold {
            Some(t) if t >= 0.0 => Ok(t),
            Some(t) => Err(format!("{}'s threshold {t} is negative: write the most {unit} allowed", self.key)),
            None => Err(format!("{} needs `threshold`: the most {unit} allowed", self.key)),
        }
    }

    /// The RAG types' context, or an error saying where it comes from.
    fn context(&self) -> Result<rag::Context, String> {
        let context = self.context.ok_or_else(|| {
            format!("{} needs `context`: the test's `context` var, a text or a list of texts", self.key)
        })?;
        rag::Context::read(self.key, context)
    }

    /// The RAG types' query, or an error saying where it comes from.
    fn query(&self) -> Result<&'a str, String> {
        self.query.ok_or_else(|| format!("{} needs `query`: the test's `query` var, the user's question", self.key))
    }

    /// The rendered prompt the model-graded types quote.
    fn prompt(&self) -> Result<&'a str, String> {
        self.prompt.ok_or_else(|| format!("{} needs `prompt`: the rendered prompt the output answers", self.key))
    }
}

/// The promptfoo matcher.
pub struct Promptfoo;

impl Matcher for Promptfoo {
    fn describe() -> PluginInfo {
        KEYS.iter().fold(PluginInfo::new("promptfoo", env!("CARGO_PKG_VERSION")), |info, (key, summary)| {
            info.matcher(key, summary)
        })
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        if key == "pf_select_best" {
            return graded::select_best(key, expected);
        }
        Ok(evaluate(key, actual, expected)?.verdict())
    }
}

/// The output as promptfoo's `outputString`: a text as it is, anything else
/// as compact JSON.
fn output_string(actual: &Actual) -> Result<String, String> {
    match actual.as_str() {
        Some(text) => Ok(text.to_owned()),
        None => Ok(actual.as_json()?.to_string()),
    }
}

/// The measured number `pf_latency` and `pf_cost` check.
fn measured(key: &str, actual: &Actual) -> Result<f64, String> {
    let value = match actual.as_str() {
        Some(text) => serde_json::from_str(text).unwrap_or(Json::Null),
        None => actual.as_json()?.clone(),
    };
    value.as_f64().ok_or_else(|| format!("{key} checks a number (milliseconds or cost), found {}", actual.describe()))
}

/// One assertion of `key` on `actual`.
pub fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Graded, String> {
    let e = Expected::parse(key, expected)?;
    match key {
        "pf_latency" => {
            let threshold = e.required_threshold("milliseconds")?;
            let latency = measured(key, actual)?;
            return Ok(Graded::binary(
                latency <= threshold,
                format!("latency {latency} ms against threshold {threshold} ms"),
            ));
        }
        "pf_cost" => {
            let threshold = e.required_threshold("cost")?;
            let cost = measured(key, actual)?;
            return Ok(Graded::binary(cost <= threshold, format!("cost {cost} against threshold {threshold}")));
        }
        "pf_is_valid_openai_tools_call" => return Ok(text::tools_call(actual)),
        "pf_is_valid_openai_function_call" => return Ok(text::function_call(actual, e.functions)),
        _ => {}
    }
    let output = output_string(actual)?;
    let output = output.as_str();
    match key {
        "pf_equals" => text::equals(&e, output),
        "pf_contains" => text::contains(&e, output, false),
        "pf_icontains" => text::contains(&e, output, true),
        "pf_contains_any" => text::contains_some(&e, output, false, false),
        "pf_contains_all" => text::contains_some(&e, output, false, true),
        "pf_icontains_any" => text::contains_some(&e, output, true, false),
        "pf_icontains_all" => text::contains_some(&e, output, true, true),
        "pf_starts_with" => {
            let prefix = e.string("the prefix as a non-empty string")?;
            if prefix.is_empty() {
                return Err(format!("{key} needs a non-empty `value`: the prefix"));
            }
            Ok(Graded::binary(output.starts_with(prefix), format!("output starts with {prefix:?}")))
        }
        "pf_regex" => text::regex(&e, output),
        "pf_is_json" => text::is_json(&e, output),
        "pf_contains_json" => text::contains_json(&e, output),
        "pf_levenshtein" => {
            let reference = e.string("the reference text as a string")?;
            let threshold = e.threshold_in(0.0..=f64::MAX, 5.0)?;
            let distance = metrics::levenshtein(output, reference);
            Ok(Graded::binary(
                distance as f64 <= threshold,
                format!("Levenshtein distance {distance}, threshold {threshold}"),
            ))
        }
        "pf_rouge_n" => {
            let reference = e.string("the reference text as a string")?;
            let threshold = e.threshold_in(0.0..=1.0, 0.75)?;
            Ok(Graded::scored(
                metrics::rouge_n(&output.to_lowercase(), &reference.to_lowercase()),
                threshold,
                "ROUGE-N",
            ))
        }
        "pf_bleu" => {
            let references = e.value("the reference text, or a list of them")?;
            let references = strings(key, references, "the reference text, or a list of them")?;
            if references.is_empty() {
                return Err(format!("{key} needs at least one reference text in `value`"));
            }
            let threshold = e.threshold_in(0.0..=1.0, 0.5)?;
            Ok(Graded::scored(metrics::bleu(output, &references), threshold, "BLEU"))
        }
        "pf_similar" => {
            let values =
                strings(key, e.value("the text to compare with, or a list of them")?, "a text or a list of texts")?;
            if values.is_empty() {
                return Err(format!("{key} needs at least one text in `value`"));
            }
            let threshold = e.threshold_in(-1.0..=1.0, 0.75)?;
            graded::similar(key, output, &values, threshold)
        }
        "pf_llm_rubric" => {
            if let Some(t) = e.threshold {
                e.threshold_in(0.0..=1.0, t)?;
            }
            graded::llm_rubric(key, output, e.value, e.threshold, e.rubric_prompt)
        }
        "pf_model_graded_closedqa" => {
            let criteria = e.string("the criterion as a string")?;
            graded::closed_qa(key, e.prompt()?, criteria, output, e.rubric_prompt)
        }
        "pf_factuality" => {
            let ideal = e.string("the reference answer as a string")?;
            graded::factuality(key, e.prompt()?, ideal, output, e.rubric_prompt)
        }
        "pf_conversation_relevance" => {
            let threshold = e.threshold_in(0.0..=1.0, 0.5)?;
            // promptfoo's `windowSize || 5`.
            let window = match e.window_size {
                None => 5,
                Some(Json::Number(n)) if n.as_u64() == Some(0) => 5,
                Some(Json::Number(n)) if n.as_u64().is_some() => n.as_u64().map_or(5, |n| n as usize),
                Some(other) => return Err(format!("{key}'s windowSize is {other}, not a number of turns")),
            };
            graded::conversation_relevance(key, e.prompt()?, output, e.conversation, window, threshold)
        }
        "pf_g_eval" => {
            let criteria = strings(key, e.value("the criteria, or a list of them")?, "a text or a list of texts")?;
            let threshold = e.threshold_in(0.0..=1.0, 0.7)?;
            graded::g_eval(key, e.prompt.unwrap_or_default(), &criteria, output, threshold, e.rubric_prompt)
        }
        "pf_answer_relevance" => {
            let threshold = e.threshold_in(-1.0..=1.0, 0.5)?;
            let query = match e.query {
                Some(query) => query,
                None => e.prompt()?,
            };
            rag::answer_relevance(key, query, output, threshold, e.rubric_prompt)
        }
        "pf_context_recall" => {
            let ground_truth = e.string("the expected answer or fact, as a string")?;
            let threshold = e.threshold_in(0.0..=1.0, 0.5)?;
            // promptfoo falls back to the prompt where a test has no context.
            let context = match e.context {
                Some(Json::String(text)) if text.is_empty() => {
                    rag::Context::read(key, &Json::String(e.prompt()?.to_owned()))?
                }
                Some(_) => e.context()?,
                None => rag::Context::read(key, &Json::String(e.prompt()?.to_owned()))?,
            };
            rag::context_recall(key, &context, ground_truth, threshold, e.rubric_prompt)
        }
        "pf_context_relevance" => {
            let threshold = e.threshold_in(0.0..=1.0, 0.5)?;
            rag::context_relevance(key, e.query()?, &e.context()?, threshold, e.rubric_prompt)
        }
        "pf_context_faithfulness" => {
            let threshold = e.threshold_in(0.0..=1.0, 0.5)?;
            rag::context_faithfulness(key, e.query()?, output, &e.context()?, threshold, e.rubric_prompt)
        }
        other => Err(format!("the promptfoo plugin has no matcher `{other}`")),
    }
}

/// A string or a list of strings.
fn strings(key: &str, value: &Json, what: &str) -> Result<Vec<String>, String> {
    match value {
        Json::String(text) => Ok(vec![text.clone()]),
        Json::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    format!("{key}'s value is {what}, found an item {}", assay_plugin_sdk::params::describe(item))
                })
            })
            .collect(),
        other => Err(format!("{key}'s value is {what}, found {}", assay_plugin_sdk::params::describe(other))),
    }
}

export_matcher!(Promptfoo);
