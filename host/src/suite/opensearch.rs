//! The OpenSearch index loader a suite's `[setup] opensearch = { url,
//! indices, recreate }` runs once per cluster state.
//!
//! This branch holds only the function's signature: helper "opensearch"
//! builds the loader (every index under `indices/<state>/` created with its
//! `mappings.json` and filled from `documents.ndjson` through `_bulk`), and
//! the lead replaces this file with it at the merge.

use std::path::Path;

/// Loads every index group of cluster state `state` (the folders under
/// `indices_dir/<state>/`) into the OpenSearch or Elasticsearch server at
/// `url`; existing indices are left alone unless `recreate`. `Err` says
/// what failed, as a fragment that reads after "failed to".
pub async fn load_cluster_state(url: &str, indices_dir: &Path, state: &str, recreate: bool) -> Result<(), String> {
    let _ = (url, indices_dir, state, recreate);
    Err("the OpenSearch loader is not built in this branch".into())
}
