//! assay: an assertion engine for testing AI agents and LLM applications.
#![warn(missing_docs)]

pub mod check;
pub mod errors;
pub mod exit_codes;
pub mod plugin;
