//! assay's integration tests, one binary with a module per area: they load
//! real components into real wasmtime and run the real `assay` binary.

mod agents;
mod authoring;
#[cfg(unix)]
mod caches;
mod capability_errors;
mod case_input;
mod cli;
mod conformance;
mod connections;
mod connections_command;
mod connections_every;
mod connections_http;
mod connections_openai;
mod deterministic;
mod discovery;
mod dispatch;
mod evaluation;
mod exactly_once;
mod fake_server;
mod fuzz;
mod hostile_agent;
mod hostile_cases;
mod hostile_check;
mod hostile_fixtures;
mod hostile_memory;
mod hostile_support;
mod hostile_wat;
mod judge;
mod judge_server;
mod metrics;
mod plugin_config;
mod plugin_runtime;
mod properties;
mod replay;
mod reporting;
mod run;
mod secrets;
mod serve_limits;
mod size_caps;
mod suites;
mod terminal_counts;
mod util;
