//! Suite files: spec lines as cases, OpenSearch specs and date templates, suite summaries.

pub mod suite_files;
pub mod suite_opensearch;
pub mod suite_report;
