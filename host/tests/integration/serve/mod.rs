//! `assay serve`: the API and its limits.

pub mod api;
pub mod serve_limits;
