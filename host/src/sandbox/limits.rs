//! The bounds a component runs under: [`Limits`], configured per plugin or
//! agent, and the [`CallBudget`] of one call derived from them.

use std::time::Duration;

/// The bounds of one plugin or agent. Every field has a safe default.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// The most linear memory an instance may have, in bytes (default 64 MiB).
    pub memory_bytes: usize,
    /// The wall-clock bound of one call (default 2 s). Time the guest spends
    /// waiting on a host capability (the judge, embeddings) does not count:
    /// those calls have their own timeouts.
    pub deadline: Duration,
    /// The wall-clock bound of instantiating (start functions, default 2 s).
    pub instantiation_deadline: Duration,
    /// An instruction budget per call, enforced with fuel on a separate
    /// engine (default none).
    pub fuel: Option<u64>,
    /// The longest verdict message kept, in bytes (default 4 KiB).
    pub max_message_bytes: usize,
    /// The largest verdict extras kept, in bytes of JSON (default 64 KiB).
    pub max_extras_bytes: usize,
    /// The most log lines kept per call (default 100).
    pub max_log_lines: usize,
    /// The most log bytes kept per call (default 16 KiB).
    pub max_log_bytes: usize,
    /// After this many faults in a row the plugin is marked failed and its
    /// remaining checks get an error verdict without being run (default 5).
    pub max_consecutive_faults: u32,
    /// How many judge or embeddings calls one `evaluate` call may make per
    /// check in its batch (default 4): the time they wait on the network
    /// does not count against the deadline, so their number is bounded.
    pub capability_calls_per_check: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            deadline: Duration::from_secs(2),
            instantiation_deadline: Duration::from_secs(2),
            fuel: None,
            max_message_bytes: 4 << 10,
            max_extras_bytes: 64 << 10,
            max_log_lines: 100,
            max_log_bytes: 16 << 10,
            max_consecutive_faults: 5,
            capability_calls_per_check: 4,
        }
    }
}

/// What one call may spend: its deadline, its fuel, and how many judge or
/// embeddings calls it may make.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallBudget {
    /// The guest time the call may take.
    pub deadline: Duration,
    /// The fuel it may burn, when fuel is metered.
    pub fuel: Option<u64>,
    /// The capability calls it may make.
    pub capability_calls: u32,
    /// When the capability calls must stop (the case's deadline): a call
    /// asked for later is refused. `None`: only their number bounds them.
    pub until: Option<std::time::Instant>,
}
