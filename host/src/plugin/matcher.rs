//! One loaded matcher plugin: hosted by the sandbox's component host
//! (compiled, checked against its grants, pooled), described, and evaluated
//! in batches, its verdicts held to the output caps. An instance that
//! faults is discarded, never re-entered; a plugin that faults too often in
//! a row is disabled for the scope whose [`FaultStreak`] counted them. A
//! plugin built against `assay:plugin@0.1.0`, `@0.2.0` or `@0.3.0` is
//! called the same way: the sandbox's `Matcher` calls the version it
//! exports, and its extras (JSON text, or a typed value) are read here.

use crate::errors::{ComponentLoadError, ComponentLoadErrorKind, ComponentRole, Fault};
use crate::plugin::scope::{FaultStreak, PluginScope};
use crate::sandbox::bindings::matcher_types as wit;
use crate::sandbox::host::log::{LogLine, truncate_at_char};
use crate::sandbox::{
    self, Answer, CacheStatus, CheckArg, ComponentHost, ComponentOptions, ComponentSource, Extras, Grader, Logged,
    Matcher, Runtime,
};
use std::fmt;

/// One key a plugin implements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatcherKey {
    /// The key, e.g. `keywords`.
    pub key: String,
    /// One line saying what it checks.
    pub summary: String,
}

/// An actual value handed to a plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActualValue<'a> {
    /// A plain string, passed without JSON encoding.
    Text(&'a str),
    /// Any other value, as JSON text.
    Json(&'a str),
}

/// One check handed to a plugin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CheckInput<'a> {
    /// The key, lowercase, without `not_`.
    pub key: &'a str,
    /// Index into the batch's actual values.
    pub actual: u32,
    /// The expected value.
    pub expected: &'a serde_json::Value,
    /// The same as JSON text (what plugins of `assay:plugin@0.2.0` and
    /// `@0.1.0` are given).
    pub expected_json: &'a str,
}

/// A plugin's answer for one check, after the host's output caps.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Whether the check holds (before any negation).
    pub pass: bool,
    /// The plugin's score, if any: a number in [0, 1] (any other score is a
    /// malformed answer).
    pub score: Option<f64>,
    /// The plugin's message, cut to the message cap.
    pub message: String,
    /// The plugin's extras, if any and within the extras cap.
    pub extras: Option<serde_json::Value>,
    /// Whether the message or extras were cut by a cap.
    pub truncated: bool,
}

/// Why a plugin gave no evaluation for a check.
#[derive(Clone, Debug, PartialEq)]
pub enum EvaluationError {
    /// The plugin said the check cannot be evaluated (type mismatch, bad
    /// parameter, missing capability), with its message.
    Rejected(String),
    /// The call faulted; every check of the batch gets the same fault.
    Fault {
        /// The plugin's name.
        plugin: String,
        /// What happened.
        fault: Fault,
    },
    /// The plugin could not be loaded when its first check ran (it is
    /// compiled on first use); every check handed to it gets this.
    Unavailable {
        /// The plugin's name.
        plugin: String,
        /// The load error.
        cause: String,
    },
}

impl fmt::Display for EvaluationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvaluationError::Rejected(message) => f.write_str(message),
            EvaluationError::Fault { plugin, fault } => write!(f, "plugin `{plugin}` {fault}"),
            EvaluationError::Unavailable { plugin, cause } => {
                write!(f, "plugin `{plugin}` could not be loaded: {cause}")
            }
        }
    }
}

/// The answers for one batch, in check order, plus what the plugin logged.
#[derive(Debug)]
pub struct BatchOutput {
    /// One result per check.
    pub results: Vec<Result<Evaluation, EvaluationError>>,
    /// The lines the plugin logged during the call.
    pub log: Vec<LogLine>,
    /// How many log lines the cap dropped.
    pub log_dropped: usize,
}

/// A loaded matcher plugin.
pub struct MatcherPlugin {
    name: String,
    version: String,
    keys: Vec<MatcherKey>,
    source: ComponentSource,
    host: ComponentHost<Matcher>,
}

impl fmt::Debug for MatcherPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MatcherPlugin").field("name", &self.name).field("source", &self.source).finish_non_exhaustive()
    }
}

impl MatcherPlugin {
    /// Loads a component: verifies its pin, compiles it, checks its imports
    /// against its grants, instantiates it once and asks it to describe
    /// itself.
    pub fn load(
        runtime: &Runtime,
        source: ComponentSource,
        bytes: &[u8],
        options: ComponentOptions,
    ) -> Result<MatcherPlugin, ComponentLoadError> {
        let fail = |kind| ComponentLoadError { role: ComponentRole::Plugin, component: source.to_string(), kind };
        let host = ComponentHost::<Matcher>::load(runtime, &source, bytes, options)?;
        let info = host
            .call(host.limits().deadline, async |bindings, store| bindings.describe(store).await)
            .map_err(|fault| fail(ComponentLoadErrorKind::Describe(fault)))?;
        validate_info(&info).map_err(|e| fail(ComponentLoadErrorKind::BadDescription(e)))?;
        Ok(MatcherPlugin {
            name: info.name,
            version: info.version,
            keys: info.matchers.into_iter().map(|m| MatcherKey { key: m.key, summary: m.summary }).collect(),
            source,
            host,
        })
    }

    /// The capabilities its imports ask for (`log`, `judge`,
    /// `embeddings`): what `[plugins.NAME] grants` must allow.
    pub fn requested_grants(&self) -> &[&'static str] {
        self.host.requested_grants()
    }

    /// The name the plugin gave itself.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version the plugin gave itself.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The keys it implements.
    pub fn keys(&self) -> &[MatcherKey] {
        &self.keys
    }

    /// Where it came from.
    pub fn source(&self) -> &ComponentSource {
        &self.source
    }

    /// The sha256 of its component bytes (lowercase hex).
    pub fn sha256(&self) -> &str {
        self.host.sha256()
    }

    /// Whether it was compiled or loaded from the compile cache.
    pub fn cache_status(&self) -> CacheStatus {
        self.host.cache_status()
    }

    /// The options it was loaded with.
    pub fn options(&self) -> &ComponentOptions {
        self.host.options()
    }

    /// Evaluates one batch. Never fails as a whole: a fault becomes an error
    /// for every check of the batch, naming the plugin and the cause, and
    /// the faulted instance is discarded. `scope` is the plugin's part of
    /// the caller's scope (a run, a request): its fault streak is told the
    /// outcome (once it has counted too many faults in a row the plugin is
    /// not called), and the judge and embeddings requests the call makes
    /// count against its spend. With a `grader`, those requests go to its
    /// backends instead of the plugin's own. After `until` (the case's
    /// deadline), the call's judge and embeddings requests are refused.
    pub fn evaluate(
        &self,
        actuals: &[ActualValue<'_>],
        checks: &[CheckInput<'_>],
        scope: &PluginScope,
        grader: Option<&Grader>,
        until: Option<std::time::Instant>,
    ) -> BatchOutput {
        let limits = self.host.limits();
        let streak: &FaultStreak = &scope.streak;
        if let Some(faults) = streak.disabled(limits.max_consecutive_faults) {
            return self.all_faulted(checks.len(), Fault::Disabled(faults), Vec::new(), 0);
        }
        let input_bytes = actuals.iter().map(|a| match a {
            ActualValue::Text(text) | ActualValue::Json(text) => text.len(),
        });
        let input_bytes = input_bytes.sum::<usize>() + checks.iter().map(|c| c.expected_json.len()).sum::<usize>();
        let wit_actuals: Vec<wit::Actual<'_>> = actuals
            .iter()
            .map(|a| match *a {
                ActualValue::Text(text) => wit::Actual::Text(text),
                ActualValue::Json(json) => wit::Actual::Json(json),
            })
            .collect();
        let check_args: Vec<CheckArg<'_>> = checks
            .iter()
            .map(|c| CheckArg { key: c.key, actual: c.actual, expected: c.expected, expected_json: c.expected_json })
            .collect();
        let calls = limits.capability_calls_per_check.saturating_mul(u32::try_from(checks.len()).unwrap_or(u32::MAX));
        let capabilities = grader.map(|grader| &grader.capabilities);
        let Logged { answer, log, log_dropped } = self.host.call_logged(
            limits.deadline,
            calls,
            until,
            &scope.spend,
            capabilities,
            async |bindings, store| {
                let verdicts = bindings.evaluate(store, &wit_actuals, &check_args).await?;
                if verdicts.len() != checks.len() {
                    let count = format!("it returned {} results for {} checks", verdicts.len(), checks.len());
                    return Err(wasmtime::Error::new(Fault::BadAnswer(count)));
                }
                Ok(verdicts)
            },
        );
        let verdicts = match answer {
            Ok(verdicts) => verdicts,
            Err(fault) => {
                streak.faulted(input_bytes);
                return self.all_faulted(checks.len(), fault, log, log_dropped);
            }
        };
        streak.answered(input_bytes);
        let results =
            verdicts.into_iter().map(|v| v.map_err(|e| self.cap_rejection(e)).and_then(|v| self.cap(v))).collect();
        BatchOutput { results, log, log_dropped }
    }

    fn all_faulted(&self, count: usize, fault: Fault, log: Vec<LogLine>, log_dropped: usize) -> BatchOutput {
        let error = EvaluationError::Fault { plugin: self.name.clone(), fault };
        BatchOutput { results: vec![Err(error); count], log, log_dropped }
    }

    /// Applies the output caps to a verdict; a score that is not a number
    /// in [0, 1] makes it a malformed answer.
    fn cap(&self, verdict: Answer) -> Result<Evaluation, EvaluationError> {
        if let Some(score) = verdict.score
            && !(0.0..=1.0).contains(&score)
        {
            let fault = Fault::BadAnswer(format!("its score {score} is not a number between 0 and 1"));
            return Err(EvaluationError::Fault { plugin: self.name.clone(), fault });
        }
        let limits = self.host.limits();
        let mut message = verdict.message;
        let mut truncated = truncate_at_char(&mut message, limits.max_message_bytes);
        if truncated {
            message.push_str(" … [message truncated by assay]");
        }
        let size = match &verdict.extras {
            Some(Extras::Json(json)) => json.len(),
            Some(Extras::Nodes(nodes)) => sandbox::value_size(nodes),
            None => 0,
        };
        let extras = match verdict.extras {
            Some(_) if size > limits.max_extras_bytes => {
                truncated = true;
                message.push_str(&format!(
                    " [extras of {size} bytes dropped: the limit is {} bytes]",
                    limits.max_extras_bytes
                ));
                None
            }
            Some(Extras::Json(json)) => match serde_json::from_str(&json) {
                Ok(value) if sandbox::depth_of(&value) > sandbox::MAX_EXTRAS_DEPTH => {
                    let depth = sandbox::MAX_EXTRAS_DEPTH;
                    message.push_str(&format!(" [extras dropped: nested deeper than {depth} lists and objects]"));
                    None
                }
                Ok(value) => Some(value),
                Err(e) => {
                    message.push_str(&format!(" [extras dropped: not valid JSON: {e}]"));
                    None
                }
            },
            Some(Extras::Nodes(nodes)) => match sandbox::value_of(nodes) {
                Ok(value) => Some(value),
                Err(e) => {
                    message.push_str(&format!(" [extras dropped: not a well-formed value: {e}]"));
                    None
                }
            },
            None => None,
        };
        Ok(Evaluation { pass: verdict.pass, score: verdict.score, message, extras, truncated })
    }

    fn cap_rejection(&self, mut message: String) -> EvaluationError {
        if truncate_at_char(&mut message, self.host.limits().max_message_bytes) {
            message.push_str(" … [message truncated by assay]");
        }
        EvaluationError::Rejected(message)
    }
}

/// Checks what `describe()` returned.
fn validate_info(info: &wit::PluginInfo) -> Result<(), String> {
    if info.name.trim().is_empty() {
        return Err("the plugin's name is empty".into());
    }
    if info.matchers.is_empty() {
        return Err("it declares no matcher keys".into());
    }
    let mut seen = std::collections::HashSet::new();
    for matcher in &info.matchers {
        let key = matcher.key.as_str();
        let well_formed = key.starts_with(|c: char| c.is_ascii_lowercase())
            && key.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            return Err(format!(
                "the key `{key}` is not lowercase ASCII letters, digits and `_` starting with a letter"
            ));
        }
        if key.starts_with("not_") {
            return Err(format!("the key `{key}` starts with `not_`: the host derives every `not_` form itself"));
        }
        if !seen.insert(key) {
            return Err(format!("it declares the key `{key}` twice"));
        }
    }
    Ok(())
}
