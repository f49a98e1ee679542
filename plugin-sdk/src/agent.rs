//! In-process agents: the [`Agent`] trait and the neuro-san message types it
//! speaks. [`export_agent!`](crate::export_agent) makes an agent a component
//! of the `assay:agent/agent` world.

use crate::Json;

/// An agent: stateless, it answers one turn from the request alone (the
/// conversation so far travels in `chat_context`).
pub trait Agent {
    /// Names and describes the agent.
    fn describe() -> AgentInfo;

    /// Answers one turn with the messages a neuro-san server would stream.
    fn chat(request: &ChatRequest) -> Result<Vec<ChatMessage>, String>;
}

/// What an agent says about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentInfo {
    /// The agent's name.
    pub name: String,
    /// What it does.
    pub description: String,
}

/// How much the agent should send back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatFilter {
    /// The answer and what continues the conversation.
    Minimal,
    /// Every message.
    Maximal,
}

/// One turn of a conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    /// The name the agent was addressed by.
    pub agent: String,
    /// The user's message.
    pub text: String,
    /// Private data sent with the message.
    pub sly_data: Option<Json>,
    /// The previous turn's `chat_context`.
    pub chat_context: Option<Json>,
    /// How much to send back.
    pub chat_filter: ChatFilter,
    /// Request metadata.
    pub metadata: Vec<(String, String)>,
}

/// One message of a response, with neuro-san's ChatMessage fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatMessage {
    /// `AI`, `AGENT`, `AGENT_FRAMEWORK`, `SYSTEM`, ...
    pub message_type: String,
    /// The text, if any.
    pub text: Option<String>,
    /// Structured output, if any.
    pub structure: Option<Json>,
    /// Private data returned, if any.
    pub sly_data: Option<Json>,
    /// The conversation state to send back next turn, if any.
    pub chat_context: Option<Json>,
    /// (tool, instantiation index) pairs naming who produced the message.
    pub origin: Vec<(String, u32)>,
}

impl ChatMessage {
    /// A message of the given type with text and nothing else.
    pub fn new(message_type: &str, text: impl Into<String>) -> Self {
        ChatMessage { message_type: message_type.to_owned(), text: Some(text.into()), ..Default::default() }
    }
}
