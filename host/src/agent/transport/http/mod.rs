//! A `type = "http"` connection: any JSON-over-HTTP API, spoken to by
//! templates and read back by JSONPath. The main type is [`HttpApi`], the
//! connection's [`Transport`](crate::agent::Transport). Its `url`, header
//! and `body` templates (`{{text}}`, `{{sly_data.KEY}}`, `{{agent}}`,
//! `{{sample}}`, `{{chat_context}}`, `{{env.NAME}}`) are the template
//! engine's request mode (`crate::template`).
//!
//! - `read.rs`: the response as JSON values (`json`, `json-lines`, `sse`),
//!   under the size cap and the idle timeout;
//! - `extract.rs`: the answer's text, structure, sly_data and chat_context
//!   from those values, by JSONPath;
//! - `client.rs`: the connection, built once from its table.

mod client;
mod extract;
mod read;

pub use client::HttpApi;
