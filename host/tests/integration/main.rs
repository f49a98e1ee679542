//! assay's integration tests, one binary with a folder per area: they load
//! real components into real wasmtime and run the real `assay` binary.

mod fake_server;
mod util;

mod authoring;
mod connections;
mod docs;
mod evaluation;
mod hostile;
mod judge;
mod plugins;
mod promptfoo;
mod reports;
mod running;
mod serve;
mod suites;
