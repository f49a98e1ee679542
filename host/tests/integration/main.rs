//! assay's integration tests, one binary with a module per area: they load
//! real components into real wasmtime and run the real `assay` binary.

mod cli;
mod plugin_runtime;
mod util;
