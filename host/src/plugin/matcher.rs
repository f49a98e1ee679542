//! One loaded matcher plugin: compiled, checked against its grants,
//! described, and evaluated in batches on a pool of reusable instances. An
//! instance that faults is discarded, never re-entered.

use crate::errors::{ComponentLoadError, ComponentLoadErrorKind, ComponentRole, Fault};
use crate::plugin::bindings::matcher::assay::plugin::types as wit;
use crate::plugin::bindings::matcher::{CapableMatcherPlugin, CapableMatcherPluginPre};
use crate::plugin::cache::CacheStatus;
use crate::plugin::engine::Runtime;
use crate::plugin::host::Capabilities;
use crate::plugin::host::log::{LogLine, truncate_at_char};
use crate::plugin::instances::{InstanceSettings, Instances, PrepareError, World};
use crate::plugin::policy::{self, Grants};
use crate::plugin::sandbox::{CallBudget, Limits, SandboxState};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use wasmtime::Store;
use wasmtime::component::{HasSelf, InstancePre, Linker};

/// Where a plugin came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginSource {
    /// Embedded in the assay binary.
    Builtin(&'static str),
    /// Loaded from a file.
    File(PathBuf),
}

impl fmt::Display for PluginSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginSource::Builtin(name) => write!(f, "built-in `{name}`"),
            PluginSource::File(path) => write!(f, "`{}`", path.display()),
        }
    }
}

/// How a plugin is loaded: its limits, grants and capability backends.
#[derive(Clone, Debug, Default)]
pub struct PluginOptions {
    /// The sandbox limits.
    pub limits: Limits,
    /// The capabilities it may import.
    pub grants: Grants,
    /// The backends behind its granted capabilities.
    pub capabilities: Capabilities,
    /// A pinned sha256 (lowercase hex); a mismatch refuses to load.
    pub sha256: Option<String>,
    /// Fixed WASI clocks and seeded randomness, for plugins that must give
    /// the same verdict for the same inputs.
    pub deterministic: bool,
}

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckInput<'a> {
    /// The key, lowercase, without `not_`.
    pub key: &'a str,
    /// Index into the batch's actual values.
    pub actual: u32,
    /// The expected value as JSON text.
    pub expected: &'a str,
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
}

impl fmt::Display for EvaluationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvaluationError::Rejected(message) => f.write_str(message),
            EvaluationError::Fault { plugin, fault } => write!(f, "plugin `{plugin}` {fault}"),
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

impl World for CapableMatcherPlugin {
    type Pre = CapableMatcherPluginPre<SandboxState>;

    fn link(linker: &mut Linker<SandboxState>) -> wasmtime::Result<()> {
        CapableMatcherPlugin::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
    }

    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre> {
        CapableMatcherPluginPre::new(pre)
    }

    fn engine(pre: &Self::Pre) -> &wasmtime::Engine {
        pre.engine()
    }

    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self> {
        pre.instantiate_async(store).await
    }
}

/// A loaded matcher plugin.
pub struct MatcherPlugin {
    name: String,
    version: String,
    keys: Vec<MatcherKey>,
    source: PluginSource,
    sha256: String,
    options: PluginOptions,
    cache_status: CacheStatus,
    instances: Instances<CapableMatcherPlugin>,
    consecutive_faults: AtomicU32,
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
        source: PluginSource,
        bytes: &[u8],
        options: PluginOptions,
    ) -> Result<MatcherPlugin, ComponentLoadError> {
        let fail = |kind| ComponentLoadError { role: ComponentRole::Plugin, component: source.to_string(), kind };
        let sha256 = sha256_hex(bytes);
        if let Some(pinned) = &options.sha256
            && !pinned.eq_ignore_ascii_case(&sha256)
        {
            return Err(fail(ComponentLoadErrorKind::Sha256Mismatch { pinned: pinned.clone(), actual: sha256 }));
        }
        let component_bytes = as_component(bytes).map_err(|e| fail(ComponentLoadErrorKind::NotAComponent(e)))?;
        let (component, cache_status) = runtime
            .compile(&component_bytes, options.limits.fuel.is_some())
            .map_err(|e| fail(ComponentLoadErrorKind::NotAComponent(format!("{e:#}"))))?;
        policy::check_imports(component.engine(), &component, ComponentRole::Plugin, &options.grants)
            .map_err(|d| fail(ComponentLoadErrorKind::Denied(d)))?;
        let settings = InstanceSettings {
            limits: options.limits.clone(),
            capabilities: options.capabilities.clone(),
            deterministic: options.deterministic,
        };
        let instances: Instances<CapableMatcherPlugin> =
            Instances::new(runtime, Arc::from(component_bytes), &component, settings).map_err(|e| {
                fail(match e {
                    PrepareError::Link(cause) => ComponentLoadErrorKind::Link(cause),
                    PrepareError::Exports(cause) => {
                        ComponentLoadErrorKind::Exports { interface: "assay:plugin/matcher@0.1.0", cause }
                    }
                })
            })?;

        let mut guest = instances.take().map_err(|fault| fail(ComponentLoadErrorKind::Instantiate(fault)))?;
        let budget = call_budget(&options.limits, 0);
        let bindings = &guest.bindings;
        let described = crate::plugin::guest::call(&mut guest.store, budget, async |store| {
            bindings.assay_plugin_matcher().call_describe(store).await
        });
        let info = described.map_err(|fault| fail(ComponentLoadErrorKind::Describe(fault)))?;
        validate_info(&info).map_err(|e| fail(ComponentLoadErrorKind::BadDescription(e)))?;
        instances.give_back(guest);
        Ok(MatcherPlugin {
            name: info.name,
            version: info.version,
            keys: info.matchers.into_iter().map(|m| MatcherKey { key: m.key, summary: m.summary }).collect(),
            source,
            sha256,
            options,
            cache_status,
            instances,
            consecutive_faults: AtomicU32::new(0),
        })
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
    pub fn source(&self) -> &PluginSource {
        &self.source
    }

    /// The sha256 of its component bytes (lowercase hex).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Whether it was compiled or loaded from the compile cache.
    pub fn cache_status(&self) -> CacheStatus {
        self.cache_status
    }

    /// The options it was loaded with.
    pub fn options(&self) -> &PluginOptions {
        &self.options
    }

    /// Evaluates one batch. Never fails as a whole: a fault becomes an error
    /// for every check of the batch, naming the plugin and the cause, and
    /// the faulted instance is discarded.
    pub fn evaluate(&self, actuals: &[ActualValue<'_>], checks: &[CheckInput<'_>]) -> BatchOutput {
        let limits = &self.options.limits;
        let faults = self.consecutive_faults.load(Ordering::Relaxed);
        if faults >= limits.max_consecutive_faults {
            return self.all_faulted(checks.len(), Fault::Disabled(faults), Vec::new(), 0);
        }
        let wit_actuals: Vec<wit::Actual<'_>> = actuals
            .iter()
            .map(|a| match *a {
                ActualValue::Text(text) => wit::Actual::Text(text),
                ActualValue::Json(json) => wit::Actual::Json(json),
            })
            .collect();
        let wit_checks: Vec<wit::Check<'_>> =
            checks.iter().map(|c| wit::Check { key: c.key, actual: c.actual, expected: c.expected }).collect();
        let mut guest = match self.instances.take() {
            Ok(guest) => guest,
            Err(fault) => {
                self.consecutive_faults.fetch_add(1, Ordering::Relaxed);
                return self.all_faulted(checks.len(), fault, Vec::new(), 0);
            }
        };
        let calls = limits.capability_calls_per_check.saturating_mul(u32::try_from(checks.len()).unwrap_or(u32::MAX));
        let bindings = &guest.bindings;
        let answer = crate::plugin::guest::call(&mut guest.store, call_budget(limits, calls), async |store| {
            bindings.assay_plugin_matcher().call_evaluate(store, &wit_actuals, &wit_checks).await
        });
        let answer = match answer {
            Ok(verdicts) if verdicts.len() != checks.len() => {
                Err(Fault::BadAnswer(format!("it returned {} results for {} checks", verdicts.len(), checks.len())))
            }
            answer => answer,
        };
        let (log, log_dropped) = guest.store.data().log.lock().expect("the log is never poisoned").take();
        let verdicts = match answer {
            Ok(verdicts) => verdicts,
            Err(fault) => {
                self.consecutive_faults.fetch_add(1, Ordering::Relaxed);
                return self.all_faulted(checks.len(), fault, log, log_dropped);
            }
        };
        self.consecutive_faults.store(0, Ordering::Relaxed);
        self.instances.give_back(guest);
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
    fn cap(&self, verdict: wit::Verdict) -> Result<Evaluation, EvaluationError> {
        if let Some(score) = verdict.score
            && !(0.0..=1.0).contains(&score)
        {
            let fault = Fault::BadAnswer(format!("its score {score} is not a number between 0 and 1"));
            return Err(EvaluationError::Fault { plugin: self.name.clone(), fault });
        }
        let limits = &self.options.limits;
        let mut message = verdict.message;
        let mut truncated = truncate_at_char(&mut message, limits.max_message_bytes);
        if truncated {
            message.push_str(" … [message truncated by assay]");
        }
        let extras = match verdict.extras {
            Some(extras) if extras.len() > limits.max_extras_bytes => {
                truncated = true;
                message.push_str(&format!(
                    " [extras of {} bytes dropped: the limit is {} bytes]",
                    extras.len(),
                    limits.max_extras_bytes
                ));
                None
            }
            Some(extras) => match serde_json::from_str(&extras) {
                Ok(value) => Some(value),
                Err(e) => {
                    message.push_str(&format!(" [extras dropped: not valid JSON: {e}]"));
                    None
                }
            },
            None => None,
        };
        Ok(Evaluation { pass: verdict.pass, score: verdict.score, message, extras, truncated })
    }

    fn cap_rejection(&self, mut message: String) -> EvaluationError {
        if truncate_at_char(&mut message, self.options.limits.max_message_bytes) {
            message.push_str(" … [message truncated by assay]");
        }
        EvaluationError::Rejected(message)
    }
}

/// The budget of one call of a plugin with `limits` that may make
/// `capability_calls` judge or embeddings calls.
fn call_budget(limits: &Limits, capability_calls: u32) -> CallBudget {
    CallBudget { deadline: limits.deadline, fuel: limits.fuel, capability_calls }
}

/// The component in `bytes`: the bytes themselves, or, for a core module
/// with an embedded component type (what `cargo build` makes of a plugin
/// crate), the component `wit-component` makes of it.
pub(crate) fn as_component(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    const CORE_MODULE_VERSION: [u8; 4] = [1, 0, 0, 0];
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("it does not start with the WebAssembly magic bytes".into());
    }
    if bytes[4..8] != CORE_MODULE_VERSION {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    let encoder = wit_component::ComponentEncoder::default()
        .module(bytes)
        .map_err(|e| format!("it is a core module without an embedded component type ({e:#}); build it with the plugin SDK, or make it a component with `wasm-tools component new`"))?;
    encoder
        .validate(true)
        .encode()
        .map(std::borrow::Cow::Owned)
        .map_err(|e| format!("it is a core module that cannot be made a component: {e:#}"))
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

/// The sha256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
