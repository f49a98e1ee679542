//! Text embeddings from the backend the user configured (needs the
//! `embeddings` grant). Natively, tests install their own backend with
//! [`set_native`].

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
    fn embed(&self, texts: &[String]) -> Result<Vectors, String>;
    /// Token vectors.
    fn embed_tokens(&self, texts: &[String]) -> Result<TokenVectors, String>;
}

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static NATIVE: RefCell<Option<Box<dyn NativeEmbeddings>>> = const { RefCell::new(None) };
}

#[cfg(not(target_arch = "wasm32"))]
const NO_BACKEND: &str = "no embeddings backend in native builds: call embeddings::set_native first";

/// One vector per text, in order.
pub fn embed(texts: &[String]) -> Result<Vectors, String> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::matcher::assay::plugin::embeddings::embed(texts)
    }
    #[cfg(not(target_arch = "wasm32"))]
    NATIVE.with(|slot| match &*slot.borrow() {
        Some(backend) => backend.embed(texts),
        None => Err(NO_BACKEND.to_owned()),
    })
}

/// One vector per token of each text, in order; an error when the backend
/// only produces sentence vectors.
pub fn embed_tokens(texts: &[String]) -> Result<TokenVectors, String> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::matcher::assay::plugin::embeddings::embed_tokens(texts)
    }
    #[cfg(not(target_arch = "wasm32"))]
    NATIVE.with(|slot| match &*slot.borrow() {
        Some(backend) => backend.embed_tokens(texts),
        None => Err(NO_BACKEND.to_owned()),
    })
}

/// Installs the backend used on this thread in native builds.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_native(backend: Box<dyn NativeEmbeddings>) {
    NATIVE.with(|slot| *slot.borrow_mut() = Some(backend));
}
