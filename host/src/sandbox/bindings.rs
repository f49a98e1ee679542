//! The generated host bindings, in one place: the matcher world of each
//! version of `assay:plugin` the host links (0.3.0, 0.2.0 and 0.1.0) and
//! the agent world. Host implementations of the imported interfaces live in
//! `sandbox/host/`; the worlds are hosted by `worlds.rs`.

/// Bindings for `assay:plugin/capable-matcher-plugin@0.3.0`: a check's
/// expected value and a verdict's extras cross as typed values.
#[allow(missing_docs, reason = "generated code")]
pub mod matcher_0_3 {
    wasmtime::component::bindgen!({
        path: "../wit/plugin-0.3",
        world: "assay:plugin/capable-matcher-plugin",
        ownership: Borrowing { duplicate_if_necessary: true },
        // Guest calls are async so that a guest waiting in WASI (a sleep, a
        // poll) can be cancelled at its deadline; host imports stay sync.
        exports: { default: async },
        anyhow: true,
    });
}

/// Bindings for `assay:plugin/capable-matcher-plugin@0.2.0`: `judge` and
/// `embeddings` fail with a typed `capability-error`.
#[allow(missing_docs, reason = "generated code")]
pub mod matcher_0_2 {
    wasmtime::component::bindgen!({
        path: "../wit/plugin-0.2",
        world: "assay:plugin/capable-matcher-plugin",
        ownership: Borrowing { duplicate_if_necessary: true },
        // Guest calls are async so that a guest waiting in WASI (a sleep, a
        // poll) can be cancelled at its deadline; host imports stay sync.
        exports: { default: async },
        anyhow: true,
    });
}

/// Bindings for `assay:plugin/capable-matcher-plugin@0.1.0`: `judge` and
/// `embeddings` fail with a string.
#[allow(missing_docs, reason = "generated code")]
pub mod matcher_0_1 {
    wasmtime::component::bindgen!({
        path: "../wit/plugin",
        world: "assay:plugin/capable-matcher-plugin",
        ownership: Borrowing { duplicate_if_necessary: true },
        // The records of `types` are the same in both versions, so 0.1.0
        // uses 0.2.0's Rust types and a matcher is called the same way
        // whichever version it exports. wasmtime still checks them against
        // the component's own types when it links it.
        with: { "assay:plugin/types@0.1.0": crate::sandbox::bindings::matcher_0_2::assay::plugin::types },
        // Guest calls are async so that a guest waiting in WASI (a sleep, a
        // poll) can be cancelled at its deadline; host imports stay sync.
        exports: { default: async },
        anyhow: true,
    });
}

/// The types a matcher plugin of 0.2.0 or 0.1.0 is called with and answers
/// in.
pub use matcher_0_2::assay::plugin::types as matcher_types;

/// Bindings for `assay:agent/agent`.
#[allow(missing_docs, reason = "generated code")]
pub mod agent {
    wasmtime::component::bindgen!({
        path: "../wit/agent",
        world: "assay:agent/agent",
        ownership: Borrowing { duplicate_if_necessary: true },
        // Guest calls are async so that a guest waiting in WASI (a sleep, a
        // poll) can be cancelled at its deadline; host imports stay sync.
        exports: { default: async },
        anyhow: true,
    });
}
