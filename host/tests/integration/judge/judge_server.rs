//! A judge for the tests: an OpenAI-compatible chat-completions server on
//! 127.0.0.1 (the scriptable [`FakeServer`]) that answers by deterministic
//! rules, so that every verdict, score and failure mode the tests assert
//! follows from the prompt alone.
//!
//! Rules for a `gist` prompt (criteria and text):
//! - criteria `mentions WORD` → `pass` when the text contains WORD (any
//!   case), else `fail`;
//! - criteria containing `say pass` → `pass`;
//! - criteria `be vague` → an equivocal answer (`pass, or perhaps fail`);
//! - anything else → `fail`.
//!
//! Rule for the Assessor's classification prompt: the mode is `Fails KEY`
//! for the test's key; answered by number when already known.

use crate::fake_server::{FakeServer, Recorded, Reply};

/// A chat completion whose content is `text`.
pub fn completion(text: &str) -> Reply {
    let body = serde_json::json!({ "choices": [{ "message": { "role": "assistant", "content": text } }] }).to_string();
    Reply::Raw(
        format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
            .into_bytes(),
    )
}

/// Starts a judge server following the rules.
pub fn start() -> FakeServer {
    FakeServer::start(|request| completion(&answer(prompt(request))))
}

/// The prompt of a chat-completions request.
pub fn prompt(request: &Recorded) -> &str {
    request.body["messages"][0]["content"].as_str().unwrap_or_default()
}

/// The rules.
pub fn answer(prompt: &str) -> String {
    if prompt.starts_with("You classify why") {
        return classify(prompt);
    }
    let criteria = between(prompt, "ACCEPTANCE CRITERIA:\n", "\n\nTEXT:\n").unwrap_or_default();
    let text = prompt.split_once("\n\nTEXT:\n").map(|(_, t)| t).unwrap_or_default();
    if criteria == "be vague" {
        "pass, or perhaps fail".into()
    } else if let Some(word) = criteria.strip_prefix("mentions ") {
        if text.to_lowercase().contains(&word.to_lowercase()) { "pass".into() } else { "fail".into() }
    } else if criteria.contains("say pass") || prompt.contains("say pass") {
        "pass".into()
    } else {
        "fail".into()
    }
}

fn classify(prompt: &str) -> String {
    let test = between(prompt, "THE TEST: ", "\n").unwrap_or_default();
    let key = test.split('`').nth(1).unwrap_or("the request");
    let mode = format!("Fails {key}");
    let known = prompt.split_once("KNOWN FAILURE MODES:\n").map(|(_, rest)| rest).unwrap_or_default();
    for line in known.lines() {
        if let Some((number, text)) = line.split_once(". ")
            && text == mode
        {
            return number.to_owned();
        }
    }
    mode
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = text.split_once(start)?.1;
    Some(rest.split_once(end).map_or(rest, |(inside, _)| inside))
}

/// The gist requests a server received.
pub fn count(server: &FakeServer) -> usize {
    server.requests.lock().unwrap().len()
}
