//! Host implementations of the interfaces a plugin may import: `log`
//! (granted by default, capped per call), `judge` and `embeddings` (granted
//! explicitly; the backends are supplied by the embedder, e.g. the remote
//! ones in `crate::backend`), and WASI, linked with nothing granted: its
//! standard streams go into the log (`stdio.rs`) and its clocks are coarse
//! or, for deterministic plugins, fixed (`clocks.rs`).

pub mod clocks;
pub mod embeddings;
pub mod judge;
pub mod log;
pub(crate) mod stdio;

use crate::plugin::sandbox::SandboxState;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::Engine;
use wasmtime::component::Linker;

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

/// A capability backend's answer, and how long it waited on the network for
/// it.
#[derive(Clone, Debug, PartialEq)]
pub struct Answered<T> {
    /// The answer, or why there is none.
    pub answer: Result<T, String>,
    /// Time spent waiting on the network: zero for an answer from a cache
    /// or a refusal (a spent budget, a bad input).
    pub waited: Duration,
}

impl<T> Answered<T> {
    /// An answer given without waiting on anything.
    pub fn at_once(answer: Result<T, String>) -> Answered<T> {
        Answered { answer, waited: Duration::ZERO }
    }
}

impl SandboxState {
    /// Takes one judge or embeddings call from the current call's budget,
    /// or explains that it is spent.
    fn take_capability_call(&mut self, capability: &str) -> Result<(), String> {
        match self.capability_calls_left.checked_sub(1) {
            Some(left) => {
                self.capability_calls_left = left;
                Ok(())
            }
            None => Err(format!(
                "this evaluate call has used every {capability} call it may make (judge and embeddings calls together are capped per check in the batch); the call was refused"
            )),
        }
    }
}

/// A linker with WASI (async, nothing granted) for components running in
/// `engine`; a deterministic plugin's timers fire at once.
pub(crate) fn wasi_linker(engine: &Engine, deterministic: bool) -> wasmtime::Result<Linker<SandboxState>> {
    let mut linker = Linker::<SandboxState>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    if deterministic {
        clocks::link_virtual_timers(&mut linker)?;
    }
    Ok(linker)
}

/// `types` declares no functions; the generated linker still wants a host.
impl crate::plugin::bindings::matcher::assay::plugin::types::Host for SandboxState {}
