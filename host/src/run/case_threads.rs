//! The threads in-process cases run on: up to one per CPU, started as
//! cases come and find no thread idle, each taking the next case from one
//! queue.
//!
//! An in-process case is CPU work from start to end (its agents and checks
//! are components, see `CaseTask::run_in_process`), so more threads than
//! cores gain nothing, and a thread per case costs: tokio's blocking pool
//! runs as many threads as there are cases in flight, which then take turns
//! on the cores, and wakes an idle one for every case. Here a thread that
//! finishes a case takes the next from the queue without sleeping while the
//! scheduler keeps it filled, and only an idle thread is woken.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

/// One case's work: it reports the case itself, and must not panic (the
/// runner catches a case's panic and reports it as an internal error).
type CaseWork = Box<dyn FnOnce() + Send>;

/// The threads and their queue. Dropping it lets the threads finish the
/// cases queued and end; it does not wait for them.
pub(super) struct CaseThreads {
    shared: Arc<Shared>,
    /// How many threads it may start.
    count: usize,
    /// How many it has started.
    started: usize,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a case is queued while a thread is idle, or when the
    /// queue closes.
    ready: Condvar,
}

#[derive(Default)]
struct Queue {
    cases: VecDeque<CaseWork>,
    /// Threads waiting for a case.
    idle: usize,
    /// No further case will come: the threads end once the queue is empty.
    closed: bool,
}

impl CaseThreads {
    /// Threads for in-process cases, up to one per CPU; none is started
    /// before the first case comes.
    pub(super) fn per_cpu() -> CaseThreads {
        CaseThreads::new(thread::available_parallelism().map_or(1, |n| n.get()))
    }

    fn new(count: usize) -> CaseThreads {
        CaseThreads { shared: Arc::new(Shared { queue: Mutex::default(), ready: Condvar::new() }), count, started: 0 }
    }

    /// Queues `work`, to run on the first thread free: an idle one, or one
    /// started for it while there are fewer than one per CPU.
    pub(super) fn run(&mut self, work: impl FnOnce() + Send + 'static) {
        let mut queue = self.shared.lock();
        queue.cases.push_back(Box::new(work));
        let idle = queue.idle > 0;
        drop(queue);
        if idle {
            self.shared.ready.notify_one();
        } else if self.started < self.count {
            self.started += 1;
            let shared = self.shared.clone();
            thread::Builder::new()
                .name("assay-case".into())
                .spawn(move || shared.work())
                .expect("failed to spawn a thread for in-process cases");
        }
    }
}

impl Drop for CaseThreads {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // No code runs with the lock held that could panic.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One thread's life: the next case, until the queue is closed and
    /// empty.
    fn work(&self) {
        loop {
            let mut queue = self.lock();
            let case = loop {
                if let Some(case) = queue.cases.pop_front() {
                    break case;
                }
                if queue.closed {
                    return;
                }
                queue.idle += 1;
                queue = self.ready.wait(queue).unwrap_or_else(PoisonError::into_inner);
                queue.idle -= 1;
            };
            drop(queue);
            case();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn every_case_queued_runs_once_on_no_more_threads_than_cpus() {
        let mut threads = CaseThreads::per_cpu();
        let (sender, receiver) = mpsc::channel();
        for case in 0..200 {
            let sender = sender.clone();
            threads.run(move || sender.send((case, thread::current().id())).unwrap());
        }
        drop(sender);
        let mut seen: Vec<(usize, thread::ThreadId)> = Vec::new();
        while let Ok(ran) = receiver.recv_timeout(Duration::from_secs(10)) {
            seen.push(ran);
        }
        let mut cases: Vec<usize> = seen.iter().map(|(case, _)| *case).collect();
        cases.sort_unstable();
        assert_eq!(cases, (0..200).collect::<Vec<_>>());
        let mut ids: Vec<thread::ThreadId> = seen.iter().map(|(_, id)| *id).collect();
        ids.sort_unstable_by_key(|id| format!("{id:?}"));
        ids.dedup();
        assert!(ids.len() <= threads.count, "{} threads for {} CPUs", ids.len(), threads.count);
    }

    #[test]
    fn a_thread_is_started_only_when_no_thread_is_idle() {
        let mut threads = CaseThreads::new(4);
        let (sender, receiver) = mpsc::channel();
        for case in 0..3 {
            let sender = sender.clone();
            threads.run(move || sender.send(case).unwrap());
            // The case ran, and its thread is idle (or about to be) before
            // the next comes.
            assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), case);
            let idle = (0..1000).any(|_| {
                thread::sleep(Duration::from_millis(1));
                threads.shared.lock().idle == 1
            });
            assert!(idle, "the thread did not wait for the next case");
        }
        assert_eq!(threads.started, 1);
    }

    #[test]
    fn cases_queued_before_the_drop_still_run_and_the_threads_end() {
        let mut threads = CaseThreads::new(1);
        let (sender, receiver) = mpsc::channel();
        let (release, hold) = mpsc::channel::<()>();
        threads.run(move || hold.recv().unwrap());
        for case in 0..3 {
            let sender = sender.clone();
            threads.run(move || sender.send(case).unwrap());
        }
        let shared = Arc::downgrade(&threads.shared);
        drop(threads);
        release.send(()).unwrap();
        let ran: Vec<i32> = (0..3).map(|_| receiver.recv_timeout(Duration::from_secs(10)).unwrap()).collect();
        assert_eq!(ran, [0, 1, 2]);
        // The thread ended: it held the last reference to the queue.
        let ended = (0..1000).any(|_| {
            thread::sleep(Duration::from_millis(10));
            shared.upgrade().is_none()
        });
        assert!(ended, "the thread did not end once its queue was closed and empty");
    }
}
