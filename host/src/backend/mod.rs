//! The remote backends behind the capabilities a plugin may be granted: the
//! language-model judge ([`RemoteJudge`]: an OpenAI-compatible endpoint, or
//! a neuro-san agent through the client `agent/judge.rs` gives it) and text
//! embeddings ([`RemoteEmbeddings`]: an
//! OpenAI-compatible endpoint).
//!
//! Every backend runs its requests on a client thread of its own
//! (`worker.rs`), so that plugins, which run on blocking threads, can wait
//! for an answer, and bounds them the same way: a timeout per request,
//! retries with backoff on 429 and 5xx (`retry.rs`), a budget of requests
//! per run, and an [`AnswerCache`] on disk keyed by (backend URL, model,
//! input), so that re-running the same checks costs no requests. The
//! plugin side of each capability (the `Judge` trait a granted plugin
//! reaches) lives in `sandbox::host`.

mod budget;
mod cache;
mod embeddings;
mod judge;
mod openai;
mod retry;
mod worker;

pub use cache::AnswerCache;
pub use embeddings::{EmbeddingsSettings, RemoteEmbeddings};
pub(crate) use judge::JudgeClient;
pub use judge::{DEFAULT_JUDGE_CONCURRENCY, JudgeBackend, JudgeSettings, RemoteJudge};
pub use retry::RetryPolicy;
pub(crate) use retry::{Attempt, is_retryable};
