//! A connection's transport: how one turn reaches an agent and comes back
//! as an [`AgentResponse`]. Every connection a case may name has one: the
//! built-in `direct` (an agent component in-process, `direct/`) and
//! `http`/`https` (a neuro-san server, `neuro_san.rs`), and each
//! `[connections.NAME]` of `assay.toml` (a neuro-san server of its own, an
//! OpenAI-compatible chat endpoint `openai/`, any HTTP API `http/`, a local
//! command `command.rs`/`exec.rs`); `refused.rs` answers the connections
//! assay does not speak, saying what to use instead.
//!
//! A replay is not a transport: it answers a case's sample and turn from
//! the recording of that case (`job::Recording`), whichever connection the
//! case names, and the runner asks it before any transport.
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
pub(crate) mod refused;

use crate::agent::message::ChatRequest;
use crate::agent::reduce::AgentResponse;
use crate::errors::AgentErrorKind;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

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

    /// The same, where a call inside the sandbox must end within
    /// `sandbox_deadline` (an in-process agent's); a transport over the
    /// network needs no bound of its own, since the caller's timeout drops
    /// its future.
    fn chat_within<'a>(&'a self, request: &'a ChatRequest, sandbox_deadline: Option<Duration>) -> Reply<'a> {
        let _ = sandbox_deadline;
        self.chat(request)
    }
}
