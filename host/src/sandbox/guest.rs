//! How a call into a guest runs: on the calling thread, to completion or to
//! its deadline, whatever the guest does.
//!
//! Calls are async wasmtime calls driven by a small executor on the calling
//! thread, so the public API stays blocking (call it from a blocking thread,
//! as before) while a guest that waits inside WASI — a sleep, a `poll`, a
//! blocked stream — can be stopped. Two things enforce the deadline:
//! - the epoch callback (`state.rs`) traps a guest that computes past it;
//! - a watchdog here cancels a guest parked in an async host call when its
//!   time is spent, by dropping the call (wasmtime then unwinds the guest).
//!
//! While the guest waits, its thread parks, computing nothing, and tells
//! its owner so (`hand_off.rs`): the runner's CPU threads then put another
//! thread on the CPU, so that a sleeping guest holds no CPU thread.
//!
//! WASI's timers and tasks need a tokio runtime; a process-wide one with a
//! single thread (`assay-sandbox`) provides it, entered for the length of
//! each call. Nothing here uses `Handle::block_on`, so a call can run inside
//! another runtime's `block_on` (the runner's in-process cases do).

use crate::errors::Fault;
use crate::sandbox::call_clock::CallClock;
use crate::sandbox::hand_off;
use crate::sandbox::limits::CallBudget;
use crate::sandbox::state::{SandboxState, arm};
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use wasmtime::Store;

/// Makes one call into the guest of `store` under `budget`: arms the
/// deadline, runs `call` to completion, and names the cause when it faults
/// or runs out of time. The store must be discarded after a fault.
pub(crate) fn call<T>(
    store: &mut Store<SandboxState>,
    budget: CallBudget,
    call: impl AsyncFnOnce(&mut Store<SandboxState>) -> wasmtime::Result<T>,
) -> Result<T, Fault> {
    match call_raw(store, budget, call) {
        Ok(value) => Ok(value),
        Err(Some(error)) => Err(store.data().fault(&error, &budget)),
        Err(None) => Err(Fault::Deadline(budget.deadline)),
    }
}

/// [`call`], with the error as wasmtime gave it (`Err(None)`: cancelled at
/// the deadline while waiting in the host).
pub(crate) fn call_raw<T>(
    store: &mut Store<SandboxState>,
    budget: CallBudget,
    call: impl AsyncFnOnce(&mut Store<SandboxState>) -> wasmtime::Result<T>,
) -> Result<T, Option<wasmtime::Error>> {
    let clock = arm(store, budget);
    match run(&clock, call(store)) {
        Some(Ok(value)) => Ok(value),
        Some(Err(error)) => Err(Some(error)),
        None => Err(None),
    }
}

/// Runs `call` on this thread until it finishes (`Some`) or the guest time
/// `clock` allows is spent while it waits (`None`; the call is dropped).
fn run<F: Future>(clock: &CallClock, call: F) -> Option<F::Output> {
    let _context = sandbox_runtime().enter();
    let mut call = pin!(call);
    let mut timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
    block_on(std::future::poll_fn(move |cx| {
        if let Poll::Ready(output) = call.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        // The guest waits in the host. Its own time runs on unless the wait
        // is on the network for a capability (then the clock stands still
        // and the timer is set again when it fires).
        loop {
            let Some(left) = clock.remaining() else { return Poll::Ready(None) };
            let at = tokio::time::Instant::now() + left;
            let timer = match &mut timer {
                Some(timer) => {
                    timer.as_mut().reset(at);
                    timer
                }
                None => timer.insert(Box::pin(tokio::time::sleep_until(at))),
            };
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }))
}

/// The runtime behind WASI's timers and tasks during guest calls.
fn sandbox_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("assay-sandbox")
            .enable_all()
            .build()
            .expect("the sandbox's tokio runtime starts")
    })
}

/// Wakes a parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` on this thread, parking between wake-ups (and telling
/// the thread's owner, see `hand_off.rs`).
fn block_on<F: Future>(future: F) -> F::Output {
    thread_local! {
        static WAKER: Waker = Waker::from(Arc::new(Unpark(thread::current())));
    }
    let waker = WAKER.with(Waker::clone);
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        hand_off::parked(thread::park);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_wait_past_the_deadline_is_cancelled() {
        let clock = CallClock::new(Duration::from_millis(100));
        let started = Instant::now();
        let output = run(&clock, async { tokio::time::sleep(Duration::from_secs(30)).await });
        assert_eq!(output, None);
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(100) && elapsed < Duration::from_secs(5), "{elapsed:?}");
    }

    #[test]
    fn a_wait_within_the_deadline_finishes() {
        let clock = CallClock::new(Duration::from_secs(5));
        let output = run(&clock, async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            7
        });
        assert_eq!(output, Some(7));
    }

    #[test]
    fn time_waiting_on_the_network_does_not_count() {
        let clock = CallClock::new(Duration::from_millis(100));
        let waited = clock.clone();
        let output = run(&clock, async move {
            // A judge call: it blocks in the host for 300 ms on the network
            // and the host records the wait; then the guest sleeps 20 ms of
            // its own time, well within what is left.
            std::thread::sleep(Duration::from_millis(300));
            waited.waited(Duration::from_millis(300));
            tokio::time::sleep(Duration::from_millis(20)).await;
            "done"
        });
        assert_eq!(output, Some("done"));
    }

    #[test]
    fn runs_inside_another_runtimes_block_on() {
        let outer = tokio::runtime::Runtime::new().unwrap();
        let output = outer.block_on(async {
            let clock = CallClock::new(Duration::from_millis(50));
            run(&clock, tokio::time::sleep(Duration::from_secs(10)))
        });
        assert_eq!(output, None);
    }
}
