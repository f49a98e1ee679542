//! `assay agent serve`: agent components served on 127.0.0.1 over
//! neuro-san's HTTP protocol (`neuro_san.rs`), so the same test files run
//! over `http`/`https` with no Python anywhere and teams get a mock
//! neuro-san server for CI; or over OpenAI's chat completions
//! ([`Protocol::OpenAi`], `openai.rs`), a mock for `openai` connections.
//! The main entry is [`serve`], configured by [`ServeOptions`].
//!
//! The server outlives its clients' misbehaviour (`server.rs`): a failed
//! `accept()` (out of file descriptors, say) is logged and retried after a
//! short pause, never the end of the server; a request's head, its body and
//! a TLS handshake must each arrive within the read timeout (so a
//! connection sending nothing, or half a header, is closed); bodies are
//! capped at 16 MiB (`exchange.rs`, what both protocols share); and at most
//! `max_connections` connections are served at once, the next ones waiting
//! in the kernel's backlog until one closes. A latency can be added to
//! every chat answer, to stand in for a model.

mod exchange;
mod neuro_san;
mod openai;
mod options;
mod server;

pub use options::{Protocol, ServeOptions, ServedAgents};
#[cfg(unix)]
pub use server::raise_open_file_limit;
pub use server::{ConnectionLimits, serve, serve_connections, tls_acceptor};
