//! `assay.toml`: the project's configuration. Settings come from low to
//! high precedence: built-in defaults, then `assay.toml`, then environment
//! variables, then command-line flags. Relative paths in the file are
//! relative to the file.
//!
//! ```toml
//! [agent]                      # how http/https cases reach neuro-san
//! url = "http://localhost:8080"
//! ca = "certs/ca.pem"          # extra CA certificates for https
//! max_response_mb = 16
//! idle_timeout_secs = 120
//!
//! [agents]                     # agent components for `direct`, by name
//! my_agent = "agents/my_agent.wasm"
//!
//! [plugins.my-rouge]           # a matcher plugin
//! path = "plugins/rouge.wasm"  # a component, or a core module with an
//!                              # embedded component type
//! sha256 = "…"                 # optional pin: a mismatch refuses to load
//! # oci = "ghcr.io/acme/rouge:1.2.0@sha256:…"   # or a community plugin
//! # url = "https://example.com/rouge.wasm"      # (`assay plugin add REF`
//! # cosign-key = "keys/acme.pub"                # writes these, pinned)
//! grants = ["log", "judge"]    # capabilities it may import (log: default)
//! memory_mb = 128              # limit overrides
//! deadline_ms = 5000
//! fuel = 1000000000
//! deterministic = true         # fixed clocks, seeded randomness
//!
//! [keys]                       # who wins when two plugins claim a key
//! rouge = "my-rouge"
//!
//! [judge]                      # an OpenAI-compatible chat-completions endpoint
//! url = "http://localhost:11434/v1"
//! model = "llama3"
//! api_key_env = "OPENAI_API_KEY"
//! # neuro_san = "http://localhost:8080/gist"   # or a neuro-san agent
//! timeout_secs = 60
//! retries = 3
//! max_calls = 1000
//! concurrency = 16             # requests in flight at once
//!
//! [embeddings]                 # an OpenAI-compatible embeddings endpoint
//! url = "http://localhost:11434/v1"
//! model = "nomic-embed-text"
//! api_key_env = "OPENAI_API_KEY"
//! timeout_secs = 60
//! retries = 3
//! batch_size = 64
//! max_calls = 1000
//! word_vectors = true          # embed-tokens embeds each word
//!
//! [cache]
//! dir = "/tmp/assay-cache"     # only with --allow-project-cache-dir
//! enabled = true
//!
//! [cases]                      # what `${VAR}` in case files may read
//! paths = ["cases", "evals"]   # what `assay run` with no path runs
//! allow_env = ["OPENAI_API_KEY"]   # besides ASSAY_CASE_*
//! max_samples = 1000           # the most samples a case may ask for
//! max_checks = 1000            # the most checks a case may plan
//! timeout_in_seconds = 300     # a sample's whole time, unless its case says
//!
//! [trust]                      # files that may run programs and read secrets
//! commands = ["evals/**/*.suite.toml", "promptfooconfig.yaml"]
//! ```
//!
//! Components in `.assay/plugins/` next to the file (or in the current
//! directory) load automatically, with no grants.

mod connections;

pub use connections::{
    CONNECTION_TYPES, CommandConnection, ConnectionConfig, HttpConnection, NeuroSanConnection, OpenAiConnection,
};

use crate::errors::{ConfigError, PluginSourceError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file looked for in the current directory.
pub const CONFIG_FILE: &str = "assay.toml";

/// The parsed configuration.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[agent]`: the neuro-san server.
    #[serde(default)]
    pub agent: AgentConfig,
    /// `[agents]`: agent component files for `direct`, by agent name.
    #[serde(default)]
    pub agents: BTreeMap<String, PathBuf>,
    /// `[plugins.NAME]`: matcher plugins.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginConfig>,
    /// `[keys]`: key → the plugin that answers it when several claim it.
    #[serde(default)]
    pub keys: BTreeMap<String, String>,
    /// `[cache]`: the compile cache.
    #[serde(default)]
    pub cache: CacheConfig,
    /// `[judge]`: the language-model judge granted plugins may ask.
    #[serde(default)]
    pub judge: JudgeConfig,
    /// `[embeddings]`: the embeddings backend granted plugins may ask.
    #[serde(default)]
    pub embeddings: EmbeddingsConfig,
    /// `[cases]`: what test case files may read from the environment.
    #[serde(default)]
    pub cases: CasesConfig,
    /// `[trust]`: which discovered files are trusted, not data.
    #[serde(default)]
    pub trust: TrustConfig,
    /// `[scenarios]`: the agent and connection `assay eval` asks by default.
    #[serde(default)]
    pub scenarios: ScenariosConfig,
    /// `[connections.NAME]`: named connections to agents, each read by its
    /// `type` ([`Config::connection`]).
    #[serde(default)]
    pub connections: BTreeMap<String, toml::Table>,
    /// The folder relative paths start from.
    #[serde(skip)]
    pub dir: PathBuf,
    /// The file it was read from (none: the defaults).
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

/// `[agent]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The server's base URL.
    pub url: Option<String>,
    /// A PEM file of CA certificates to trust for https.
    pub ca: Option<PathBuf>,
    /// The response size cap, in MiB.
    pub max_response_mb: Option<usize>,
    /// How long a stream may stay silent, in seconds.
    pub idle_timeout_secs: Option<f64>,
}

/// `[plugins.NAME]`: where the component comes from (one of `path`, `oci`
/// and `url`), its pin, and how it runs.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// The component (or core module) file.
    pub path: Option<PathBuf>,
    /// A component in an OCI registry, with the digest of its manifest
    /// (`ghcr.io/acme/rouge:1.2.0@sha256:…`, as `assay plugin add` writes).
    pub oci: Option<String>,
    /// A component at an https URL.
    pub url: Option<String>,
    /// The pinned sha256 of the component, lowercase hex (required with
    /// `oci` and `url`).
    pub sha256: Option<String>,
    /// A cosign public key (PEM) whose signature an `oci` component must
    /// carry before it is used.
    #[serde(rename = "cosign-key")]
    pub cosign_key: Option<PathBuf>,
    /// Capabilities granted: `log`, `judge`, `embeddings`.
    #[serde(default)]
    pub grants: Vec<String>,
    /// Memory limit in MiB.
    pub memory_mb: Option<usize>,
    /// Deadline per call in milliseconds.
    pub deadline_ms: Option<u64>,
    /// Fuel budget per call.
    pub fuel: Option<u64>,
    /// Fixed clocks and seeded randomness (default false).
    #[serde(default)]
    pub deterministic: bool,
}

/// Where a `[plugins.NAME]` component comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginSource<'c> {
    /// A file (`path`).
    Path(&'c Path),
    /// An OCI reference (`oci`).
    Oci(&'c str),
    /// A URL (`url`).
    Url(&'c str),
}

impl PluginConfig {
    /// Its source: exactly one of `path`, `oci` and `url`; the `sha256` of
    /// a community component (`oci`, `url`), which names it in the plugin
    /// store, in lowercase hex; `cosign-key` only with `oci`.
    pub fn source(&self) -> Result<PluginSource<'_>, PluginSourceError> {
        let source = match (&self.path, &self.oci, &self.url) {
            (Some(path), None, None) => PluginSource::Path(path),
            (None, Some(oci), None) => PluginSource::Oci(oci),
            (None, None, Some(url)) => PluginSource::Url(url),
            (None, None, None) => return Err(PluginSourceError::NoComponent),
            _ => return Err(PluginSourceError::Twice),
        };
        let community = !matches!(source, PluginSource::Path(_));
        if let Some(sha256) = self.sha256.as_ref().filter(|_| community)
            && !(sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        {
            return Err(PluginSourceError::BadPin(sha256.clone()));
        }
        if self.cosign_key.is_some() && !matches!(source, PluginSource::Oci(_)) {
            return Err(PluginSourceError::CosignWithoutOci);
        }
        Ok(source)
    }
}

/// `[judge]`: an OpenAI-compatible chat-completions endpoint (`url`,
/// `model`, `api_key_env`) or a neuro-san agent (`neuro_san`).
/// `ASSAY_JUDGE_URL`, `ASSAY_JUDGE_MODEL`, `ASSAY_JUDGE_API_KEY` and
/// `ASSAY_JUDGE_CONCURRENCY` override the file.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeConfig {
    /// The API base, e.g. `http://localhost:11434/v1`.
    pub url: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// A neuro-san agent's URL, e.g. `http://localhost:8080/gist`, instead
    /// of `url`.
    pub neuro_san: Option<String>,
    /// The bound on one request, in seconds (default 60).
    pub timeout_secs: Option<f64>,
    /// Retries after a 429 or 5xx answer (default 3).
    pub retries: Option<u32>,
    /// The most judge calls one run may make (default 1000).
    pub max_calls: Option<usize>,
    /// The most requests in flight at once (default 16, at least 1);
    /// `ASSAY_JUDGE_CONCURRENCY` overrides it.
    #[serde(default, deserialize_with = "judge_concurrency")]
    pub concurrency: Option<usize>,
}

/// `[judge] concurrency`: a whole number, named in the error when it is
/// not one (0 is refused where the judge is built, with the same advice).
fn judge_concurrency<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    let refused = || {
        serde::de::Error::custom(
            "[judge] concurrency is the most judge requests in flight at once: set it to a whole number, 1 or more (default 16)",
        )
    };
    let value = i64::deserialize(deserializer).map_err(|_| refused())?;
    usize::try_from(value).map(Some).map_err(|_| refused())
}

/// `[embeddings]`: an OpenAI-compatible embeddings endpoint.
/// `ASSAY_EMBEDDINGS_URL`, `ASSAY_EMBEDDINGS_MODEL` and
/// `ASSAY_EMBEDDINGS_API_KEY` override the file.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsConfig {
    /// The API base, e.g. `http://localhost:11434/v1`.
    pub url: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The bound on one request, in seconds (default 60).
    pub timeout_secs: Option<f64>,
    /// Retries after a 429 or 5xx answer (default 3).
    pub retries: Option<u32>,
    /// The most texts per request (default 64).
    pub batch_size: Option<usize>,
    /// The most requests one run may make (default 1000).
    pub max_calls: Option<usize>,
    /// Whether token vectors are each word's embedding (default true).
    pub word_vectors: Option<bool>,
}

/// `[cases]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasesConfig {
    /// What `assay run` with no path runs: files, folders or globs,
    /// relative to the configuration (default: the project's folder).
    #[serde(default)]
    pub paths: Vec<PathBuf>,
    /// Environment variables `${VAR}` in case files may read besides
    /// `ASSAY_CASE_*`, by exact name.
    #[serde(default)]
    pub allow_env: Vec<String>,
    /// The most samples a case may ask for (default 1,000).
    pub max_samples: Option<u32>,
    /// The most checks a case may plan (default 1,000).
    pub max_checks: Option<usize>,
    /// The bound on a sample's whole time, streaming included, for cases
    /// that set no `timeout_in_seconds` (default 300).
    pub timeout_in_seconds: Option<f64>,
}

/// `[scenarios]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenariosConfig {
    /// The agent asked when neither `--to` nor the scenario names one
    /// (Kyma's files name none).
    pub agent: Option<String>,
    /// The connection used when `--connection` names none (default
    /// `direct`): a built-in one or a `[connections.NAME]`.
    pub connection: Option<String>,
}

/// `[trust]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustConfig {
    /// Globs, relative to the file's folder, of the case files trusted to
    /// run programs, read secrets and files outside their folder, and send
    /// credentials where they say (see [`crate::case::Trust`]).
    #[serde(default)]
    pub commands: Vec<String>,
}

/// `[cache]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// The directory; used only when the user allows it
    /// (`--allow-project-cache-dir`), else the per-user cache directory.
    pub dir: Option<PathBuf>,
    /// Whether to cache compiled components (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { dir: None, enabled: true }
    }
}

fn yes() -> bool {
    true
}

/// The folder whose components load automatically.
pub const PLUGINS_DIR: &str = ".assay/plugins";

impl Config {
    /// The `.wasm` files in `.assay/plugins/` next to the configuration,
    /// sorted.
    pub fn plugins_dir_files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.dir.join(PLUGINS_DIR)) else { return Vec::new() };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
            .collect();
        files.sort();
        files
    }

    /// Reads `path`, or when no path is given the `assay.toml` of the
    /// current folder or the nearest folder above it that has one (as Cargo
    /// finds `Cargo.toml`); the defaults when there is none. A found file
    /// someone else owns is refused: a configuration decides what runs.
    pub fn discover(path: Option<&Path>) -> Result<Config, ConfigError> {
        if let Some(path) = path {
            return Config::load(path);
        }
        if Path::new(CONFIG_FILE).is_file() {
            return Config::load_owned(Path::new(CONFIG_FILE));
        }
        let here = std::env::current_dir().unwrap_or_default();
        match here.ancestors().skip(1).map(|dir| dir.join(CONFIG_FILE)).find(|file| file.is_file()) {
            Some(file) => Config::load_owned(&file),
            None => Ok(Config { dir: PathBuf::from("."), ..Config::default() }),
        }
    }

    /// [`Config::load`] of a file found rather than named, refused unless
    /// the user owns it.
    fn load_owned(path: &Path) -> Result<Config, ConfigError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let owner = std::fs::metadata(path).map(|m| m.uid()).unwrap_or_default();
            let user = crate::private_files::current_uid();
            if owner != user {
                return Err(ConfigError {
                    file: path.to_owned(),
                    message: format!(
                        "it is owned by uid {owner}, not by you (uid {user}), and a configuration decides what runs: \
                         assay does not read one found by looking up from the current folder that someone else \
                         could have written\n\nConsider --config {} if you trust it",
                        path.display()
                    ),
                });
            }
        }
        Config::load(path)
    }

    /// Reads and parses one file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let fail = |message: String| ConfigError { file: path.to_owned(), message };
        let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        let mut config: Config =
            toml::from_str(&text).map_err(|e| fail(with_nearest_key(e.message(), &e.to_string())))?;
        config.dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        config.file = Some(path.to_owned());
        for (label, plugin) in &config.plugins {
            plugin.source().map_err(|message| fail(format!("[plugins.{label}] {message}")))?;
        }
        Ok(config)
    }

    /// The environment variables that hold the API keys of the judge, the
    /// embeddings backend and the connections: `ASSAY_JUDGE_API_KEY`,
    /// `ASSAY_EMBEDDINGS_API_KEY` and each `api_key_env`.
    pub fn api_key_variables(&self) -> Vec<String> {
        let mut names = vec!["ASSAY_JUDGE_API_KEY".to_owned(), "ASSAY_EMBEDDINGS_API_KEY".to_owned()];
        let sections = [&self.judge.api_key_env, &self.embeddings.api_key_env].into_iter().flatten();
        let connections = self.connections.values().filter_map(|table| table.get("api_key_env")?.as_str());
        for name in sections.map(String::as_str).chain(connections) {
            if !names.iter().any(|known| known == name) {
                names.push(name.to_owned());
            }
        }
        names
    }

    /// The connection `[connections.NAME]`, read by its type.
    pub fn connection(&self, name: &str) -> Option<Result<ConnectionConfig, String>> {
        self.connections.get(name).map(ConnectionConfig::from_table)
    }

    /// A path from the file, made relative to the current directory.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() { path.to_owned() } else { self.dir.join(path) }
    }
}

/// The parser's message, with the nearest valid key suggested when it
/// names an unknown one (`unknown field `urll`, expected one of `url`, …`).
fn with_nearest_key(message: &str, full: &str) -> String {
    let full = full.trim_end().to_owned();
    let Some(rest) = message.strip_prefix("unknown field `") else { return full };
    let Some((unknown, expected)) = rest.split_once("`, expected one of ") else { return full };
    let known = expected.split(", ").map(|k| k.trim().trim_matches('`'));
    match crate::suggest::nearest(unknown, known) {
        Some(key) => format!("{full}\n\nDid you mean `{key}`?"),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("assay.toml");
        std::fs::write(&path, text).unwrap();
        Config::load(&path).map(|c| Config { dir: PathBuf::new(), ..c })
    }

    #[test]
    fn reads_agent_settings_and_components() {
        let config = parse("[agent]\nurl = \"http://127.0.0.1:9000\"\n[agents]\nmine = \"a/mine.wasm\"\n").unwrap();
        assert_eq!(config.agent.url.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(config.agents["mine"], PathBuf::from("a/mine.wasm"));
    }

    #[test]
    fn a_plugin_names_its_component_once_and_a_community_one_pins_it_in_lowercase_hex() {
        let sha = "a".repeat(64);
        let oci = parse(&format!(
            "[plugins.r]\noci = \"ghcr.io/a/r:1@sha256:{sha}\"\nsha256 = \"{sha}\"\ncosign-key = \"k.pub\"\n"
        ));
        let oci = oci.unwrap();
        assert_eq!(oci.plugins["r"].source(), Ok(PluginSource::Oci(&format!("ghcr.io/a/r:1@sha256:{sha}"))));
        assert_eq!(oci.plugins["r"].cosign_key.as_deref(), Some(Path::new("k.pub")));
        // A path's pin keeps its old leniency (any case).
        assert!(parse(&format!("[plugins.p]\npath = \"p.wasm\"\nsha256 = \"{}\"\n", sha.to_uppercase())).is_ok());
        for (text, says) in [
            ("[plugins.p]\ngrants = [\"log\"]\n", "[plugins.p] names no component: set `path`"),
            ("[plugins.p]\npath = \"p.wasm\"\nurl = \"https://e.com/p.wasm\"\n", "names its component twice"),
            ("[plugins.p]\nurl = \"https://e.com/p.wasm\"\nsha256 = \"AB\"\n", "is not a sha256"),
            ("[plugins.p]\npath = \"p.wasm\"\ncosign-key = \"k.pub\"\n", "`cosign-key` verifies components from OCI"),
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
            assert!(error.contains("assay.toml"), "{error}");
        }
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_file_line_and_known_keys() {
        let error = parse("[agent]\nurll = \"x\"\n").unwrap_err().to_string();
        assert!(error.contains("assay.toml"), "{error}");
        assert!(error.contains("line 2"), "{error}");
        assert!(error.contains("unknown field `urll`, expected one of `url`, `ca`"), "{error}");
        assert!(error.ends_with("\n\nDid you mean `url`?"), "{error}");
        // A section name too, and nothing suggested for what is near nothing.
        let error = parse("[judeg]\nurl = \"x\"\n").unwrap_err().to_string();
        assert!(error.ends_with("Did you mean `judge`?"), "{error}");
        let error = parse("[agent]\nzzzzzzzz = 1\n").unwrap_err().to_string();
        assert!(!error.contains("Did you mean"), "{error}");
    }

    #[test]
    fn relative_paths_are_relative_to_the_file() {
        let config = Config { dir: PathBuf::from("project"), ..Config::default() };
        assert_eq!(config.resolve(Path::new("agents/a.wasm")), PathBuf::from("project/agents/a.wasm"));
        assert_eq!(config.resolve(Path::new("/abs/a.wasm")), PathBuf::from("/abs/a.wasm"));
    }
}
