//! The built-in plugins: components committed under `plugins/` (built by
//! `cargo xtask build`) and embedded in the binary, so that assay works with
//! a plain stable toolchain and no wasm target.

/// Every built-in matcher component: (name, component bytes).
pub const BUILTIN_MATCHERS: &[(&str, &[u8])] = &[("stock", include_bytes!("../../../plugins/stock/stock.wasm"))];
