//! Running cases day to day: `assay run`, daily use, discovery, case input, the CLI, properties, CPU threads.

pub mod case_input;
pub mod cli;
#[cfg(unix)]
pub mod cpu_threads;
pub mod daily_use;
pub mod discovery;
pub mod properties;
pub mod run;
