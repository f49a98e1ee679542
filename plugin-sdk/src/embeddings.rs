//! Text embeddings from the backend the user configured (needs the
//! `embeddings` grant). A call fails with a [`CapabilityError`]: decide by
//! its variant (`NotConfigured` when the user set up no backend). Natively,
//! tests install their own backend with [`set_native`].

use crate::CapabilityError;
#[cfg(not(target_arch = "wasm32"))]
use std::cell::RefCell;

/// Sentence vectors, one per text.
pub type Vectors = Vec<Vec<f32>>;

/// Token vectors: for each text, one vector per token.
pub type TokenVectors = Vec<Vec<Vec<f32>>>;

/// An embeddings backend used by native builds (unit tests).
#[cfg(not(target_arch = "wasm32"))]
pub trait NativeEmbeddings {
    /// Sentence vectors.
    fn embed(&self, texts: &[String]) -> Result<Vectors, CapabilityError>;
    /// Token vectors.
    fn embed_tokens(&self, texts: &[String]) -> Result<TokenVectors, CapabilityError>;
}

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static NATIVE: RefCell<Option<Box<dyn NativeEmbeddings>>> = const { RefCell::new(None) };
}

/// What native builds answer before a backend is installed.
#[cfg(not(target_arch = "wasm32"))]
fn no_backend() -> CapabilityError {
    CapabilityError::Failed("no embeddings backend in native builds: call embeddings::set_native first".to_owned())
}

/// One vector per text, in order.
pub fn embed(texts: &[String]) -> Result<Vectors, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::matcher::assay::plugin::embeddings::embed(texts)
            .map_err(|e| crate::capability::from_wit(crate::Capability::Embeddings, e))
    }
    #[cfg(not(target_arch = "wasm32"))]
    NATIVE.with(|slot| match &*slot.borrow() {
        Some(backend) => backend.embed(texts),
        None => Err(no_backend()),
    })
}

/// One vector per token of each text, in order; `Failed` when the backend
/// only produces sentence vectors.
pub fn embed_tokens(texts: &[String]) -> Result<TokenVectors, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::matcher::assay::plugin::embeddings::embed_tokens(texts)
            .map_err(|e| crate::capability::from_wit(crate::Capability::Embeddings, e))
    }
    #[cfg(not(target_arch = "wasm32"))]
    NATIVE.with(|slot| match &*slot.borrow() {
        Some(backend) => backend.embed_tokens(texts),
        None => Err(no_backend()),
    })
}

/// Installs the backend used on this thread in native builds.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_native(backend: Box<dyn NativeEmbeddings>) {
    NATIVE.with(|slot| *slot.borrow_mut() = Some(backend));
}
