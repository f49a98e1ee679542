//! The [`Registry`]: which plugin answers each assertion key.
//!
//! It holds [`LazyPlugin`]s: a built-in is registered by its committed
//! description and compiled the first time one of its checks runs, so a run
//! compiles only the plugins it uses; a plugin from a file is loaded (and so
//! described) when added.
//!
//! A registry counts its plugins' faults in a row and judge and embeddings
//! requests for one scope ([`PluginScopes`]): [`Registry::for_new_scope`]
//! gives a run, or a request of `assay serve`, counts of its own, so that a
//! plugin disabled, or a budget spent, by one is not by the others.
//!
//! Every plugin has a label (its `[plugins.NAME]`, its file's stem, or a
//! built-in's name), unique in the registry: `[keys]` names the winner of a
//! key by label, so a second plugin under the same label could take a key
//! meant for the first.

use crate::errors::{ComponentLoadError, RegistryError};
use crate::plugin::builtin::{BUILTIN_MATCHERS, BuiltinPlugin};
use crate::plugin::lazy::LazyPlugin;
use crate::plugin::scope::{PluginScope, PluginScopes};
use crate::sandbox::{Capabilities, Runtime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Maps assertion keys (from each plugin's `describe()`) to plugins.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    /// The plugins and their keys, shared by every scope's registry (a new
    /// scope costs two reference counts, not a copy).
    table: Arc<Table>,
    /// What each plugin counts in this registry's scope.
    scopes: Arc<PluginScopes>,
}

/// The plugins, their labels and keys.
#[derive(Clone, Debug, Default)]
struct Table {
    plugins: Vec<Arc<LazyPlugin>>,
    /// The name each plugin was configured under (its `[plugins.NAME]`, or
    /// its own name).
    labels: Vec<String>,
    keys: BTreeMap<String, usize>,
    /// `[keys]`: key → the label or name of the plugin that wins it.
    preferences: BTreeMap<String, String>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// A registry holding the built-in plugins, with the grants the built-in
    /// policy gives them and the capability backends in `capabilities`.
    pub fn with_builtins(runtime: &Runtime) -> Result<Registry, RegistryError> {
        let mut registry = Registry::new();
        registry.add_builtins(runtime, &Capabilities::default())?;
        Ok(registry)
    }

    /// Adds every built-in plugin ([`BUILTIN_MATCHERS`]), to be compiled on
    /// first use: granted what the built-in policy grants it, with the
    /// backends in `capabilities`.
    pub fn add_builtins(&mut self, runtime: &Runtime, capabilities: &Capabilities) -> Result<(), RegistryError> {
        for builtin in BUILTIN_MATCHERS {
            self.add_builtin(runtime, builtin, capabilities)?;
        }
        Ok(())
    }

    /// Adds one built-in plugin, to be compiled on first use, under its name.
    pub fn add_builtin(
        &mut self,
        runtime: &Runtime,
        builtin: &BuiltinPlugin,
        capabilities: &Capabilities,
    ) -> Result<Arc<LazyPlugin>, RegistryError> {
        self.add(LazyPlugin::builtin(runtime, builtin, capabilities))
    }

    /// Says which plugin answers `key` when several claim it (`[keys]` in
    /// assay.toml), by label: its `[plugins.NAME]`, its file's stem, or a
    /// built-in's name. Set before adding.
    pub fn prefer(&mut self, key: &str, plugin: &str) {
        Arc::make_mut(&mut self.table).preferences.insert(key.to_owned(), plugin.to_owned());
    }

    /// Adds a plugin (loaded, or to be compiled on first use) under its own
    /// name.
    pub fn add(&mut self, plugin: impl Into<LazyPlugin>) -> Result<Arc<LazyPlugin>, RegistryError> {
        let plugin = plugin.into();
        let label = plugin.name().to_owned();
        self.add_labelled(plugin, &label)
    }

    /// Adds a plugin (loaded, or to be compiled on first use) configured as
    /// `label`. A label already taken is an error naming both plugins; so is
    /// a key another plugin already claims, unless a preference settles it.
    pub fn add_labelled(
        &mut self,
        plugin: impl Into<LazyPlugin>,
        label: &str,
    ) -> Result<Arc<LazyPlugin>, RegistryError> {
        let plugin = plugin.into();
        if let Some(other) = self.table.labels.iter().position(|l| l == label) {
            return Err(RegistryError::DuplicateLabel {
                label: label.to_owned(),
                first: self.table.plugins[other].source().to_string(),
                second: plugin.source().to_string(),
            });
        }
        let index = self.table.plugins.len();
        let mut won = Vec::new();
        for key in plugin.keys() {
            let Some(&other_index) = self.table.keys.get(&key.key) else {
                won.push(key.key.clone());
                continue;
            };
            let other = &self.table.plugins[other_index];
            let preferred = self.table.preferences.get(&key.key);
            if preferred.is_some_and(|p| p == label) {
                won.push(key.key.clone());
            } else if preferred != Some(&self.table.labels[other_index]) {
                return Err(RegistryError::KeyConflict {
                    key: key.key.clone(),
                    first: format!("{} ({})", other.name(), other.source()),
                    first_label: self.table.labels[other_index].clone(),
                    second: format!("{} ({})", plugin.name(), plugin.source()),
                    second_label: label.to_owned(),
                });
            }
        }
        let table = Arc::make_mut(&mut self.table);
        for key in won {
            table.keys.insert(key, index);
        }
        let plugin = Arc::new(plugin);
        table.plugins.push(plugin.clone());
        table.labels.push(label.to_owned());
        self.scopes = Arc::new(PluginScopes::new(table.plugins.len()));
        Ok(plugin)
    }

    /// Checks that every preference names a loaded plugin that has its key.
    pub fn check_preferences(&self) -> Result<(), RegistryError> {
        for (key, wanted) in &self.table.preferences {
            let provides =
                self.table.plugins.iter().zip(&self.table.labels).any(|(p, label)| {
                    (p.name() == wanted || label == wanted) && p.keys().iter().any(|k| &k.key == key)
                });
            if !provides {
                return Err(RegistryError::BadPreference { key: key.clone(), plugin: wanted.clone() });
            }
        }
        Ok(())
    }

    /// The plugin that answers `key` (lowercase, without `not_`); compiled
    /// when one of its checks first runs.
    pub fn plugin_for(&self, key: &str) -> Option<&Arc<LazyPlugin>> {
        self.table.keys.get(key).map(|&index| &self.table.plugins[index])
    }

    /// Compiles the plugins that answer `keys` and are not compiled yet, at
    /// once, each on a blocking thread: the run calls it (beside compiling
    /// the case's agent) before a case starts, so that no check's deadline
    /// pays for compilation. A plugin that fails to load is left to fail its
    /// checks.
    pub async fn prepare<'k>(&self, keys: impl IntoIterator<Item = &'k str>) {
        let mut pending: Vec<Arc<LazyPlugin>> = Vec::new();
        for key in keys {
            if let Some(plugin) = self.plugin_for(key)
                && !plugin.is_loaded()
                && !pending.iter().any(|p| Arc::ptr_eq(p, plugin))
            {
                pending.push(plugin.clone());
            }
        }
        let loads: Vec<_> = pending
            .into_iter()
            .map(|plugin| {
                tokio::task::spawn_blocking(move || {
                    let _ = plugin.get();
                })
            })
            .collect();
        for load in loads {
            let _ = load.await;
        }
    }

    /// Whether some plugin answers `key`.
    pub fn has_key(&self, key: &str) -> bool {
        self.table.keys.contains_key(key)
    }

    /// Every plugin, in the order added.
    pub fn plugins(&self) -> &[Arc<LazyPlugin>] {
        &self.table.plugins
    }

    /// The same plugins in a new scope (a run, or one request of `assay
    /// serve`): a plugin disabled, or a budget spent, in this one is not
    /// there.
    pub fn for_new_scope(&self) -> Registry {
        Registry { table: self.table.clone(), scopes: Arc::new(PluginScopes::new(self.table.plugins.len())) }
    }

    /// What its plugin at `index` (in [`Registry::plugins`]) counts in this
    /// registry's scope.
    pub fn scope_of(&self, index: usize) -> &PluginScope {
        self.scopes.of(index)
    }

    /// How many requests the judge its plugins ask answers at once (the
    /// largest, if they ask several), when some plugin is granted a
    /// configured judge (whether or not it is compiled yet).
    pub fn judge_concurrency(&self) -> Option<usize> {
        self.table.plugins.iter().filter_map(|plugin| plugin.judge()).map(|judge| judge.concurrency()).max()
    }

    /// Every plugin with its label, in the order added.
    pub fn labelled(&self) -> impl Iterator<Item = (&str, &Arc<LazyPlugin>)> {
        self.table.labels.iter().map(String::as_str).zip(&self.table.plugins)
    }

    /// The label of the plugin that answers `key`.
    pub fn label_for(&self, key: &str) -> Option<&str> {
        self.table.keys.get(key).map(|&index| self.table.labels[index].as_str())
    }

    /// Every known key, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.table.keys.keys().map(String::as_str)
    }

    /// The known key (or `not_` form) closest to a mistyped one, if any is
    /// close enough to be a likely typo.
    pub fn suggest(&self, unknown: &str) -> Option<String> {
        let candidates: Vec<String> = self.table.keys.keys().flat_map(|k| [k.clone(), format!("not_{k}")]).collect();
        crate::suggest::nearest(unknown, candidates.iter().map(String::as_str))
    }
}

impl From<ComponentLoadError> for RegistryError {
    fn from(error: ComponentLoadError) -> Self {
        RegistryError::Load(error)
    }
}

/// The planner asks the registry which keys exist, and which first-party
/// plugin would provide a key that does not.
impl crate::check::KeySet for Registry {
    fn has_key(&self, key: &str) -> bool {
        Registry::has_key(self, key)
    }

    fn suggest(&self, key: &str) -> Option<String> {
        Registry::suggest(self, key)
    }

    fn provider_entry(&self, key: &str) -> Option<String> {
        crate::plugin::first_party_for(key).map(|plugin| plugin.config_entry())
    }
}
