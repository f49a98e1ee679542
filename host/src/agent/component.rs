//! In-process agents: an agent component of the `assay:agent/agent` world,
//! sandboxed like a matcher (same engine, limits, capability policy and
//! instance pool, no grants). Instances are reused from call to call, as a server process
//! serves request after request: an agent keeps its conversation in
//! `chat_context` and `sly_data`, as neuro-san's protocol has it. An instance
//! that faults is discarded, never re-entered, so a fault cannot leak into
//! the next request.

use crate::agent::message::{ChatMessage, ChatRequest, Origin};
use crate::case::ChatFilter;
use crate::errors::{ComponentLoadError, ComponentLoadErrorKind, ComponentRole, Fault};
use crate::plugin::CallBudget;
use crate::plugin::bindings::agent::exports::assay::agent::chat as wit;
use crate::plugin::bindings::agent::{Agent, AgentPre};
use crate::plugin::instances::{InstanceSettings, Instances, PrepareError, World};
use crate::plugin::{self, Capabilities, Grants, Limits, PluginSource, Runtime, SandboxState};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::Store;
use wasmtime::component::{InstancePre, Linker};

impl World for Agent {
    type Pre = AgentPre<SandboxState>;

    /// Agents import nothing of assay's: WASI alone.
    fn link(_linker: &mut Linker<SandboxState>) -> wasmtime::Result<()> {
        Ok(())
    }

    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre> {
        AgentPre::new(pre)
    }

    fn engine(pre: &Self::Pre) -> &wasmtime::Engine {
        pre.engine()
    }

    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self> {
        pre.instantiate_async(store).await
    }
}

/// A loaded agent component.
pub struct AgentComponent {
    name: String,
    description: String,
    source: PluginSource,
    instances: Instances<Agent>,
}

impl std::fmt::Debug for AgentComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentComponent").field("name", &self.name).field("source", &self.source).finish_non_exhaustive()
    }
}

impl AgentComponent {
    /// Compiles a component, checks it imports nothing (agents get no
    /// grants), and asks it to describe itself.
    pub fn load(
        runtime: &Runtime,
        source: PluginSource,
        bytes: &[u8],
        limits: Limits,
    ) -> Result<AgentComponent, ComponentLoadError> {
        let fail = |kind| ComponentLoadError { role: ComponentRole::Agent, component: source.to_string(), kind };
        let (component, _) =
            runtime.compile(bytes, false).map_err(|e| fail(ComponentLoadErrorKind::NotAComponent(format!("{e:#}"))))?;
        let grants = Grants { log: false, judge: false, embeddings: false };
        plugin::check_imports(component.engine(), &component, ComponentRole::Agent, &grants)
            .map_err(|d| fail(ComponentLoadErrorKind::Denied(d)))?;
        let settings = InstanceSettings { limits, capabilities: Capabilities::default(), deterministic: false };
        let instances: Instances<Agent> =
            Instances::new(runtime, Arc::from(bytes), &component, settings).map_err(|e| {
                fail(match e {
                    PrepareError::Link(cause) => ComponentLoadErrorKind::Link(cause),
                    PrepareError::Exports(cause) => {
                        ComponentLoadErrorKind::Exports { interface: "assay:agent/chat@0.1.0", cause }
                    }
                })
            })?;
        let budget = CallBudget { deadline: instances.settings().limits.deadline, fuel: None, capability_calls: 0 };
        let info = instances
            .call(budget, async |bindings, store| bindings.assay_agent_chat().call_describe(store).await)
            .map_err(|fault| fail(ComponentLoadErrorKind::Describe(fault)))?;
        if info.name.trim().is_empty() {
            return Err(fail(ComponentLoadErrorKind::BadDescription("the agent's name is empty".into())));
        }
        Ok(AgentComponent { name: info.name, description: info.description, source, instances })
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
    pub fn source(&self) -> &PluginSource {
        &self.source
    }

    /// Answers one turn. `deadline` bounds the call (the sandbox deadline
    /// when none is given). Blocking: call it from a blocking thread.
    pub fn chat(&self, request: &ChatRequest, deadline: Option<Duration>) -> Result<Vec<ChatMessage>, AgentCallError> {
        let sly_data = request.sly_data.as_ref().map(|m| Value::Object(m.clone()).to_string());
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
        let deadline = deadline.unwrap_or(self.instances.settings().limits.deadline);
        let budget = CallBudget { deadline, fuel: None, capability_calls: 0 };
        let answer = self
            .instances
            .call(budget, async |bindings, store| bindings.assay_agent_chat().call_chat(store, wit_request).await)
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
