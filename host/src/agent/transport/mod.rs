//! A named connection's transport: how one turn reaches an agent that is
//! configured in `assay.toml` as `[connections.NAME]` (a neuro-san server,
//! an OpenAI-compatible chat endpoint, any HTTP API, a local command), and
//! comes back as an [`AgentResponse`].
//!
//! The runner owns the conversation: a transport gets the turn's request
//! with the conversation state so far (`chat_context`, carried `sly_data`)
//! and returns the state to carry on in the response (an OpenAI-compatible
//! transport keeps the message history in `chat_context`). Its future is
//! dropped when a timeout fires, which must cancel the request.

pub(crate) mod command;
pub(crate) mod direct;
pub(crate) mod exec;
pub(crate) mod http;
pub(crate) mod neuro_san;
pub(crate) mod openai;

use crate::agent::message::ChatRequest;
use crate::agent::reduce::AgentResponse;
use crate::errors::AgentErrorKind;
use std::future::Future;
use std::pin::Pin;

/// A boxed future of a transport's answer.
pub type Reply<'a> = Pin<Box<dyn Future<Output = Result<AgentResponse, AgentErrorKind>> + Send + 'a>>;

/// One kind of connection to an agent.
pub trait Transport: Send + Sync {
    /// Where a request for `agent` goes, for messages and results
    /// (credentials redacted).
    fn endpoint(&self, agent: &str) -> String;

    /// Sends one turn and reads the whole answer, within the transport's
    /// own size and idle caps.
    fn chat<'a>(&'a self, request: &'a ChatRequest) -> Reply<'a>;
}
