//! The run's CPU threads: up to one per CPU computing (a thread whose
//! guest sleeps in WASI is not counted, see below), started as work comes
//! and finds no thread idle, each taking the next piece from one queue. An
//! in-process case runs on one from start to end (its agents and checks
//! are components, see `CaseTask::run_in_process`); a case that waits on
//! the network has its checks evaluated on one (`CpuThreads::compute`)
//! when none of them may wait on the network too.
//!
//! More threads than cores gain nothing for CPU work, and a thread per
//! piece costs: tokio's blocking pool runs as many threads as there are
//! pieces in flight, which then take turns on the cores (and each keeps
//! memory of its own in the allocator), and wakes an idle one for every
//! piece. Here a thread that finishes a piece takes the next from the queue
//! without sleeping while the scheduler keeps it filled, and only an idle
//! thread is woken.
//!
//! Only guests that compute hold a CPU thread. A thread whose guest parks
//! in WASI (a sleep, a poll; see `sandbox/hand_off.rs`) is not counted
//! while it waits: when work is queued, another thread is woken or started
//! in its place, as Go hands a processor on when a goroutine enters a
//! system call, so there are at most as many threads as the count plus the
//! pieces waiting (which the cases the run admits at once, and the run's
//! places for sleeping cases, bound). What the piece holds goes back at its
//! guest's first wait too ([`hold_slot`]): its sample slot, so that a
//! sleeping sample holds no slot of `-j`, and its place among the cases in
//! flight, swapped for a sleeping case's (`run/mod.rs`, `SwapAtPark`). The
//! sleeper's deadline still ends its wait (the sandbox's watchdog wakes
//! it). Woken, it finishes its piece, the pool over its count for that
//! while; then the first thread to look for work while the pool is over
//! its count ends instead.

use crate::sandbox::hand_off::{self, HandOff};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

/// One piece of work. It must not panic: [`CpuThreads::compute`] catches
/// a panic and hands it on, and the runner reports a case whose run
/// panicked as an internal error.
type Work = Box<dyn FnOnce() + Send>;

/// The threads and their queue. Dropping it lets the threads finish the
/// work queued and end; it does not wait for them.
pub(super) struct CpuThreads {
    shared: Arc<Shared>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when work is queued while a thread is idle, when a thread
    /// over the count may end, or when the queue closes.
    ready: Condvar,
    /// How many threads may compute at once.
    count: usize,
}

#[derive(Default)]
struct Queue {
    work: VecDeque<Work>,
    /// Threads started and not ended.
    started: usize,
    /// Threads waiting for work.
    idle: usize,
    /// Threads whose guest waits in WASI: they compute nothing.
    parked: usize,
    /// No further work will come: the threads end once the queue is empty.
    closed: bool,
}

impl Queue {
    /// Whether fewer threads than `count` may be computing: started, and
    /// not parked.
    fn below(&self, count: usize) -> bool {
        self.started - self.parked < count
    }

    /// Whether more threads than `count` may be computing (a parked one
    /// was woken while another ran in its place).
    fn over(&self, count: usize) -> bool {
        self.started - self.parked > count
    }
}

impl CpuThreads {
    /// Up to one computing thread per CPU; none is started before work
    /// comes.
    pub(super) fn per_cpu() -> CpuThreads {
        CpuThreads::new(thread::available_parallelism().map_or(1, |n| n.get()))
    }

    fn new(count: usize) -> CpuThreads {
        CpuThreads { shared: Arc::new(Shared { queue: Mutex::default(), ready: Condvar::new(), count }) }
    }

    /// Queues `work`, to run on the first thread free: an idle one, or one
    /// started for it while fewer than one per CPU compute.
    pub(super) fn run(&self, work: impl FnOnce() + Send + 'static) {
        let mut queue = self.shared.lock();
        queue.work.push_back(Box::new(work));
        self.shared.take_up(queue);
    }

    /// What `compute` returns, computed on one of the threads. A panic in
    /// `compute` goes on up here, in the task that awaits it.
    pub(super) async fn compute<T: Send + 'static>(&self, compute: impl FnOnce() -> T + Send + 'static) -> T {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.run(move || {
            let _ = sender.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(compute)));
        });
        match receiver.await {
            Ok(Ok(value)) => value,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => unreachable!("queued work runs before the threads end"),
        }
    }
}

thread_local! {
    /// The sample slot the piece of work on this thread holds, while its
    /// guest computes (see [`hold_slot`]).
    static SLOT: RefCell<Option<Box<dyn Send>>> = const { RefCell::new(None) };
}

/// The sample slot a piece of work on a CPU thread holds (and whatever
/// else goes back with it): given back when the piece ends, or earlier,
/// when its guest first parks in WASI (a sleeping sample holds no slot, so
/// that the next case can start).
pub(super) struct HeldSlot(());

/// Holds `slot` for the piece of work running on the calling thread (see
/// [`HeldSlot`]).
pub(super) fn hold_slot(slot: impl Send + 'static) -> HeldSlot {
    SLOT.with(|held| *held.borrow_mut() = Some(Box::new(slot)));
    HeldSlot(())
}

impl Drop for HeldSlot {
    fn drop(&mut self) {
        let slot = SLOT.with(|held| held.borrow_mut().take());
        drop(slot);
    }
}

/// The hand-off of one of the threads: it tells the pool when its guest
/// parks in WASI and when it is woken, and gives the piece's sample slot
/// back at the first park.
struct OnThread(Arc<Shared>);

impl HandOff for OnThread {
    fn parked(&self) {
        let slot = SLOT.with(|held| held.borrow_mut().take());
        drop(slot);
        let mut queue = self.0.lock();
        queue.parked += 1;
        self.0.take_up(queue);
    }

    fn resumed(&self) {
        let mut queue = self.0.lock();
        queue.parked -= 1;
        // An idle thread over the count ends.
        if queue.over(self.0.count) && queue.idle > 0 {
            self.0.ready.notify_one();
        }
    }
}

impl Drop for CpuThreads {
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

    /// Has the work queued taken up: wakes an idle thread, or starts one
    /// while fewer than the count compute.
    fn take_up(self: &Arc<Self>, mut queue: MutexGuard<'_, Queue>) {
        if queue.work.is_empty() {
            return;
        }
        let idle = queue.idle > 0;
        let start = !idle && queue.below(self.count);
        if start {
            queue.started += 1;
        }
        drop(queue);
        if idle {
            self.ready.notify_one();
        } else if start {
            let shared = self.clone();
            thread::Builder::new()
                .name("assay-cpu".into())
                .spawn(move || {
                    hand_off::register(Arc::new(OnThread(shared.clone())));
                    shared.work();
                })
                .expect("failed to spawn a CPU thread");
        }
    }

    /// One thread's life: the next piece of work, until the queue is closed
    /// and empty, or until it finds more threads computing than the count
    /// (then it ends, and hands a wake-up on to the next idle thread).
    fn work(&self) {
        loop {
            let mut queue = self.lock();
            let work = loop {
                if queue.over(self.count) {
                    queue.started -= 1;
                    if queue.idle > 0 {
                        self.ready.notify_one();
                    }
                    return;
                }
                if let Some(work) = queue.work.pop_front() {
                    break work;
                }
                if queue.closed {
                    queue.started -= 1;
                    return;
                }
                queue.idle += 1;
                queue = self.ready.wait(queue).unwrap_or_else(PoisonError::into_inner);
                queue.idle -= 1;
            };
            drop(queue);
            work();
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
        let threads = CpuThreads::per_cpu();
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
        let count = threads.shared.count;
        assert!(ids.len() <= count, "{} threads for {count} CPUs", ids.len());
    }

    #[test]
    fn compute_gives_its_value_or_its_panic_to_the_task_that_awaits_it() {
        let threads = Arc::new(CpuThreads::new(1));
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let on = runtime.block_on(threads.compute(|| thread::current().name().map(str::to_owned)));
        assert_eq!(on.as_deref(), Some("assay-cpu"));
        let panicking = threads.clone();
        let joined = runtime.block_on(async move {
            tokio::spawn(async move { panicking.compute(|| -> u32 { panic!("a bug in a check") }).await }).await
        });
        let panic = joined.unwrap_err().into_panic();
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"a bug in a check"));
        // The thread that ran it is still there for the next piece.
        assert_eq!(runtime.block_on(threads.compute(|| 7)), 7);
        assert_eq!(threads.shared.lock().started, 1);
    }

    #[test]
    fn a_thread_is_started_only_when_no_thread_is_idle() {
        let threads = CpuThreads::new(4);
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
        assert_eq!(threads.shared.lock().started, 1);
    }

    #[test]
    fn a_thread_whose_guest_waits_hands_its_cpu_on_and_the_pool_shrinks_back_after() {
        let threads = CpuThreads::new(1);
        let (sender, receiver) = mpsc::channel();
        let (release, hold) = mpsc::channel::<()>();
        let waiting = sender.clone();
        threads.run(move || {
            waiting.send("waiting").unwrap();
            // What the sandbox does while a guest sleeps in WASI.
            hand_off::parked(|| hold.recv().unwrap());
            waiting.send("woken").unwrap();
        });
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), "waiting");
        let counted = |want: fn(&Queue) -> bool| {
            (0..1000).any(|_| {
                thread::sleep(Duration::from_millis(1));
                want(&threads.shared.lock())
            })
        };
        assert!(counted(|queue| queue.parked == 1), "the wait was not counted");
        // With nothing queued, no thread is started for the waiting one.
        assert_eq!(threads.shared.lock().started, 1);

        // Work queued meanwhile runs at once, on another thread.
        threads.run(move || sender.send("computed").unwrap());
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), "computed");
        assert_eq!(threads.shared.lock().started, 2);

        // Woken, the first finishes its piece; the pool is back to one.
        release.send(()).unwrap();
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), "woken");
        assert!(
            counted(|queue| (queue.started, queue.idle, queue.parked) == (1, 1, 0)),
            "the thread over the count did not end"
        );
    }

    #[test]
    fn a_piece_gives_its_slot_back_when_its_guest_first_waits_or_when_it_ends() {
        /// Says on a channel when it is dropped.
        struct Slot(mpsc::Sender<&'static str>);
        impl Drop for Slot {
            fn drop(&mut self) {
                let _ = self.0.send("slot given back");
            }
        }
        let threads = CpuThreads::new(1);
        let (sender, receiver) = mpsc::channel();
        let (release, hold) = mpsc::channel::<()>();
        let slot = Slot(sender.clone());
        threads.run(move || {
            let held = hold_slot(slot);
            hand_off::parked(|| hold.recv().unwrap());
            hand_off::parked(|| ());
            sender.send("woken").unwrap();
            drop(held);
        });
        // Given back while the guest waits, not when the piece ends.
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), "slot given back");
        release.send(()).unwrap();
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), "woken");
        assert!(receiver.recv_timeout(Duration::from_millis(200)).is_err(), "given back twice");

        // A piece whose guest never waits gives it back at its end.
        let (sender, receiver) = mpsc::channel();
        let slot = Slot(sender.clone());
        threads.run(move || {
            let held = hold_slot(slot);
            sender.send("computed").unwrap();
            drop(held);
        });
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), "computed");
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), "slot given back");
    }

    #[test]
    fn cases_queued_before_the_drop_still_run_and_the_threads_end() {
        let threads = CpuThreads::new(1);
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
