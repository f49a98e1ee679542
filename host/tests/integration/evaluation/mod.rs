//! `assay assess`, `eval` and `validate`, with seed and Kyma scenarios.

pub mod evaluation_kyma;
pub mod workflows;
