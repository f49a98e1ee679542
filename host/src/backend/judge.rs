//! [`RemoteJudge`]: the language-model judge a granted plugin (or the
//! Assessor) asks. An answer comes from the answer cache, or from the
//! configured backend — an OpenAI-compatible chat-completions endpoint or a
//! neuro-san agent — within a per-request timeout, with retries on 429 and
//! 5xx, within a budget of requests per run, and with at most
//! [`JudgeSettings::concurrency`] requests in flight at once (a semaphore
//! on the client thread: a request waiting for its turn blocks no thread
//! but its caller's, and waits no longer than the timeout).

use crate::backend::budget::Budget;
use crate::backend::cache::{AnswerCache, credential_part};
use crate::backend::openai::Endpoint;
use crate::backend::retry::{Attempt, RetryPolicy, with_retries};
use crate::backend::worker::Worker;
use crate::credentials::{debug_key, redact_urls};
use crate::net;
use crate::sandbox::host::judge::Judge;
use crate::sandbox::host::{Answered, CapabilitySpend};
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which service judges.
#[derive(Clone, PartialEq)]
pub enum JudgeBackend {
    /// An OpenAI-compatible chat-completions endpoint.
    OpenAi {
        /// The API base, e.g. `http://localhost:11434/v1`.
        url: String,
        /// The model sent with each request.
        model: String,
        /// The bearer token, if the endpoint needs one.
        api_key: Option<String>,
    },
    /// A neuro-san agent, e.g. `http://localhost:8080/gist`: the prompt is
    /// the user message, the answer the response's text.
    NeuroSan {
        /// The agent's URL: the server and the agent's name.
        url: String,
    },
}

impl std::fmt::Debug for JudgeBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JudgeBackend::OpenAi { url, model, api_key } => f
                .debug_struct("OpenAi")
                .field("url", &redact_urls(url))
                .field("model", model)
                .field("api_key", &debug_key(api_key))
                .finish(),
            JudgeBackend::NeuroSan { url } => f.debug_struct("NeuroSan").field("url", &redact_urls(url)).finish(),
        }
    }
}

impl JudgeBackend {
    /// The URL, model and credential that key the answer cache.
    fn cache_key(&self) -> (&str, &str, String) {
        match self {
            JudgeBackend::OpenAi { url, model, api_key } => (url, model, credential_part(api_key.as_deref())),
            JudgeBackend::NeuroSan { url } => (url, "neuro-san", String::new()),
        }
    }

    /// The URL, for messages: without its userinfo.
    pub fn url(&self) -> Cow<'_, str> {
        match self {
            JudgeBackend::OpenAi { url, .. } | JudgeBackend::NeuroSan { url } => redact_urls(url),
        }
    }
}

/// How to reach the judge and how patient to be.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeSettings {
    /// The service.
    pub backend: JudgeBackend,
    /// The bound on one request (default 60 s). Not retried when it fires.
    pub timeout: Duration,
    /// Retries after a 429 or 5xx.
    pub retry: RetryPolicy,
    /// The most requests one run may send (default 1000); cached answers
    /// are free.
    pub max_calls: usize,
    /// Where answers are cached; `None` turns the cache off.
    pub cache: Option<AnswerCache>,
    /// The most requests in flight at once (default
    /// [`DEFAULT_JUDGE_CONCURRENCY`]); at least 1.
    pub concurrency: usize,
}

/// How many requests the judge has in flight at once unless `[judge]
/// concurrency` says otherwise: enough to keep a remote model busy, few
/// enough not to be turned away by a rate limit.
pub const DEFAULT_JUDGE_CONCURRENCY: usize = 16;

impl JudgeSettings {
    /// An OpenAI-compatible endpoint at `url` with `model`, and the defaults.
    pub fn openai(url: impl Into<String>, model: impl Into<String>) -> JudgeSettings {
        JudgeSettings::new(JudgeBackend::OpenAi { url: url.into(), model: model.into(), api_key: None })
    }

    /// The neuro-san agent at `url` (e.g. `http://localhost:8080/gist`), and
    /// the defaults.
    pub fn neuro_san(url: impl Into<String>) -> JudgeSettings {
        JudgeSettings::new(JudgeBackend::NeuroSan { url: url.into() })
    }

    /// `backend` with the defaults.
    pub fn new(backend: JudgeBackend) -> JudgeSettings {
        JudgeSettings {
            backend,
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            max_calls: 1000,
            cache: None,
            concurrency: DEFAULT_JUDGE_CONCURRENCY,
        }
    }
}

/// A judge service's client for a backend this module does not speak (a
/// neuro-san agent: `agent/judge.rs`): one attempt at an answer to a
/// prompt; the [`RemoteJudge`] around it retries, caches and bounds it.
pub(crate) trait JudgeClient: Send + Sync + std::fmt::Debug {
    /// One attempt at the answer to `prompt`.
    fn complete<'a>(&'a self, prompt: &'a str) -> Pin<Box<dyn Future<Output = Attempt<String>> + Send + 'a>>;
}

/// The client of one backend.
#[derive(Debug)]
enum Client {
    OpenAi(Endpoint, reqwest::Client),
    Other(Arc<dyn JudgeClient>),
}

impl Client {
    async fn complete(&self, prompt: &str) -> Attempt<String> {
        match self {
            Client::OpenAi(endpoint, client) => endpoint.complete(client, prompt).await,
            Client::Other(client) => client.complete(prompt).await,
        }
    }
}

/// The judge: cache, budget, timeout and retries around one backend.
#[derive(Debug)]
pub struct RemoteJudge {
    settings: JudgeSettings,
    client: Arc<Client>,
    cache: Option<AnswerCache>,
    worker: Worker,
    budget: Budget,
    /// One permit per request in flight.
    turns: Arc<tokio::sync::Semaphore>,
}

impl RemoteJudge {
    /// The judge of an OpenAI-compatible endpoint; a neuro-san agent's is
    /// made by `agent/judge.rs`'s `remote_judge`, which speaks neuro-san
    /// (and makes either). Fails on a malformed URL.
    pub fn new(settings: JudgeSettings) -> Result<RemoteJudge, String> {
        let client = match &settings.backend {
            JudgeBackend::OpenAi { url, model, api_key } => {
                let http = net::client(net::ClientOptions { purpose: "the judge's", ..Default::default() })?;
                let endpoint = Endpoint { url: url.clone(), model: model.clone(), api_key: api_key.clone() };
                Client::OpenAi(endpoint, http)
            }
            JudgeBackend::NeuroSan { url } => {
                return Err(format!(
                    "the neuro-san judge at {} is made by `assay::agent::remote_judge`, which speaks neuro-san; \
                     `RemoteJudge::new` makes OpenAI-compatible judges",
                    redact_urls(url)
                ));
            }
        };
        RemoteJudge::around(settings, client)
    }

    /// The judge of `settings` asking through `client` (`settings.backend`
    /// keys its answer cache).
    pub(crate) fn with_client(settings: JudgeSettings, client: Arc<dyn JudgeClient>) -> Result<RemoteJudge, String> {
        RemoteJudge::around(settings, Client::Other(client))
    }

    fn around(settings: JudgeSettings, client: Client) -> Result<RemoteJudge, String> {
        Ok(RemoteJudge {
            cache: settings.cache.clone(),
            client: Arc::new(client),
            worker: Worker::start("judge")?,
            budget: Budget::new(settings.max_calls, "judge"),
            turns: Arc::new(tokio::sync::Semaphore::new(settings.concurrency.max(1))),
            settings,
        })
    }

    /// How many requests it sent (cached answers excluded, retries
    /// included once).
    pub fn requests(&self) -> usize {
        self.budget.used()
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &JudgeSettings {
        &self.settings
    }
}

/// Why a request did not get its turn within the timeout.
fn no_turn(shown_url: &str, timeout: Duration, concurrency: usize) -> String {
    format!(
        "the judge at {shown_url} had {} in flight for {} s and this one never got its turn\n\nConsider raising [judge] concurrency or timeout_secs in assay.toml",
        crate::plural::count(concurrency, "request"),
        timeout.as_secs_f64()
    )
}

impl Judge for RemoteJudge {
    fn complete(&self, prompt: &str, spend: &CapabilitySpend) -> Answered<String> {
        let (url, model, credential) = self.settings.backend.cache_key();
        let key = [url, model, &credential, prompt];
        if let Some(answer) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            return Answered::at_once(Ok(answer));
        }
        if let Err(spent) = self.budget.take(&spend.judge) {
            return Answered::at_once(Err(spent));
        }
        let (client, turns) = (self.client.clone(), self.turns.clone());
        let (retry, timeout, concurrency) =
            (self.settings.retry.clone(), self.settings.timeout, self.settings.concurrency.max(1));
        let (owned_prompt, shown_url) = (prompt.to_owned(), self.settings.backend.url().into_owned());
        let asked = Instant::now();
        let answer = self.worker.run(async move {
            with_retries(&retry, || async {
                // Each attempt waits for a turn (a retry's backoff holds
                // none), bounded like the request itself.
                let Ok(turn) = tokio::time::timeout(timeout, turns.acquire()).await else {
                    return crate::backend::retry::Attempt::Done(Err(no_turn(&shown_url, timeout, concurrency)));
                };
                let _turn = turn.expect("the semaphore is never closed");
                match tokio::time::timeout(timeout, client.complete(&owned_prompt)).await {
                    Ok(attempt) => attempt,
                    Err(_) => crate::backend::retry::Attempt::Done(Err(format!(
                        "the judge at {shown_url} did not answer within {} s",
                        timeout.as_secs_f64()
                    ))),
                }
            })
            .await
        });
        let waited = asked.elapsed();
        let answer = answer.and_then(|answer| answer);
        if let (Some(cache), Ok(answer)) = (&self.cache, &answer) {
            cache.put(&key, answer);
        }
        Answered { answer, waited }
    }

    fn concurrency(&self) -> usize {
        self.settings.concurrency.max(1)
    }
}
