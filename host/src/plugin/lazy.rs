//! [`LazyPlugin`]: a plugin as the registry holds it, known by what its
//! `describe()` says (its name, version and keys) before it is compiled,
//! and compiled the first time one of its checks runs. A built-in's
//! description is a table committed beside it (`builtin.rs`); a plugin
//! loaded from a file is described by loading it. A run that never uses a
//! plugin never compiles it.
//!
//! A plugin that fails to load on first use fails every check handed to it
//! with that error ([`EvaluationError::Unavailable`]), once per check like
//! any other answer; the load is tried once per process.

use crate::plugin::builtin::BuiltinPlugin;
use crate::plugin::matcher::{ActualValue, BatchOutput, CheckInput, EvaluationError, MatcherKey, MatcherPlugin};
use crate::plugin::scope::PluginScope;
use crate::sandbox::host::judge::Judge;
use crate::sandbox::{CacheStatus, Capabilities, ComponentOptions, ComponentSource, Grader, Runtime, sha256_hex};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A plugin known by its description, compiled on first use.
pub struct LazyPlugin {
    name: String,
    version: String,
    keys: Vec<MatcherKey>,
    source: ComponentSource,
    options: ComponentOptions,
    /// What to compile, when it is not loaded yet.
    pending: Option<Pending>,
    loaded: OnceLock<Result<Arc<MatcherPlugin>, String>>,
    sha256: OnceLock<String>,
}

/// A built-in component waiting for its first use.
struct Pending {
    runtime: Runtime,
    bytes: &'static [u8],
}

impl fmt::Debug for LazyPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyPlugin")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("loaded", &self.is_loaded())
            .finish_non_exhaustive()
    }
}

impl From<MatcherPlugin> for LazyPlugin {
    /// A plugin loaded already.
    fn from(plugin: MatcherPlugin) -> LazyPlugin {
        let plugin = Arc::new(plugin);
        LazyPlugin {
            name: plugin.name().to_owned(),
            version: plugin.version().to_owned(),
            keys: plugin.keys().to_vec(),
            source: plugin.source().clone(),
            options: plugin.options().clone(),
            pending: None,
            loaded: OnceLock::from(Ok(plugin)),
            sha256: OnceLock::new(),
        }
    }
}

impl LazyPlugin {
    /// A built-in, described by its table, granted what the built-in policy
    /// grants it with the backends in `capabilities`; compiled on `runtime`
    /// on first use.
    pub fn builtin(runtime: &Runtime, builtin: &BuiltinPlugin, capabilities: &Capabilities) -> LazyPlugin {
        let mut options = ComponentOptions {
            grants: builtin.grants,
            capabilities: capabilities.clone(),
            fresh_instances: builtin.fresh_instances,
            ..ComponentOptions::default()
        };
        options.limits.capability_calls_per_check = builtin.capability_calls_per_check;
        if let Some(bytes) = builtin.max_extras_bytes {
            options.limits.max_extras_bytes = bytes;
        }
        if let Some(deadline) = builtin.deadline {
            options.limits.deadline = deadline;
        }
        LazyPlugin {
            name: builtin.name.to_owned(),
            version: builtin.version.to_owned(),
            keys: builtin.described_keys(),
            source: ComponentSource::Builtin(builtin.name),
            options,
            pending: Some(Pending { runtime: runtime.clone(), bytes: builtin.bytes }),
            loaded: OnceLock::new(),
            sha256: OnceLock::new(),
        }
    }

    /// The name the plugin gives itself.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version the plugin gives itself.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The keys it implements.
    pub fn keys(&self) -> &[MatcherKey] {
        &self.keys
    }

    /// Where it comes from.
    pub fn source(&self) -> &ComponentSource {
        &self.source
    }

    /// The options it is (or will be) loaded with.
    pub fn options(&self) -> &ComponentOptions {
        &self.options
    }

    /// The sha256 of its component bytes (lowercase hex).
    pub fn sha256(&self) -> &str {
        match (&self.pending, self.loaded.get()) {
            (_, Some(Ok(plugin))) => plugin.sha256(),
            (Some(pending), _) => self.sha256.get_or_init(|| sha256_hex(pending.bytes)),
            (None, _) => unreachable!("a plugin without pending bytes was loaded when made"),
        }
    }

    /// The judge its checks ask, when it is granted the judge and one is
    /// configured (known before it is compiled).
    pub fn judge(&self) -> Option<&Arc<dyn Judge>> {
        self.options.judge()
    }

    /// Whether its checks may wait on the network: it is granted a judge or
    /// an embeddings backend that is configured.
    pub fn asks_network(&self) -> bool {
        self.options.asks_network()
    }

    /// Whether it has been compiled (or tried to be).
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// How it was compiled, once it has been.
    pub fn cache_status(&self) -> Option<CacheStatus> {
        match self.loaded.get() {
            Some(Ok(plugin)) => Some(plugin.cache_status()),
            _ => None,
        }
    }

    /// The loaded plugin, compiled now if this is its first use; `Err` says
    /// why it cannot be loaded (the same error on every call).
    pub fn get(&self) -> Result<&Arc<MatcherPlugin>, &str> {
        let loaded = self.loaded.get_or_init(|| {
            let pending = self.pending.as_ref().expect("a plugin without pending bytes was loaded when made");
            let plugin = MatcherPlugin::load(&pending.runtime, self.source.clone(), pending.bytes, self.options.clone())
                .map_err(|e| e.to_string())?;
            if plugin.name() != self.name || plugin.version() != self.version || plugin.keys() != self.keys {
                return Err(format!(
                    "plugin {} describes itself as `{} {}` with the keys {:?}, not as its table in assay says (`{} {}` with {:?}); this is a bug in assay, please report it",
                    self.source,
                    plugin.name(),
                    plugin.version(),
                    plugin.keys().iter().map(|k| k.key.as_str()).collect::<Vec<_>>(),
                    self.name,
                    self.version,
                    self.keys.iter().map(|k| k.key.as_str()).collect::<Vec<_>>(),
                ));
            }
            Ok(Arc::new(plugin))
        });
        loaded.as_ref().map_err(String::as_str)
    }

    /// Evaluates one batch ([`MatcherPlugin::evaluate`]), compiling the
    /// plugin first if this is its first use. A plugin that cannot be
    /// loaded gives every check the load error.
    pub fn evaluate(
        &self,
        actuals: &[ActualValue<'_>],
        checks: &[CheckInput<'_>],
        scope: &PluginScope,
        grader: Option<&Grader>,
        until: Option<std::time::Instant>,
    ) -> BatchOutput {
        match self.get() {
            Ok(plugin) => plugin.evaluate(actuals, checks, scope, grader, until),
            Err(cause) => {
                let error = EvaluationError::Unavailable { plugin: self.name.clone(), cause: cause.to_owned() };
                BatchOutput { results: vec![Err(error); checks.len()], log: Vec::new(), log_dropped: 0 }
            }
        }
    }
}
