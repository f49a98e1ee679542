//! The generated guest bindings, in one place (wasm32 only). Plugin authors
//! never touch these: `export_matcher!`/`export_agent!` and the capability
//! modules wrap them.

/// The re-exported runtime the generated code refers to.
pub use wit_bindgen::rt;

/// Bindings for `assay:plugin/capable-matcher-plugin@0.3.0`.
pub mod matcher {
    wit_bindgen::generate!({
        path: "wit/plugin-0.3",
        world: "assay:plugin/capable-matcher-plugin",
        runtime_path: "::assay_plugin_sdk::bindings::rt",
        pub_export_macro: true,
        export_macro_name: "__export_matcher_world",
        default_bindings_module: "::assay_plugin_sdk::bindings::matcher",
    });
}

/// Bindings for `assay:agent/agent`.
pub mod agent {
    wit_bindgen::generate!({
        path: "wit/agent",
        world: "assay:agent/agent",
        runtime_path: "::assay_plugin_sdk::bindings::rt",
        pub_export_macro: true,
        export_macro_name: "__export_agent_world",
        default_bindings_module: "::assay_plugin_sdk::bindings::agent",
    });
}
