//! What every command starts from: the configuration (`assay.toml` or
//! `--config`), the runtime with its compile cache, the matcher registry
//! (built-ins, `[plugins.*]`, `.assay/plugins/`, `--plugin`) and the agents
//! `direct` can reach (demo agents, `[agents]`, `--agent`).

use super::UsageError;
use super::args::ProjectArgs;
use anyhow::{Context, Result};
use assay::agent::AgentCatalog;
use assay::config::{Config, PluginConfig};
use assay::plugin::host::judge::Judge;
use assay::plugin::host::openai_judge::{JudgeSettings, OpenAiJudge};
use assay::plugin::{
    Capabilities, CompileCache, Grants, Limits, MatcherPlugin, PluginOptions, PluginSource, Registry, Runtime,
};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The configuration and the runtime built from it.
pub struct Project<'a> {
    /// The configuration.
    pub config: Config,
    /// The wasmtime runtime, with the compile cache unless disabled.
    pub runtime: Runtime,
    args: &'a ProjectArgs,
}

impl<'a> Project<'a> {
    /// Reads the configuration and starts the runtime.
    pub fn open(args: &'a ProjectArgs) -> Result<Project<'a>> {
        let config = Config::discover(args.config.as_deref()).map_err(|e| UsageError(e.to_string()))?;
        let cache = if args.no_cache || !config.cache.enabled {
            None
        } else {
            let dir = args
                .cache_dir
                .clone()
                .or_else(|| config.cache.dir.as_deref().map(|d| config.resolve(d)))
                .or_else(CompileCache::default_dir);
            dir.map(CompileCache::new)
        };
        let largest_memory = config
            .plugins
            .values()
            .filter_map(|p| p.memory_mb)
            .map(|mb| mb << 20)
            .fold(Limits::default().memory_bytes, usize::max);
        let runtime = Runtime::with_cache(largest_memory, cache);
        Ok(Project { config, runtime, args })
    }

    /// Every matcher plugin: the built-ins, then `[plugins.*]`, then
    /// `.assay/plugins/`, then `--plugin`; `[keys]` settles conflicts.
    pub fn registry(&self) -> Result<Registry> {
        let mut registry = Registry::new();
        for (key, plugin) in &self.config.keys {
            registry.prefer(key, plugin);
        }
        let judge = self.judge()?;
        registry.add_builtins(&self.runtime, &Capabilities { judge: judge.clone(), embeddings: None })?;
        for (label, plugin) in &self.config.plugins {
            let path = self.config.resolve(&plugin.path);
            let mut options = plugin_options(label, plugin)?;
            if options.grants.judge {
                options.capabilities.judge = judge.clone();
            }
            let loaded =
                self.load_file(&path, options).with_context(|| format!("in [plugins.{label}] of assay.toml"))?;
            registry.add_labelled(loaded, label)?;
        }
        for path in self.config.plugins_dir_files().iter().chain(&self.args.plugins) {
            let label = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let loaded = self.load_file(path, PluginOptions::default())?;
            registry.add_labelled(loaded, &label)?;
        }
        registry.check_preferences()?;
        Ok(registry)
    }

    /// The judge from `[judge]` and `ASSAY_JUDGE_*`, if one is configured.
    fn judge(&self) -> Result<Option<Arc<dyn Judge>>> {
        let section = &self.config.judge;
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let Some(url) = env("ASSAY_JUDGE_URL").or_else(|| section.url.clone()) else { return Ok(None) };
        let model = env("ASSAY_JUDGE_MODEL").or_else(|| section.model.clone()).unwrap_or_default();
        let mut settings = JudgeSettings::new(url, model);
        settings.api_key = env("ASSAY_JUDGE_API_KEY").or_else(|| section.api_key_env.as_deref().and_then(env));
        if let Some(seconds) = section.timeout_secs {
            settings.timeout = Duration::try_from_secs_f64(seconds)
                .map_err(|_| UsageError(format!("[judge] timeout_secs = {seconds} is not a number of seconds")))?;
        }
        if let Some(max_calls) = section.max_calls {
            settings.max_calls = max_calls;
        }
        if !self.args.no_judge_cache {
            settings.cache_dir = match (&self.args.cache_dir, &self.config.cache.dir) {
                (Some(dir), _) => Some(dir.join("judge")),
                (None, Some(dir)) => Some(self.config.resolve(dir).join("judge")),
                (None, None) => JudgeSettings::default_cache_dir(),
            };
        }
        Ok(Some(Arc::new(OpenAiJudge::new(settings).map_err(UsageError)?)))
    }

    fn load_file(&self, path: &Path, options: PluginOptions) -> Result<MatcherPlugin> {
        let bytes = std::fs::read(path).with_context(|| format!("failed to read plugin `{}`", path.display()))?;
        Ok(MatcherPlugin::load(&self.runtime, PluginSource::File(path.to_owned()), &bytes, options)?)
    }

    /// The agents `direct` can reach: the demo agents, then `[agents]`,
    /// then `--agent`.
    pub fn catalog(&self) -> Result<AgentCatalog> {
        let mut catalog = AgentCatalog::with_demo_agents(self.runtime.clone(), Limits::default());
        for (name, path) in &self.config.agents {
            catalog.add_file(name, &self.config.resolve(path)).map_err(UsageError)?;
        }
        for (name, path) in &self.args.agents {
            catalog.add_file(name, path).map_err(UsageError)?;
        }
        Ok(catalog)
    }
}

/// The options `[plugins.NAME]` asks for, on top of the defaults.
fn plugin_options(label: &str, plugin: &PluginConfig) -> Result<PluginOptions> {
    let grants = Grants::from_names(plugin.grants.iter().map(String::as_str))
        .map_err(|e| UsageError(format!("[plugins.{label}] in assay.toml: {e}")))?;
    let mut limits = Limits::default();
    if let Some(mb) = plugin.memory_mb {
        limits.memory_bytes = mb << 20;
    }
    if let Some(ms) = plugin.deadline_ms {
        limits.deadline = Duration::from_millis(ms);
    }
    limits.fuel = plugin.fuel;
    Ok(PluginOptions {
        limits,
        grants,
        sha256: plugin.sha256.clone(),
        deterministic: plugin.deterministic,
        ..PluginOptions::default()
    })
}
