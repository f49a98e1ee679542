//! The `embeddings` interface: forwards a plugin's texts to the embeddings
//! backend the embedder configured, or explains how to configure one.

use crate::plugin::bindings::matcher::assay::plugin::embeddings::Host;
use crate::plugin::sandbox::SandboxState;

/// An embeddings backend. Calls block the calling thread and are bounded by
/// the implementation's own timeout.
pub trait Embeddings: Send + Sync {
    /// One sentence vector per text.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;

    /// One vector per token of each text; an error when the backend only
    /// produces sentence vectors.
    fn embed_tokens(&self, texts: &[String]) -> Result<Vec<Vec<Vec<f32>>>, String>;
}

/// What a plugin hears when no embeddings backend is configured.
pub const NO_EMBEDDINGS: &str = "no embeddings backend is configured: set [embeddings] in assay.toml";

impl Host for SandboxState {
    fn embed(&mut self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, String> {
        let Some(backend) = self.capabilities.embeddings.clone() else { return Err(NO_EMBEDDINGS.to_owned()) };
        let asked = std::time::Instant::now();
        let vectors = backend.embed(&texts);
        self.clock.waited(asked.elapsed());
        vectors
    }

    fn embed_tokens(&mut self, texts: Vec<String>) -> Result<Vec<Vec<Vec<f32>>>, String> {
        let Some(backend) = self.capabilities.embeddings.clone() else { return Err(NO_EMBEDDINGS.to_owned()) };
        let asked = std::time::Instant::now();
        let vectors = backend.embed_tokens(&texts);
        self.clock.waited(asked.elapsed());
        vectors
    }
}
