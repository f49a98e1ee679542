//! Checks on demand: `POST /v1/check`, a batch of checks → their verdicts,
//! each as `assay check --json` prints it (both call
//! [`evaluate_one`] and answer with [`Verdict::answer`]); and `POST
//! /v1/promptfoo/webhook`, one check in the shape of promptfoo's `webhook`
//! assertion. The guest calls run on blocking threads.

use crate::check::Verdict;
use crate::plugin::evaluate_one;
use crate::serve::body::JsonBody;
use crate::serve::error::{ApiError, blocking, blocking_while_wanted, json_response};
use crate::serve::{AppState, Shared};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// `POST /v1/check`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckBatch {
    /// The checks, evaluated in order.
    checks: Vec<CheckRequest>,
}

/// One check: the arguments of `assay check`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckRequest {
    /// The assertion key (`not_KEY` negates).
    key: String,
    /// The actual value: a string is text, anything else JSON.
    actual: Value,
    /// The expected value.
    expected: Value,
}

/// `POST /v1/check`: `{"verdicts": [...]}`, one per check in order; an
/// unknown key is a 400 naming the check.
pub async fn check(
    State(shared): State<AppState>,
    JsonBody(batch): JsonBody<CheckBatch>,
) -> Result<Response, ApiError> {
    let work = shared.clone();
    let verdicts = blocking_while_wanted(move |given_up| {
        // Each request counts its plugins' faults on its own: one client
        // cannot disable a plugin for the others.
        let registry = &work.registry.for_new_scope();
        batch
            .checks
            .iter()
            .enumerate()
            .map(|(i, check)| {
                // A request given up (504) stops between checks.
                if given_up.load(Ordering::Relaxed) {
                    return Err(ApiError::new(StatusCode::GATEWAY_TIMEOUT, "evaluate: the request was given up"));
                }
                evaluate_one(registry, &check.key, &check.actual, &check.expected)
                    .map_err(|e| ApiError::bad_request(format!("evaluate `checks[{i}]`: {e}")))
            })
            .collect::<Result<Vec<Verdict>, ApiError>>()
    })
    .await??;
    let answers: Vec<_> = verdicts.iter().map(Verdict::answer).collect();
    json_response(&shared.redactor, &serde_json::json!({ "verdicts": answers }))
}

/// What promptfoo's `webhook` assertion posts: the output, and the test's
/// vars in `context`.
#[derive(Debug, Deserialize)]
pub struct WebhookBody {
    output: Value,
    #[serde(default)]
    context: WebhookContext,
}

#[derive(Debug, Default, Deserialize)]
struct WebhookContext {
    #[serde(default)]
    vars: Map<String, Value>,
}

/// The webhook's query: which check to run.
#[derive(Debug, Deserialize)]
pub struct WebhookQuery {
    key: Option<String>,
    /// The expected value as JSON text.
    expected: Option<String>,
}

/// The var naming the check's key, when the URL does not.
pub const KEY_VAR: &str = "assay_key";
/// The var holding the expected value, when the URL does not.
pub const EXPECTED_VAR: &str = "assay_expected";

/// `POST /v1/promptfoo/webhook?key=KEY&expected=JSON`: `{"pass", "score",
/// "reason"}`, as promptfoo expects. The key and expected value come from
/// the query, else from the vars `assay_key` and `assay_expected`. A check
/// that cannot run (no key, an unknown one) answers `pass: false` with the
/// reason, which promptfoo shows; a body not in promptfoo's shape is a 400.
pub async fn promptfoo_webhook(
    State(shared): State<AppState>,
    Query(query): Query<WebhookQuery>,
    JsonBody(body): JsonBody<WebhookBody>,
) -> Result<Response, ApiError> {
    let answer = match webhook_check(query, body) {
        Ok((key, actual, expected)) => {
            let work: Arc<Shared> = shared.clone();
            let verdict =
                blocking(move || evaluate_one(&work.registry.for_new_scope(), &key, &actual, &expected)).await?;
            match verdict {
                Ok(verdict) => {
                    let pass = verdict.passed();
                    let score = verdict.score.unwrap_or(if pass { 1.0 } else { 0.0 });
                    serde_json::json!({ "pass": pass, "score": score, "reason": verdict.message })
                }
                Err(unknown) => refusal(format!("evaluate: {unknown}")),
            }
        }
        Err(reason) => refusal(reason),
    };
    json_response(&shared.redactor, &answer)
}

fn refusal(reason: String) -> Value {
    serde_json::json!({ "pass": false, "score": 0.0, "reason": format!("assay could not {reason}") })
}

/// The key, actual and expected value of a webhook's check, or why there
/// is none.
fn webhook_check(query: WebhookQuery, body: WebhookBody) -> Result<(String, Value, Value), String> {
    let mut vars = body.context.vars;
    let key = match (query.key, vars.remove(KEY_VAR)) {
        (Some(key), _) | (None, Some(Value::String(key))) => key,
        (None, Some(other)) => return Err(format!("use the var `{KEY_VAR}` as a key: it is {other}, not a string")),
        (None, None) => {
            return Err(format!(
                "tell which check to run: add `?key=KEY` to the webhook's URL, or the var `{KEY_VAR}`"
            ));
        }
    };
    let expected = match (query.expected, vars.remove(EXPECTED_VAR)) {
        (Some(text), _) => serde_json::from_str(&text)
            .map_err(|e| format!("read `expected` in the webhook's URL: it is not JSON ({e}); quote a string"))?,
        (None, Some(expected)) => expected,
        (None, None) => {
            return Err(format!(
                "tell what to expect: add `&expected=JSON` to the webhook's URL, or the var `{EXPECTED_VAR}`"
            ));
        }
    };
    Ok((key, body.output, expected))
}
