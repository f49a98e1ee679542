//! What a server is configured with: the agents it serves, the protocol it
//! speaks, and how it treats its clients.

use crate::agent::transport::direct::AgentComponent;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The agents one server answers for, by the name in the URL.
pub type ServedAgents = BTreeMap<String, Arc<AgentComponent>>;

/// The protocol a server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// neuro-san's HTTP protocol (the default).
    #[default]
    NeuroSan,
    /// OpenAI's chat completions under `/v1`: `POST /v1/chat/completions`
    /// (the request's `model` names the agent) and `GET /v1/models`.
    OpenAi,
}

/// How a server treats its clients.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The protocol it speaks (default neuro-san's).
    pub protocol: Protocol,
    /// Added before every chat answer, to stand in for a model (default 0).
    pub latency: Duration,
    /// How long a request's head may take to arrive, then its body, and a
    /// TLS handshake (default 10 s); a connection idle between requests is
    /// closed after it too.
    pub read_timeout: Duration,
    /// The most connections served at once (default 1024); the next ones
    /// wait, unaccepted, until one closes.
    pub max_connections: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            protocol: Protocol::NeuroSan,
            latency: Duration::ZERO,
            read_timeout: Duration::from_secs(10),
            max_connections: 1024,
        }
    }
}
