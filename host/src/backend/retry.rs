//! Retries for requests a busy backend turned away (HTTP 429 and 5xx):
//! doubling backoff, or the wait the backend's `Retry-After` asks for.

use std::future::Future;
use std::time::Duration;

/// How often and how patiently to retry.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 3).
    pub retries: u32,
    /// The first wait (default 500 ms), doubled after each retry.
    pub backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { retries: 3, backoff: Duration::from_millis(500) }
    }
}

/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The outcome of one attempt.
pub(crate) enum Attempt<T> {
    /// Final: an answer or an error not worth retrying.
    Done(Result<T, String>),
    /// The backend was busy: try again after `wait` (or the backoff).
    Retry {
        /// What happened, for the error if no retry is left.
        error: String,
        /// What the backend's `Retry-After` asked for.
        wait: Option<Duration>,
    },
}

/// Runs `attempt` until it is done or the retries are spent.
pub(crate) async fn with_retries<T, F, Fut>(policy: &RetryPolicy, mut attempt: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Attempt<T>>,
{
    let mut backoff = policy.backoff;
    let mut attempts = 0;
    loop {
        attempts += 1;
        match attempt().await {
            Attempt::Done(result) => return result,
            Attempt::Retry { error, .. } if attempts > policy.retries => {
                return Err(format!("{error} (gave up after {})", crate::plural::count(attempts as usize, "attempt")));
            }
            Attempt::Retry { wait, .. } => {
                tokio::time::sleep(wait.map_or(backoff, |w| w.min(MAX_RETRY_AFTER))).await;
                backoff *= 2;
            }
        }
    }
}

/// Whether an HTTP status means "busy, try again".
pub(crate) fn is_retryable(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// A `Retry-After` header in seconds.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<f64>().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}
