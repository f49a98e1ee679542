//! The OpenAI chat-completions format as assay speaks it, from both sides
//! (the `openai` connection, and `assay agent serve --protocol openai`):
//!
//! - The conversation state (a response's `chat_context`) is the history,
//!   `{"messages": [{"role": "user", "content": …}, {"role": "assistant",
//!   "content": …}, …]}`: every turn so far, without the system messages,
//!   which each request adds afresh. Tool calls are not kept in it: a test
//!   has no tool results to send back, and a server refuses an assistant's
//!   tool call that none follows.
//! - A request's `sly_data` travels as a system message of its own right
//!   after the connection's `system` one: `sly_data: ` and the object as
//!   compact JSON ([`SLY_DATA_PREFIX`]).
//! - An answer, one JSON completion or the chunks of a stream, becomes an
//!   [`Answer`]: its content, tool calls, token usage, and (assay's
//!   extensions, which other servers never send) top-level `sly_data` and
//!   `structure` objects. [`Answer::into_response`] keeps its content as the text,
//!   verbatim, and a JSON object in it becomes the structure too (so JSON
//!   mode answers do; nothing is cut from the text, which promptfoo's
//!   `is-json`, `equals` and graders see whole); tool calls add to the structure
//!   `{"tool_calls": [{"id", "name", "arguments"}], NAME: arguments, …}`,
//!   arguments parsed as JSON when they are (the string as sent when not),
//!   and each function's first call also under its name, for checks
//!   (`structure { get_weather { city { value: Paris } } }`), unless the
//!   content's JSON object has a key of that name.

use crate::agent::message::{ChatMessage, ChatRequest};
use crate::agent::reduce::{AgentResponse, Usage, reduce_keeping_text};
use crate::errors::AgentErrorKind;
use serde_json::{Map, Value, json};

/// How a system message holding the request's sly_data begins.
pub(crate) const SLY_DATA_PREFIX: &str = "sly_data: ";

/// The messages of one request: the system message, the sly_data one, the
/// history in `request.chat_context`, and the user's text.
pub(crate) fn request_messages(system: Option<&str>, request: &ChatRequest) -> Result<Vec<Value>, AgentErrorKind> {
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    if let Some(sly_data) = &request.sly_data {
        let content = format!("{SLY_DATA_PREFIX}{}", Value::Object(sly_data.clone()));
        messages.push(json!({ "role": "system", "content": content }));
    }
    messages.extend(history(request.chat_context.as_ref())?);
    messages.push(json!({ "role": "user", "content": request.text }));
    Ok(messages)
}

/// The history a `chat_context` holds; none for a new conversation.
fn history(chat_context: Option<&Value>) -> Result<Vec<Value>, AgentErrorKind> {
    let Some(chat_context) = chat_context else { return Ok(Vec::new()) };
    let messages = chat_context.get("messages").and_then(Value::as_array);
    match messages {
        Some(messages) if messages.iter().all(|m| m.get("role").is_some_and(Value::is_string)) => Ok(messages.clone()),
        _ => Err(AgentErrorKind::BadRequest(
            "the conversation state is not an openai connection's (`{\"messages\": [{\"role\": …, \"content\": …}]}`)"
                .into(),
        )),
    }
}

/// The sly_data a system message holds, if it is one of
/// [`SLY_DATA_PREFIX`] and a JSON object.
pub(crate) fn sly_data_in(content: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(content.strip_prefix(SLY_DATA_PREFIX)?) {
        Ok(Value::Object(sly_data)) => Some(sly_data),
        _ => None,
    }
}

/// The text of a message's `content`: a string, or the `text` of each part
/// of a list of parts; nothing for `null`.
pub(crate) fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(parts.iter().filter_map(|p| p.get("text")?.as_str()).collect()),
        _ => None,
    }
}

/// One tool call of an answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ToolCall {
    /// The call's id.
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The arguments, as sent: JSON text (a stream sends it in pieces).
    pub arguments: String,
}

/// What a server answered, whole or gathered from a stream's chunks.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Answer {
    /// The assistant's content.
    pub content: String,
    /// Its tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The tokens it cost, when the server said.
    pub usage: Option<Usage>,
    /// A top-level `sly_data` object (assay's extension).
    pub sly_data: Option<Map<String, Value>>,
    /// A top-level `structure` object (assay's extension: an agent's own
    /// structure, beside its text).
    pub structure: Option<Map<String, Value>>,
    /// The `choices[0].message` of a whole completion, as sent (not of a
    /// stream), for [`Answer::promptfoo_output`].
    pub message: Option<Value>,
}

/// The most tool calls an answer may hold: OpenAI's API takes at most 128
/// tools per request. More, or a streamed piece whose `index` is past it,
/// is a malformed answer (a piece claiming index 4,000,000,000 would
/// otherwise make room for that many calls).
pub(crate) const MAX_TOOL_CALLS: usize = 128;

impl Answer {
    /// Reads one chat completion (`"object": "chat.completion"`).
    pub(crate) fn from_completion(body: &Value) -> Result<Answer, AgentErrorKind> {
        refused(body)?;
        let message = body.get("choices").and_then(|c| c.get(0)).and_then(|c| c.get("message"));
        let Some(message) = message.filter(|m| m.is_object()) else {
            return Err(AgentErrorKind::MalformedBody(format!("it has no `choices[0].message`: {}", preview(body))));
        };
        let mut answer = Answer {
            content: content_text(message.get("content")).unwrap_or_default(),
            usage: usage(body),
            sly_data: body.get("sly_data").and_then(Value::as_object).cloned(),
            structure: body.get("structure").and_then(Value::as_object).cloned(),
            message: Some(message.clone()),
            ..Answer::default()
        };
        let calls = message.get("tool_calls").and_then(Value::as_array);
        if let Some(calls) = calls.filter(|calls| calls.len() > MAX_TOOL_CALLS) {
            let cause = format!("it has {} tool calls, over the cap of {MAX_TOOL_CALLS}", calls.len());
            return Err(AgentErrorKind::MalformedBody(cause));
        }
        for call in calls.into_iter().flatten() {
            let function = call.get("function");
            answer.tool_calls.push(ToolCall {
                id: str_in(call.get("id")).to_owned(),
                name: str_in(function.and_then(|f| f.get("name"))).to_owned(),
                arguments: str_in(function.and_then(|f| f.get("arguments"))).to_owned(),
            });
        }
        Ok(answer)
    }

    /// Adds one chunk of a stream (`"object": "chat.completion.chunk"`),
    /// the JSON of the event whose data began on line `line`: its content
    /// and tool-call pieces, and its usage (streams send it in a last chunk
    /// with no choices).
    pub(crate) fn add_chunk(&mut self, chunk: &Value, line: usize) -> Result<(), AgentErrorKind> {
        refused(chunk)?;
        let choices = chunk.get("choices").and_then(Value::as_array);
        if choices.is_none() && chunk.get("usage").is_none() {
            let cause = format!("it is not a chat completion chunk (no `choices`): {}", preview(chunk));
            return Err(AgentErrorKind::Malformed { line, cause });
        }
        let first = choices.into_iter().flatten().find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0);
        if let Some(delta) = first.and_then(|c| c.get("delta")) {
            if let Some(content) = content_text(delta.get("content")) {
                self.content.push_str(&content);
            }
            for (position, piece) in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate()
            {
                let index = piece.get("index").and_then(Value::as_u64).map_or(position as u64, |i| i);
                if index >= MAX_TOOL_CALLS as u64 {
                    let cause = format!("a tool call's index is {index}, over the cap of {MAX_TOOL_CALLS} tool calls");
                    return Err(AgentErrorKind::Malformed { line, cause });
                }
                let index = index as usize;
                if index >= self.tool_calls.len() {
                    self.tool_calls.resize(index + 1, ToolCall::default());
                }
                let call = &mut self.tool_calls[index];
                let function = piece.get("function");
                call.id.push_str(str_in(piece.get("id")));
                call.name.push_str(str_in(function.and_then(|f| f.get("name"))));
                call.arguments.push_str(str_in(function.and_then(|f| f.get("arguments"))));
            }
        }
        if let Some(usage) = usage(chunk) {
            self.usage = Some(usage);
        }
        if let Some(sly_data) = chunk.get("sly_data").and_then(Value::as_object) {
            self.sly_data = Some(sly_data.clone());
        }
        if let Some(structure) = chunk.get("structure").and_then(Value::as_object) {
            self.structure = Some(structure.clone());
        }
        Ok(())
    }

    /// The output promptfoo's openai chat provider makes of a whole
    /// completion's message, as its assertions read it: a reasoning
    /// model's content after `Thinking: REASONING` and a blank line; with
    /// content and tool or function calls, the whole message; without
    /// content, the `function_call` or the `tool_calls`; else the content.
    /// Under a `json_schema` response format, content that is JSON is
    /// parsed. Anything not text is written as `JSON.stringify` writes it.
    /// `None` for a stream's answer, or one with no output at all; the
    /// flag says whether the output is not text (then the string is its
    /// JSON).
    pub(crate) fn promptfoo_output(&self, json_schema: bool) -> Option<(String, bool)> {
        let message = self.message.as_ref()?;
        let truthy = |value: Option<&Value>| match value {
            None | Some(Value::Null | Value::Bool(false)) => false,
            Some(Value::String(text)) => !text.is_empty(),
            Some(Value::Number(n)) => n.as_f64().is_some_and(|n| n != 0.0),
            Some(_) => true,
        };
        let (content, reasoning) = (message.get("content"), message.get("reasoning"));
        let (function_call, tool_calls) = (message.get("function_call"), message.get("tool_calls"));
        let calls = || if truthy(function_call) { function_call } else { tool_calls };
        let output = if truthy(reasoning) {
            content
        } else if truthy(content) && (truthy(function_call) || truthy(tool_calls)) {
            match tool_calls {
                Some(Value::Array(list)) if list.is_empty() => content,
                _ => Some(message),
            }
        } else if matches!(content, None | Some(Value::Null)) || (content == Some(&json!("")) && truthy(tool_calls)) {
            calls()
        } else {
            content
        };
        let mut output = output.filter(|o| !o.is_null())?.clone();
        if json_schema
            && let Value::String(text) = &output
            && let Ok(parsed) = serde_json::from_str::<Value>(text)
        {
            output = parsed;
        }
        let (text, is_json) = match output {
            Value::String(text) => (text, false),
            other => (crate::template::json_stringify(&other), true),
        };
        match reasoning.and_then(Value::as_str).filter(|r| !r.is_empty()) {
            Some(reasoning) if content.is_some_and(Value::is_string) && !json_schema_parsed(json_schema, content) => {
                Some((format!("Thinking: {reasoning}\n\n{text}"), false))
            }
            _ => Some((text, is_json)),
        }
    }

    /// The answer as checks see it, with the conversation state to carry
    /// on: the history sent for `request` plus this turn.
    pub(crate) fn into_response(self, request: &ChatRequest) -> Result<AgentResponse, AgentErrorKind> {
        let mut history = history(request.chat_context.as_ref())?;
        history.push(json!({ "role": "user", "content": request.text }));
        history.push(json!({ "role": "assistant", "content": self.content }));
        let message = ChatMessage {
            message_type: "AI".into(),
            text: (!self.content.is_empty()).then_some(self.content),
            sly_data: self.sly_data,
            structure: self.structure,
            ..ChatMessage::default()
        };
        let mut response = reduce_keeping_text(vec![message]);
        if let Some(tools) = tool_structure(&self.tool_calls) {
            let structure = response.structure.get_or_insert_with(Map::new);
            for (name, value) in tools {
                // `tool_calls` is always the list; a key of the content's
                // JSON object wins over a function's name.
                if name == "tool_calls" || !structure.contains_key(&name) {
                    structure.insert(name, value);
                }
            }
        }
        response.usage = self.usage;
        response.chat_context = Some(json!({ "messages": history }));
        Ok(response)
    }
}

/// The structure tool calls make (see the module's doc); none without any.
fn tool_structure(calls: &[ToolCall]) -> Option<Map<String, Value>> {
    if calls.is_empty() {
        return None;
    }
    let arguments = |call: &ToolCall| {
        serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
    };
    let mut structure = Map::new();
    for call in calls {
        if call.name != "tool_calls" && !structure.contains_key(&call.name) {
            structure.insert(call.name.clone(), arguments(call));
        }
    }
    let listed = calls.iter().map(|call| json!({ "id": call.id, "name": call.name, "arguments": arguments(call) }));
    structure.insert("tool_calls".into(), Value::Array(listed.collect()));
    Some(structure)
}

/// A string value, or `""`.
fn str_in(value: Option<&Value>) -> &str {
    value.and_then(Value::as_str).unwrap_or_default()
}

/// `usage` with both token counts, if the server sent it.
fn usage(body: &Value) -> Option<Usage> {
    let usage = body.get("usage")?;
    Some(Usage {
        prompt_tokens: usage.get("prompt_tokens")?.as_u64()?,
        completion_tokens: usage.get("completion_tokens")?.as_u64()?,
    })
}

/// An error object in place of an answer (`{"error": {"message": …}}`),
/// which servers send with a success status mid-stream.
fn refused(body: &Value) -> Result<(), AgentErrorKind> {
    let Some(error) = body.get("error").filter(|e| !e.is_null()) else { return Ok(()) };
    let message = error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_owned);
    Err(AgentErrorKind::Refused(message))
}

/// The first 200 characters of a JSON value, for messages.
fn preview(value: &Value) -> String {
    value.to_string().chars().take(200).collect()
}

/// Whether promptfoo parsed `content` as JSON under a `json_schema`
/// response format (then its output is no longer text, and no
/// `Thinking:` is put before it).
fn json_schema_parsed(json_schema: bool, content: Option<&Value>) -> bool {
    json_schema && content.and_then(Value::as_str).is_some_and(|text| serde_json::from_str::<Value>(text).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(text: &str, chat_context: Option<Value>) -> ChatRequest {
        ChatRequest { agent: "m".into(), text: text.into(), chat_context, ..ChatRequest::default() }
    }

    #[test]
    fn a_request_sends_the_system_message_the_sly_data_the_history_and_the_text() {
        let mut second = request(
            "again",
            Some(json!({ "messages": [
            { "role": "user", "content": "hello" }, { "role": "assistant", "content": "hi" } ] })),
        );
        second.sly_data = Some(json!({ "user": "ann" }).as_object().cloned().unwrap());
        let messages = request_messages(Some("Be terse."), &second).unwrap();
        assert_eq!(
            messages,
            vec![
                json!({ "role": "system", "content": "Be terse." }),
                json!({ "role": "system", "content": "sly_data: {\"user\":\"ann\"}" }),
                json!({ "role": "user", "content": "hello" }),
                json!({ "role": "assistant", "content": "hi" }),
                json!({ "role": "user", "content": "again" }),
            ]
        );
        assert_eq!(sly_data_in("sly_data: {\"user\":\"ann\"}"), second.sly_data);
        assert_eq!(sly_data_in("You are terse."), None);
    }

    #[test]
    fn a_state_of_another_shape_is_a_bad_request() {
        let error = request_messages(None, &request("x", Some(json!({ "chat_histories": [] })))).unwrap_err();
        assert!(matches!(error, AgentErrorKind::BadRequest(_)), "{error:?}");
    }

    #[test]
    fn the_response_carries_the_history_on_and_reads_json_as_structure() {
        let body = json!({ "choices": [{ "index": 0, "message": { "role": "assistant",
            "content": "{\"city\": \"Paris\"}" } }], "usage": { "prompt_tokens": 7, "completion_tokens": 3 } });
        let response = Answer::from_completion(&body).unwrap().into_response(&request("where?", None)).unwrap();
        assert_eq!(response.structure, json!({ "city": "Paris" }).as_object().cloned());
        // A JSON-mode answer is its text too, whole (promptfoo's `is-json`).
        assert_eq!(response.text.as_deref(), Some(r#"{"city": "Paris"}"#));
        assert_eq!(response.usage, Some(Usage { prompt_tokens: 7, completion_tokens: 3 }));
        assert_eq!(
            response.chat_context,
            Some(json!({ "messages": [
                { "role": "user", "content": "where?" },
                { "role": "assistant", "content": "{\"city\": \"Paris\"}" } ] }))
        );
    }

    #[test]
    fn tool_calls_past_the_cap_are_a_malformed_answer_not_an_allocation() {
        // A 100-byte chunk claiming the 4,000,000,000th tool call.
        let piece = json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 4_000_000_000u64 }] } }] });
        let error = Answer::default().add_chunk(&piece, 3).unwrap_err();
        assert!(error.to_string().contains("a tool call's index is 4000000000, over the cap of 128"), "{error}");
        let call = json!({ "id": "c", "function": { "name": "f", "arguments": "{}" } });
        let many = json!({ "choices": [{ "message": { "tool_calls": vec![call; MAX_TOOL_CALLS + 1] } }] });
        let error = Answer::from_completion(&many).unwrap_err();
        assert!(error.to_string().contains("it has 129 tool calls, over the cap of 128"), "{error}");
        let call = json!({ "id": "c", "function": { "name": "f", "arguments": "{}" } });
        let allowed = json!({ "choices": [{ "message": { "tool_calls": vec![call; MAX_TOOL_CALLS] } }] });
        assert_eq!(Answer::from_completion(&allowed).unwrap().tool_calls.len(), MAX_TOOL_CALLS);
    }

    #[test]
    fn streamed_tool_call_pieces_join_into_the_structure() {
        let mut answer = Answer::default();
        let chunks = [
            json!({ "choices": [{ "index": 0, "delta": { "role": "assistant", "tool_calls": [
                { "index": 0, "id": "call_1", "type": "function", "function": { "name": "get_weather", "arguments": "" } } ] } }] }),
            json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "function": { "arguments": "{\"city\":" } }] } }] }),
            json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "function": { "arguments": " \"Paris\"}" } }] } }] }),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
            json!({ "choices": [], "usage": { "prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14 } }),
        ];
        for (line, chunk) in chunks.iter().enumerate() {
            answer.add_chunk(chunk, line + 1).unwrap();
        }
        let response = answer.into_response(&request("weather?", None)).unwrap();
        assert_eq!(
            response.structure,
            json!({ "get_weather": { "city": "Paris" },
                    "tool_calls": [{ "id": "call_1", "name": "get_weather", "arguments": { "city": "Paris" } }] })
            .as_object()
            .cloned()
        );
        assert_eq!(response.text, None);
        assert_eq!(response.usage, Some(Usage { prompt_tokens: 10, completion_tokens: 4 }));
    }

    #[test]
    fn tool_calls_add_to_the_json_object_of_the_content() {
        let body = json!({ "choices": [{ "index": 0, "message": { "role": "assistant",
            "content": "done {\"turn\": 2, \"mirror\": \"mine\"}",
            "tool_calls": [
                { "id": "a", "type": "function", "function": { "name": "mirror", "arguments": "{\"text\":\"x\"}" } },
                { "id": "b", "type": "function", "function": { "name": "log", "arguments": "{}" } } ] } }] });
        let response = Answer::from_completion(&body).unwrap().into_response(&request("x", None)).unwrap();
        assert_eq!(response.text.as_deref(), Some(r#"done {"turn": 2, "mirror": "mine"}"#));
        assert_eq!(
            response.structure,
            json!({ "turn": 2, "mirror": "mine", "log": {},
                    "tool_calls": [{ "id": "a", "name": "mirror", "arguments": { "text": "x" } },
                                   { "id": "b", "name": "log", "arguments": {} }] })
            .as_object()
            .cloned(),
            "the content's keys win over a function's name; tool_calls is always the list"
        );
    }

    #[test]
    fn arguments_that_are_not_json_stay_the_string_sent() {
        let calls = [ToolCall { id: "c".into(), name: "f".into(), arguments: "{oops".into() }];
        assert_eq!(tool_structure(&calls).unwrap()["f"], json!("{oops"));
    }

    #[test]
    fn an_error_object_is_a_refusal_and_a_chunk_without_choices_is_malformed() {
        let error = Answer::from_completion(&json!({ "error": { "message": "model overloaded" } })).unwrap_err();
        assert_eq!(error, AgentErrorKind::Refused("model overloaded".into()));
        let error = Answer::default().add_chunk(&json!({ "id": "x" }), 4).unwrap_err();
        assert!(matches!(error, AgentErrorKind::Malformed { line: 4, .. }), "{error:?}");
        let error = Answer::from_completion(&json!({ "choices": [] })).unwrap_err();
        assert!(matches!(error, AgentErrorKind::MalformedBody(_)), "{error:?}");
    }
}
