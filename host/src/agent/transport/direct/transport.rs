//! `direct` as a transport: each request to the [`AgentCatalog`]'s agent
//! of its name, on a blocking thread (or, for a caller already on one,
//! [`DirectAgents::chat_blocking`] on the calling thread), bounded inside
//! the sandbox by the deadline it is given.

use super::AgentCallError;
use super::catalog::AgentCatalog;
use crate::agent::message::{ChatMessage, ChatRequest};
use crate::agent::reduce::{AgentResponse, reduce};
use crate::agent::transport::{Reply, Transport};
use crate::errors::AgentErrorKind;
use std::sync::Arc;
use std::time::Duration;

/// The in-process agents of a run.
#[derive(Clone)]
pub struct DirectAgents {
    catalog: Arc<AgentCatalog>,
}

impl DirectAgents {
    /// The agents of `catalog`.
    pub fn new(catalog: AgentCatalog) -> DirectAgents {
        DirectAgents { catalog: Arc::new(catalog) }
    }

    /// The catalog they come from.
    pub fn catalog(&self) -> &Arc<AgentCatalog> {
        &self.catalog
    }

    /// One turn on the calling thread, which must be one that may block;
    /// `sandbox_deadline` bounds the call inside the sandbox.
    pub fn chat_blocking(
        &self,
        request: &ChatRequest,
        sandbox_deadline: Option<Duration>,
    ) -> Result<AgentResponse, AgentErrorKind> {
        call(&self.catalog, request, sandbox_deadline).map(reduce)
    }
}

impl Transport for DirectAgents {
    fn endpoint(&self, agent: &str) -> String {
        match self.catalog.source(agent) {
            Some(source) => format!("direct ({source})"),
            None => "direct".to_owned(),
        }
    }

    fn chat<'a>(&'a self, request: &'a ChatRequest) -> Reply<'a> {
        self.chat_within(request, None)
    }

    fn chat_within<'a>(&'a self, request: &'a ChatRequest, sandbox_deadline: Option<Duration>) -> Reply<'a> {
        let catalog = self.catalog.clone();
        let request = request.clone();
        Box::pin(async move {
            let call = tokio::task::spawn_blocking(move || call(&catalog, &request, sandbox_deadline));
            match call.await {
                Ok(messages) => messages.map(reduce),
                Err(panic) => Err(AgentErrorKind::Load(format!("the agent call panicked: {panic}"))),
            }
        })
    }
}

/// Calls the agent `request` names: its messages.
fn call(
    catalog: &AgentCatalog,
    request: &ChatRequest,
    sandbox_deadline: Option<Duration>,
) -> Result<Vec<ChatMessage>, AgentErrorKind> {
    let component = match catalog.get(&request.agent) {
        Ok(Some(component)) => component,
        Ok(None) => {
            let known = catalog.names().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
            return Err(AgentErrorKind::UnknownAgent(known));
        }
        Err(load) => return Err(AgentErrorKind::Load(load)),
    };
    component.chat(request, sandbox_deadline).map_err(|e| match e {
        AgentCallError::Fault(fault) => AgentErrorKind::Fault(fault),
        AgentCallError::Refused(message) => AgentErrorKind::Refused(message),
    })
}
