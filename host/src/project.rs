//! The front door: [`Project`] turns plain [`ProjectOptions`] (what the
//! command line, an embedder or a service asks for) into everything a run
//! needs, reading `assay.toml` and the environment once: the runtime with
//! its compile cache, the matcher [`Registry`] (built-ins, `[plugins.*]`,
//! `.assay/plugins/`, extra files), the agents (`direct` components,
//! neuro-san servers), the judge and embeddings backends, what case files
//! may read from the environment and the secrets reports hide, the case
//! files of a run and a [`Runner`].
//!
//! Settings come from, lowest to highest: built-in defaults, `assay.toml`,
//! the environment, the options (the command line's flags).

use crate::agent::serve::ServedAgents;
use crate::agent::{AgentCatalog, Agents, HttpAgents, HttpSettings};
use crate::backend::{
    AnswerCache, DEFAULT_JUDGE_CONCURRENCY, EmbeddingsSettings, JudgeBackend, JudgeSettings, RemoteEmbeddings,
    RemoteJudge,
};
use crate::case::{CaseEnv, CaseFiles, Trust, discover_with};
use crate::config::{CONFIG_FILE, Config, PluginConfig, PluginSource};
use crate::errors::{CaseError, ProjectError, RegistryError};
use crate::eval::{EvalOptions, Evaluator};
use crate::formats::promptfoo;
use crate::formats::{
    Format, RUN_EXTENSIONS, SCENARIO_EXTENSIONS, Scenario, ScenarioFile, Validation, read_scenario_file,
};
use crate::job::{CaseAdjustment, CaseFilter, CaseSource, PendingCases};
use crate::plugin::{
    BUILTIN_MATCHERS, JAVASCRIPT_PLUGIN, MatcherPlugin, PROMPTFOO_BUILTINS, PROMPTFOO_PYTHON_PLUGIN, Registry,
};
use crate::report::Redactor;
use crate::run::{RunOptions, Runner};
use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::judge::Judge;
use crate::sandbox::{
    Capabilities, CompileCache, ComponentOptions, ComponentSource, Grader, Grants, Limits, Runtime, read_component_file,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

mod community;
mod connections;
mod discovery;
mod lock;
pub use community::{AddPlugin, CommunityPlugin, Update};
pub use connections::CaseNames;
pub use discovery::{CaseSelection, Discovered, DiscoveredCases};
pub use lock::{Lock, Pin, PinEntry};

/// What a project is opened with: plain data, every field optional. The
/// command line fills it from flags; an embedder from its own settings.
#[derive(Clone, Debug, Default)]
pub struct ProjectOptions {
    /// The configuration file (default: `./assay.toml` when present).
    pub config: Option<PathBuf>,
    /// More matcher plugin components to load, with no grants.
    pub plugins: Vec<PathBuf>,
    /// More agent components for `direct`, by name.
    pub agents: Vec<(String, PathBuf)>,
    /// Where compiled components (and cached answers, in `judge/` and
    /// `embeddings/` beside them) are kept (default: the per-user cache).
    pub cache_dir: Option<PathBuf>,
    /// Use `[cache] dir` of the configuration, which is otherwise ignored:
    /// a project does not choose where compiled native code is loaded from.
    pub allow_project_cache_dir: bool,
    /// Compile every component afresh, reading and writing no cache.
    pub no_cache: bool,
    /// Ask the judge and the embeddings backend afresh, caching no answer.
    pub no_answer_cache: bool,
    /// Variables case files may read besides `ASSAY_CASE_*` and `[cases]
    /// allow_env`.
    pub allow_env: Vec<String>,
    /// Case files see only the variables allowed by name (`[cases]
    /// allow_env`, [`ProjectOptions::allow_env`]), not `ASSAY_CASE_*`:
    /// `assay serve`, whose clients are not its user (a verdict on a
    /// variable is an oracle for its value, redacted or not).
    pub named_env_only: bool,
    /// The neuro-san server for http/https cases (default: `[agent] url`,
    /// else `http://localhost:8080`).
    pub agent_url: Option<String>,
    /// Extra CA certificates to trust for https (default: `[agent] ca`).
    pub agent_ca: Option<PathBuf>,
    /// Which discovered files are trusted: those `[trust] commands` names
    /// (the default), every file (`--allow-commands`), or none (`assay
    /// serve` without `--allow-commands`).
    pub trusted_files: TrustedFiles,
    /// The environment the project reads (`ASSAY_JUDGE_*`,
    /// `ASSAY_EMBEDDINGS_*`, API keys, what case files may read); `None`
    /// takes the process's, once, when the project opens.
    pub environment: Option<BTreeMap<String, String>>,
}

/// Which files [`Project::discover`] finds are trusted (see
/// `crate::case::Trust`); the others are data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TrustedFiles {
    /// The files `[trust] commands` of assay.toml names.
    #[default]
    Configured,
    /// Every file, for this run (`--allow-commands`).
    Everything,
    /// No file (a server whose clients are not its user).
    Nothing,
}

/// An opened project: the configuration, the runtime and the backends,
/// and the factories of what a run needs.
pub struct Project {
    config: Config,
    config_file: PathBuf,
    options: ProjectOptions,
    environment: BTreeMap<String, String>,
    runtime: Runtime,
    judge: Option<Arc<RemoteJudge>>,
    embeddings: Option<Arc<RemoteEmbeddings>>,
    /// promptfoo's default grader, for the promptfoo plugins when the
    /// project configures no judge or embeddings ([`Settings::promptfoo_default`]).
    promptfoo_default: PromptfooDefault,
    /// The graders of promptfoo's grading providers, one per distinct spec
    /// ([`Project::grader`]).
    graders: Mutex<HashMap<promptfoo::GraderSpec, Grader>>,
    /// Where answers are cached (none when they are not).
    answer_cache_dir: Option<PathBuf>,
    case_env: CaseEnv,
    /// Which discovered files are trusted, and what they use.
    trust: Arc<Trust>,
    /// The registry, once built ([`Project::registry`]).
    registry: Mutex<Option<Arc<Registry>>>,
    /// The promptfoo configs [`Project::discover`] read: their providers'
    /// connections, secrets and output.
    promptfoo: Mutex<Vec<Arc<promptfoo::Suite>>>,
    /// The `javascript` plugin in which a promptfoo config's JavaScript
    /// computes values while the config is read, before the run's registry
    /// exists ([`Project::compute_value`]); compiled on first use.
    scripts: OnceLock<Result<Registry, String>>,
}

impl std::fmt::Debug for Project {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Project").field("config_file", &self.config_file).finish_non_exhaustive()
    }
}

impl Project {
    /// Reads the configuration and the environment, and starts the runtime
    /// and the backends. Plugins load on [`Project::registry`].
    pub fn open(options: ProjectOptions) -> Result<Project, ProjectError> {
        let config = Config::discover(options.config.as_deref())?;
        let config_file = config.file.clone().unwrap_or_else(|| PathBuf::from(CONFIG_FILE));
        let environment = options.environment.clone().unwrap_or_else(process_environment);
        let compile_caching = !options.no_cache && config.cache.enabled;
        let cache_dir = if compile_caching || !options.no_answer_cache {
            chosen_cache_dir(&config, &config_file, &options)
        } else {
            None
        };
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
        let settings = Settings { config: &config, file: &config_file, environment: &environment, options: &options };
        let judge = settings.judge(cache_dir.as_deref())?.map(Arc::new);
        let embeddings = settings.embeddings(cache_dir.as_deref())?.map(Arc::new);
        let promptfoo_default = settings.promptfoo_default(cache_dir.as_deref())?;
        let case_env = settings.case_env()?;
        let trust = settings.trust()?;
        Ok(Project {
            config,
            config_file,
            options,
            environment,
            runtime,
            judge,
            embeddings,
            promptfoo_default,
            graders: Mutex::default(),
            answer_cache_dir: cache_dir,
            case_env,
            trust: Arc::new(trust),
            registry: Mutex::default(),
            promptfoo: Mutex::default(),
            scripts: OnceLock::new(),
        })
    }

    /// Calls `notice` before a component's compile that the compile cache
    /// cannot spare and that takes a while (`Runtime::on_slow_compile`).
    pub fn on_slow_compile(&self, notice: impl Fn(&crate::sandbox::CompileNotice) + Send + Sync + 'static) {
        self.runtime.on_slow_compile(notice);
    }

    /// The git commit the project's folder is at, when it is in a
    /// repository and `git` is installed (for the report's header).
    pub fn git_commit(&self) -> Option<String> {
        let output = std::process::Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .current_dir(&self.config.dir)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let commit = String::from_utf8(output.stdout).ok()?.trim().to_owned();
        (output.status.success() && !commit.is_empty()).then_some(commit)
    }

    /// What a run given no path runs: `[cases] paths` (relative to the
    /// configuration), else the project's folder; with no `assay.toml`,
    /// nothing ([`ProjectError::NoPaths`]).
    pub fn default_case_paths(&self) -> Result<Vec<PathBuf>, ProjectError> {
        if self.config.file.is_none() {
            return Err(ProjectError::NoPaths);
        }
        match self.config.cases.paths.is_empty() {
            true => Ok(vec![self.config.dir.clone()]),
            false => Ok(self.config.cases.paths.iter().map(|path| self.config.resolve(path)).collect()),
        }
    }

    /// Where runs keep their results: `results/` in the project's root (in
    /// the current folder when there is no `assay.toml`).
    pub fn run_folders(&self) -> crate::results::RunFolders {
        crate::results::RunFolders::of_project(&self.config)
    }

    /// The configuration (defaults when there is no `assay.toml`).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The configuration file's path (whether or not it exists).
    pub fn config_file(&self) -> &Path {
        &self.config_file
    }

    /// The options it was opened with.
    pub fn options(&self) -> &ProjectOptions {
        &self.options
    }

    /// The wasmtime runtime every component of the project runs in.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The judge from `[judge]` and `ASSAY_JUDGE_*`, if one is configured:
    /// one per project, so that its budget bounds everything it judges.
    pub fn judge(&self) -> Option<&Arc<RemoteJudge>> {
        self.judge.as_ref()
    }

    /// The embeddings backend from `[embeddings]` and `ASSAY_EMBEDDINGS_*`.
    pub fn embeddings(&self) -> Option<&Arc<RemoteEmbeddings>> {
        self.embeddings.as_ref()
    }

    /// The environment as case files may see it: `ASSAY_CASE_*`, `[cases]
    /// allow_env` and the options' `allow_env`, with the API keys of
    /// `[judge]` and `[embeddings]` visible only when named.
    pub fn case_env(&self) -> &CaseEnv {
        &self.case_env
    }

    /// Which discovered files are trusted (`[trust] commands`,
    /// `--allow-commands`), and what the files read so far use: the
    /// programs, secret names and URLs `assay plan` shows.
    pub fn trust(&self) -> &Arc<Trust> {
        &self.trust
    }

    /// What every report of the project hides: the secrets of
    /// [`Project::case_env`].
    pub fn redactor(&self) -> Redactor {
        let suites = self.promptfoo_suites();
        let provider_secrets = suites.iter().flat_map(|suite| suite.secrets().map(str::to_owned)).collect::<Vec<_>>();
        let grader_key = self.promptfoo_default.api_key.as_deref();
        Redactor::new(
            self.case_env
                .secrets()
                .iter()
                .map(String::as_str)
                .chain(provider_secrets.iter().map(String::as_str))
                .chain(grader_key),
        )
    }

    /// The promptfoo configs [`Project::discover`] has read, in order.
    pub fn promptfoo_suites(&self) -> Vec<Arc<promptfoo::Suite>> {
        self.promptfoo.lock().expect("the promptfoo suites' lock").clone()
    }

    /// A reporter writing promptfoo's output file (`promptfoo eval -o
    /// FILE`) for the cases of the promptfoo configs discovered.
    pub fn promptfoo_output(&self, path: PathBuf) -> crate::report::PromptfooOutput {
        crate::report::PromptfooOutput::new(path, self.promptfoo_suites(), self.redactor())
    }

    /// Every matcher plugin: the built-ins (compiled when one of their
    /// checks first runs), then [`Project::plugin_files`] (loaded now),
    /// then, once [`Project::discover`] has found promptfoo configs and no
    /// plugin provides their keys, the embedded promptfoo plugins (compiled
    /// on first use too); `[keys]` settles conflicts. Built on first use,
    /// and again with the promptfoo plugin added when promptfoo configs are
    /// discovered after that (the plugins loaded already are kept).
    pub fn registry(&self) -> Result<Arc<Registry>, ProjectError> {
        let mut slot = self.registry.lock().expect("the registry's lock");
        let registry = match slot.as_ref() {
            Some(registry) => registry.clone(),
            None => Arc::new(self.load_registry()?),
        };
        let provided = PROMPTFOO_BUILTINS.iter().all(|builtin| registry.has_key(builtin.keys[0].0));
        let registry = match self.promptfoo_suites().is_empty() || provided {
            true => registry,
            false => Arc::new(self.with_promptfoo(&registry)?),
        };
        registry.check_preferences()?;
        *slot = Some(registry.clone());
        Ok(registry)
    }

    fn load_registry(&self) -> Result<Registry, ProjectError> {
        let files = self.plugin_files()?;
        let mut registry = Registry::new();
        for (key, plugin) in &self.config.keys {
            registry.prefer(key, plugin);
        }
        let judge = self.judge.clone().map(|j| j as Arc<dyn Judge>);
        registry.add_builtins(&self.runtime, &Capabilities { judge: judge.clone(), embeddings: None })?;
        for file in files {
            let options = match file.origin {
                PluginOrigin::Configured(plugin) => {
                    let mut options = self.plugin_options(&file.label, plugin)?;
                    if options.grants.judge {
                        options.capabilities.judge = judge.clone();
                    }
                    if options.grants.embeddings {
                        options.capabilities.embeddings = self.embeddings.clone().map(|e| e as Arc<dyn Embeddings>);
                    }
                    options
                }
                PluginOrigin::AutoLoaded | PluginOrigin::Extra => ComponentOptions::default(),
            };
            let loaded = self.load_plugin(&file, options)?;
            registry.add_labelled(loaded, &file.label)?;
        }
        Ok(registry)
    }

    /// The grader of a promptfoo grading provider: a judge asking its text
    /// model and an embeddings backend asking its embedding model, each
    /// with the rest of `[judge]` and `[embeddings]` (timeouts, retries,
    /// budget, answer cache); built once per distinct spec.
    fn grader(&self, spec: &promptfoo::GraderSpec) -> Result<Grader, String> {
        let mut graders = self.graders.lock().expect("the graders' lock");
        if let Some(grader) = graders.get(spec) {
            return Ok(grader.clone());
        }
        let settings = Settings {
            config: &self.config,
            file: &self.config_file,
            environment: &self.environment,
            options: &self.options,
        };
        let cache_dir = self.answer_cache_dir.as_deref();
        let judge = match &spec.text {
            None => None,
            Some(endpoint) => {
                let backend = JudgeBackend::OpenAi {
                    url: endpoint.url.clone(),
                    model: endpoint.model.clone(),
                    api_key: endpoint.api_key.clone(),
                };
                let judge = settings.remote_judge(backend, cache_dir).map_err(|e| e.to_string())?;
                Some(Arc::new(judge) as Arc<dyn Judge>)
            }
        };
        let embeddings = match &spec.embedding {
            None => None,
            Some(endpoint) => {
                let embeddings = settings
                    .remote_embeddings(
                        endpoint.url.clone(),
                        endpoint.model.clone(),
                        endpoint.api_key.clone(),
                        cache_dir,
                    )
                    .map_err(|e| e.to_string())?;
                Some(Arc::new(embeddings) as Arc<dyn Embeddings>)
            }
        };
        let grader = Grader { name: spec.name().into(), capabilities: Arc::new(Capabilities { judge, embeddings }) };
        graders.insert(spec.clone(), grader.clone());
        Ok(grader)
    }

    /// The registry a run could need, promptfoo's built-ins included
    /// (`assay plugins --precompile`, which compiles every plugin into the
    /// compile cache ahead of a run: a CI image's build step).
    pub fn every_plugin(&self) -> Result<Registry, ProjectError> {
        let registry = self.registry()?;
        self.with_promptfoo(&registry)
    }

    /// `registry` and the embedded promptfoo plugins (the assertions plugin,
    /// the Python runner, the JavaScript engine), which a run of promptfoo configs needs for their
    /// assertions, each unless a plugin of the project provides its keys:
    /// with the project's judge and embeddings, as built-ins get them (or,
    /// where the project configures none, promptfoo's default grader), and
    /// compiled only when one of its checks runs.
    fn with_promptfoo(&self, registry: &Registry) -> Result<Registry, ProjectError> {
        let mut registry = registry.clone();
        let judge = self.judge.clone().or_else(|| self.promptfoo_default.judge.clone());
        let embeddings = self.embeddings.clone().or_else(|| self.promptfoo_default.embeddings.clone());
        let capabilities = Capabilities {
            judge: judge.map(|j| j as Arc<dyn Judge>),
            embeddings: embeddings.map(|e| e as Arc<dyn Embeddings>),
        };
        for builtin in PROMPTFOO_BUILTINS {
            if !registry.has_key(builtin.keys[0].0) {
                registry.add_builtin(&self.runtime, builtin, &capabilities)?;
            }
        }
        Ok(registry)
    }

    /// Every plugin file to load, labelled: `[plugins.*]` (a community
    /// plugin's from the plugin store, fetched by its pin when this machine
    /// lacks it), then the
    /// components in `.assay/plugins/` that no `[plugins.*]` names by path,
    /// then the options' extra files (a file listed already is skipped). A
    /// label names one plugin, the built-ins' included: a second plugin
    /// under a label taken is an error naming both, so that nothing can take
    /// over a pinned plugin's `[keys]` by borrowing its label.
    pub fn plugin_files(&self) -> Result<Vec<PluginFile<'_>>, ProjectError> {
        let stem = |path: &Path| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut configured = Vec::new();
        for (label, plugin) in &self.config.plugins {
            let path = match plugin.source() {
                Ok(PluginSource::Path(path)) => self.config.resolve(path),
                Ok(PluginSource::Oci(_) | PluginSource::Url(_)) => self.community_component(label, plugin)?,
                Err(error) => return Err(self.setting_error(&format!("[plugins.{label}]"), error.to_string())),
            };
            configured.push(PluginFile { label: label.clone(), path, origin: PluginOrigin::Configured(plugin) });
        }
        let auto = self.config.plugins_dir_files().into_iter().map(|path| PluginFile {
            label: stem(&path),
            path,
            origin: PluginOrigin::AutoLoaded,
        });
        let extra = self.options.plugins.iter().map(|path| PluginFile {
            label: stem(path),
            path: path.clone(),
            origin: PluginOrigin::Extra,
        });
        let mut files: Vec<PluginFile<'_>> = Vec::new();
        let mut seen_files = HashSet::new();
        let mut labels: HashMap<String, String> =
            BUILTIN_MATCHERS.iter().map(|b| (b.name.to_owned(), format!("the built-in `{}`", b.name))).collect();
        for file in configured.into_iter().chain(auto).chain(extra) {
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

    fn load_plugin(&self, file: &PluginFile<'_>, options: ComponentOptions) -> Result<MatcherPlugin, ProjectError> {
        let configured_as = matches!(file.origin, PluginOrigin::Configured(_)).then(|| file.label.clone());
        let bytes = read_component_file(&file.path).map_err(|cause| ProjectError::ReadPlugin {
            path: file.path.clone(),
            configured_as: configured_as.clone(),
            cause: cause.to_string(),
        })?;
        MatcherPlugin::load(&self.runtime, ComponentSource::File(file.path.clone()), &bytes, options)
            .map_err(|error| ProjectError::LoadPlugin { configured_as, error })
    }

    /// The options `[plugins.LABEL]` asks for, on top of the defaults.
    fn plugin_options(&self, label: &str, plugin: &PluginConfig) -> Result<ComponentOptions, ProjectError> {
        let grants = Grants::from_names(plugin.grants.iter().map(String::as_str))
            .map_err(|message| self.setting_error(&format!("[plugins.{label}] grants"), message))?;
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

    /// The agents `direct` can reach: the demo agents, then `[agents]`,
    /// then the options' extra components.
    pub fn catalog(&self) -> Result<AgentCatalog, ProjectError> {
        let mut catalog = AgentCatalog::with_demo_agents(self.runtime.clone(), Limits::default());
        let configured = self.config.agents.iter().map(|(name, path)| (name, self.config.resolve(path)));
        let extra = self.options.agents.iter().map(|(name, path)| (name, path.clone()));
        for (name, path) in configured.chain(extra) {
            catalog.add_file(name, &path).map_err(ProjectError::Agent)?;
        }
        Ok(catalog)
    }

    /// The agents `assay agent serve NAME|COMPONENT…` serves: each name a
    /// known agent, each `.wasm` path a component named after its file;
    /// every known agent when none is named.
    pub fn served_agents(&self, names: &[String]) -> Result<ServedAgents, ProjectError> {
        let mut catalog = self.catalog()?;
        let mut chosen = Vec::new();
        for agent in names {
            if agent.ends_with(".wasm") {
                let path = Path::new(agent);
                let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or(agent).to_owned();
                catalog.add_file(&name, path).map_err(ProjectError::Agent)?;
                chosen.push(name);
            } else {
                chosen.push(agent.clone());
            }
        }
        if chosen.is_empty() {
            chosen = catalog.names().map(str::to_owned).collect();
        }
        let mut served = ServedAgents::new();
        for name in chosen {
            match catalog.get(&name) {
                Ok(Some(agent)) => {
                    served.insert(name, agent);
                }
                Ok(None) => {
                    let known = catalog.names().map(str::to_owned).collect();
                    return Err(ProjectError::UnknownAgent { name, known });
                }
                Err(cause) => return Err(ProjectError::Agent(cause)),
            }
        }
        Ok(served)
    }

    /// Every way of reaching an agent: [`Project::catalog`] for `direct`,
    /// neuro-san servers as the options and `[agent]` say for http/https.
    pub fn agents(&self) -> Result<Agents, ProjectError> {
        let http = HttpAgents::new(self.http_settings()?).map_err(ProjectError::Agent)?;
        Ok(Agents::new(self.catalog()?, http).with_connections(self.connections()?))
    }

    /// How http/https connections reach neuro-san: options over `[agent]`
    /// over defaults.
    fn http_settings(&self) -> Result<HttpSettings, ProjectError> {
        let defaults = HttpSettings::default();
        let agent = &self.config.agent;
        let idle_timeout = match agent.idle_timeout_secs {
            None => defaults.idle_timeout,
            Some(seconds) => Duration::try_from_secs_f64(seconds).map_err(|_| {
                self.setting_error("[agent] idle_timeout_secs", format!("{seconds} is not a number of seconds"))
            })?,
        };
        Ok(HttpSettings {
            base_url: self.options.agent_url.clone().or_else(|| agent.url.clone()).unwrap_or(defaults.base_url),
            ca_file: self.options.agent_ca.clone().or_else(|| agent.ca.as_deref().map(|ca| self.config.resolve(ca))),
            max_response_bytes: agent.max_response_mb.map_or(defaults.max_response_bytes, |mb| mb << 20),
            idle_timeout,
            ..defaults
        })
    }

    /// The cases `paths` name (files, directories searched for `*.hocon`
    /// and `*.suite.toml`, globs) that `filter` selects: a test case file is
    /// one case, a suite file one per line of its spec files (read when the
    /// walk reaches it: see `crate::formats::suite`), a promptfoo config one per
    /// cell of its table (read now: its providers' connections and secrets
    /// are the project's from here on). The cases are found as they are
    /// asked for ([`Discovered`]); what is wrong with the paths themselves,
    /// and a filter that selects nothing, are errors now.
    pub fn discover(&self, paths: &[PathBuf], filter: Option<&CaseFilter>) -> Result<Discovered, ProjectError> {
        let root = self.config.file.is_some().then_some(self.config.dir.as_path());
        self.discovered(CaseFiles::find_in_project(paths, RUN_EXTENSIONS, root)?, filter, &self.trust)
    }

    /// [`Project::discover`] confined to `root` (`assay serve`'s served
    /// root, absolute and with its links resolved): each of `paths` is
    /// relative to it, a file named is known by its path under it, and a
    /// path or a case file (links followed) outside it is an error naming
    /// the path, before anything is read. Every file the cases read later
    /// is opened beneath a handle on `root` (`Trust::beneath`), so a link
    /// swapped in after this check leads nowhere.
    pub fn discover_within(
        &self,
        root: &Path,
        paths: &[String],
        filter: Option<&CaseFilter>,
    ) -> Result<Vec<Discovered>, ProjectError> {
        let trust = self
            .trust
            .beneath(root)
            .map_err(|e| ProjectError::ServedRoot { root: root.to_path_buf(), message: e.to_string() })?;
        let trust = Arc::new(trust);
        let mut found = Vec::with_capacity(paths.len());
        for (index, path) in paths.iter().enumerate() {
            let error = |message: String| ProjectError::ServedPath { index, path: path.clone(), message };
            // One answer whether the path is outside the root, missing, or
            // unreadable, and no server path in it: a client learns nothing
            // of the server's files beyond the root.
            let not_found = || {
                error(
                    "there is no case file or folder of that name under the served root; name one relative to \
                     it (no `..` out of it, no link leading out of it)"
                        .into(),
                )
            };
            if path.is_empty() || Path::new(path).is_absolute() {
                return Err(not_found());
            }
            let resolved = std::fs::canonicalize(root.join(path)).map_err(|_| not_found())?;
            if !resolved.starts_with(root) {
                return Err(not_found());
            }
            // Listed beneath the root: a link out (or one swapped in later)
            // cannot be listed, let alone read.
            let files = CaseFiles::find_within(root, &resolved, RUN_EXTENSIONS, trust.access()).map_err(|e| match e
                .to_string()
                .contains(crate::case::LEADS_OUTSIDE)
            {
                true => error("it holds a link leading outside the served root".into()),
                false => not_found(),
            })?;
            if files.is_empty() {
                return Err(error("it holds no case file (*.hocon, *.suite.toml)".into()));
            }
            found.push(self.discovered(files, None, &trust)?);
        }
        if let Some(filter) = filter {
            found = found.into_iter().map(|discovered| discovered.filtered(filter.clone())).collect();
            if found.iter().all(Discovered::is_empty) {
                return Err(ProjectError::NoCaseMatches { filter: filter.text().to_owned() });
            }
        }
        Ok(found)
    }

    /// The cases of `files`: each promptfoo config named among them read
    /// now, with its file's trust.
    fn discovered(
        &self,
        files: CaseFiles,
        filter: Option<&CaseFilter>,
        trust: &Arc<Trust>,
    ) -> Result<Discovered, ProjectError> {
        let mut expanded = HashMap::new();
        for file in files.listed() {
            if expanded.contains_key(&file.path) || Format::of(&file.path, trust.access()) != Some(Format::Promptfoo) {
                continue;
            }
            let var = |name: &str| self.var(name).map(str::to_owned);
            let folder = file.path.parent().unwrap_or(Path::new("")).to_path_buf();
            let trust = trust.of(&file.path);
            let graders = |spec: &promptfoo::GraderSpec| self.grader(spec);
            let compute = |key: &str, actual: &serde_json::Value, expected: &serde_json::Value| {
                self.compute_value(key, actual, expected)
            };
            let context = promptfoo::ProviderContext {
                folder: &folder,
                var: &var,
                case_env: &self.case_env,
                trust: &trust,
                graders: &graders,
                compute: &compute,
            };
            let (cases, suite) = promptfoo::expand(file, &context);
            let mut suites = self.promptfoo.lock().expect("the promptfoo suites' lock");
            // Read again (a server's runs): the config as it is now.
            suites.retain(|known| suite.as_ref().is_none_or(|suite| suite.path != known.path));
            suites.extend(suite);
            expanded.insert(file.path.clone(), discovery::Expanded::new(cases));
        }
        if files.is_empty() {
            return Err(ProjectError::NoCaseFiles);
        }
        let discovered = Discovered::new(files, expanded, trust.clone(), filter.cloned());
        if let Some(filter) = filter
            && discovered.is_empty()
        {
            return Err(ProjectError::NoCaseMatches { filter: filter.text().to_owned() });
        }
        Ok(discovered)
    }

    /// A value a promptfoo config's JavaScript or Python computes while
    /// the config is read (its module, a test generator, `transformVars`):
    /// `key` of the built-in `javascript` plugin (`pf_js_value`) or Python
    /// runner (`pf_py_value`), sandboxed as every check is; each built-in is
    /// compiled the first time one of its keys is asked.
    fn compute_value(
        &self,
        key: &str,
        actual: &serde_json::Value,
        expected: &serde_json::Value,
    ) -> Result<Option<serde_json::Value>, String> {
        let scripts = self.scripts.get_or_init(|| {
            let mut registry = Registry::new();
            for builtin in [&JAVASCRIPT_PLUGIN, &PROMPTFOO_PYTHON_PLUGIN] {
                registry.add_builtin(&self.runtime, builtin, &Capabilities::default()).map_err(|e| e.to_string())?;
            }
            Ok(registry)
        });
        // A scope per call: what one config makes the plugin do (fault
        // after fault) never disables it for the next (`assay serve`).
        let registry = scripts.as_ref().map_err(String::clone)?.for_new_scope();
        let verdict = crate::plugin::evaluate_one(&registry, key, actual, expected).map_err(|e| e.to_string())?;
        match crate::plugin::computed_value(verdict) {
            Ok(value) => Ok(Some(value)),
            // Passed without a value: `undefined`.
            Err(verdict) if verdict.outcome == crate::check::Outcome::Pass && !verdict.truncated => Ok(None),
            Err(verdict) => Err(verdict.message),
        }
    }

    /// The scenarios under `paths` (YAML, HOCON or JSON files), each read
    /// with the project's case environment, or why it cannot be (a file in
    /// Kyma's format gives one per query). Validation files among them are
    /// skipped (`assay validate` runs them).
    pub fn scenarios(&self, paths: &[PathBuf]) -> Result<Vec<Result<Scenario, CaseError>>, ProjectError> {
        let pick = |file| match file {
            ScenarioFile::Scenario(scenario) => vec![scenario],
            ScenarioFile::Queries(scenarios) => scenarios,
            ScenarioFile::Validation(_) => Vec::new(),
        };
        let found = self.scenario_files(paths, pick)?;
        if found.is_empty() { Err(ProjectError::NoScenarioFiles) } else { Ok(found) }
    }

    /// The validation files under `paths`, or why each cannot be read.
    /// Scenario files among them are skipped (`assay eval` runs them).
    pub fn validations(&self, paths: &[PathBuf]) -> Result<Vec<Result<Validation, CaseError>>, ProjectError> {
        let pick = |file| match file {
            ScenarioFile::Validation(validation) => vec![validation],
            ScenarioFile::Scenario(_) | ScenarioFile::Queries(_) => Vec::new(),
        };
        let found = self.scenario_files(paths, pick)?;
        if found.is_empty() { Err(ProjectError::NoValidationFiles) } else { Ok(found) }
    }

    /// What `pick` takes from each scenario-format file under `paths`, read
    /// (a file that cannot be read is kept, as its error).
    fn scenario_files<T>(
        &self,
        paths: &[PathBuf],
        pick: impl Fn(ScenarioFile) -> Vec<T>,
    ) -> Result<Vec<Result<T, CaseError>>, ProjectError> {
        let files = discover_with(paths, SCENARIO_EXTENSIONS)?;
        let read = files.iter().map(|file| read_scenario_file(&file.path, &self.case_env));
        Ok(read
            .flat_map(|file| match file {
                Ok(file) => pick(file).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            })
            .collect())
    }

    /// `cases` (what [`Project::discover`] found, or a list of case files)
    /// read and planned as the run goes, each case changed by `adjust`
    /// (`--connection`, `--samples`).
    pub fn cases(
        &self,
        cases: impl Into<PendingCases>,
        adjust: Option<CaseAdjustment>,
    ) -> Result<CaseSource, ProjectError> {
        Ok(CaseSource::read(cases, self.case_names()?, Arc::new(self.case_env.clone()), adjust))
    }

    /// A runner with the project's matchers and agents.
    /// `[cases] max_samples` and `max_checks` of assay.toml, when set, are
    /// the run's caps on samples and checks per case; `[cases]
    /// timeout_in_seconds`, the bound on a sample whose case sets none.
    pub fn runner(&self, mut options: RunOptions) -> Result<Runner, ProjectError> {
        if let Some(max) = self.config.cases.max_samples {
            if max == 0 {
                return Err(self.setting_error("[cases] max_samples", "it is 0, so no case could run: use at least 1"));
            }
            options.max_samples = max;
        }
        if let Some(max) = self.config.cases.max_checks {
            if max == 0 {
                return Err(self.setting_error("[cases] max_checks", "it is 0, so no case could run: use at least 1"));
            }
            options.max_checks = max;
        }
        options.default_timeout = self.default_timeout()?;
        Ok(Runner::new(self.registry()?, self.agents()?, options))
    }

    /// An evaluator of scenarios with the project's matchers and agents;
    /// `[cases] timeout_in_seconds` of assay.toml, when set, bounds a
    /// sample that `--timeout` does not.
    pub fn evaluator(&self, mut options: EvalOptions) -> Result<Evaluator, ProjectError> {
        options.default_timeout = self.default_timeout()?;
        let defaults = &self.config.scenarios;
        options.default_agent = options.default_agent.or_else(|| defaults.agent.clone());
        if options.connection.is_none()
            && let Some(name) = &defaults.connection
        {
            let configured = |named: &str| self.config.connections.contains_key(named);
            let connection = crate::case::Connection::from_name(name)
                .filter(|connection| !matches!(connection, crate::case::Connection::Named(named) if !configured(named)))
                .ok_or_else(|| {
                    let known: Vec<&str> = crate::case::Connection::BUILT_IN
                        .iter()
                        .map(crate::case::Connection::name)
                        .chain(self.config.connections.keys().map(String::as_str))
                        .collect();
                    self.setting_error(
                        "[scenarios] connection",
                        format!("`{name}` is no connection: the connections are {}", known.join(", ")),
                    )
                })?;
            options.connection = Some(connection);
        }
        Ok(Evaluator::new(self.registry()?, self.agents()?, options))
    }

    /// `[cases] timeout_in_seconds` of assay.toml, else the default.
    fn default_timeout(&self) -> Result<Duration, ProjectError> {
        let Some(seconds) = self.config.cases.timeout_in_seconds else { return Ok(crate::run::DEFAULT_CASE_TIMEOUT) };
        Duration::try_from_secs_f64(seconds).ok().filter(|t| !t.is_zero()).ok_or_else(|| {
            self.setting_error(
                "[cases] timeout_in_seconds",
                format!("{seconds} is not a positive number of seconds: use, e.g., 300 (the default)"),
            )
        })
    }

    /// A variable of the project's environment, if set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.environment.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    fn setting_error(&self, setting: &str, message: impl Into<String>) -> ProjectError {
        ProjectError::Setting { file: self.config_file.clone(), setting: setting.to_owned(), message: message.into() }
    }
}

/// Where a plugin file to load is named.
#[derive(Debug)]
pub enum PluginOrigin<'c> {
    /// `[plugins.LABEL]` in assay.toml.
    Configured(&'c PluginConfig),
    /// A component in `.assay/plugins/`, loaded with no grants.
    AutoLoaded,
    /// One of the options' extra files (`--plugin FILE`), loaded with no
    /// grants.
    Extra,
}

/// A plugin file to load, and its label.
#[derive(Debug)]
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
            PluginOrigin::Extra => format!("--plugin `{}`", self.path.display()),
        }
    }
}

/// The process's environment, its variables that are UTF-8.
fn process_environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// promptfoo's default grader and embeddings ([`Settings::promptfoo_default`]),
/// and the key they send, which every report hides.
#[derive(Default)]
struct PromptfooDefault {
    judge: Option<Arc<RemoteJudge>>,
    embeddings: Option<Arc<RemoteEmbeddings>>,
    api_key: Option<String>,
}

/// What the backends and the case environment are built from.
struct Settings<'a> {
    config: &'a Config,
    file: &'a Path,
    environment: &'a BTreeMap<String, String>,
    options: &'a ProjectOptions,
}

impl Settings<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.environment.get(name).filter(|v| !v.is_empty()).cloned()
    }

    fn error(&self, setting: &str, message: impl Into<String>) -> ProjectError {
        ProjectError::Setting { file: self.file.to_owned(), setting: setting.to_owned(), message: message.into() }
    }

    /// A positive number of seconds from the setting `name`.
    fn seconds(&self, seconds: f64, name: &str) -> Result<Duration, ProjectError> {
        Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|t| !t.is_zero())
            .ok_or_else(|| self.error(name, format!("{seconds} is not a positive number of seconds")))
    }

    /// The judge from `[judge]` and `ASSAY_JUDGE_*` (which win over the
    /// file), if one is configured.
    fn judge(&self, cache_dir: Option<&Path>) -> Result<Option<RemoteJudge>, ProjectError> {
        let section = &self.config.judge;
        let env_url = self.var("ASSAY_JUDGE_URL");
        if env_url.is_none() && section.url.is_some() && section.neuro_san.is_some() {
            return Err(self.error("[judge]", "it sets both `url` and `neuro_san`: choose one judge"));
        }
        let backend = match (env_url.or_else(|| section.url.clone()), &section.neuro_san) {
            (Some(url), _) => JudgeBackend::OpenAi {
                url,
                model: self.var("ASSAY_JUDGE_MODEL").or_else(|| section.model.clone()).unwrap_or_default(),
                api_key: self
                    .var("ASSAY_JUDGE_API_KEY")
                    .or_else(|| section.api_key_env.as_deref().and_then(|name| self.var(name))),
            },
            (None, Some(url)) => JudgeBackend::NeuroSan { url: url.clone() },
            (None, None) => return Ok(None),
        };
        self.remote_judge(backend, cache_dir).map(Some)
    }

    /// A judge asking `backend`, with the rest of `[judge]`.
    fn remote_judge(&self, backend: JudgeBackend, cache_dir: Option<&Path>) -> Result<RemoteJudge, ProjectError> {
        let section = &self.config.judge;
        let mut settings = JudgeSettings::new(backend);
        if let Some(seconds) = section.timeout_secs {
            settings.timeout = self.seconds(seconds, "[judge] timeout_secs")?;
        }
        if let Some(retries) = section.retries {
            settings.retry.retries = retries;
        }
        if let Some(max_calls) = section.max_calls {
            settings.max_calls = max_calls;
        }
        settings.concurrency = self.judge_concurrency()?;
        settings.cache = self.answer_cache(cache_dir, "judge");
        crate::agent::remote_judge(settings).map_err(|message| self.error("[judge]", message))
    }

    /// promptfoo's default grader where the project configures no judge
    /// (and likewise its embeddings): OpenAI's API at `OPENAI_BASE_URL` (or
    /// `OPENAI_API_BASE_URL`, else `https://api.openai.com/v1`) with
    /// `OPENAI_API_KEY` and promptfoo's default models, as `promptfoo eval`
    /// grades in the same environment. Only when `OPENAI_API_KEY` is set;
    /// only the promptfoo plugins get it (an assay case grades with
    /// `[judge]` alone); the file read decides nothing of where the key
    /// goes.
    fn promptfoo_default(&self, cache_dir: Option<&Path>) -> Result<PromptfooDefault, ProjectError> {
        let Some(api_key) = self.var("OPENAI_API_KEY") else { return Ok(PromptfooDefault::default()) };
        let url = self
            .var("OPENAI_BASE_URL")
            .or_else(|| self.var("OPENAI_API_BASE_URL"))
            .unwrap_or_else(|| promptfoo::OPENAI_API_BASE.to_owned());
        let judge_configured = self.var("ASSAY_JUDGE_URL").is_some()
            || self.config.judge.url.is_some()
            || self.config.judge.neuro_san.is_some();
        let judge = match judge_configured {
            true => None,
            false => {
                let model = promptfoo::DEFAULT_GRADING_MODEL.to_owned();
                let backend = JudgeBackend::OpenAi { url: url.clone(), model, api_key: Some(api_key.clone()) };
                Some(Arc::new(self.remote_judge(backend, cache_dir)?))
            }
        };
        let embeddings_configured = self.var("ASSAY_EMBEDDINGS_URL").is_some() || self.config.embeddings.url.is_some();
        let embeddings = match embeddings_configured {
            true => None,
            false => {
                let mut settings = EmbeddingsSettings::new(url, promptfoo::DEFAULT_EMBEDDING_MODEL);
                settings.api_key = Some(api_key.clone());
                settings.cache = self.answer_cache(cache_dir, "embeddings");
                Some(Arc::new(
                    RemoteEmbeddings::new(settings).map_err(|message| self.error("OPENAI_BASE_URL", message))?,
                ))
            }
        };
        let api_key = (judge.is_some() || embeddings.is_some()).then_some(api_key);
        Ok(PromptfooDefault { judge, embeddings, api_key })
    }

    /// `[judge] concurrency`, or `ASSAY_JUDGE_CONCURRENCY` (which wins):
    /// a whole number of requests, at least 1.
    fn judge_concurrency(&self) -> Result<usize, ProjectError> {
        const KEY: &str = "[judge] concurrency";
        let (value, zero) = match self.var("ASSAY_JUDGE_CONCURRENCY") {
            Some(text) => match text.trim().parse::<usize>() {
                Ok(value) => (value, "ASSAY_JUDGE_CONCURRENCY is 0"),
                Err(_) => {
                    let message = format!(
                        "ASSAY_JUDGE_CONCURRENCY is {text:?}, not a whole number of requests: set it to 1 or more (default {DEFAULT_JUDGE_CONCURRENCY})"
                    );
                    return Err(self.error(KEY, message));
                }
            },
            None => match self.config.judge.concurrency {
                Some(value) => (value, "it is 0"),
                None => return Ok(DEFAULT_JUDGE_CONCURRENCY),
            },
        };
        if value == 0 {
            let message = format!(
                "{zero}, and the judge needs at least 1 request in flight: set it to 1 or more (default {DEFAULT_JUDGE_CONCURRENCY})"
            );
            return Err(self.error(KEY, message));
        }
        Ok(value)
    }

    /// The embeddings backend from `[embeddings]` and `ASSAY_EMBEDDINGS_*`
    /// (which win over the file), if one is configured.
    fn embeddings(&self, cache_dir: Option<&Path>) -> Result<Option<RemoteEmbeddings>, ProjectError> {
        let section = &self.config.embeddings;
        let Some(url) = self.var("ASSAY_EMBEDDINGS_URL").or_else(|| section.url.clone()) else { return Ok(None) };
        let model = self.var("ASSAY_EMBEDDINGS_MODEL").or_else(|| section.model.clone()).unwrap_or_default();
        let api_key = self
            .var("ASSAY_EMBEDDINGS_API_KEY")
            .or_else(|| section.api_key_env.as_deref().and_then(|name| self.var(name)));
        self.remote_embeddings(url, model, api_key, cache_dir).map(Some)
    }

    /// An embeddings backend asking `model` at `url`, with the rest of
    /// `[embeddings]`.
    fn remote_embeddings(
        &self,
        url: String,
        model: String,
        api_key: Option<String>,
        cache_dir: Option<&Path>,
    ) -> Result<RemoteEmbeddings, ProjectError> {
        let section = &self.config.embeddings;
        let mut settings = EmbeddingsSettings::new(url, model);
        settings.api_key = api_key;
        if let Some(seconds) = section.timeout_secs {
            settings.timeout = self.seconds(seconds, "[embeddings] timeout_secs")?;
        }
        if let Some(retries) = section.retries {
            settings.retry.retries = retries;
        }
        if let Some(batch_size) = section.batch_size {
            if batch_size == 0 {
                return Err(self.error("[embeddings] batch_size", "it must be at least 1"));
            }
            settings.batch_size = batch_size;
        }
        if let Some(max_calls) = section.max_calls {
            settings.max_calls = max_calls;
        }
        if let Some(word_vectors) = section.word_vectors {
            settings.word_vectors = word_vectors;
        }
        settings.cache = self.answer_cache(cache_dir, "embeddings");
        RemoteEmbeddings::new(settings).map_err(|message| self.error("[embeddings]", message))
    }

    /// A backend's answer cache: `NAME/` in the chosen cache directory,
    /// else in the per-user one (next to compiled components), unless
    /// answers are not to be cached.
    fn answer_cache(&self, cache_dir: Option<&Path>, name: &str) -> Option<AnswerCache> {
        if self.options.no_answer_cache {
            return None;
        }
        let dir = match cache_dir {
            Some(dir) => dir.join(name),
            None => CompileCache::default_dir()?.parent()?.join(name),
        };
        Some(AnswerCache::new(dir))
    }

    /// Which files are trusted: `[trust] commands`, or every file with
    /// `--allow-commands`.
    fn trust(&self) -> Result<Trust, ProjectError> {
        let patterns = match self.options.trusted_files {
            TrustedFiles::Configured => self.config.trust.commands.as_slice(),
            TrustedFiles::Everything | TrustedFiles::Nothing => &[],
        };
        let everything = (self.options.trusted_files == TrustedFiles::Everything).then_some("--allow-commands");
        Trust::new(&self.config.dir, patterns, everything).map_err(|message| self.error("[trust] commands", message))
    }

    /// The environment as case files may see it.
    fn case_env(&self) -> Result<CaseEnv, ProjectError> {
        let from_file = self.config.cases.allow_env.iter().map(|name| (name, "[cases] allow_env in assay.toml"));
        let from_options = self.options.allow_env.iter().map(|name| (name, "--allow-env"));
        for (name, source) in from_file.clone().chain(from_options.clone()) {
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(ProjectError::NotAVariableName { named_in: source, name: name.clone() });
            }
        }
        let allow = from_file.chain(from_options).map(|(name, _)| name.clone());
        let vars = self.environment.iter().map(|(name, value)| (name.as_str(), value.as_str()));
        let env = CaseEnv::new(vars, allow, self.config.api_key_variables());
        Ok(if self.options.named_env_only { env.named_only() } else { env })
    }
}

/// The cache directory the user chose: the options' `cache_dir`, else
/// `[cache] dir` of assay.toml when `allow_project_cache_dir` allows it;
/// `None` means the per-user default. A project's own choice is ignored
/// with a warning: whoever controls its files would choose where compiled
/// native code is loaded from.
fn chosen_cache_dir(config: &Config, file: &Path, options: &ProjectOptions) -> Option<PathBuf> {
    if let Some(dir) = &options.cache_dir {
        return Some(dir.clone());
    }
    let dir = config.cache.dir.as_deref()?;
    if options.allow_project_cache_dir {
        return Some(config.resolve(dir));
    }
    eprintln!(
        "warning: ignoring `[cache] dir = {:?}` in `{}`: a project does not choose where assay keeps compiled \
         code and cached answers; using the per-user cache\n\nConsider --allow-project-cache-dir or \
         ASSAY_ALLOW_PROJECT_CACHE_DIR=1 to use it (for a project you trust), or --cache-dir DIR",
        dir.display().to_string(),
        file.display()
    );
    None
}
