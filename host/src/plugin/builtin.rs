//! The built-in plugins: components committed under `plugins/` (built by
//! `cargo xtask build`) and embedded in the binary, so that assay works with
//! a plain stable toolchain and no wasm target.

use crate::sandbox::Grants;

/// One built-in matcher component.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinPlugin {
    /// Its name (also its label for `[keys]`).
    pub name: &'static str,
    /// The component.
    pub bytes: &'static [u8],
    /// What the built-in policy grants it.
    pub grants: Grants,
}

/// Every built-in matcher component.
pub const BUILTIN_MATCHERS: &[BuiltinPlugin] = &[
    BuiltinPlugin {
        name: "stock",
        bytes: include_bytes!("../../../plugins/stock/stock.wasm"),
        grants: Grants { log: true, judge: false, embeddings: false },
    },
    BuiltinPlugin {
        name: "gist",
        bytes: include_bytes!("../../../plugins/gist/gist.wasm"),
        grants: Grants { log: true, judge: true, embeddings: false },
    },
];

/// The promptfoo assertions plugin (`plugins/promptfoo/`, the `pf_*`
/// keys): embedded, but loaded only for a run that holds promptfoo configs
/// and loads no plugin of its own for them (`Project::registry`), so that
/// `assay run promptfooconfig.yaml` needs no configuration and every other
/// run starts as fast as before (compiling it costs ~0.8 s with an empty
/// cache).
pub const PROMPTFOO_PLUGIN: BuiltinPlugin = BuiltinPlugin {
    name: "promptfoo",
    bytes: include_bytes!("../../../plugins/promptfoo/promptfoo.wasm"),
    grants: Grants { log: true, judge: true, embeddings: true },
};
