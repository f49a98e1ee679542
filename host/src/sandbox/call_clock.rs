//! The [`CallClock`]: the guest's own time in the current call, which the
//! epoch callback, the watchdog of a guest waiting in WASI, and the
//! capability host calls all read or adjust.

use crate::sandbox::engine::EPOCH_TICK;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The wall-clock budget of the current call. Time spent waiting on the
/// network for a host capability (the judge, the embeddings backend) does
/// not count: epochs cannot interrupt a guest blocked in the host, and the
/// host bounds those calls with its own timeouts and the per-call budget of
/// capability calls. Without this, a guest would be stopped the moment a
/// slow judge answered. Cached answers and refusals cost the guest's own
/// time. The waited time is shared with the watchdog of `guest::call`,
/// which cancels a guest waiting in WASI (a sleep, a poll).
#[derive(Clone, Debug)]
pub(crate) struct CallClock {
    started: Instant,
    deadline: Duration,
    host_wait_nanos: Arc<AtomicU64>,
}

impl CallClock {
    /// A clock for a call starting now with `deadline` of guest time.
    pub(crate) fn new(deadline: Duration) -> Self {
        CallClock { started: Instant::now(), deadline, host_wait_nanos: Arc::new(AtomicU64::new(0)) }
    }

    /// Adds time the guest spent waiting on the network for the host.
    pub(crate) fn waited(&self, time: Duration) {
        let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        self.host_wait_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The guest's own time left, or `None` when it is spent.
    pub(crate) fn remaining(&self) -> Option<Duration> {
        let waited = Duration::from_nanos(self.host_wait_nanos.load(Ordering::Relaxed));
        let spent = self.started.elapsed().saturating_sub(waited);
        self.deadline.checked_sub(spent).filter(|left| !left.is_zero())
    }
}

/// Epoch ticks covering `time`, plus one: a deadline must not fire early.
pub(crate) fn ticks(time: Duration) -> u64 {
    let tick = EPOCH_TICK.as_millis().max(1);
    (time.as_millis().div_ceil(tick) + 1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_waited_on_the_host_is_given_back() {
        let clock = CallClock::new(Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(clock.remaining(), None);
        clock.waited(Duration::from_secs(10));
        let left = clock.remaining().expect("the wait was given back");
        assert!(left <= Duration::from_millis(50), "{left:?}");
    }

    #[test]
    fn a_deadline_never_fires_early() {
        assert_eq!(ticks(Duration::ZERO), 1);
        assert_eq!(ticks(EPOCH_TICK), 2);
        assert_eq!(ticks(EPOCH_TICK + Duration::from_millis(1)), 3);
    }
}
