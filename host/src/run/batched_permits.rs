//! Permits of a semaphore taken one at a time but waited for a few at a
//! time: the scheduler takes a sample slot for each in-process case, and
//! the CPU threads give one back as each case ends. Waiting for one slot at
//! a time woke the scheduler once per case; waiting, when none is free, for
//! a batch of them wakes it once per batch, while the cases already queued
//! keep the CPU threads busy.

use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Permits of one semaphore, with the ones taken and not yet handed out.
pub(super) struct BatchedPermits {
    semaphore: Arc<Semaphore>,
    /// How many to wait for when none is free.
    batch: u32,
    /// Taken, not yet handed out.
    taken: Option<OwnedSemaphorePermit>,
}

impl BatchedPermits {
    /// Permits of `semaphore`, waited for `batch` at a time (at least one).
    pub(super) fn new(semaphore: Arc<Semaphore>, batch: usize) -> BatchedPermits {
        BatchedPermits { semaphore, batch: u32::try_from(batch.max(1)).unwrap_or(u32::MAX), taken: None }
    }

    /// One permit: one already taken, else what is free now (up to a
    /// batch), else a batch once that many are free.
    pub(super) async fn one(&mut self) -> OwnedSemaphorePermit {
        if let Some(one) = self.take_one() {
            return one;
        }
        let free = u32::try_from(self.semaphore.available_permits()).unwrap_or(u32::MAX);
        let wanted = if free > 0 { free.min(self.batch) } else { self.batch };
        let permits = self.semaphore.clone().acquire_many_owned(wanted).await.expect("the semaphore is never closed");
        self.taken = Some(permits);
        self.take_one().expect("at least one permit was taken")
    }

    /// Gives back the permits taken and not handed out (before others
    /// wait on the semaphore, who must not wait for them).
    pub(super) fn give_back(&mut self) {
        self.taken = None;
    }

    fn take_one(&mut self) -> Option<OwnedSemaphorePermit> {
        let taken = self.taken.as_mut()?;
        let one = taken.split(1);
        if taken.num_permits() == 0 {
            self.taken = None;
        }
        one
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_are_handed_out_one_by_one_and_waited_for_a_batch_at_a_time() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let semaphore = Arc::new(Semaphore::new(4));
        let mut permits = BatchedPermits::new(semaphore.clone(), 2);
        runtime.block_on(async {
            // What is free is taken at once, up to a batch.
            let mut first: Vec<_> = vec![permits.one().await, permits.one().await, permits.one().await];
            assert!(first.iter().all(|p| p.num_permits() == 1));
            assert_eq!(semaphore.available_permits(), 0);
            let mut fourth = permits.one().await;
            assert_eq!(permits.taken.as_ref().map(OwnedSemaphorePermit::num_permits), None);

            // None free: the next waits until a batch of two is.
            let waiting = tokio::spawn(async move { (permits.one().await, permits) });
            let let_it_wait = || async {
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                }
            };
            let_it_wait().await;
            drop(first.pop());
            let_it_wait().await;
            assert!(!waiting.is_finished(), "it took one permit when a batch of two was wanted");
            drop(first.pop());
            let (fifth, permits) = waiting.await.unwrap();
            assert_eq!(fifth.num_permits(), 1);
            assert_eq!(permits.taken.as_ref().map(OwnedSemaphorePermit::num_permits), Some(1));
            // The one taken and not handed out goes back when asked.
            assert_eq!(semaphore.available_permits(), 0);
            let mut permits = permits;
            permits.give_back();
            assert_eq!(semaphore.available_permits(), 1);
            // Every permit handed out is the semaphore's again once dropped.
            fourth.merge(fifth);
            drop((first, fourth, permits));
            assert_eq!(semaphore.available_permits(), 4);
        });
    }
}
