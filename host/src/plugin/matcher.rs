//! One loaded matcher plugin: compiled, checked against its grants,
//! described, and evaluated in batches on a pool of reusable instances. An
//! instance that faults is discarded, never re-entered.

use crate::errors::{PluginLoadError, PluginLoadErrorKind};
use crate::plugin::bindings::matcher::assay::plugin::types as wit;
use crate::plugin::bindings::matcher::{CapableMatcherPlugin, CapableMatcherPluginPre};
use crate::plugin::cache::CacheStatus;
use crate::plugin::engine::Runtime;
use crate::plugin::host::Capabilities;
use crate::plugin::host::log::{LogLine, truncate_at_char};
use crate::plugin::policy::{self, Grants};
use crate::plugin::sandbox::{self, Fault, Limits, SandboxState};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

/// The most idle instances a plugin keeps for reuse.
const MAX_IDLE_INSTANCES: usize = 64;

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
    /// The plugin's score, if any, clamped to [0, 1].
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

struct Instance {
    store: Store<SandboxState>,
    bindings: CapableMatcherPlugin,
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
    pre: CapableMatcherPluginPre<SandboxState>,
    idle: Mutex<Vec<Instance>>,
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
    ) -> Result<MatcherPlugin, PluginLoadError> {
        let fail = |kind| PluginLoadError { plugin: source.to_string(), kind };
        let sha256 = sha256_hex(bytes);
        if let Some(pinned) = &options.sha256
            && !pinned.eq_ignore_ascii_case(&sha256)
        {
            return Err(fail(PluginLoadErrorKind::Sha256Mismatch { pinned: pinned.clone(), actual: sha256 }));
        }
        let component_bytes = as_component(bytes).map_err(|e| fail(PluginLoadErrorKind::NotAComponent(e)))?;
        let (component, cache_status) = runtime
            .compile(&component_bytes, options.limits.fuel.is_some())
            .map_err(|e| fail(PluginLoadErrorKind::NotAComponent(format!("{e:#}"))))?;
        let engine = component.engine();
        policy::check_imports(engine, &component, &options.grants).map_err(|d| fail(PluginLoadErrorKind::Denied(d)))?;

        let mut linker = Linker::<SandboxState>::new(engine);
        let linked = CapableMatcherPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .and_then(|()| wasmtime_wasi::p2::add_to_linker_sync(&mut linker));
        linked.map_err(|e| fail(PluginLoadErrorKind::Link(format!("{e:#}"))))?;
        let pre = linker.instantiate_pre(&component).map_err(|e| fail(PluginLoadErrorKind::Link(format!("{e:#}"))))?;
        let pre = CapableMatcherPluginPre::new(pre).map_err(|e| {
            fail(PluginLoadErrorKind::Exports { interface: "assay:plugin/matcher@0.1.0", cause: format!("{e:#}") })
        })?;

        let mut plugin = MatcherPlugin {
            name: String::new(),
            version: String::new(),
            keys: Vec::new(),
            source: source.clone(),
            sha256,
            options,
            cache_status,
            pre,
            idle: Mutex::new(Vec::new()),
            consecutive_faults: AtomicU32::new(0),
        };
        let mut instance = plugin.instantiate().map_err(|fault| fail(PluginLoadErrorKind::Instantiate(fault)))?;
        let limits = &plugin.options.limits;
        sandbox::arm(&mut instance.store, limits.deadline, limits.fuel);
        let info = match instance.bindings.assay_plugin_matcher().call_describe(&mut instance.store) {
            Ok(info) => info,
            Err(e) => {
                let fault = sandbox::classify(&e, instance.store.data(), limits.deadline, limits.fuel);
                return Err(fail(PluginLoadErrorKind::Describe(fault)));
            }
        };
        validate_info(&info).map_err(|e| fail(PluginLoadErrorKind::BadDescription(e)))?;
        plugin.name = info.name;
        plugin.version = info.version;
        plugin.keys = info.matchers.into_iter().map(|m| MatcherKey { key: m.key, summary: m.summary }).collect();
        plugin.idle.get_mut().expect("not shared yet").push(instance);
        Ok(plugin)
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
        let mut instance = match self.take_instance() {
            Ok(instance) => instance,
            Err(fault) => {
                self.consecutive_faults.fetch_add(1, Ordering::Relaxed);
                return self.all_faulted(checks.len(), fault, Vec::new(), 0);
            }
        };
        let wit_actuals: Vec<wit::Actual<'_>> = actuals
            .iter()
            .map(|a| match *a {
                ActualValue::Text(text) => wit::Actual::Text(text),
                ActualValue::Json(json) => wit::Actual::Json(json),
            })
            .collect();
        let wit_checks: Vec<wit::Check<'_>> =
            checks.iter().map(|c| wit::Check { key: c.key, actual: c.actual, expected: c.expected }).collect();

        sandbox::arm(&mut instance.store, limits.deadline, limits.fuel);
        let answer =
            instance.bindings.assay_plugin_matcher().call_evaluate(&mut instance.store, &wit_actuals, &wit_checks);
        // Classify before taking the log: a panic's message is in it.
        let fault = match &answer {
            Ok(verdicts) if verdicts.len() == checks.len() => None,
            Ok(verdicts) => {
                Some(Fault::BadAnswer(format!("it returned {} results for {} checks", verdicts.len(), checks.len())))
            }
            Err(error) => Some(sandbox::classify(error, instance.store.data(), limits.deadline, limits.fuel)),
        };
        let (log, log_dropped) = instance.store.data_mut().log.take();
        let verdicts = match (fault, answer) {
            (None, Ok(verdicts)) => verdicts,
            (fault, _) => {
                self.consecutive_faults.fetch_add(1, Ordering::Relaxed);
                let fault = fault.expect("an error always has a fault");
                return self.all_faulted(checks.len(), fault, log, log_dropped);
            }
        };
        self.consecutive_faults.store(0, Ordering::Relaxed);
        self.return_instance(instance);
        let results = verdicts.into_iter().map(|v| v.map(|v| self.cap(v)).map_err(|e| self.cap_rejection(e))).collect();
        BatchOutput { results, log, log_dropped }
    }

    fn all_faulted(&self, count: usize, fault: Fault, log: Vec<LogLine>, log_dropped: usize) -> BatchOutput {
        let error = EvaluationError::Fault { plugin: self.name.clone(), fault };
        BatchOutput { results: vec![Err(error); count], log, log_dropped }
    }

    /// Applies the output caps to a verdict.
    fn cap(&self, verdict: wit::Verdict) -> Evaluation {
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
        let score = verdict.score.map(|s| if s.is_nan() { 0.0 } else { s.clamp(0.0, 1.0) });
        Evaluation { pass: verdict.pass, score, message, extras, truncated }
    }

    fn cap_rejection(&self, mut message: String) -> EvaluationError {
        if truncate_at_char(&mut message, self.options.limits.max_message_bytes) {
            message.push_str(" … [message truncated by assay]");
        }
        EvaluationError::Rejected(message)
    }

    fn take_instance(&self) -> Result<Instance, Fault> {
        let idle = self.idle.lock().expect("instance pool poisoned").pop();
        match idle {
            Some(instance) => Ok(instance),
            None => self.instantiate(),
        }
    }

    fn return_instance(&self, instance: Instance) {
        let mut idle = self.idle.lock().expect("instance pool poisoned");
        if idle.len() < MAX_IDLE_INSTANCES {
            idle.push(instance);
        }
    }

    /// Creates a fresh instance under the instantiation deadline.
    fn instantiate(&self) -> Result<Instance, Fault> {
        let limits = &self.options.limits;
        let mut store = sandbox::new_store(
            self.pre.engine(),
            limits,
            self.options.capabilities.clone(),
            self.options.deterministic,
        );
        sandbox::arm(&mut store, limits.instantiation_deadline, limits.fuel);
        match self.pre.instantiate(&mut store) {
            Ok(bindings) => Ok(Instance { store, bindings }),
            Err(error) => Err(sandbox::classify(&error, store.data(), limits.instantiation_deadline, limits.fuel)),
        }
    }
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
