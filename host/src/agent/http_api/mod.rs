//! A `type = "http"` connection: any JSON-over-HTTP API, spoken to by
//! templates and read back by JSONPath. The main type is [`HttpApi`], the
//! connection's [`Transport`](crate::agent::Transport).
//!
//! - `template.rs`: the `url`, header and `body` templates, with
//!   `{{text}}`, `{{sly_data.KEY}}`, `{{agent}}`, `{{sample}}`,
//!   `{{chat_context}}` and `{{env.NAME}}`, each filled in as JSON;
//! - `read.rs`: the response as JSON values (`json`, `json-lines`, `sse`),
//!   under the size cap and the idle timeout;
//! - `extract.rs`: the answer's text, structure, sly_data and chat_context
//!   from those values, by JSONPath;
//! - `client.rs`: the connection, built once from its table.

mod client;
mod extract;
mod read;
mod template;

pub use client::HttpApi;
