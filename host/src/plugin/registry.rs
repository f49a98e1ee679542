//! The [`Registry`]: which plugin answers each assertion key.

use crate::errors::{PluginLoadError, RegistryError};
use crate::plugin::builtin::BUILTIN_MATCHERS;
use crate::plugin::engine::Runtime;
use crate::plugin::matcher::{MatcherPlugin, PluginOptions, PluginSource};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Maps assertion keys (from each plugin's `describe()`) to plugins.
#[derive(Debug, Default)]
pub struct Registry {
    plugins: Vec<Arc<MatcherPlugin>>,
    keys: BTreeMap<String, usize>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// A registry holding the built-in plugins.
    pub fn with_builtins(runtime: &Runtime) -> Result<Registry, RegistryError> {
        let mut registry = Registry::new();
        for (name, bytes) in BUILTIN_MATCHERS {
            let plugin = MatcherPlugin::load(runtime, PluginSource::Builtin(name), bytes, PluginOptions::default())
                .map_err(RegistryError::Load)?;
            registry.add(plugin)?;
        }
        Ok(registry)
    }

    /// Loads a plugin from bytes and adds it.
    pub fn load(
        &mut self,
        runtime: &Runtime,
        source: PluginSource,
        bytes: &[u8],
        options: PluginOptions,
    ) -> Result<Arc<MatcherPlugin>, RegistryError> {
        let plugin = MatcherPlugin::load(runtime, source, bytes, options).map_err(RegistryError::Load)?;
        self.add(plugin)
    }

    /// Adds a loaded plugin. A key another plugin already claims is an error
    /// naming both.
    pub fn add(&mut self, plugin: MatcherPlugin) -> Result<Arc<MatcherPlugin>, RegistryError> {
        for key in plugin.keys() {
            if let Some(&index) = self.keys.get(&key.key) {
                let other = &self.plugins[index];
                return Err(RegistryError::KeyConflict {
                    key: key.key.clone(),
                    first: format!("{} ({})", other.name(), other.source()),
                    second: format!("{} ({})", plugin.name(), plugin.source()),
                });
            }
        }
        let index = self.plugins.len();
        for key in plugin.keys() {
            self.keys.insert(key.key.clone(), index);
        }
        let plugin = Arc::new(plugin);
        self.plugins.push(plugin.clone());
        Ok(plugin)
    }

    /// The plugin that answers `key` (lowercase, without `not_`).
    pub fn plugin_for(&self, key: &str) -> Option<&Arc<MatcherPlugin>> {
        self.keys.get(key).map(|&index| &self.plugins[index])
    }

    /// Whether some plugin answers `key`.
    pub fn has_key(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    /// Every loaded plugin, in load order.
    pub fn plugins(&self) -> &[Arc<MatcherPlugin>] {
        &self.plugins
    }

    /// Every known key, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }

    /// The known key (or `not_` form) closest to a mistyped one, if any is
    /// close enough to be a likely typo.
    pub fn suggest(&self, unknown: &str) -> Option<String> {
        let candidates: Vec<String> = self.keys.keys().flat_map(|k| [k.clone(), format!("not_{k}")]).collect();
        crate::suggest::nearest(unknown, candidates.iter().map(String::as_str))
    }
}

impl From<PluginLoadError> for RegistryError {
    fn from(error: PluginLoadError) -> Self {
        RegistryError::Load(error)
    }
}
