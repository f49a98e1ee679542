//! Response reduction: from the messages an agent streamed, the `text`,
//! `structure`, `sly_data` and `chat_context` that checks and the next turn
//! see. The rules are DESIGN.md's "Semantics decisions".

use crate::agent::message::ChatMessage;
use serde::Serialize;
use serde_json::{Map, Value};

/// What one interaction got back.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AgentResponse {
    /// The answer's text: the last `AI`/`AGENT_FRAMEWORK` message from the
    /// front man (origin of at most one entry) with text or structure,
    /// without the JSON object that became the structure.
    pub text: Option<String>,
    /// The answer's structure: the message's own, or the JSON object found
    /// in its text.
    pub structure: Option<Map<String, Value>>,
    /// The last non-null sly_data of any message.
    pub sly_data: Option<Map<String, Value>>,
    /// The last non-null chat_context of any message.
    pub chat_context: Option<Value>,
    /// Every message, in order.
    pub messages: Vec<ChatMessage>,
    /// The tokens the answer cost, when the connection reports them
    /// (OpenAI-compatible endpoints do).
    pub usage: Option<Usage>,
    /// What the answer cost, in US dollars, when the connection knows (an
    /// openai connection with prices: `OpenAiSettings::prices`).
    pub cost: Option<f64>,
    /// Whether `text` is the JSON of an answer that is not text (promptfoo's
    /// output of a tool call): checks get it as that JSON value, as
    /// promptfoo's assertions get the object.
    pub text_is_json: bool,
}

/// The tokens one answer cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Usage {
    /// Tokens of the prompt (the conversation sent).
    pub prompt_tokens: u64,
    /// Tokens of the answer.
    pub completion_tokens: u64,
}

impl Usage {
    /// Adds `other` to this.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// Reduces a streamed response to what checks look at, as neuro-san's own
/// client does: a JSON object in the answer's text (when the message has
/// no structure of its own) becomes the structure, and the text the rest.
pub fn reduce(messages: Vec<ChatMessage>) -> AgentResponse {
    reduce_with(messages, JsonInText::Split)
}

/// Reduces a response whose text is the agent's, verbatim: a JSON object
/// in it becomes the structure too, and nothing is removed from the text.
/// OpenAI-compatible and command connections answer so (promptfoo checks
/// the whole output: `is-json`, `equals`, `contains`).
pub fn reduce_keeping_text(messages: Vec<ChatMessage>) -> AgentResponse {
    reduce_with(messages, JsonInText::Copy)
}

/// What becomes of a JSON object in the answer's text.
#[derive(Clone, Copy)]
enum JsonInText {
    /// The structure, and the text is the rest (neuro-san).
    Split,
    /// The structure too; the text stays whole.
    Copy,
}

fn reduce_with(messages: Vec<ChatMessage>, json_in_text: JsonInText) -> AgentResponse {
    let sly_data = messages.iter().rev().find_map(|m| m.sly_data.clone());
    let chat_context = messages.iter().rev().find_map(|m| m.chat_context.clone().filter(|c| !c.is_null()));
    let answer = messages.iter().rev().find(|m| is_answer(m));
    let (text, structure) = match answer {
        None => (None, None),
        Some(message) => match (&message.structure, &message.text) {
            (Some(structure), text) => (text.clone(), Some(structure.clone())),
            (None, Some(text)) => match (split_json_object(text), json_in_text) {
                (Some((rest, object)), JsonInText::Split) => (Some(rest), Some(object)),
                (Some((_, object)), JsonInText::Copy) => (Some(text.clone()), Some(object)),
                (None, _) => (Some(text.clone()), None),
            },
            (None, None) => (None, None),
        },
    };
    AgentResponse { text, structure, sly_data, chat_context, messages, usage: None, cost: None, text_is_json: false }
}

/// Whether a message can be the answer.
fn is_answer(message: &ChatMessage) -> bool {
    let from_front_man = message.origin.len() <= 1;
    let kind = matches!(message.message_type.as_str(), "AI" | "AGENT_FRAMEWORK");
    let has_content = message.text.as_deref().is_some_and(|t| !t.is_empty()) || message.structure.is_some();
    kind && from_front_man && has_content
}

/// Finds the first JSON object in `text`; returns the text around it
/// (trimmed) and the object.
fn split_json_object(text: &str) -> Option<(String, Map<String, Value>)> {
    for (start, _) in text.match_indices('{') {
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Map<String, Value>>();
        if let Some(Ok(object)) = stream.next() {
            let end = start + stream.byte_offset();
            let rest = format!("{}{}", &text[..start], &text[end..]);
            return Some((strip_empty_fence(rest.trim()).to_owned(), object));
        }
    }
    None
}

/// Drops the Markdown code fence a JSON object was wrapped in, if only the
/// fence is left.
fn strip_empty_fence(rest: &str) -> &str {
    match rest.strip_prefix("```json").or_else(|| rest.strip_prefix("```")).and_then(|r| r.trim().strip_suffix("```")) {
        Some(inner) if inner.trim().is_empty() => "",
        _ => rest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::message::Origin;
    use serde_json::json;

    fn message(kind: &str, text: &str, origin: usize) -> ChatMessage {
        let origin = (0..origin).map(|i| Origin { tool: format!("tool{i}"), instantiation_index: 1 }).collect();
        ChatMessage { message_type: kind.into(), text: Some(text.into()), origin, ..Default::default() }
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn the_answer_is_the_last_front_man_ai_or_framework_message() {
        let messages = vec![
            message("AI", "first", 1),
            message("AGENT_FRAMEWORK", "framework", 0),
            message("AI", "from a tool", 2),
            message("AGENT", "agent chatter", 0),
            message("AI", "", 1),
        ];
        assert_eq!(reduce(messages).text.as_deref(), Some("framework"));
    }

    #[test]
    fn no_answer_leaves_text_and_structure_unset() {
        let response = reduce(vec![message("SYSTEM", "prompt", 0), message("AI", "tool", 3)]);
        assert_eq!((response.text, response.structure), (None, None));
        assert_eq!(response.messages.len(), 2);
    }

    #[test]
    fn a_json_object_in_the_text_becomes_the_structure() {
        let text = "Here you go: {\"answer\": \"The Beatles\", \"running_cost\": 3.0} enjoy";
        let response = reduce(vec![message("AI", text, 0)]);
        assert_eq!(response.text.as_deref(), Some("Here you go:  enjoy"));
        assert_eq!(response.structure, Some(object(json!({"answer": "The Beatles", "running_cost": 3.0}))));
    }

    #[test]
    fn a_fenced_object_leaves_no_fence_behind() {
        let response = reduce(vec![message("AI", "```json\n{\"a\": 1}\n```", 0)]);
        assert_eq!(response.text.as_deref(), Some(""));
        assert_eq!(response.structure, Some(object(json!({"a": 1}))));
    }

    #[test]
    fn braces_that_are_not_json_stay_text() {
        let response = reduce(vec![message("AI", "use {braces} like {this", 0)]);
        assert_eq!(response.text.as_deref(), Some("use {braces} like {this"));
        assert_eq!(response.structure, None);
    }

    #[test]
    fn kept_whole_the_text_is_the_agents_and_its_json_object_is_also_the_structure() {
        for text in
            [r#"{"tone":"formal"}"#, r#"Use the style {"tone":"formal"} please"#, "```json\n{\"tone\":\"formal\"}\n```"]
        {
            let response = reduce_keeping_text(vec![message("AI", text, 0)]);
            assert_eq!(response.text.as_deref(), Some(text));
            assert_eq!(response.structure, Some(object(json!({"tone": "formal"}))));
        }
        let response = reduce_keeping_text(vec![message("AI", "no object {here", 0)]);
        assert_eq!((response.text.as_deref(), response.structure), (Some("no object {here"), None));
    }

    #[test]
    fn a_message_structure_wins_over_json_in_the_text() {
        let mut answer = message("AI", "{\"from\": \"text\"}", 0);
        answer.structure = Some(object(json!({"from": "structure"})));
        let response = reduce(vec![answer]);
        assert_eq!(response.structure, Some(object(json!({"from": "structure"}))));
        assert_eq!(response.text.as_deref(), Some("{\"from\": \"text\"}"));
    }

    #[test]
    fn sly_data_and_chat_context_are_the_last_non_null_ones() {
        let mut first = message("AGENT", "", 2);
        first.sly_data = Some(object(json!({"n": 1})));
        first.chat_context = Some(json!({"turn": 1}));
        let mut second = message("AI", "answer", 0);
        second.chat_context = Some(Value::Null);
        let response = reduce(vec![first, second]);
        assert_eq!(response.sly_data, Some(object(json!({"n": 1}))));
        assert_eq!(response.chat_context, Some(json!({"turn": 1})));
    }
}
