//! Small readers of flag values shared by several commands.

use super::UsageError;
use anyhow::Result;
use assay::case::Connection;
use std::path::PathBuf;
use std::time::Duration;

/// A positive number of seconds from a flag or setting named `name`.
pub fn seconds(value: f64, name: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| UsageError(format!("{name} {value} is not a positive number of seconds")).into())
}

/// Connection names (`--connection`).
pub fn parse_connections(names: &[String]) -> Result<Vec<Connection>> {
    names.iter().map(|name| parse_connection(name)).collect()
}

/// One connection name.
pub fn parse_connection(name: &str) -> Result<Connection> {
    Connection::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| {
        UsageError(format!("unknown connection `{name}`: the connections are direct, http and https")).into()
    })
}

/// A score between 0 and 1 from a flag named `name`.
pub fn fraction(value: f64, name: &str) -> Result<f64> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(UsageError(format!("{name} {value} is not between 0 and 1")).into())
    }
}

/// `results/<UTC timestamp>`, made unique if a run in the same second
/// already took it.
pub fn default_results_dir() -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%SZ").to_string();
    let base = PathBuf::from("results");
    let mut dir = base.join(&stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = base.join(format!("{stamp}-{n}"));
    }
    dir
}
