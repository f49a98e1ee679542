//! Connections to the agent under test.
//!
//! [`Agents`] sends one [`ChatRequest`] over a case's connection and reduces
//! the streamed messages to an [`AgentResponse`]:
//! - `direct`: an agent component from the [`AgentCatalog`], in-process and
//!   sandboxed (`transport/direct/`);
//! - `http`/`https`: a neuro-san server (`transport/neuro_san.rs`);
//! - a named connection (`[connections.NAME]` of `assay.toml`): its
//!   [`Transport`] (`transport/`), e.g. a neuro-san server of its own,
//!   an OpenAI-compatible endpoint ([`OpenAiAgents`], `transport/openai/`),
//!   a local program per request ([`ExecAgents`], `transport/exec.rs`) or
//!   long-lived ([`CommandAgents`], `transport/command.rs`), or any JSON API
//!   by templates and JSONPath ([`HttpApi`], `transport/http/`).
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
pub use transport::direct::{AgentCallError, AgentComponent};
pub use transport::exec::ExecAgents;
pub use transport::http::HttpApi;
pub use transport::neuro_san::{DEFAULT_AGENT_URL, HttpAgents, HttpSettings};
pub use transport::openai::{OpenAiAgents, OpenAiSettings};
pub use transport::{Reply, Transport};

use crate::case::Connection;
use crate::errors::{AgentError, AgentErrorKind};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Every way of reaching an agent, configured once per run.
#[derive(Clone)]
pub struct Agents {
    catalog: Arc<AgentCatalog>,
    http: HttpAgents,
    named: Arc<BTreeMap<String, Arc<dyn Transport>>>,
}

impl Agents {
    /// Agents reached through `catalog` (direct) and `http` (servers).
    pub fn new(catalog: AgentCatalog, http: HttpAgents) -> Agents {
        Agents { catalog: Arc::new(catalog), http, named: Arc::default() }
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
        &self.catalog
    }

    /// Compiles the direct agents named, in parallel, so that no request's
    /// deadline pays for compilation. Unknown or broken agents are skipped:
    /// their requests report the problem.
    pub async fn prepare(&self, names: impl IntoIterator<Item = String>) {
        let loads: Vec<_> = names
            .into_iter()
            .map(|name| {
                let catalog = self.catalog.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = catalog.get(&name);
                })
            })
            .collect();
        for load in loads {
            let _ = load.await;
        }
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
        let (endpoint, result) = match connection {
            Connection::Named(name) => match self.named.get(name.as_ref()) {
                Some(transport) => {
                    let endpoint = transport.endpoint(&agent);
                    return transport.chat(&request).await.map_err(|kind| AgentError { agent, endpoint, kind });
                }
                None => (
                    name.to_string(),
                    Err(AgentErrorKind::Unsupported(format!(
                        "no connection named `{name}` is configured\n\nConsider [connections.{name}] in assay.toml"
                    ))),
                ),
            },
            Connection::Direct => self.chat_direct(request, deadline).await,
            Connection::Http | Connection::Https => {
                let url = self.http.url(connection, &agent);
                let result = self.http.chat(&url, &request).await;
                (crate::credentials::redact_urls(&url).into_owned(), result)
            }
            Connection::Grpc => (
                "grpc".to_owned(),
                Err(AgentErrorKind::Unsupported(
                    "assay does not speak neuro-san's gRPC service\n\nConsider `connections: [http]`: the same server answers over HTTP".into(),
                )),
            ),
            // The runner answers a job with a recording itself; no agent is
            // asked.
            Connection::Replay => (
                "replay".to_owned(),
                Err(AgentErrorKind::Unsupported("`replay` answers only from a recording, and the job has none".into())),
            ),
        };
        result.map(reduce).map_err(|kind| AgentError { agent, endpoint, kind })
    }

    async fn chat_direct(
        &self,
        request: ChatRequest,
        deadline: Option<Duration>,
    ) -> (String, Result<Vec<ChatMessage>, AgentErrorKind>) {
        let catalog = self.catalog.clone();
        let call = tokio::task::spawn_blocking(move || direct_call(&catalog, &request, deadline));
        call.await.unwrap_or_else(|e| {
            ("direct".to_owned(), Err(AgentErrorKind::Load(format!("the agent call panicked: {e}"))))
        })
    }

    /// One turn with an in-process agent, on the calling thread: for callers
    /// already on a blocking thread. `deadline` bounds the call inside the
    /// sandbox.
    pub fn chat_direct_blocking(
        &self,
        request: &ChatRequest,
        deadline: Option<Duration>,
    ) -> Result<AgentResponse, AgentError> {
        let (endpoint, result) = direct_call(&self.catalog, request, deadline);
        result.map(reduce).map_err(|kind| AgentError { agent: request.agent.clone(), endpoint, kind })
    }
}

/// Calls an in-process agent: where it was reached, and its messages.
fn direct_call(
    catalog: &AgentCatalog,
    request: &ChatRequest,
    deadline: Option<Duration>,
) -> (String, Result<Vec<ChatMessage>, AgentErrorKind>) {
    let endpoint = match catalog.source(&request.agent) {
        Some(source) => format!("direct ({source})"),
        None => "direct".to_owned(),
    };
    let component = match catalog.get(&request.agent) {
        Ok(Some(component)) => component,
        Ok(None) => {
            let known = catalog.names().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
            return (endpoint, Err(AgentErrorKind::UnknownAgent(known)));
        }
        Err(load) => return (endpoint, Err(AgentErrorKind::Load(load))),
    };
    let result = component.chat(request, deadline).map_err(|e| match e {
        AgentCallError::Fault(fault) => AgentErrorKind::Fault(fault),
        AgentCallError::Refused(message) => AgentErrorKind::Refused(message),
    });
    (endpoint, result)
}
