//! In-process agents: an agent component of the `assay:agent/agent` world,
//! hosted by the sandbox like a matcher (same engine, limits, capability
//! policy and instance pool, no grants). Instances are reused from call to
//! call, as a server process serves request after request: an agent keeps
//! its conversation in `chat_context` and `sly_data`, as neuro-san's
//! protocol has it. An instance that faults is discarded, never re-entered,
//! so a fault cannot leak into the next request. This file converts a chat
//! request and its messages to and from WIT.

pub(crate) mod catalog;
mod transport;

pub use transport::DirectAgents;

use crate::agent::message::{ChatMessage, ChatRequest, Origin};
use crate::case::ChatFilter;
use crate::errors::{ComponentLoadError, ComponentLoadErrorKind, ComponentRole, Fault};
use crate::sandbox::bindings::agent::Agent;
use crate::sandbox::bindings::agent::exports::assay::agent::chat as wit;
use crate::sandbox::{ComponentHost, ComponentOptions, ComponentSource, Grants, Limits, Runtime};
use serde_json::{Map, Value};
use std::time::Duration;

/// A loaded agent component.
pub struct AgentComponent {
    name: String,
    description: String,
    source: ComponentSource,
    host: ComponentHost<Agent>,
}

impl std::fmt::Debug for AgentComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentComponent").field("name", &self.name).field("source", &self.source).finish_non_exhaustive()
    }
}

impl AgentComponent {
    /// Compiles a component, checks it imports nothing of assay's (agents
    /// get no grants), and asks it to describe itself.
    pub fn load(
        runtime: &Runtime,
        source: ComponentSource,
        bytes: &[u8],
        limits: Limits,
    ) -> Result<AgentComponent, ComponentLoadError> {
        let fail = |kind| ComponentLoadError { role: ComponentRole::Agent, component: source.to_string(), kind };
        let options = ComponentOptions { limits, grants: Grants::NONE, ..ComponentOptions::default() };
        let host = ComponentHost::<Agent>::load(runtime, &source, bytes, options)?;
        let info = host
            .call(host.limits().deadline, async |bindings, store| {
                bindings.assay_agent_chat().call_describe(store).await
            })
            .map_err(|fault| fail(ComponentLoadErrorKind::Describe(fault)))?;
        if info.name.trim().is_empty() {
            return Err(fail(ComponentLoadErrorKind::BadDescription("the agent's name is empty".into())));
        }
        Ok(AgentComponent { name: info.name, description: info.description, source, host })
    }

    /// The name the agent gave itself.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the agent says it does.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Where it came from.
    pub fn source(&self) -> &ComponentSource {
        &self.source
    }

    /// Answers one turn. `deadline` bounds the call (the sandbox deadline
    /// when none is given). Blocking: call it from a blocking thread.
    pub fn chat(&self, request: &ChatRequest, deadline: Option<Duration>) -> Result<Vec<ChatMessage>, AgentCallError> {
        let sly_data = request.sly_data.as_ref().map(|m| serde_json::to_string(m).expect("a JSON map serializes"));
        let chat_context = request.chat_context.as_ref().map(Value::to_string);
        let metadata: Vec<(&str, &str)> = request.metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let wit_request = wit::ChatRequest {
            agent: &request.agent,
            text: &request.text,
            sly_data: sly_data.as_deref(),
            chat_context: chat_context.as_deref(),
            chat_filter: match request.chat_filter {
                ChatFilter::Minimal => wit::ChatFilter::Minimal,
                ChatFilter::Maximal => wit::ChatFilter::Maximal,
            },
            metadata: &metadata,
        };
        let deadline = deadline.unwrap_or(self.host.limits().deadline);
        let answer = self
            .host
            .call(deadline, async |bindings, store| bindings.assay_agent_chat().call_chat(store, wit_request).await)
            .map_err(AgentCallError::Fault)?;
        let messages = answer.map_err(AgentCallError::Refused)?;
        messages
            .into_iter()
            .map(from_wit)
            .collect::<Result<_, _>>()
            .map_err(|e| AgentCallError::Fault(Fault::BadAnswer(e)))
    }
}

/// Why a call to an agent component failed.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentCallError {
    /// The component faulted.
    Fault(Fault),
    /// The agent returned an error of its own.
    Refused(String),
}

fn from_wit(message: wit::ChatMessage) -> Result<ChatMessage, String> {
    let object = |json: Option<String>, field: &str| -> Result<Option<Map<String, Value>>, String> {
        json.map(|text| match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!("its `{field}` is not a JSON object: {other}")),
            Err(e) => Err(format!("its `{field}` is not JSON: {e}")),
        })
        .transpose()
    };
    let chat_context = match message.chat_context {
        None => None,
        Some(text) => Some(serde_json::from_str(&text).map_err(|e| format!("its `chat_context` is not JSON: {e}"))?),
    };
    Ok(ChatMessage {
        message_type: message.message_type,
        text: message.text,
        structure: object(message.structure, "structure")?,
        sly_data: object(message.sly_data, "sly_data")?,
        chat_context,
        origin: message
            .origin
            .into_iter()
            .map(|o| Origin { tool: o.tool, instantiation_index: o.instantiation_index })
            .collect(),
    })
}
