//! assay: an assertion engine for testing AI agents and LLM applications.
#![warn(missing_docs)]

pub mod agent;
pub mod case;
pub mod check;
pub mod config;
pub mod errors;
pub mod exit_codes;
pub mod plugin;
pub mod report;
pub mod run;
mod suggest;
