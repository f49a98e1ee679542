//! A budget of requests per run: a backend refuses to send more than it
//! allows, and says which setting raises it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many requests one backend may still send.
#[derive(Debug)]
pub(crate) struct Budget {
    max: usize,
    used: AtomicUsize,
    /// The `assay.toml` section that sets it, e.g. `judge`.
    section: &'static str,
}

impl Budget {
    pub(crate) fn new(max: usize, section: &'static str) -> Budget {
        Budget { max, used: AtomicUsize::new(0), section }
    }

    /// Takes one request from the budget, or explains that it is spent.
    pub(crate) fn take(&self) -> Result<(), String> {
        let max = self.max;
        match self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < max).then_some(n + 1)) {
            Ok(_) => Ok(()),
            Err(_) => Err(format!(
                "the {section} budget of {requests} for this run is spent\n\nConsider raising [{section}] max_calls in assay.toml; answers already cached cost nothing",
                section = self.section,
                requests = crate::plural::count(max, "request")
            )),
        }
    }

    /// How many requests were taken.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_past_its_limit_without_counting_the_refusal() {
        let budget = Budget::new(2, "judge");
        assert!(budget.take().is_ok());
        assert!(budget.take().is_ok());
        let refused = budget.take().unwrap_err();
        assert!(refused.starts_with("the judge budget of 2 requests for this run is spent"), "{refused}");
        assert_eq!(budget.used(), 2);
    }
}
