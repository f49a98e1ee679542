//! The judge and embeddings capabilities: their backends, concurrency, the test judge server, and the typed errors a plugin sees.

pub mod backends;
pub mod capability_errors;
pub mod judge_concurrency;
pub mod judge_server;
