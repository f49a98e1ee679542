//! The generated host bindings, in one place: the matcher world and the
//! agent world. Host implementations of the imported interfaces live in
//! `sandbox/host/`; the worlds are hosted by `worlds.rs`.

/// Bindings for `assay:plugin/capable-matcher-plugin`.
#[expect(missing_docs, reason = "generated code")]
pub mod matcher {
    wasmtime::component::bindgen!({
        path: "../wit/plugin",
        world: "assay:plugin/capable-matcher-plugin",
        ownership: Borrowing { duplicate_if_necessary: true },
        // Guest calls are async so that a guest waiting in WASI (a sleep, a
        // poll) can be cancelled at its deadline; host imports stay sync.
        exports: { default: async },
        anyhow: true,
    });
}

/// Bindings for `assay:agent/agent`.
#[expect(missing_docs, reason = "generated code")]
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
