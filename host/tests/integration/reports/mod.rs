//! What a run leaves: the HTML report, reporters, terminal counts, diff, merge, shards, replay, exactly-once reporting.

pub mod diff;
pub mod exactly_once;
pub mod merge;
pub mod replay;
pub mod report_html;
pub mod reporting;
pub mod shard;
pub mod terminal_counts;
