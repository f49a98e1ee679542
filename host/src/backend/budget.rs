//! A budget of requests per run: a backend refuses to send more than it
//! allows within one scope (a run, or one request of `assay serve`, whose
//! count it is handed), and says which setting raises it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many requests one backend may send per scope.
#[derive(Debug)]
pub(crate) struct Budget {
    max: usize,
    /// Requests sent, over every scope.
    used: AtomicUsize,
    /// The `assay.toml` section that sets it, e.g. `judge`.
    section: &'static str,
}

impl Budget {
    pub(crate) fn new(max: usize, section: &'static str) -> Budget {
        Budget { max, used: AtomicUsize::new(0), section }
    }

    /// Takes one request from the budget of the scope whose count is
    /// `spent`, or explains that it is spent.
    pub(crate) fn take(&self, spent: &AtomicUsize) -> Result<(), String> {
        let max = self.max;
        match spent.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < max).then_some(n + 1)) {
            Ok(_) => {
                self.used.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(_) => Err(format!(
                "the {section} budget of {requests} for this run is spent\n\nConsider raising [{section}] max_calls in assay.toml; answers already cached cost nothing",
                section = self.section,
                requests = crate::plural::count(max, "request")
            )),
        }
    }

    /// How many requests were taken, over every scope.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_past_its_limit_in_a_scope_without_counting_the_refusal() {
        let budget = Budget::new(2, "judge");
        let (run, next_run) = (AtomicUsize::new(0), AtomicUsize::new(0));
        assert!(budget.take(&run).is_ok());
        assert!(budget.take(&run).is_ok());
        let refused = budget.take(&run).unwrap_err();
        assert!(refused.starts_with("the judge budget of 2 requests for this run is spent"), "{refused}");
        assert_eq!((budget.used(), run.load(Ordering::Relaxed)), (2, 2));
        // Another scope has a budget of its own.
        assert!(budget.take(&next_run).is_ok());
        assert_eq!(budget.used(), 3);
    }
}
