//! The agents `direct` can reach: the built-in demo agents, plus components
//! the user names (`--agent NAME=FILE.wasm`, or `[agents]` in the config).
//! Components are loaded on first use, so a run that never goes `direct`
//! never pays for them (the demo agents from their embedded native code,
//! `sandbox/precompiled.rs`; the user's compiled, or from the compile cache).

use crate::agent::transport::direct::AgentComponent;
use crate::sandbox::{ComponentSource, Limits, Runtime, read_component_file};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The demo agents, embedded in the binary: (name, component bytes). Their
/// sources are under `fixtures/agents/`, built by `cargo xtask build`.
pub const DEMO_AGENTS: &[(&str, &[u8])] = &[
    ("echo", include_bytes!("../../../../../fixtures/agents/echo/echo.wasm")),
    ("flaky", include_bytes!("../../../../../fixtures/agents/flaky/flaky.wasm")),
    ("math_guy", include_bytes!("../../../../../fixtures/agents/math_guy/math_guy.wasm")),
    ("music_nerd_pro", include_bytes!("../../../../../fixtures/agents/music_nerd_pro/music_nerd_pro.wasm")),
];

/// Agent names → components, loaded lazily.
pub struct AgentCatalog {
    runtime: Runtime,
    limits: Limits,
    entries: BTreeMap<String, Entry>,
}

struct Entry {
    source: ComponentSource,
    bytes: Cow<'static, [u8]>,
    loaded: OnceLock<Result<Arc<AgentComponent>, String>>,
}

impl AgentCatalog {
    /// A catalog of the demo agents, run under `limits`.
    pub fn with_demo_agents(runtime: Runtime, limits: Limits) -> AgentCatalog {
        let mut catalog = AgentCatalog { runtime, limits, entries: BTreeMap::new() };
        for (name, bytes) in DEMO_AGENTS {
            catalog.insert(name, ComponentSource::Builtin(name), Cow::Borrowed(bytes));
        }
        catalog
    }

    /// Adds (or replaces) the agent `name`, read from a component file.
    pub fn add_file(&mut self, name: &str, path: &Path) -> Result<(), String> {
        let bytes = read_component_file(path)
            .map_err(|e| format!("cannot read the agent component `{}` for `{name}`: {e}", path.display()))?;
        self.insert(name, ComponentSource::File(PathBuf::from(path)), Cow::Owned(bytes));
        Ok(())
    }

    fn insert(&mut self, name: &str, source: ComponentSource, bytes: Cow<'static, [u8]>) {
        self.entries.insert(name.to_owned(), Entry { source, bytes, loaded: OnceLock::new() });
    }

    /// The names it knows, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Where `name` comes from, if known.
    pub fn source(&self, name: &str) -> Option<&ComponentSource> {
        self.entries.get(name).map(|e| &e.source)
    }

    /// The agent `name`, compiled on first use. `Ok(None)` when the name is
    /// unknown; `Err` with the load error when its component is broken.
    pub fn get(&self, name: &str) -> Result<Option<Arc<AgentComponent>>, String> {
        let Some(entry) = self.entries.get(name) else { return Ok(None) };
        let loaded = entry.loaded.get_or_init(|| {
            AgentComponent::load(&self.runtime, entry.source.clone(), &entry.bytes, self.limits.clone())
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        loaded.clone().map(Some)
    }
}
