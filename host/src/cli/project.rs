//! What every command starts from: the configuration (`assay.toml` or
//! `--config`), the runtime with its compile cache, the matcher registry
//! (built-ins, `[plugins.*]`, `.assay/plugins/`, `--plugin`), the agents
//! `direct` can reach (demo agents, `[agents]`, `--agent`), and what case
//! files may read from the environment (`[cases] allow_env`,
//! `--allow-env`), with the secrets reports hide.

use super::UsageError;
use super::args::{CaseEnvArgs, ProjectArgs, ServerArgs};
use anyhow::{Context, Result};
use assay::agent::{AgentCatalog, Agents, HttpAgents, HttpSettings};
use assay::backend::{EmbeddingsSettings, JudgeBackend, JudgeSettings, RemoteEmbeddings, RemoteJudge};
use assay::case::CaseEnv;
use assay::config::{Config, PluginConfig};
use assay::plugin::host::embeddings::Embeddings;
use assay::plugin::host::judge::Judge;
use assay::plugin::{
    Capabilities, CompileCache, Grants, Limits, MatcherPlugin, PluginOptions, PluginSource, Registry, Runtime,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The configuration and the runtime built from it.
pub struct Project<'a> {
    /// The configuration.
    pub config: Config,
    /// The wasmtime runtime, with the compile cache unless disabled.
    pub runtime: Runtime,
    /// The judge from `[judge]` and `ASSAY_JUDGE_*`, if one is configured:
    /// one per run, so that its budget bounds the whole run.
    pub judge: Option<Arc<RemoteJudge>>,
    /// The embeddings backend from `[embeddings]` and `ASSAY_EMBEDDINGS_*`.
    pub embeddings: Option<Arc<RemoteEmbeddings>>,
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
        let judge = judge(&config, args)?.map(Arc::new);
        let embeddings = embeddings(&config, args)?.map(Arc::new);
        Ok(Project { config, runtime, judge, embeddings, args })
    }

    /// Every matcher plugin: the built-ins, then `[plugins.*]`, then
    /// `.assay/plugins/`, then `--plugin`; `[keys]` settles conflicts.
    pub fn registry(&self) -> Result<Registry> {
        let mut registry = Registry::new();
        for (key, plugin) in &self.config.keys {
            registry.prefer(key, plugin);
        }
        let judge = self.judge.clone().map(|j| j as Arc<dyn Judge>);
        registry.add_builtins(&self.runtime, &Capabilities { judge: judge.clone(), embeddings: None })?;
        for (label, plugin) in &self.config.plugins {
            let path = self.config.resolve(&plugin.path);
            let mut options = plugin_options(label, plugin)?;
            if options.grants.judge {
                options.capabilities.judge = judge.clone();
            }
            if options.grants.embeddings {
                options.capabilities.embeddings = self.embeddings.clone().map(|e| e as Arc<dyn Embeddings>);
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

    fn load_file(&self, path: &Path, options: PluginOptions) -> Result<MatcherPlugin> {
        let bytes = std::fs::read(path).with_context(|| format!("failed to read plugin `{}`", path.display()))?;
        Ok(MatcherPlugin::load(&self.runtime, PluginSource::File(path.to_owned()), &bytes, options)?)
    }

    /// The environment as case files may see it: `ASSAY_CASE_*`, `[cases]
    /// allow_env` and `--allow-env`, with the API keys of `[judge]` and
    /// `[embeddings]` visible only when named.
    pub fn case_env(&self, args: &CaseEnvArgs) -> Result<CaseEnv> {
        let from_file = self.config.cases.allow_env.iter().map(|name| (name, "[cases] allow_env in assay.toml"));
        let from_flags = args.allow_env.iter().map(|name| (name, "--allow-env"));
        for (name, source) in from_file.clone().chain(from_flags.clone()) {
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(UsageError(format!(
                    "{source} names {name:?}, which is not an environment variable name\n\nConsider the variable's exact name, e.g. OPENAI_API_KEY"
                ))
                .into());
            }
        }
        let allow = from_file.chain(from_flags).map(|(name, _)| name.clone());
        Ok(CaseEnv::from_process(allow, self.config.api_key_variables()))
    }

    /// Every way of reaching an agent: [`Project::catalog`] for `direct`,
    /// neuro-san servers as `server` and `[agent]` say for http/https.
    pub fn agents(&self, server: &ServerArgs) -> Result<Agents> {
        let http = HttpAgents::new(http_settings(server, &self.config)?).map_err(UsageError)?;
        Ok(Agents::new(self.catalog()?, http))
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

/// The judge from `[judge]` and `ASSAY_JUDGE_*` (which win over the file),
/// if one is configured.
fn judge(config: &Config, args: &ProjectArgs) -> Result<Option<RemoteJudge>> {
    let section = &config.judge;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let env_url = env("ASSAY_JUDGE_URL");
    if env_url.is_none() && section.url.is_some() && section.neuro_san.is_some() {
        return Err(UsageError("[judge] in assay.toml sets both `url` and `neuro_san`: choose one judge".into()).into());
    }
    let backend = match (env_url.or_else(|| section.url.clone()), &section.neuro_san) {
        (Some(url), _) => JudgeBackend::OpenAi {
            url,
            model: env("ASSAY_JUDGE_MODEL").or_else(|| section.model.clone()).unwrap_or_default(),
            api_key: env("ASSAY_JUDGE_API_KEY").or_else(|| section.api_key_env.as_deref().and_then(env)),
        },
        (None, Some(url)) => JudgeBackend::NeuroSan { url: url.clone() },
        (None, None) => return Ok(None),
    };
    let mut settings = JudgeSettings::new(backend);
    if let Some(seconds) = section.timeout_secs {
        settings.timeout = seconds_setting(seconds, "[judge] timeout_secs")?;
    }
    if let Some(retries) = section.retries {
        settings.retry.retries = retries;
    }
    if let Some(max_calls) = section.max_calls {
        settings.max_calls = max_calls;
    }
    settings.cache_dir = answer_cache_dir(config, args, "judge");
    let judge = RemoteJudge::new(settings).map_err(|e| UsageError(format!("[judge] in assay.toml: {e}")))?;
    Ok(Some(judge))
}

/// The embeddings backend from `[embeddings]` and `ASSAY_EMBEDDINGS_*`
/// (which win over the file), if one is configured.
fn embeddings(config: &Config, args: &ProjectArgs) -> Result<Option<RemoteEmbeddings>> {
    let section = &config.embeddings;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let Some(url) = env("ASSAY_EMBEDDINGS_URL").or_else(|| section.url.clone()) else { return Ok(None) };
    let model = env("ASSAY_EMBEDDINGS_MODEL").or_else(|| section.model.clone()).unwrap_or_default();
    let mut settings = EmbeddingsSettings::new(url, model);
    settings.api_key = env("ASSAY_EMBEDDINGS_API_KEY").or_else(|| section.api_key_env.as_deref().and_then(env));
    if let Some(seconds) = section.timeout_secs {
        settings.timeout = seconds_setting(seconds, "[embeddings] timeout_secs")?;
    }
    if let Some(retries) = section.retries {
        settings.retry.retries = retries;
    }
    if let Some(batch_size) = section.batch_size {
        if batch_size == 0 {
            return Err(UsageError("[embeddings] batch_size must be at least 1".into()).into());
        }
        settings.batch_size = batch_size;
    }
    if let Some(max_calls) = section.max_calls {
        settings.max_calls = max_calls;
    }
    if let Some(word_vectors) = section.word_vectors {
        settings.word_vectors = word_vectors;
    }
    settings.cache_dir = answer_cache_dir(config, args, "embeddings");
    let backend =
        RemoteEmbeddings::new(settings).map_err(|e| UsageError(format!("[embeddings] in assay.toml: {e}")))?;
    Ok(Some(backend))
}

/// A positive number of seconds from the setting `name`.
fn seconds_setting(seconds: f64, name: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or_else(|| UsageError(format!("{name} = {seconds} is not a positive number of seconds")).into())
}

/// Where a backend's answers are cached: `NAME/` in the cache directory
/// (`--cache-dir`, `[cache] dir`, or the per-user one, next to compiled
/// components), unless `--no-judge-cache`.
fn answer_cache_dir(config: &Config, args: &ProjectArgs, name: &str) -> Option<PathBuf> {
    if args.no_judge_cache {
        return None;
    }
    match (&args.cache_dir, &config.cache.dir) {
        (Some(dir), _) => Some(dir.join(name)),
        (None, Some(dir)) => Some(config.resolve(dir).join(name)),
        (None, None) => CompileCache::default_dir().and_then(|d| d.parent().map(|p| p.join(name))),
    }
}

/// How http/https connections reach neuro-san: flags and environment over
/// `[agent]` in assay.toml over defaults.
fn http_settings(server: &ServerArgs, config: &Config) -> Result<HttpSettings> {
    let defaults = HttpSettings::default();
    let idle_timeout = match config.agent.idle_timeout_secs {
        None => defaults.idle_timeout,
        Some(seconds) => Duration::try_from_secs_f64(seconds).map_err(|_| {
            UsageError(format!("[agent] idle_timeout_secs = {seconds} in assay.toml is not a number of seconds"))
        })?,
    };
    Ok(HttpSettings {
        base_url: server.agent_url.clone().or_else(|| config.agent.url.clone()).unwrap_or(defaults.base_url),
        ca_file: server.agent_ca.clone().or_else(|| config.agent.ca.as_deref().map(|ca| config.resolve(ca))),
        max_response_bytes: config.agent.max_response_mb.map_or(defaults.max_response_bytes, |mb| mb << 20),
        idle_timeout,
        ..defaults
    })
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
