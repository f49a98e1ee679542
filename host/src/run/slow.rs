//! When a case is slow: the run's watch over the cases in flight, which
//! tells when each has run for a multiple of the slow threshold
//! ([`RunOptions::slow_timeout`](crate::run::RunOptions::slow_timeout)), so
//! that the run can emit nextest's SLOW while the case still runs.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;
use tokio::time::Instant;

/// Watches the running cases for the slow threshold: when each will next
/// have run for a multiple of it.
pub(super) struct SlowWatch {
    threshold: Option<Duration>,
    /// By admission number: the case's id, when it started, and how many
    /// thresholds it has passed.
    running: HashMap<u64, (String, Instant, u32)>,
    /// When each running case is next slow, earliest first.
    due: BTreeSet<(Instant, u64)>,
}

impl SlowWatch {
    pub(super) fn new(threshold: Option<Duration>) -> SlowWatch {
        SlowWatch { threshold: threshold.filter(|t| !t.is_zero()), running: HashMap::new(), due: BTreeSet::new() }
    }

    pub(super) fn started(&mut self, seq: u64, id: &str) {
        let Some(threshold) = self.threshold else { return };
        let now = Instant::now();
        self.running.insert(seq, (id.to_owned(), now, 0));
        self.due.insert((now + threshold, seq));
    }

    pub(super) fn finished(&mut self, seq: u64) {
        let Some(threshold) = self.threshold else { return };
        if let Some((_, started, passed)) = self.running.remove(&seq) {
            self.due.remove(&(started + threshold * (passed + 1), seq));
        }
    }

    /// Resolves when the earliest running case turns slow (never, if none
    /// is running).
    pub(super) async fn next(&self) {
        match self.due.first() {
            Some(&(at, _)) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    /// The cases slow by now, with how long each has run (a multiple of the
    /// threshold); each is due again at the next multiple.
    pub(super) fn due(&mut self) -> Vec<(String, Duration)> {
        let Some(threshold) = self.threshold else { return Vec::new() };
        let now = Instant::now();
        let mut slow = Vec::new();
        while let Some(&(at, seq)) = self.due.first()
            && at <= now
        {
            self.due.pop_first();
            let (id, started, passed) = self.running.get_mut(&seq).expect("a due case is running");
            *passed += 1;
            slow.push((id.clone(), threshold * *passed));
            self.due.insert((*started + threshold * (*passed + 1), seq));
        }
        slow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_slow_at_each_multiple_it_passes_and_never_once_finished() {
        let threshold = Duration::from_millis(20);
        let mut watch = SlowWatch::new(Some(threshold));
        watch.started(0, "late");
        watch.started(1, "quick");
        watch.finished(1);
        assert!(watch.due().is_empty());
        std::thread::sleep(Duration::from_millis(45));
        assert_eq!(watch.due(), [("late".to_owned(), threshold), ("late".to_owned(), threshold * 2)]);
        assert!(watch.due().is_empty(), "each multiple once");
        watch.finished(0);
        std::thread::sleep(Duration::from_millis(25));
        assert!(watch.due().is_empty());
        assert!(watch.due.is_empty() && watch.running.is_empty());
    }

    #[test]
    fn no_threshold_or_a_zero_one_watches_nothing() {
        for threshold in [None, Some(Duration::ZERO)] {
            let mut watch = SlowWatch::new(threshold);
            watch.started(0, "case");
            assert!(watch.due.is_empty() && watch.running.is_empty());
        }
    }
}
