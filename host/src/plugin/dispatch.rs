//! Dispatch: the checks on one response, evaluated with one batched call per
//! plugin, or, for a plugin that asks the judge, with calls made at once so
//! that its checks' requests overlap ([`overlapped`]). Targets are resolved here (a missing one fails without calling a
//! plugin), each distinct actual value is handed over once however many
//! checks read it, and negation is applied to the answers ([`verdict_of`]).

use crate::check::{Check, CheckResult, Outcome, Target, Verdict, actual_preview};
use crate::errors::ErrorKind;
use crate::plugin::matcher::{ActualValue, BatchOutput, CheckInput, Evaluation, EvaluationError};
use crate::plugin::registry::Registry;
use crate::sandbox::{Grader, LogLine};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The parts of an agent's response that checks look at.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResponseView<'a> {
    /// The answer's text.
    pub text: Option<&'a str>,
    /// Whether the text is the JSON of an answer that is not text: the
    /// `text` target is then that JSON value.
    pub text_is_json: bool,
    /// The returned sly_data.
    pub sly_data: Option<&'a Map<String, Value>>,
    /// The answer's structure.
    pub structure: Option<&'a Map<String, Value>>,
    /// How long the agent took to answer, in milliseconds, as a JSON
    /// number (the `latency_ms` target).
    pub latency_ms: Option<&'a Value>,
    /// What the answer cost, as a JSON number, when the connection reports
    /// it (the `cost` target).
    pub cost: Option<&'a Value>,
    /// When the case's time runs out: the judge and embeddings requests
    /// checks would make later are refused.
    pub until: Option<std::time::Instant>,
    /// The values derived from the answer ([`derive()`]): the
    /// [`Target::Derived`] targets, or the verdict of a check that reads
    /// one that could not be computed.
    pub derived: &'a [Result<Value, Verdict>],
}

/// Lines a plugin logged while evaluating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PluginLog {
    /// The plugin's name.
    pub plugin: String,
    /// The lines.
    pub lines: Vec<LogLine>,
    /// How many more were dropped by the cap.
    pub dropped: usize,
}

/// Evaluates `checks` against `response`: one `evaluate` call per plugin
/// (several at once for a plugin that asks the judge: [`overlapped`]).
/// Results come back in check order.
pub fn evaluate(
    checks: &[Check],
    response: &ResponseView<'_>,
    registry: &Registry,
) -> (Vec<CheckResult>, Vec<PluginLog>) {
    let mut results: Vec<Option<CheckResult>> = vec![None; checks.len()];
    // Resolve targets once each: target → index into `actuals`.
    let mut actual_index: HashMap<&Target, Option<usize>> = HashMap::new();
    let mut actuals: Vec<Found<'_>> = Vec::new();
    // Per plugin and grader: the check indices (checks with a grader of
    // their own are called apart, with its backends).
    let mut batches: Vec<(usize, Option<&Grader>, Vec<usize>)> = Vec::new();
    let plugins = registry.plugins();

    for (i, check) in checks.iter().enumerate() {
        let slot = *actual_index.entry(&check.target).or_insert_with(|| {
            find_actual(&check.target, response).map(|v| {
                actuals.push(v);
                actuals.len() - 1
            })
        });
        let Some(_) = slot else {
            results[i] = Some(without_actual(check, missing_verdict(&check.target, response)));
            continue;
        };
        let Some(plugin) = registry.plugin_for(&check.key) else {
            let message = format!("no loaded plugin provides the key `{}`", check.key);
            results[i] = Some(without_actual(check, Verdict::error(ErrorKind::UnknownKey, message)));
            continue;
        };
        let plugin_index = plugins.iter().position(|p| std::sync::Arc::ptr_eq(p, plugin)).expect("registered");
        let grader = check.grader.as_ref();
        match batches.iter_mut().find(|(p, g, _)| *p == plugin_index && *g == grader) {
            Some((_, _, members)) => members.push(i),
            None => batches.push((plugin_index, grader, vec![i])),
        }
    }

    // Text actuals cross as strings; everything else as JSON, serialized once.
    let serialized: Vec<Option<String>> = actuals
        .iter()
        .map(|found| match found {
            Found::Value(value) if !value.is_string() => Some(value.to_string()),
            _ => None,
        })
        .collect();
    let mut logs = Vec::new();
    for (plugin_index, grader, members) in batches {
        let plugin = &plugins[plugin_index];
        // One `evaluate` call on some of the batch's checks, with only the
        // actuals they read, renumbered.
        let call = |members: &[usize]| {
            let mut local: HashMap<usize, u32> = HashMap::new();
            let mut call_actuals: Vec<ActualValue<'_>> = Vec::new();
            let mut inputs = Vec::with_capacity(members.len());
            for &i in members {
                let check = &checks[i];
                let global = actual_index[&check.target].expect("resolved above");
                let local_index = *local.entry(global).or_insert_with(|| {
                    call_actuals.push(match (actuals[global], &serialized[global]) {
                        (Found::Text(text), _) => ActualValue::Text(text),
                        (Found::JsonText(json), _) => ActualValue::Json(json),
                        (Found::Value(Value::String(text)), _) => ActualValue::Text(text),
                        (_, Some(json)) => ActualValue::Json(json),
                        (Found::Value(_), None) => unreachable!("non-strings are serialized"),
                    });
                    (call_actuals.len() - 1) as u32
                });
                inputs.push(CheckInput {
                    key: &check.key,
                    actual: local_index,
                    expected: &check.expected,
                    expected_json: &check.expected_json,
                });
            }
            plugin.evaluate(&call_actuals, &inputs, registry.scope_of(plugin_index), grader, response.until)
        };
        let lanes = plugin.judge().map_or(1, |judge| judge.concurrency()).clamp(1, members.len());
        let outputs = in_lanes(checks, members, lanes, &call);
        for (members, output) in outputs {
            if !output.log.is_empty() || output.log_dropped > 0 {
                logs.push(PluginLog {
                    plugin: plugin.name().to_owned(),
                    lines: output.log,
                    dropped: output.log_dropped,
                });
            }
            for (&i, answer) in members.iter().zip(output.results) {
                let check = &checks[i];
                let global = actual_index[&check.target].expect("resolved above");
                results[i] = Some(CheckResult {
                    target: check.target.to_string(),
                    key: check.display_key(),
                    expected: check.expected.clone(),
                    actual: Some(preview(actuals[global])),
                    actual_is_answer: false,
                    verdict: verdict_of(answer, check.negated),
                    gate: check.gate,
                    line: check.line,
                });
            }
        }
    }
    // A passed check's line is noise in every results line: only the
    // checks someone will look for keep theirs.
    let results = results.into_iter().map(|result| {
        let mut result = result.expect("every check has a result");
        if result.verdict.passed() {
            result.line = None;
        }
        result
    });
    (results.collect(), logs)
}

/// The value of `response` that `target` names, if it has one.
fn find_actual<'r>(target: &Target, response: &ResponseView<'r>) -> Option<Found<'r>> {
    match target {
        Target::Text if response.text_is_json => response.text.map(Found::JsonText),
        Target::Text => response.text.map(Found::Text),
        Target::SlyData(path) => lookup(response.sly_data, path).map(Found::Value),
        Target::Structure(path) => lookup(response.structure, path).map(Found::Value),
        Target::Latency => response.latency_ms.map(Found::Value),
        Target::Cost => response.cost.map(Found::Value),
        Target::Derived(index) => response.derived.get(*index).and_then(|v| v.as_ref().ok()).map(Found::Value),
    }
}

/// The verdict of a check whose target `response` lacks: a failure naming
/// what is missing, or the error of the derived value it reads.
fn missing_verdict(target: &Target, response: &ResponseView<'_>) -> Verdict {
    match target {
        Target::Derived(index) => match response.derived.get(*index) {
            Some(Err(verdict)) => verdict.clone(),
            _ => Verdict::error(ErrorKind::Internal, format!("{target} was never computed")),
        },
        target => Verdict::fail(missing_message(target, response)),
    }
}

/// `check`'s result, decided without asking a plugin.
fn without_actual(check: &Check, verdict: Verdict) -> CheckResult {
    CheckResult {
        target: check.target.to_string(),
        key: check.display_key(),
        expected: check.expected.clone(),
        actual: None,
        actual_is_answer: false,
        line: check.line,
        verdict,
        gate: check.gate,
    }
}

/// A plugin's batch `members` of `checks`, answered by `call` in one call,
/// or over `lanes` calls at once for a plugin that asks the judge. Checks
/// alike (same key, target and expected value) share a lane: the later one
/// finds the earlier one's answer in the cache instead of asking the judge
/// again at the same moment.
fn in_lanes(
    checks: &[Check],
    members: Vec<usize>,
    lanes: usize,
    call: &(dyn Fn(&[usize]) -> BatchOutput + Sync),
) -> Vec<(Vec<usize>, BatchOutput)> {
    if lanes == 1 {
        let output = call(&members);
        return vec![(members, output)];
    }
    let mut alike: HashMap<(&str, &Target, &str), usize> = HashMap::new();
    let lane_of: Vec<usize> = members
        .iter()
        .map(|&i| {
            let check = &checks[i];
            let distinct = alike.len();
            *alike.entry((&check.key, &check.target, &check.expected_json)).or_insert(distinct) % lanes
        })
        .collect();
    overlapped(&members, &lane_of, lanes, call)
}

/// The values `derived` (a turn's derivations, in order) compute from
/// `response`: each its check's `value` extra, evaluated as a check is
/// (each may read the ones before it as [`Target::Derived`]); or, when it
/// cannot be computed, the error verdict the checks that read it get.
pub fn derive(
    derived: &[Check],
    response: &ResponseView<'_>,
    registry: &Registry,
) -> (Vec<Result<Value, Verdict>>, Vec<PluginLog>) {
    let mut values: Vec<Result<Value, Verdict>> = Vec::with_capacity(derived.len());
    let mut logs = Vec::new();
    for (index, check) in derived.iter().enumerate() {
        let view = ResponseView { derived: &values, ..*response };
        let what = format!("derived[{index}] (the value this check reads)");
        let (value, mut more) = compute(check, &view, registry, &what);
        logs.append(&mut more);
        values.push(value);
    }
    (values, logs)
}

/// The value `check` computes on `response` (its `value` extra, evaluated
/// as a check is), or the error verdict saying why there is none, which
/// names it `what`.
pub fn compute(
    check: &Check,
    response: &ResponseView<'_>,
    registry: &Registry,
    what: &str,
) -> (Result<Value, Verdict>, Vec<PluginLog>) {
    let (mut results, logs) = evaluate(std::slice::from_ref(check), response, registry);
    let Some(result) = results.pop() else { unreachable!("one result per check") };
    let value = computed_value(result.verdict).map_err(|verdict| {
        let why = match verdict.outcome {
            Outcome::Pass if verdict.truncated => format!("its value was cut by a cap: {}", verdict.message),
            Outcome::Pass => format!("`{}` gave no value: {}", check.key, verdict.message),
            _ => verdict.message.clone(),
        };
        let kind = verdict.error_kind.unwrap_or(ErrorKind::BadAnswer);
        Verdict::error(kind, format!("{what} failed: {why}"))
    });
    (value, logs)
}

/// The value a computing check's verdict carries (its `value` extra), or
/// the verdict when it carries none: it did not pass, a cap cut its
/// extras, or it passed without a value (`undefined`).
pub fn computed_value(mut verdict: Verdict) -> Result<Value, Verdict> {
    let value = match verdict.outcome {
        Outcome::Pass if !verdict.truncated => {
            verdict.extras.as_mut().and_then(|extras| extras.get_mut("value")).map(Value::take)
        }
        _ => None,
    };
    value.ok_or(verdict)
}

/// The checks of a plugin that asks the judge, dealt into `lanes` calls
/// (`members[k]` into lane `lane_of[k]`) made at once, each on a thread of
/// its own from this blocking thread's scope, each with its own instance
/// from the plugin's pool: their judge requests overlap instead of waiting
/// on one another (a plugin asks the judge once per check, in turn, within
/// one call). Each call keeps the per-check cap of capability calls and its
/// own deadline; the judge's semaphore bounds the requests in flight.
fn overlapped(
    members: &[usize],
    lane_of: &[usize],
    lanes: usize,
    call: &(dyn Fn(&[usize]) -> BatchOutput + Sync),
) -> Vec<(Vec<usize>, BatchOutput)> {
    let mut dealt: Vec<Vec<usize>> = vec![Vec::new(); lanes];
    for (&i, &lane) in members.iter().zip(lane_of) {
        dealt[lane].push(i);
    }
    dealt.retain(|lane| !lane.is_empty());
    std::thread::scope(|scope| {
        let (first, rest) = dealt.split_first().expect("at least one lane");
        let others: Vec<_> = rest.iter().map(|lane| scope.spawn(move || call(lane))).collect();
        let mut outputs = vec![call(first)];
        // A panic in a lane (a bug, or an embedder's judge with one) goes
        // on up, as it would from a single call.
        outputs.extend(others.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))));
        dealt.iter().cloned().zip(outputs).collect()
    })
}

/// One check of `key` (`not_` forms included) on `actual`, exactly as a
/// test case's would be: through the plugin that owns the key, negated by
/// the host. `Err` when no loaded plugin provides the key, with the nearest
/// known key.
pub fn evaluate_one(registry: &Registry, key: &str, actual: &Value, expected: &Value) -> Result<Verdict, UnknownKey> {
    let lowercase = key.to_ascii_lowercase();
    let (base, negated) = match lowercase.strip_prefix("not_") {
        Some(base) if registry.has_key(base) => (base, true),
        _ => (lowercase.as_str(), false),
    };
    let Some(plugin) = registry.plugin_for(base) else {
        return Err(UnknownKey { key: key.to_owned(), suggestion: registry.suggest(&lowercase) });
    };
    let index = registry.plugins().iter().position(|p| std::sync::Arc::ptr_eq(p, plugin)).expect("registered");
    let actual_json = actual.to_string();
    let actual_value = match actual {
        Value::String(text) => ActualValue::Text(text),
        _ => ActualValue::Json(&actual_json),
    };
    let expected_json = expected.to_string();
    let check = CheckInput { key: base, actual: 0, expected, expected_json: &expected_json };
    let mut output = plugin.evaluate(&[actual_value], &[check], registry.scope_of(index), None, None);
    Ok(verdict_of(output.results.remove(0), negated))
}

/// A key no loaded plugin provides.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown matcher key `{key}`{}", suggestion.as_ref().map(|s| format!(": did you mean `{s}`?")).unwrap_or_default())]
pub struct UnknownKey {
    /// The key as given.
    pub key: String,
    /// The nearest known key.
    pub suggestion: Option<String>,
}

/// The verdict of a plugin's answer with the host's rules applied:
/// `negated` inverts a pass or fail, unless the plugin stated its own
/// negated verdict (see [`declared_negation`]); a rejection or fault is an
/// error either way.
pub fn verdict_of(answer: Result<Evaluation, EvaluationError>, negated: bool) -> Verdict {
    match answer {
        Ok(evaluation) => {
            let (pass, score, message) = match negated.then(|| declared_negation(evaluation.extras.as_ref())).flatten()
            {
                Some((pass, score, reason)) => (pass, score, reason.unwrap_or(evaluation.message)),
                None => (evaluation.pass != negated, evaluation.score, evaluation.message),
            };
            Verdict {
                outcome: if pass { Outcome::Pass } else { Outcome::Fail },
                score,
                message,
                extras: evaluation.extras,
                error_kind: None,
                truncated: evaluation.truncated,
            }
        }
        Err(error) => {
            let kind = match &error {
                EvaluationError::Rejected(_) => ErrorKind::Rejected,
                EvaluationError::Fault { fault, .. } => fault.kind(),
                EvaluationError::Unavailable { .. } => ErrorKind::Load,
            };
            Verdict::error(kind, error.to_string())
        }
    }
}

/// The negated verdict a plugin stated in its extras as `"negated": {"pass":
/// bool, "score": number, "reason": string}` (`reason` optional: the
/// message of the negated verdict, when it differs), for plugins whose
/// negation is not a plain inversion (the `promptfoo` plugin reproduces
/// promptfoo's `not-` forms, which invert scores and, for some types,
/// ignore the negation; the `javascript` plugin gives promptfoo's reasons
/// of both forms).
fn declared_negation(extras: Option<&Value>) -> Option<(bool, Option<f64>, Option<String>)> {
    let declared = extras?.get("negated")?;
    let reason = declared.get("reason").and_then(Value::as_str).map(str::to_owned);
    Some((declared.get("pass")?.as_bool()?, declared.get("score").and_then(Value::as_f64), reason))
}

/// A resolved target: the response text, or a value inside sly_data or
/// structure.
#[derive(Clone, Copy)]
enum Found<'a> {
    Text(&'a str),
    /// Text that is JSON, handed to plugins as a JSON value.
    JsonText(&'a str),
    Value(&'a Value),
}

/// The value at `path` inside `root`.
fn lookup<'a>(root: Option<&'a Map<String, Value>>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = root?.get(first)?;
    for key in rest {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

/// Says exactly what is missing: the whole part, or which key and what the
/// parent holds instead.
fn missing_message(target: &Target, response: &ResponseView<'_>) -> String {
    let (root_name, root, path) = match target {
        Target::Text => return "the response has no text".to_owned(),
        Target::Latency => return "the interaction has no latency recorded".to_owned(),
        Target::Cost => {
            return "the connection reports no cost for the answer (only token usage, where it reports that)"
                .to_owned();
        }
        Target::Derived(_) => return format!("{target} was never computed"),
        Target::SlyData(path) => ("sly_data", response.sly_data, path),
        Target::Structure(path) => ("structure", response.structure, path),
    };
    let Some(mut map) = root else {
        return format!("{target} is missing: the response has no {root_name}");
    };
    let mut walked = root_name.to_owned();
    for key in path {
        match map.get(key) {
            Some(Value::Object(inner)) => {
                walked = format!("{walked}.{key}");
                map = inner;
            }
            Some(other) => {
                return format!(
                    "{target} is missing: {walked}.{key} is {}, not a dictionary",
                    crate::errors::describe_json(other)
                );
            }
            None => {
                let keys: Vec<&str> = map.keys().map(String::as_str).take(10).collect();
                let holds = if keys.is_empty() { "nothing".to_owned() } else { keys.join(", ") };
                return format!("{target} is missing: {walked} has no key `{key}` (it has {holds})");
            }
        }
    }
    format!("{target} is missing")
}

/// A short rendering of an actual value: strings as they are, anything else
/// as JSON, cut to a readable length.
fn preview(found: Found<'_>) -> String {
    match found {
        Found::Text(text) | Found::JsonText(text) => actual_preview(text).into_owned(),
        Found::Value(Value::String(text)) => actual_preview(text).into_owned(),
        Found::Value(other) => actual_preview(&other.to_string()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Fault;
    use serde_json::json;
    use std::time::Duration;

    fn evaluation(pass: bool) -> Evaluation {
        Evaluation { pass, score: Some(0.25), message: "m".into(), extras: None, truncated: false }
    }

    #[test]
    fn negation_inverts_pass_and_fail_only() {
        assert_eq!(verdict_of(Ok(evaluation(true)), false).outcome, Outcome::Pass);
        assert_eq!(verdict_of(Ok(evaluation(true)), true).outcome, Outcome::Fail);
        assert_eq!(verdict_of(Ok(evaluation(false)), true).outcome, Outcome::Pass);
        assert_eq!(verdict_of(Ok(evaluation(false)), true).score, Some(0.25));
        // A plugin's own negated verdict wins, with its own reason if it
        // gives one.
        let declared = |negated: Value| Evaluation { extras: Some(json!({ "negated": negated })), ..evaluation(true) };
        let verdict = verdict_of(Ok(declared(json!({"pass": true, "score": 0.5, "reason": "not so"}))), true);
        assert_eq!((verdict.outcome, verdict.score, verdict.message.as_str()), (Outcome::Pass, Some(0.5), "not so"));
        let verdict = verdict_of(Ok(declared(json!({"pass": false, "score": 0.0}))), true);
        assert_eq!((verdict.outcome, verdict.message.as_str()), (Outcome::Fail, "m"));
        assert_eq!(verdict_of(Ok(declared(json!({"pass": false, "reason": "x"}))), false).message, "m");
        let rejected = verdict_of(Err(EvaluationError::Rejected("bad".into())), true);
        assert_eq!(
            (rejected.outcome, rejected.error_kind, rejected.message.as_str()),
            (Outcome::Error, Some(ErrorKind::Rejected), "bad")
        );
        let fault = EvaluationError::Fault { plugin: "p".into(), fault: Fault::Deadline(Duration::from_secs(2)) };
        let faulted = verdict_of(Err(fault), true);
        assert_eq!(faulted.outcome, Outcome::Error);
        assert_eq!(faulted.error_kind, Some(ErrorKind::Deadline));
        assert_eq!(faulted.message, "plugin `p` exceeded its deadline of 2000 ms and was stopped");
    }

    #[test]
    fn derived_values_chain_and_a_failed_one_is_the_error_of_the_checks_that_read_it() {
        let runtime = crate::sandbox::Runtime::default();
        let mut registry = Registry::with_builtins(&runtime).unwrap();
        registry.add_builtin(&runtime, &crate::plugin::JAVASCRIPT_PLUGIN, &Default::default()).unwrap();
        let transform = |code: &str| json!({"mode": "transform", "code": code, "input": "output", "args": [{}]});
        let derived = [
            Check::new("pf_js_value", Target::Text, transform("JSON.parse(output)")),
            Check::new("pf_js_value", Target::Derived(0), transform("output.items.length")),
            Check::new("pf_js_value", Target::Text, transform("output.missing.field")),
            // A plugin that passes but gives no value.
            Check::new("keywords", Target::Text, json!("items")),
        ];
        let response = ResponseView { text: Some(r#"{"items": [1, 2, 3]}"#), ..Default::default() };
        let (values, _) = derive(&derived, &response, &registry);
        assert_eq!(values[0].as_ref().unwrap(), &json!({"items": [1, 2, 3]}));
        assert_eq!(values[1].as_ref().unwrap(), &json!(3));
        let failed = values[2].as_ref().unwrap_err();
        assert_eq!(failed.outcome, Outcome::Error);
        assert!(
            failed.message.starts_with("derived[2] (the value this check reads) failed: TypeError"),
            "{}",
            failed.message
        );
        let no_value = &values[3].as_ref().unwrap_err().message;
        assert!(no_value.contains("`keywords` gave no value"), "{no_value}");
        let checks = [
            Check::new("value", Target::Derived(1), json!(3)),
            Check::new("keywords", Target::Derived(0), json!("items")),
            Check::new("value", Target::Derived(2), json!(1)),
            Check::new("value", Target::Derived(9), json!(1)),
        ];
        let view = ResponseView { derived: &values, ..response };
        let (results, _) = evaluate(&checks, &view, &registry);
        let lines: Vec<String> = results
            .iter()
            .map(|r| {
                let outcome = format!("{:?}", r.verdict.outcome).to_lowercase();
                format!("{outcome} {} {}: {}", r.target, r.key, r.verdict.message)
            })
            .collect();
        assert_eq!(lines[0], "pass derived[1] value: 3 equals 3");
        assert!(lines[1].starts_with("pass derived[0] keywords"), "{}", lines[1]);
        assert!(
            lines[2].starts_with("error derived[2] value: derived[2] (the value this check reads) failed: TypeError"),
            "{}",
            lines[2]
        );
        assert_eq!(lines[3], "error derived[9] value: derived[9] was never computed");
    }
}
