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
use assay::backend::{AnswerCache, EmbeddingsSettings, JudgeBackend, JudgeSettings, RemoteEmbeddings, RemoteJudge};
use assay::case::CaseEnv;
use assay::config::{CONFIG_FILE, Config, PluginConfig};
use assay::errors::RegistryError;
use assay::plugin::{BUILTIN_MATCHERS, MatcherPlugin, Registry};
use assay::sandbox::host::embeddings::Embeddings;
use assay::sandbox::host::judge::Judge;
use assay::sandbox::{
    Capabilities, CompileCache, ComponentOptions, ComponentSource, Grants, Limits, Runtime, read_component_file,
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
        let compile_caching = !args.no_cache && config.cache.enabled;
        let cache_dir = if compile_caching || !args.no_judge_cache { chosen_cache_dir(&config, args) } else { None };
        let cache = if compile_caching {
            cache_dir.clone().or_else(CompileCache::default_dir).map(CompileCache::new)
        } else {
            None
        };
        let largest_memory = config
            .plugins
            .values()
            .filter_map(|p| p.memory_mb)
            .map(|mb| mb << 20)
            .fold(Limits::default().memory_bytes, usize::max);
        let runtime = Runtime::with_cache(largest_memory, cache);
        let judge = judge(&config, args, cache_dir.as_deref())?.map(Arc::new);
        let embeddings = embeddings(&config, args, cache_dir.as_deref())?.map(Arc::new);
        Ok(Project { config, runtime, judge, embeddings, args })
    }

    /// Every matcher plugin: the built-ins, then [`Project::plugin_files`];
    /// `[keys]` settles conflicts.
    pub fn registry(&self) -> Result<Registry> {
        let files = self.plugin_files()?;
        let mut registry = Registry::new();
        for (key, plugin) in &self.config.keys {
            registry.prefer(key, plugin);
        }
        let judge = self.judge.clone().map(|j| j as Arc<dyn Judge>);
        registry.add_builtins(&self.runtime, &Capabilities { judge: judge.clone(), embeddings: None })?;
        for file in files {
            let PluginOrigin::Configured(plugin) = file.origin else {
                let loaded = self.load_file(&file.path, ComponentOptions::default())?;
                registry.add_labelled(loaded, &file.label)?;
                continue;
            };
            let label = &file.label;
            let mut options = plugin_options(label, plugin)?;
            if options.grants.judge {
                options.capabilities.judge = judge.clone();
            }
            if options.grants.embeddings {
                options.capabilities.embeddings = self.embeddings.clone().map(|e| e as Arc<dyn Embeddings>);
            }
            let loaded =
                self.load_file(&file.path, options).with_context(|| format!("in [plugins.{label}] of assay.toml"))?;
            registry.add_labelled(loaded, label)?;
        }
        registry.check_preferences()?;
        Ok(registry)
    }

    /// Every plugin file to load, labelled: `[plugins.*]`, then the
    /// components in `.assay/plugins/` that no `[plugins.*]` names by path,
    /// then `--plugin` (a file listed already is skipped). A label
    /// names one plugin, the built-ins' included: a second plugin under a
    /// label taken is an error naming both, so that nothing can take over
    /// a pinned plugin's `[keys]` by borrowing its label.
    pub fn plugin_files(&self) -> Result<Vec<PluginFile<'_>>> {
        let stem = |path: &Path| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let configured = self.config.plugins.iter().map(|(label, plugin)| PluginFile {
            label: label.clone(),
            path: self.config.resolve(&plugin.path),
            origin: PluginOrigin::Configured(plugin),
        });
        let auto = self.config.plugins_dir_files().into_iter().map(|path| PluginFile {
            label: stem(&path),
            path,
            origin: PluginOrigin::AutoLoaded,
        });
        let command_line = self.args.plugins.iter().map(|path| PluginFile {
            label: stem(path),
            path: path.clone(),
            origin: PluginOrigin::CommandLine,
        });
        let mut files: Vec<PluginFile<'_>> = Vec::new();
        let mut seen_files = std::collections::HashSet::new();
        let mut labels: std::collections::HashMap<String, String> =
            BUILTIN_MATCHERS.iter().map(|b| (b.name.to_owned(), format!("the built-in `{}`", b.name))).collect();
        for file in configured.chain(auto).chain(command_line) {
            // A file configured already, or named twice, is that plugin
            // (two `[plugins.*]` may load one file with different settings).
            let identity = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
            if !seen_files.insert(identity) && !matches!(file.origin, PluginOrigin::Configured(_)) {
                continue;
            }
            if let Some(first) = labels.insert(file.label.clone(), file.describe()) {
                let second = file.describe();
                return Err(RegistryError::DuplicateLabel { label: file.label, first, second }.into());
            }
            files.push(file);
        }
        Ok(files)
    }

    fn load_file(&self, path: &Path, options: ComponentOptions) -> Result<MatcherPlugin> {
        let bytes = read_component_file(path).with_context(|| format!("failed to read plugin `{}`", path.display()))?;
        Ok(MatcherPlugin::load(&self.runtime, ComponentSource::File(path.to_owned()), &bytes, options)?)
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

/// Where a plugin file to load is named.
pub enum PluginOrigin<'c> {
    /// `[plugins.LABEL]` in assay.toml.
    Configured(&'c PluginConfig),
    /// A component in `.assay/plugins/`, loaded with no grants.
    AutoLoaded,
    /// `--plugin FILE`, loaded with no grants.
    CommandLine,
}

/// A plugin file to load, and its label.
pub struct PluginFile<'c> {
    /// Its `[plugins.NAME]`, or its file's stem.
    pub label: String,
    /// The file, resolved.
    pub path: PathBuf,
    /// Where it is named.
    pub origin: PluginOrigin<'c>,
}

impl PluginFile<'_> {
    /// Where it is named, for messages.
    fn describe(&self) -> String {
        match self.origin {
            PluginOrigin::Configured(_) => {
                format!("[plugins.{}] in assay.toml (`{}`)", self.label, self.path.display())
            }
            PluginOrigin::AutoLoaded => format!("`{}`", self.path.display()),
            PluginOrigin::CommandLine => format!("--plugin `{}`", self.path.display()),
        }
    }
}

/// The judge from `[judge]` and `ASSAY_JUDGE_*` (which win over the file),
/// if one is configured.
fn judge(config: &Config, args: &ProjectArgs, cache_dir: Option<&Path>) -> Result<Option<RemoteJudge>> {
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
    settings.cache = answer_cache(args, cache_dir, "judge");
    let judge = RemoteJudge::new(settings).map_err(|e| UsageError(format!("[judge] in assay.toml: {e}")))?;
    Ok(Some(judge))
}

/// The embeddings backend from `[embeddings]` and `ASSAY_EMBEDDINGS_*`
/// (which win over the file), if one is configured.
fn embeddings(config: &Config, args: &ProjectArgs, cache_dir: Option<&Path>) -> Result<Option<RemoteEmbeddings>> {
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
    settings.cache = answer_cache(args, cache_dir, "embeddings");
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

/// The cache directory the user chose: `--cache-dir` (or `ASSAY_CACHE_DIR`),
/// else `[cache] dir` of assay.toml when `--allow-project-cache-dir` (or
/// `ASSAY_ALLOW_PROJECT_CACHE_DIR`) allows it; `None` means the per-user
/// default. A project's own choice is ignored with a warning: whoever
/// controls its files would choose where compiled native code is loaded
/// from.
fn chosen_cache_dir(config: &Config, args: &ProjectArgs) -> Option<PathBuf> {
    if let Some(dir) = &args.cache_dir {
        return Some(dir.clone());
    }
    let dir = config.cache.dir.as_deref()?;
    if args.allow_project_cache_dir {
        return Some(config.resolve(dir));
    }
    let file = args.config.as_deref().unwrap_or(Path::new(CONFIG_FILE));
    eprintln!(
        "warning: ignoring `[cache] dir = {:?}` in `{}`: a project does not choose where assay keeps compiled \
         code and cached answers; using the per-user cache\n\nConsider --allow-project-cache-dir or \
         ASSAY_ALLOW_PROJECT_CACHE_DIR=1 to use it (for a project you trust), or --cache-dir DIR",
        dir.display().to_string(),
        file.display()
    );
    None
}

/// A backend's answer cache: `NAME/` in the chosen cache directory, else in
/// the per-user one (next to compiled components), unless `--no-judge-cache`.
fn answer_cache(args: &ProjectArgs, cache_dir: Option<&Path>, name: &str) -> Option<AnswerCache> {
    if args.no_judge_cache {
        return None;
    }
    let dir = match cache_dir {
        Some(dir) => dir.join(name),
        None => CompileCache::default_dir()?.parent()?.join(name),
    };
    Some(AnswerCache::new(dir))
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
fn plugin_options(label: &str, plugin: &PluginConfig) -> Result<ComponentOptions> {
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
    Ok(ComponentOptions {
        limits,
        grants,
        sha256: plugin.sha256.clone(),
        deterministic: plugin.deterministic,
        ..ComponentOptions::default()
    })
}
