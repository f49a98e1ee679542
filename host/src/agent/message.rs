//! neuro-san's wire types: the chat request a client sends and the
//! `ChatMessage`s a server streams back, with their JSON field names.

use crate::case::ChatFilter;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The metadata key by which the runner tells an agent which sample (its
/// 0-based index) a request belongs to.
pub const SAMPLE_METADATA: &str = "x-assay-sample";

/// One turn of a conversation, as the runner asks for it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatRequest {
    /// The agent's name.
    pub agent: String,
    /// The user message.
    pub text: String,
    /// Private data sent with the message.
    pub sly_data: Option<Map<String, Value>>,
    /// The previous turn's `chat_context`, when the conversation continues.
    pub chat_context: Option<Value>,
    /// How much the agent should send back.
    pub chat_filter: ChatFilter,
    /// Request metadata: HTTP headers over `http`/`https`.
    pub metadata: Vec<(String, String)>,
}

impl crate::template::RequestFields for ChatRequest {
    fn text(&self) -> &str {
        &self.text
    }

    fn agent(&self) -> &str {
        &self.agent
    }

    fn sample(&self) -> Option<u64> {
        ChatRequest::sample(self)
    }

    fn chat_context(&self) -> Option<&Value> {
        self.chat_context.as_ref()
    }

    fn sly_data(&self) -> Option<&Map<String, Value>> {
        self.sly_data.as_ref()
    }
}

impl ChatRequest {
    /// The sample's index from the request's [`SAMPLE_METADATA`], if a
    /// runner sent it.
    pub fn sample(&self) -> Option<u64> {
        let (_, value) = self.metadata.iter().find(|(name, _)| name == SAMPLE_METADATA)?;
        value.parse().ok()
    }

    /// The body of `POST /api/v1/{agent}/streaming_chat`.
    pub fn to_wire(&self) -> Value {
        let mut body = Map::new();
        body.insert("user_message".into(), serde_json::json!({ "type": "HUMAN", "text": self.text }));
        if let Some(sly_data) = &self.sly_data {
            body.insert("sly_data".into(), Value::Object(sly_data.clone()));
        }
        if let Some(chat_context) = &self.chat_context {
            body.insert("chat_context".into(), chat_context.clone());
        }
        body.insert("chat_filter".into(), serde_json::json!({ "chat_filter_type": self.chat_filter.name() }));
        Value::Object(body)
    }

    /// Reads the body of a `streaming_chat` request (the server side of
    /// [`ChatRequest::to_wire`]). `agent` and `metadata` come from the URL
    /// and the headers.
    pub(crate) fn from_wire(agent: &str, body: &Value, metadata: Vec<(String, String)>) -> Result<ChatRequest, String> {
        let body = body.as_object().ok_or("the request body is not a JSON object")?;
        let text = body
            .get("user_message")
            .and_then(|m| m.get("text"))
            .and_then(Value::as_str)
            .ok_or("the request has no `user_message.text` string")?;
        let sly_data = match body.get("sly_data") {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map.clone()),
            Some(_) => return Err("`sly_data` must be a JSON object".into()),
        };
        let chat_context = body.get("chat_context").filter(|c| !c.is_null()).cloned();
        let chat_filter = match body.get("chat_filter").and_then(|f| f.get("chat_filter_type")).and_then(Value::as_str)
        {
            None | Some("MINIMAL") => ChatFilter::Minimal,
            Some("MAXIMAL") => ChatFilter::Maximal,
            Some(other) => return Err(format!("unknown chat_filter_type `{other}` (MINIMAL or MAXIMAL)")),
        };
        Ok(ChatRequest {
            agent: agent.to_owned(),
            text: text.to_owned(),
            sly_data,
            chat_context,
            chat_filter,
            metadata,
        })
    }
}

/// One message of a response: neuro-san's `ChatMessage`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `AI`, `AGENT`, `AGENT_FRAMEWORK`, `SYSTEM`, `HUMAN`, ...
    #[serde(rename = "type")]
    pub message_type: String,
    /// The text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Structured output, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure: Option<Map<String, Value>>,
    /// Private data returned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sly_data: Option<Map<String, Value>>,
    /// The conversation state to send back next turn, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_context: Option<Value>,
    /// The chain of tools that produced the message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub origin: Vec<Origin>,
}

/// One entry of a message's origin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The tool's name.
    pub tool: String,
    /// Which instantiation of it.
    #[serde(default)]
    pub instantiation_index: u32,
}

/// One line of a `streaming_chat` response stream.
#[derive(Debug, Serialize, Deserialize)]
pub struct StreamLine {
    /// The message.
    pub response: ChatMessage,
}
