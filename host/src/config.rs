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
//! ```

use crate::errors::ConfigError;
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
    /// The folder relative paths start from.
    #[serde(skip)]
    pub dir: PathBuf,
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

impl Config {
    /// Reads `path`, or `./assay.toml` when no path is given and it exists
    /// (the defaults otherwise).
    pub fn discover(path: Option<&Path>) -> Result<Config, ConfigError> {
        match path {
            Some(path) => Config::load(path),
            None if Path::new(CONFIG_FILE).is_file() => Config::load(Path::new(CONFIG_FILE)),
            None => Ok(Config { dir: PathBuf::from("."), ..Config::default() }),
        }
    }

    /// Reads and parses one file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let fail = |message: String| ConfigError { file: path.to_owned(), message };
        let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        let mut config: Config = toml::from_str(&text).map_err(|e| fail(e.to_string().trim_end().to_owned()))?;
        config.dir = path.parent().map(Path::to_owned).unwrap_or_default();
        Ok(config)
    }

    /// A path from the file, made relative to the current directory.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() { path.to_owned() } else { self.dir.join(path) }
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
    fn unknown_keys_are_errors_naming_the_file_line_and_known_keys() {
        let error = parse("[agent]\nurll = \"x\"\n").unwrap_err().to_string();
        assert!(error.contains("assay.toml"), "{error}");
        assert!(error.contains("line 2"), "{error}");
        assert!(error.contains("unknown field `urll`, expected one of `url`, `ca`"), "{error}");
    }

    #[test]
    fn relative_paths_are_relative_to_the_file() {
        let config = Config { dir: PathBuf::from("project"), ..Config::default() };
        assert_eq!(config.resolve(Path::new("agents/a.wasm")), PathBuf::from("project/agents/a.wasm"));
        assert_eq!(config.resolve(Path::new("/abs/a.wasm")), PathBuf::from("/abs/a.wasm"));
    }
}
