//! [`Capabilities`]: the backends behind the interfaces a plugin may be
//! granted, supplied by the embedder (e.g. the remote ones in
//! `crate::backend`).

use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::judge::Judge;
use std::sync::Arc;

/// The capability backends a plugin instance can reach. A plugin only gets
/// a backend when its grants cover it; an absent backend answers every call
/// with an error saying how to configure one.
#[derive(Clone, Default)]
pub struct Capabilities {
    /// The language-model judge.
    pub judge: Option<Arc<dyn Judge>>,
    /// The embeddings backend.
    pub embeddings: Option<Arc<dyn Embeddings>>,
}

impl std::fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capabilities")
            .field("judge", &self.judge.is_some())
            .field("embeddings", &self.embeddings.is_some())
            .finish()
    }
}
