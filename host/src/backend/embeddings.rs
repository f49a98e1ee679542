//! [`RemoteEmbeddings`]: an OpenAI-compatible `POST {url}/embeddings`
//! backend for plugins granted `embeddings`. Each text's vector is cached on
//! disk by (URL, model, text); the texts not cached go out in batches of at
//! most `batch_size`, each request within a timeout, retried on 429 and 5xx,
//! and counted against a budget per run.
//!
//! The OpenAI API gives one vector per input, never per token. For
//! BERTScore-style matching (`embed-tokens`), each word of a text (a run of
//! letters and digits) is embedded on its own: static word vectors rather
//! than a transformer's contextual ones, documented as such. With
//! `word_vectors = false`, `embed-tokens` says the backend has sentence
//! vectors only, and plugins fall back to them.

use crate::backend::budget::Budget;
use crate::backend::cache::{AnswerCache, credential_part};
use crate::backend::openai::Endpoint;
use crate::backend::retry::{Attempt, RetryPolicy, with_retries};
use crate::backend::worker::Worker;
use crate::credentials::{debug_key, redact_urls};
use crate::net;
use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::{Answered, CapabilitySpend};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to reach the embeddings endpoint and how patient to be.
#[derive(Clone, PartialEq)]
pub struct EmbeddingsSettings {
    /// The API base, e.g. `http://localhost:11434/v1`.
    pub url: String,
    /// The model.
    pub model: String,
    /// The bearer token, if any.
    pub api_key: Option<String>,
    /// The bound on one request (default 60 s).
    pub timeout: Duration,
    /// Retries after a 429 or 5xx.
    pub retry: RetryPolicy,
    /// The most texts per request (default 64).
    pub batch_size: usize,
    /// The most requests one run may send (default 1000).
    pub max_calls: usize,
    /// Whether `embed-tokens` embeds each word (default true).
    pub word_vectors: bool,
    /// Where vectors are cached; `None` turns the cache off.
    pub cache: Option<AnswerCache>,
}

impl std::fmt::Debug for EmbeddingsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingsSettings")
            .field("url", &redact_urls(&self.url))
            .field("model", &self.model)
            .field("api_key", &debug_key(&self.api_key))
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("batch_size", &self.batch_size)
            .field("max_calls", &self.max_calls)
            .field("word_vectors", &self.word_vectors)
            .field("cache", &self.cache)
            .finish()
    }
}

impl EmbeddingsSettings {
    /// The endpoint at `url` with `model`, and the defaults.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> EmbeddingsSettings {
        EmbeddingsSettings {
            url: url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            batch_size: 64,
            max_calls: 1000,
            word_vectors: true,
            cache: None,
        }
    }
}

/// The embeddings client.
#[derive(Debug)]
pub struct RemoteEmbeddings {
    settings: EmbeddingsSettings,
    endpoint: Arc<Endpoint>,
    client: reqwest::Client,
    cache: Option<AnswerCache>,
    /// The API key's part of the cache key ([`credential_part`]).
    credential: String,
    worker: Worker,
    budget: Budget,
}

impl RemoteEmbeddings {
    /// Builds the client.
    pub fn new(settings: EmbeddingsSettings) -> Result<RemoteEmbeddings, String> {
        let client = net::client(net::ClientOptions { purpose: "the embeddings backend's", ..Default::default() })?;
        let endpoint =
            Endpoint { url: settings.url.clone(), model: settings.model.clone(), api_key: settings.api_key.clone() };
        Ok(RemoteEmbeddings {
            endpoint: Arc::new(endpoint),
            client,
            cache: settings.cache.clone(),
            credential: credential_part(settings.api_key.as_deref()),
            worker: Worker::start("embeddings")?,
            budget: Budget::new(settings.max_calls, "embeddings"),
            settings,
        })
    }

    /// How many requests it sent.
    pub fn requests(&self) -> usize {
        self.budget.used()
    }

    fn cache_key<'a>(&'a self, text: &'a str) -> [&'a str; 4] {
        [&self.settings.url, &self.settings.model, &self.credential, text]
    }

    /// One request for `batch`; the time it waits is added to `waited`.
    fn request(
        &self,
        batch: Vec<String>,
        spend: &CapabilitySpend,
        waited: &mut Duration,
    ) -> Result<Vec<Vec<f32>>, String> {
        self.budget.take(&spend.embeddings)?;
        let (endpoint, client) = (self.endpoint.clone(), self.client.clone());
        let (retry, timeout) = (self.settings.retry.clone(), self.settings.timeout);
        let asked = Instant::now();
        let answer = self.worker.run(async move {
            with_retries(&retry, || async {
                match tokio::time::timeout(timeout, endpoint.embed(&client, &batch)).await {
                    Ok(attempt) => attempt,
                    Err(_) => Attempt::Done(Err(format!(
                        "the embeddings backend at {} did not answer within {} s",
                        redact_urls(&endpoint.url),
                        timeout.as_secs_f64()
                    ))),
                }
            })
            .await
        });
        *waited += asked.elapsed();
        answer?
    }

    /// One sentence vector per text, from the cache or the backend; time
    /// spent waiting on the backend is added to `waited`.
    fn sentence_vectors(
        &self,
        texts: &[String],
        spend: &CapabilitySpend,
        waited: &mut Duration,
    ) -> Result<Vec<Vec<f32>>, String> {
        let mut found: HashMap<&str, Vec<f32>> = HashMap::new();
        let mut missing: Vec<String> = Vec::new();
        for text in texts {
            if found.contains_key(text.as_str()) || missing.contains(text) {
                continue;
            }
            match self.cache.as_ref().and_then(|c| c.get(&self.cache_key(text))) {
                Some(cached) => match serde_json::from_str::<Vec<f32>>(&cached) {
                    Ok(vector) => {
                        found.insert(text, vector);
                    }
                    Err(_) => missing.push(text.clone()),
                },
                None => missing.push(text.clone()),
            }
        }
        let mut fetched: HashMap<String, Vec<f32>> = HashMap::new();
        for batch in missing.chunks(self.settings.batch_size.max(1)) {
            let vectors = self.request(batch.to_vec(), spend, waited)?;
            for (text, vector) in batch.iter().zip(vectors) {
                if let Some(cache) = &self.cache {
                    cache.put(&self.cache_key(text), &serde_json::to_string(&vector).unwrap_or_default());
                }
                fetched.insert(text.clone(), vector);
            }
        }
        let vectors: Vec<Vec<f32>> = texts
            .iter()
            .map(|text| found.get(text.as_str()).or_else(|| fetched.get(text)).cloned().unwrap_or_default())
            .collect();
        if let Some(width) = vectors.first().map(Vec::len)
            && vectors.iter().any(|v| v.len() != width)
        {
            return Err(format!(
                "the embeddings backend at {} gave vectors of different lengths (a cache from another model?)",
                redact_urls(&self.settings.url)
            ));
        }
        Ok(vectors)
    }

    /// One vector per word of each text; time spent waiting on the backend
    /// is added to `waited`.
    fn word_vectors(
        &self,
        texts: &[String],
        spend: &CapabilitySpend,
        waited: &mut Duration,
    ) -> Result<Vec<Vec<Vec<f32>>>, String> {
        if !self.settings.word_vectors {
            return Err(format!(
                "the embeddings backend at {} gives sentence vectors only ([embeddings] word_vectors = false)",
                redact_urls(&self.settings.url)
            ));
        }
        let words: Vec<Vec<String>> = texts.iter().map(|t| words(t)).collect();
        let mut distinct: Vec<String> = words.iter().flatten().cloned().collect();
        distinct.sort();
        distinct.dedup();
        let vectors = self.sentence_vectors(&distinct, spend, waited)?;
        let by_word: HashMap<&str, &Vec<f32>> = distinct.iter().map(String::as_str).zip(&vectors).collect();
        Ok(words.iter().map(|ws| ws.iter().map(|w| by_word[w.as_str()].clone()).collect()).collect())
    }
}

impl Embeddings for RemoteEmbeddings {
    fn embed(&self, texts: &[String], spend: &CapabilitySpend) -> Answered<Vec<Vec<f32>>> {
        let mut waited = Duration::ZERO;
        let answer = self.sentence_vectors(texts, spend, &mut waited);
        Answered { answer, waited }
    }

    fn embed_tokens(&self, texts: &[String], spend: &CapabilitySpend) -> Answered<Vec<Vec<Vec<f32>>>> {
        let mut waited = Duration::ZERO;
        let answer = self.word_vectors(texts, spend, &mut waited);
        Answered { answer, waited }
    }
}

/// The words of a text: runs of letters and digits, as written.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_runs_of_letters_and_digits() {
        assert_eq!(words("The Beatles, from Liverpool (1960)!"), ["The", "Beatles", "from", "Liverpool", "1960"]);
        assert!(words(" ...  ").is_empty());
    }
}
