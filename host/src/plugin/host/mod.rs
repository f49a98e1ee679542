//! Host implementations of the capability interfaces a plugin may import:
//! `log` (granted by default, capped per call), `judge` and `embeddings`
//! (granted explicitly; the backends are supplied by the embedder, e.g. the
//! remote ones in `crate::backend`).

pub mod embeddings;
pub mod judge;
pub mod log;

use std::sync::Arc;

/// The capability backends a plugin instance can reach. A plugin only gets
/// a backend when its grants cover it; an absent backend answers every call
/// with an error saying how to configure one.
#[derive(Clone, Default)]
pub struct Capabilities {
    /// The language-model judge.
    pub judge: Option<Arc<dyn judge::Judge>>,
    /// The embeddings backend.
    pub embeddings: Option<Arc<dyn embeddings::Embeddings>>,
}

impl std::fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capabilities")
            .field("judge", &self.judge.is_some())
            .field("embeddings", &self.embeddings.is_some())
            .finish()
    }
}

/// `types` declares no functions; the generated linker still wants a host.
impl crate::plugin::bindings::matcher::assay::plugin::types::Host for crate::plugin::sandbox::SandboxState {}
