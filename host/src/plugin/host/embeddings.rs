//! The `embeddings` interface: forwards a plugin's texts to the embeddings
//! backend the embedder configured, or explains how to configure one.

use crate::plugin::bindings::matcher::assay::plugin::embeddings::Host;
use crate::plugin::host::Answered;
use crate::plugin::sandbox::SandboxState;

/// An embeddings backend. Calls block the calling thread and are bounded by
/// the implementation's own timeout; each says how long it waited on the
/// network (zero when every vector was cached), which alone is kept off the
/// asking plugin's deadline.
pub trait Embeddings: Send + Sync {
    /// One sentence vector per text.
    fn embed(&self, texts: &[String]) -> Answered<Vec<Vec<f32>>>;

    /// One vector per token of each text; an error when the backend only
    /// produces sentence vectors.
    fn embed_tokens(&self, texts: &[String]) -> Answered<Vec<Vec<Vec<f32>>>>;
}

/// What a plugin hears when no embeddings backend is configured.
pub const NO_EMBEDDINGS: &str = "no embeddings backend is configured: set [embeddings] in assay.toml";

impl Host for SandboxState {
    fn embed(&mut self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, String> {
        let Some(backend) = self.capabilities.embeddings.clone() else { return Err(NO_EMBEDDINGS.to_owned()) };
        self.take_capability_call("embeddings")?;
        let answered = backend.embed(&texts);
        self.clock.waited(answered.waited);
        answered.answer
    }

    fn embed_tokens(&mut self, texts: Vec<String>) -> Result<Vec<Vec<Vec<f32>>>, String> {
        let Some(backend) = self.capabilities.embeddings.clone() else { return Err(NO_EMBEDDINGS.to_owned()) };
        self.take_capability_call("embeddings")?;
        let answered = backend.embed_tokens(&texts);
        self.clock.waited(answered.waited);
        answered.answer
    }
}
