//! Host implementations of the interfaces a guest may import, each owning
//! its own state or view of the store: `log` (granted by default, capped
//! per call: `LogState`), `judge` and `embeddings` (granted explicitly; the
//! backends in [`Capabilities`] are supplied by the embedder, e.g. the
//! remote ones in `crate::backend`, and both take their calls from one
//! `CapabilityBudget` per guest call and fail with a `CapabilityError`,
//! which a guest hears typed or as a sentence by the version of
//! `assay:plugin` it imports), `types` (nothing to call), and WASI,
//! linked with nothing granted (`WasiState`): its standard streams go into
//! the log (`stdio.rs`) and its clocks are coarse or, for deterministic
//! guests, fixed (`clocks.rs`).
//!
//! Each interface is implemented for both versions of `assay:plugin` the
//! host links (0.2.0 and 0.1.0). None of these knows the store state that
//! composes them
//! (`sandbox/state.rs`): it hands each interface its view in the linker
//! (`sandbox/worlds.rs`).

mod answered;
pub(crate) mod budget;
mod capabilities;
pub(crate) mod capability_error;
pub mod clocks;
pub mod embeddings;
pub mod judge;
pub mod log;
pub(crate) mod stdio;
pub(crate) mod types;
pub(crate) mod wasi;

pub use answered::Answered;
pub use budget::CapabilitySpend;
pub use capabilities::{Capabilities, Grader};
