//! OpenAI-compatible HTTP endpoints: `POST {url}/chat/completions` for the
//! judge, `POST {url}/embeddings` for embeddings. One attempt per call; the
//! caller retries. An answer's body is read up to [`MAX_ANSWER_BYTES`] and
//! no further.

use crate::backend::retry::{Attempt, is_retryable, retry_after};
use crate::credentials::{debug_key, redact_urls};
use crate::net::{PREVIEW_BYTES, error_chain, read_up_to};
use serde_json::{Value, json};

/// The largest answer body read from the judge or the embeddings backend:
/// 16 MiB (a batch of 64 vectors of 4096 floats, as JSON, is about 6 MiB).
pub(crate) const MAX_ANSWER_BYTES: usize = 16 << 20;

/// The parts of an OpenAI-compatible endpoint a request needs.
#[derive(Clone, PartialEq)]
pub(crate) struct Endpoint {
    /// The API base, e.g. `http://localhost:11434/v1`.
    pub url: String,
    /// The model.
    pub model: String,
    /// The bearer token, if any.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &redact_urls(&self.url))
            .field("model", &self.model)
            .field("api_key", &debug_key(&self.api_key))
            .finish()
    }
}

impl Endpoint {
    /// `{url}/{path}`.
    pub(crate) fn join(&self, path: &str) -> String {
        format!("{}/{path}", self.url.trim_end_matches('/'))
    }

    /// One chat completion of `prompt` at temperature 0 (but for reasoning
    /// models, which take no temperature): the answer's text.
    pub(crate) async fn complete(&self, client: &reqwest::Client, prompt: &str) -> Attempt<String> {
        let url = self.join("chat/completions");
        let mut body = json!({ "model": self.model, "messages": [{ "role": "user", "content": prompt }] });
        if !is_reasoning_model(&self.model) {
            body["temperature"] = json!(0);
        }
        let text = match self.post(client, "the judge", &url, &body).await {
            Ok(text) => text,
            Err(attempt) => return attempt,
        };
        Attempt::Done(completion_text(&text).ok_or_else(|| {
            let url = redact_urls(&url);
            format!("the judge at {url} answered something that is not a chat completion: {}", preview(&text))
        }))
    }

    /// One vector per input, in order.
    pub(crate) async fn embed(&self, client: &reqwest::Client, inputs: &[String]) -> Attempt<Vec<Vec<f32>>> {
        let url = self.join("embeddings");
        let body = json!({ "model": self.model, "input": inputs, "encoding_format": "float" });
        let text = match self.post(client, "the embeddings backend", &url, &body).await {
            Ok(text) => text,
            Err(attempt) => return attempt,
        };
        Attempt::Done(embedding_vectors(&text, inputs.len()).map_err(|why| {
            let url = redact_urls(&url);
            format!("the embeddings backend at {url} answered something unusable ({why}): {}", preview(&text))
        }))
    }

    /// Posts `body` and reads the answer's body; any failure is the attempt's
    /// outcome, its message naming `role` ("the judge") and the URL (without
    /// its userinfo). The caller bounds the whole attempt with its timeout.
    pub(crate) async fn post<T>(
        &self,
        client: &reqwest::Client,
        role: &str,
        url: &str,
        body: &Value,
    ) -> Result<String, Attempt<T>> {
        let mut request = client.post(url).header("content-type", "application/json").body(body.to_string());
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let shown = redact_urls(url);
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => return Err(Attempt::Done(Err(format!("cannot reach {role} at {shown}: {}", error_chain(&e))))),
        };
        let status = response.status();
        let wait = retry_after(response.headers());
        let cap = if status.is_success() { MAX_ANSWER_BYTES } else { PREVIEW_BYTES };
        let (body, more) = match read_up_to(response, cap).await {
            Ok(read) => read,
            Err(e) => {
                let broken = format!("{role} at {shown} broke off its answer: {}", error_chain(&e));
                return Err(Attempt::Done(Err(broken)));
            }
        };
        let text = String::from_utf8_lossy(&body).into_owned();
        if status.is_success() {
            if more {
                return Err(Attempt::Done(Err(format!(
                    "{role} at {shown} answered with more than {} MiB, the cap on an answer; the rest was not read",
                    MAX_ANSWER_BYTES >> 20
                ))));
            }
            return Ok(text);
        }
        let error = format!("{role} at {shown} answered HTTP {}: {}", status.as_u16(), preview(&text));
        Err(if is_retryable(status.as_u16()) { Attempt::Retry { error, wait } } else { Attempt::Done(Err(error)) })
    }
}

/// Whether `model` is one of OpenAI's reasoning models, which refuse a
/// `temperature` (promptfoo leaves it out for them too).
fn is_reasoning_model(model: &str) -> bool {
    ["o1", "o3", "o4", "gpt-5"].iter().any(|prefix| model.starts_with(prefix))
}

/// `choices[0].message.content` of a chat completion.
fn completion_text(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    value.get("choices")?.get(0)?.get("message")?.get("content")?.as_str().map(str::to_owned)
}

/// `data[*].embedding` of an embeddings answer, ordered by `index`: exactly
/// `expected` vectors of one length.
fn embedding_vectors(body: &str, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("not JSON: {e}"))?;
    let data = value.get("data").and_then(Value::as_array).ok_or("no `data` list")?;
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = item.get("index").and_then(Value::as_u64).map_or(position, |i| i as usize);
        let numbers = item.get("embedding").and_then(Value::as_array).ok_or("an item has no `embedding` list")?;
        let vector: Option<Vec<f32>> = numbers.iter().map(|n| n.as_f64().map(|f| f as f32)).collect();
        let slot = vectors
            .get_mut(index)
            .ok_or_else(|| format!("index {index} for {}", crate::plural::count(expected, "input")))?;
        *slot = Some(vector.ok_or("an embedding holds something other than numbers")?);
    }
    let vectors: Vec<Vec<f32>> = vectors.into_iter().collect::<Option<_>>().ok_or_else(|| {
        format!("{} for {}", crate::plural::count(data.len(), "vector"), crate::plural::count(expected, "input"))
    })?;
    if vectors.windows(2).any(|pair| pair[0].len() != pair[1].len()) || vectors.first().is_some_and(Vec::is_empty) {
        return Err("vectors of different or zero lengths".into());
    }
    Ok(vectors)
}

/// The first 200 characters of a body, for messages.
pub(crate) fn preview(text: &str) -> String {
    text.chars().take(200).collect()
}
