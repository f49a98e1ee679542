//! assay's integration tests, one binary with a module per area: they load
//! real components into real wasmtime and run the real `assay` binary.

mod agents;
mod cli;
mod conformance;
mod dispatch;
mod fake_server;
mod hostile_wat;
mod plugin_config;
mod plugin_runtime;
mod run;
mod util;
