//! The project's named connections: each `[connections.NAME]` of
//! `assay.toml` built into the [`Transport`] that reaches its agent, and the
//! names a case file may use, for the planner.

use crate::agent::{
    CommandAgents, CommandSettings, HttpAgents, HttpApi, HttpSettings, OpenAiAgents, OpenAiSettings, Transport,
};
use crate::check::KeySet;
use crate::config::{CommandConnection, ConnectionConfig, HttpConnection, NeuroSanConnection, OpenAiConnection};
use crate::errors::ProjectError;
use crate::plugin::Registry;
use crate::project::Project;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

impl Project {
    /// Every `[connections.NAME]`, built, and the connections of the
    /// promptfoo configs discovered: an error names the file, the
    /// connection and what is wrong with it.
    pub fn connections(&self) -> Result<BTreeMap<String, Arc<dyn Transport>>, ProjectError> {
        let mut built = BTreeMap::new();
        for name in self.config().connections.keys() {
            let setting = format!("[connections.{name}]");
            let config = self.config().connection(name).expect("a listed connection").map_err(|message| {
                ProjectError::Setting { file: self.config_file().to_owned(), setting: setting.clone(), message }
            })?;
            let transport = self.transport(&config).map_err(|message| ProjectError::Setting {
                file: self.config_file().to_owned(),
                setting,
                message,
            })?;
            built.insert(name.clone(), transport);
        }
        for suite in self.promptfoo_suites() {
            built.extend(suite.transports());
        }
        Ok(built)
    }

    /// The transport of one connection, or what is wrong with its settings.
    fn transport(&self, config: &ConnectionConfig) -> Result<Arc<dyn Transport>, String> {
        match config {
            ConnectionConfig::NeuroSan(neuro_san) => Ok(Arc::new(self.neuro_san(neuro_san)?)),
            ConnectionConfig::Command(command) => Ok(Arc::new(self.command(command)?)),
            ConnectionConfig::Http(http) => Ok(Arc::new(self.http_api(http)?)),
            ConnectionConfig::OpenAi(openai) => Ok(Arc::new(self.openai(openai)?)),
        }
    }

    fn neuro_san(&self, config: &NeuroSanConnection) -> Result<HttpAgents, String> {
        let defaults = HttpSettings::default();
        let idle_timeout = match config.idle_timeout_secs {
            None => defaults.idle_timeout,
            Some(seconds) => seconds_of(seconds, "idle_timeout_secs")?,
        };
        HttpAgents::new(HttpSettings {
            base_url: config.url.clone(),
            ca_file: config.ca.as_deref().map(|ca| self.config().resolve(ca)),
            max_response_bytes: config.max_response_mb.map_or(defaults.max_response_bytes, |mb| mb << 20),
            idle_timeout,
            ..defaults
        })
    }

    /// A `command` connection: its folder from the configuration file's,
    /// its caps from the settings or the defaults.
    fn command(&self, config: &CommandConnection) -> Result<CommandAgents, String> {
        let idle_timeout = match config.idle_timeout_secs {
            None => Duration::from_secs(120),
            Some(seconds) => seconds_of(seconds, "idle_timeout_secs")?,
        };
        CommandAgents::new(CommandSettings {
            command: config.command.clone(),
            env: config.env.clone(),
            dir: config.dir.as_deref().map_or_else(|| self.config().dir.clone(), |dir| self.config().resolve(dir)),
            idle_timeout,
            max_response_bytes: config.max_response_mb.unwrap_or(16) << 20,
        })
    }

    /// A `type = "http"` connection: its `{{env.NAME}}` read what case
    /// files may.
    fn http_api(&self, config: &HttpConnection) -> Result<HttpApi, String> {
        let ca = config.ca.as_deref().map(|ca| self.config().resolve(ca));
        let idle = config.idle_timeout_secs.map(|seconds| seconds_of(seconds, "idle_timeout_secs")).transpose()?;
        HttpApi::new(config, self.case_env(), ca.as_deref(), idle)
    }

    /// An `openai` connection: its key read from the project's
    /// environment.
    fn openai(&self, config: &OpenAiConnection) -> Result<OpenAiAgents, String> {
        let defaults = OpenAiSettings::default();
        let idle_timeout = config.idle_timeout_secs.map(|s| seconds_of(s, "idle_timeout_secs")).transpose()?;
        OpenAiAgents::new(OpenAiSettings {
            url: config.url.clone(),
            model: config.model.clone(),
            model_from_agent: config.model_from_agent,
            api_key: config.api_key_env.as_deref().and_then(|name| self.var(name)).map(str::to_owned),
            api_key_env: config.api_key_env.clone(),
            system: config.system.clone(),
            stream: config.stream,
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            json_mode: config.json_mode,
            retries: config.retries.unwrap_or(defaults.retries),
            max_response_bytes: config.max_response_mb.map_or(defaults.max_response_bytes, |mb| mb << 20),
            idle_timeout: idle_timeout.unwrap_or(defaults.idle_timeout),
            ca_file: config.ca.as_deref().map(|ca| self.config().resolve(ca)),
            ..defaults
        })
    }

    /// What a case file may name: the matchers' keys and the connections.
    pub fn case_names(&self) -> Result<Arc<CaseNames>, ProjectError> {
        let mut connections: Vec<String> = self.config().connections.keys().cloned().collect();
        for suite in self.promptfoo_suites() {
            connections.extend(suite.transports().map(|(name, _)| name));
        }
        Ok(Arc::new(CaseNames { registry: self.registry()?, connections }))
    }
}

/// A positive number of seconds from the setting `name`.
pub(crate) fn seconds_of(seconds: f64, name: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or_else(|| format!("`{name} = {seconds}` is not a positive number of seconds"))
}

/// The names a case of the project may use: the registry's matcher keys,
/// and the configured connections.
pub struct CaseNames {
    registry: Arc<Registry>,
    connections: Vec<String>,
}

impl KeySet for CaseNames {
    fn has_key(&self, key: &str) -> bool {
        self.registry.has_key(key)
    }

    fn suggest(&self, key: &str) -> Option<String> {
        self.registry.suggest(key)
    }

    fn provider_entry(&self, key: &str) -> Option<String> {
        KeySet::provider_entry(self.registry.as_ref(), key)
    }

    fn connection_names(&self) -> Vec<String> {
        self.connections.clone()
    }
}
