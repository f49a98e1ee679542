//! assay's integration tests, one binary with a module per area: they load
//! real components into real wasmtime and run the real `assay` binary.

mod agents;
mod authoring;
mod case_input;
mod cli;
mod conformance;
mod deterministic;
mod dispatch;
mod evaluation;
mod fake_server;
mod fuzz;
mod hostile_wat;
mod judge;
mod judge_server;
mod metrics;
mod plugin_config;
mod plugin_runtime;
mod properties;
mod run;
mod util;
