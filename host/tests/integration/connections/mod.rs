//! How cases reach agents: the demo agents, named connections (neuro-san, OpenAI-compatible, any HTTP API, a local command), loopback HTTP and the stubs they are tested against.

pub mod agents;
pub mod connections_command;
pub mod connections_every;
pub mod connections_http;
pub mod connections_openai;
pub mod loopback_http;
pub mod named;
pub mod openai_stub;
