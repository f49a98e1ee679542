//! Suite files: the OpenSearch index loader and the date templates of spec lines.

pub mod dates;
mod index_group;
pub mod opensearch;
