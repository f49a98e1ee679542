//! The deterministic OpenAI-compatible model the promptfoo example corpus
//! (`fixtures/promptfoo-examples/`) runs against: promptfoo when its
//! verdicts are recorded (`cargo run -p assay --example openai_stub`, see
//! `plugins/promptfoo/differential/examples.mjs`) and assay in
//! `promptfoo_examples.rs`. Every answer follows from the request alone, so
//! the two tools agree exactly when they send the same requests and judge
//! the answers alike. Rules:
//! - `POST …/chat/completions`: a grading request (its messages ask for a
//!   JSON object with `pass` and `reason`) is answered `{"reason": …,
//!   "pass": P, "score": S}`, P and S taken from a hash of the messages'
//!   contents joined by a blank line; one asking for a factuality
//!   `category` with a letter A–E likewise; one asking for `"Y" or "N"`
//!   (closed QA) with that letter; one asking for the index of the text that
//!   best fits (select-best) with 0, 1 or 2 by the hash (2 names no text of
//!   two); any other with the text of its last user message (an echo). Usage counts words.
//! - `POST …/completions`: the prompt, echoed.
//! - `POST …/embeddings`: for each input, 27 numbers: how often each letter
//!   a-z occurs (any case), then how many other non-space characters.
//! - `POST …/moderations`: nothing flagged.

use super::loopback_http::{read_request, write_json};
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::net::{TcpListener, TcpStream};

/// Answers every connection `listener` accepts, forever.
pub async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        tokio::spawn(connection(stream));
    }
}

/// Answers the requests of one kept-alive connection, one after another.
async fn connection(stream: TcpStream) {
    let mut stream = BufReader::new(stream);
    while let Some((path, body)) = read_request(&mut stream).await {
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (status, answer) = match answer(&path, &request) {
            Some(answer) => ("200 OK", answer),
            None => ("404 Not Found", json!({"error": {"message": format!("no route {path}")}})),
        };
        if !write_json(&mut stream, status, &answer.to_string()).await {
            return;
        }
    }
}

/// The answer to a request for `path`, or `None` for a route it does not
/// serve.
fn answer(path: &str, request: &Value) -> Option<Value> {
    let model = request["model"].as_str().unwrap_or("stub");
    let path = path.split('?').next().unwrap_or_default();
    if path.ends_with("/chat/completions") {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let contents: Vec<String> = messages.iter().map(|m| content(&m["content"])).collect();
        let last_user = messages.iter().rev().find(|m| m["role"] == "user").map(|m| content(&m["content"]));
        let text = reply(&contents.join("\n\n"), last_user.as_deref().unwrap_or_default());
        let usage = usage(&contents.join(" "), &text);
        let message = json!({"role": "assistant", "content": text});
        Some(json!({
            "id": "stub", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage,
        }))
    } else if path.ends_with("/completions") {
        let prompt = content(&request["prompt"]);
        let usage = usage(&prompt, &prompt);
        Some(json!({
            "id": "stub", "object": "text_completion", "model": model,
            "choices": [{"index": 0, "text": prompt, "finish_reason": "stop"}], "usage": usage,
        }))
    } else if path.ends_with("/embeddings") {
        let inputs = match &request["input"] {
            Value::Array(inputs) => inputs.iter().map(content).collect(),
            input => vec![content(input)],
        };
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(index, input)| json!({"object": "embedding", "index": index, "embedding": embed(input)}))
            .collect();
        Some(json!({"object": "list", "model": model, "data": data, "usage": {"prompt_tokens": 1, "total_tokens": 1}}))
    } else if path.ends_with("/moderations") {
        Some(
            json!({"id": "stub", "model": model, "results": [{"flagged": false, "categories": {}, "category_scores": {}}]}),
        )
    } else {
        None
    }
}

/// A message's content as text: a string as it is, anything else as JSON.
fn content(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The answer to chat messages whose contents are `all`, the last user
/// message being `last_user`.
fn reply(all: &str, last_user: &str) -> String {
    let hash = fnv1a(all);
    if all.contains("pass") && all.contains("reason") && all.contains("JSON") {
        let pass = hash.is_multiple_of(2);
        let score = if pass { 1.0 } else { 0.0 };
        json!({"reason": format!("stub grade {hash:016x}"), "pass": pass, "score": score}).to_string()
    } else if all.contains("category") && all.contains("(A)") {
        let letter = ["A", "B", "C", "D", "E"][(hash % 5) as usize];
        json!({"category": letter, "reason": format!("stub grade {hash:016x}")}).to_string()
    } else if all.contains("\"Y\" or \"N\"") {
        let letter = if hash.is_multiple_of(2) { "Y" } else { "N" };
        format!("stub reasoning {hash:016x}\n{letter}\n{letter}")
    } else if all.contains("Output the index of the text that best fits the criteria") {
        format!("Text {} fits best.", hash % 3)
    } else {
        last_user.to_owned()
    }
}

/// Token usage: whitespace-separated words asked and answered.
fn usage(asked: &str, answered: &str) -> Value {
    let (prompt, completion) = (asked.split_whitespace().count(), answered.split_whitespace().count());
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

/// 64-bit FNV-1a of the text's bytes.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// Letter counts a-z, then the other non-space characters.
fn embed(text: &str) -> Vec<u32> {
    let mut vector = vec![0; 27];
    for c in text.chars() {
        if c.is_ascii_alphabetic() {
            vector[usize::from(c.to_ascii_lowercase() as u8 - b'a')] += 1;
        } else if !c.is_whitespace() {
            vector[26] += 1;
        }
    }
    vector
}
