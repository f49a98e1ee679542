//! A [`Judge`] backed by an OpenAI-compatible chat-completions endpoint
//! (`POST {url}/chat/completions`): a per-request timeout, retries with
//! backoff on 429 and 5xx, a per-run budget of calls, and an answer cache on
//! disk keyed by (URL, model, prompt), so re-running the same checks is
//! cheap and deterministic.
//!
//! Plugins call the judge from blocking threads. The HTTP client lives on a
//! thread of its own with its own small runtime, so the judge can be called,
//! and dropped, from anywhere.

use crate::plugin::host::judge::Judge;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

/// How to reach the judge.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeSettings {
    /// The API base, e.g. `http://localhost:11434/v1`.
    pub url: String,
    /// The model name sent with each request.
    pub model: String,
    /// The bearer token, if the endpoint needs one.
    pub api_key: Option<String>,
    /// The bound on one request (default 60 s).
    pub timeout: Duration,
    /// Retries after a 429 or 5xx (default 3), with doubling backoff.
    pub retries: u32,
    /// The first backoff (default 500 ms); a `Retry-After` header wins.
    pub backoff: Duration,
    /// The most calls one run may make (default 1000); cache hits are free.
    pub max_calls: usize,
    /// Where answers are cached; `None` turns the cache off.
    pub cache_dir: Option<PathBuf>,
}

impl JudgeSettings {
    /// Settings for `url` and `model` with the defaults.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> JudgeSettings {
        JudgeSettings {
            url: url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(60),
            retries: 3,
            backoff: Duration::from_millis(500),
            max_calls: 1000,
            cache_dir: None,
        }
    }

    /// The per-user default cache: `$XDG_CACHE_HOME/assay/judge`, else
    /// `~/.cache/assay/judge`.
    pub fn default_cache_dir() -> Option<PathBuf> {
        crate::plugin::CompileCache::default_dir().and_then(|d| d.parent().map(|p| p.join("judge")))
    }
}

type Job = (String, mpsc::Sender<Result<String, String>>);

/// The judge client.
pub struct OpenAiJudge {
    settings: JudgeSettings,
    jobs: Mutex<mpsc::Sender<Job>>,
    calls: AtomicUsize,
}

impl std::fmt::Debug for OpenAiJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiJudge").field("url", &self.settings.url).field("model", &self.settings.model).finish()
    }
}

impl OpenAiJudge {
    /// Starts the client thread.
    pub fn new(settings: JudgeSettings) -> Result<OpenAiJudge, String> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .use_rustls_tls()
            .build()
            .map_err(|e| format!("cannot build the judge's HTTP client: {e}"))?;
        let (sender, receiver) = mpsc::channel::<Job>();
        let worker = settings.clone();
        std::thread::Builder::new()
            .name("assay-judge".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                let Ok(runtime) = runtime else { return };
                while let Ok((prompt, reply)) = receiver.recv() {
                    let _ = reply.send(runtime.block_on(ask(&client, &worker, &prompt)));
                }
            })
            .map_err(|e| format!("cannot start the judge thread: {e}"))?;
        Ok(OpenAiJudge { settings, jobs: Mutex::new(sender), calls: AtomicUsize::new(0) })
    }

    /// How many requests it sent (cache hits excluded).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    fn cache_file(&self, prompt: &str) -> Option<PathBuf> {
        let dir = self.settings.cache_dir.as_ref()?;
        let mut digest = Sha256::new();
        for part in [&self.settings.url, &self.settings.model, prompt] {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        let key: String = digest.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Some(dir.join(format!("{key}.txt")))
    }
}

impl Judge for OpenAiJudge {
    fn complete(&self, prompt: &str) -> Result<String, String> {
        let cache_file = self.cache_file(prompt);
        if let Some(answer) = cache_file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) {
            return Ok(answer);
        }
        if self.calls.fetch_add(1, Ordering::Relaxed) >= self.settings.max_calls {
            return Err(format!(
                "the judge budget of {} calls for this run is spent (raise [judge] max_calls in assay.toml)",
                self.settings.max_calls
            ));
        }
        let (reply, answer) = mpsc::channel();
        let sent =
            self.jobs.lock().map_err(|_| "the judge thread is gone".to_owned())?.send((prompt.to_owned(), reply));
        sent.map_err(|_| "the judge thread is gone".to_owned())?;
        let answer = answer.recv().map_err(|_| "the judge thread is gone".to_owned())??;
        if let (Some(file), Some(dir)) = (&cache_file, &self.settings.cache_dir) {
            let temp = file.with_extension(format!("tmp{}", std::process::id()));
            let stored = std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&temp, &answer))
                .and_then(|()| std::fs::rename(&temp, file));
            if stored.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
        }
        Ok(answer)
    }
}

/// One prompt, with retries.
async fn ask(client: &reqwest::Client, settings: &JudgeSettings, prompt: &str) -> Result<String, String> {
    let url = format!("{}/chat/completions", settings.url.trim_end_matches('/'));
    let body = json!({
        "model": settings.model,
        "temperature": 0,
        "messages": [{ "role": "user", "content": prompt }],
    });
    let mut backoff = settings.backoff;
    let mut attempt = 0;
    loop {
        let mut request = client.post(&url).header("content-type", "application/json").body(body.to_string());
        if let Some(key) = &settings.api_key {
            request = request.bearer_auth(key);
        }
        let too_slow = || format!("the judge at {url} did not answer within {} s", settings.timeout.as_secs_f64());
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) if e.is_timeout() => return Err(too_slow()),
            Err(e) => return Err(format!("cannot reach the judge at {url}: {e}")),
        };
        let status = response.status();
        if status.is_success() {
            let text = response.text().await.map_err(|e| {
                if e.is_timeout() { too_slow() } else { format!("the judge at {url} broke off its answer: {e}") }
            })?;
            return content(&text).ok_or_else(|| {
                let preview: String = text.chars().take(200).collect();
                format!("the judge at {url} answered something that is not a chat completion: {preview}")
            });
        }
        let retryable = status.as_u16() == 429 || status.is_server_error();
        if !retryable || attempt >= settings.retries {
            let body: String = response.text().await.unwrap_or_default().chars().take(200).collect();
            let tries = if retryable { format!(" after {} attempts", attempt + 1) } else { String::new() };
            return Err(format!("the judge at {url} answered HTTP {}{tries}: {body}", status.as_u16()));
        }
        let wait = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(|s| Duration::from_secs_f64(s.min(60.0)))
            .unwrap_or(backoff);
        tokio::time::sleep(wait).await;
        backoff *= 2;
        attempt += 1;
    }
}

/// `choices[0].message.content` of a chat completion.
fn content(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    value.get("choices")?.get(0)?.get("message")?.get("content")?.as_str().map(str::to_owned)
}
