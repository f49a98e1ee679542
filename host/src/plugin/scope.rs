//! What a plugin's calls count within one scope (one run, or one request
//! of `assay serve`), so that nothing one scope does reaches the runs and
//! clients beside it: how many times in a row each plugin faulted (a plugin
//! that keeps faulting is disabled for that scope only), and the judge and
//! embeddings requests the scope has sent (their `max_calls` budgets count
//! per scope).
//!
//! A fault counts against the plugin only when its input was no larger
//! than the larger of [`SMALL_INPUT_BYTES`] and the largest input it has
//! answered in the scope: a plugin that fails on inputs of a size it
//! handles is at fault, while one that fails on an input larger than any
//! it handled may have been given too much, which is that check's error
//! alone (five hostile cases cannot disable a plugin for the good ones).

use crate::sandbox::host::CapabilitySpend;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// An input this small is one any plugin should handle: a fault on it
/// always counts.
pub const SMALL_INPUT_BYTES: usize = 64 << 10;

/// One plugin's streak within a scope.
#[derive(Debug, Default)]
pub struct FaultStreak {
    in_a_row: AtomicU32,
    largest_answered: AtomicUsize,
}

impl FaultStreak {
    /// The faults in a row, when they reach `max`: the plugin is then
    /// disabled for the scope.
    pub fn disabled(&self, max: u32) -> Option<u32> {
        let faults = self.in_a_row.load(Ordering::Relaxed);
        (faults >= max).then_some(faults)
    }

    /// The plugin answered a batch of `input_bytes`.
    pub fn answered(&self, input_bytes: usize) {
        self.in_a_row.store(0, Ordering::Relaxed);
        self.largest_answered.fetch_max(input_bytes, Ordering::Relaxed);
    }

    /// The plugin faulted on a batch of `input_bytes`; whether the fault
    /// counted against it.
    pub fn faulted(&self, input_bytes: usize) -> bool {
        let handled = self.largest_answered.load(Ordering::Relaxed).max(SMALL_INPUT_BYTES);
        let counts = input_bytes <= handled;
        if counts {
            self.in_a_row.fetch_add(1, Ordering::Relaxed);
        }
        counts
    }
}

/// One plugin's part of a scope: its fault streak, and the scope's
/// capability spend, which every plugin of the scope shares.
#[derive(Debug, Default)]
pub struct PluginScope {
    /// The plugin's faults in a row.
    pub streak: FaultStreak,
    /// The scope's judge and embeddings requests.
    pub spend: Arc<CapabilitySpend>,
}

/// The scope of every plugin of a registry, by the plugin's index.
#[derive(Debug, Default)]
pub struct PluginScopes(Box<[PluginScope]>);

impl PluginScopes {
    /// A fresh scope for `plugins` plugins.
    pub fn new(plugins: usize) -> PluginScopes {
        let spend = Arc::new(CapabilitySpend::default());
        PluginScopes(
            (0..plugins).map(|_| PluginScope { streak: FaultStreak::default(), spend: spend.clone() }).collect(),
        )
    }

    /// The part of the plugin at `index`.
    pub fn of(&self, index: usize) -> &PluginScope {
        &self.0[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_in_a_row_on_inputs_the_plugin_handles_disable_it_and_an_answer_resets_them() {
        let streak = FaultStreak::default();
        assert!(streak.faulted(10) && streak.faulted(10));
        assert_eq!(streak.disabled(3), None);
        streak.answered(10);
        for _ in 0..3 {
            assert!(streak.faulted(SMALL_INPUT_BYTES));
        }
        assert_eq!(streak.disabled(3), Some(3));
    }

    #[test]
    fn a_fault_on_an_input_larger_than_any_answered_is_that_inputs_alone() {
        let streak = FaultStreak::default();
        for _ in 0..10 {
            assert!(!streak.faulted(SMALL_INPUT_BYTES + 1));
        }
        assert_eq!(streak.disabled(1), None);
        // Once it has answered a large input, faults up to that size count.
        streak.answered(1 << 20);
        assert!(streak.faulted(1 << 20));
        assert!(!streak.faulted((1 << 20) + 1));
        assert_eq!(streak.disabled(1), Some(1));
    }

    #[test]
    fn each_scope_has_streaks_and_a_spend_of_its_own() {
        let (a, b) = (PluginScopes::new(2), PluginScopes::new(2));
        a.of(1).streak.faulted(1);
        assert_eq!(a.of(1).streak.disabled(1), Some(1));
        assert_eq!(b.of(1).streak.disabled(1), None);
        assert_eq!(a.of(0).streak.disabled(1), None);
        assert!(Arc::ptr_eq(&a.of(0).spend, &a.of(1).spend), "a scope's plugins share its spend");
        assert!(!Arc::ptr_eq(&a.of(0).spend, &b.of(0).spend));
    }
}
