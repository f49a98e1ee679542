//! Connections to the agent under test.
//!
//! [`Agents`] sends one [`ChatRequest`] over a case's connection, each a
//! [`Transport`], and reduces the streamed messages to an [`AgentResponse`]:
//! - `direct`: an agent component from the [`AgentCatalog`], in-process and
//!   sandboxed (`transport/direct/`);
//! - `http`/`https`: a neuro-san server (`transport/neuro_san.rs`);
//! - a named connection (`[connections.NAME]` of `assay.toml`): its
//!   [`Transport`] (`transport/`), e.g. a neuro-san server of its own,
//!   an OpenAI-compatible endpoint ([`OpenAiAgents`], `transport/openai/`),
//!   a local program per request ([`ExecAgents`], `transport/exec.rs`) or
//!   long-lived ([`CommandAgents`], `transport/command.rs`), or any JSON API
//!   by templates and JSONPath ([`HttpApi`], `transport/http/`);
//! - `grpc`, and `replay` without a recording: refused, saying what to use
//!   instead (`transport/refused.rs`).
//!
//! `message.rs` and `reduce.rs`, which every transport shares, stay here.
//!
//! `serve/` is the other side: any agent component served over neuro-san's
//! HTTP protocol or OpenAI's (`assay agent serve`). Conversation state
//! (chat_context, sly_data carry-forward) belongs to the runner, which owns
//! a conversation.

mod judge;
mod message;
mod reduce;
pub mod serve;
mod transport;

pub use judge::remote_judge;
pub use message::{ChatMessage, ChatRequest, Origin, SAMPLE_METADATA, StreamLine};
pub use reduce::{AgentResponse, Usage, reduce, reduce_keeping_text};
pub use transport::command::{CommandAgents, CommandSettings, MINIMAL_PATH};
pub(crate) use transport::command::{
    StderrTail, describe_exit, environment as process_environment, keep_stderr_tail, shown_command,
};
pub use transport::direct::catalog::{AgentCatalog, DEMO_AGENTS};
pub use transport::direct::{AgentCallError, AgentComponent, DirectAgents};
pub use transport::exec::ExecAgents;
pub use transport::http::HttpApi;
pub use transport::neuro_san::{DEFAULT_AGENT_URL, HttpAgents, HttpSettings, NeuroSanScheme};
pub use transport::openai::{OpenAiAgents, OpenAiSettings};
pub use transport::{Reply, Transport};

use crate::case::Connection;
use crate::errors::{AgentError, AgentErrorKind};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Every way of reaching an agent, configured once per run: a transport
/// per connection a case may name.
#[derive(Clone)]
pub struct Agents {
    direct: DirectAgents,
    http: Arc<NeuroSanScheme>,
    https: Arc<NeuroSanScheme>,
    named: Arc<BTreeMap<String, Arc<dyn Transport>>>,
}

impl Agents {
    /// Agents reached through `catalog` (direct) and `http` (servers).
    pub fn new(catalog: AgentCatalog, http: HttpAgents) -> Agents {
        Agents {
            direct: DirectAgents::new(catalog),
            https: Arc::new(NeuroSanScheme { agents: http.clone(), connection: Connection::Https }),
            http: Arc::new(NeuroSanScheme { agents: http, connection: Connection::Http }),
            named: Arc::default(),
        }
    }

    /// The same, with the named connections `named` (`[connections.NAME]`).
    pub fn with_connections(self, named: BTreeMap<String, Arc<dyn Transport>>) -> Agents {
        Agents { named: Arc::new(named), ..self }
    }

    /// The names of the configured connections.
    pub fn connection_names(&self) -> impl Iterator<Item = &str> {
        self.named.keys().map(String::as_str)
    }

    /// The direct agents.
    pub fn catalog(&self) -> &AgentCatalog {
        self.direct.catalog()
    }

    /// Compiles the direct agents named, in parallel, so that no request's
    /// deadline pays for compilation. Unknown or broken agents are skipped:
    /// their requests report the problem.
    pub async fn prepare(&self, names: impl IntoIterator<Item = String>) {
        let loads: Vec<_> = names
            .into_iter()
            .map(|name| {
                let catalog = self.direct.catalog().clone();
                tokio::task::spawn_blocking(move || {
                    let _ = catalog.get(&name);
                })
            })
            .collect();
        for load in loads {
            let _ = load.await;
        }
    }

    /// The transport of `connection`, or what is wrong with it.
    fn transport(&self, connection: &Connection) -> Result<&dyn Transport, AgentErrorKind> {
        Ok(match connection {
            Connection::Direct => &self.direct,
            Connection::Http => self.http.as_ref(),
            Connection::Https => self.https.as_ref(),
            Connection::Grpc => &transport::refused::GRPC,
            Connection::Replay => &transport::refused::REPLAY,
            Connection::Named(name) => match self.named.get(name.as_ref()) {
                Some(transport) => transport.as_ref(),
                None => {
                    return Err(AgentErrorKind::Unsupported(format!(
                        "no connection named `{name}` is configured\n\nConsider [connections.{name}] in assay.toml"
                    )));
                }
            },
        })
    }

    /// Sends one turn over `connection`. `deadline` bounds a direct call
    /// inside the sandbox; for servers the caller's timeout cancels the
    /// request by dropping this future.
    pub async fn chat(
        &self,
        connection: &Connection,
        request: ChatRequest,
        deadline: Option<Duration>,
    ) -> Result<AgentResponse, AgentError> {
        let agent = request.agent.clone();
        match self.transport(connection) {
            Ok(transport) => {
                let answer = transport.chat_within(&request, deadline).await;
                answer.map_err(|kind| AgentError { endpoint: transport.endpoint(&agent), agent, kind })
            }
            Err(kind) => Err(AgentError { endpoint: connection.name().to_owned(), agent, kind }),
        }
    }

    /// One turn with an in-process agent, on the calling thread: for callers
    /// already on a blocking thread. `deadline` bounds the call inside the
    /// sandbox.
    pub fn chat_direct_blocking(
        &self,
        request: &ChatRequest,
        deadline: Option<Duration>,
    ) -> Result<AgentResponse, AgentError> {
        self.direct.chat_blocking(request, deadline).map_err(|kind| AgentError {
            agent: request.agent.clone(),
            endpoint: self.direct.endpoint(&request.agent),
            kind,
        })
    }
}
