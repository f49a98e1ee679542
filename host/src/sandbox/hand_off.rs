//! The hand-off of a guest's thread while the guest waits in the host (a
//! WASI sleep or poll): the owner of a thread may register a [`HandOff`]
//! for it, and `guest.rs` tells it when the guest parks and when it is
//! woken, so that a pool of CPU threads (the runner's) can put another
//! thread on the CPU meanwhile, as Go hands a processor on when a goroutine
//! enters a system call. A thread with nothing registered just parks.

use std::cell::RefCell;
use std::sync::Arc;

/// What the owner of a thread hears while a guest on it waits.
pub(crate) trait HandOff: Send + Sync {
    /// The thread is about to park: the guest waits, computing nothing.
    fn parked(&self);

    /// The thread was woken and goes on with the guest.
    fn resumed(&self);
}

thread_local! {
    static HAND_OFF: RefCell<Option<Arc<dyn HandOff>>> = const { RefCell::new(None) };
}

/// Registers `hand_off` for the calling thread, for its whole life.
pub(crate) fn register(hand_off: Arc<dyn HandOff>) {
    HAND_OFF.with(|registered| *registered.borrow_mut() = Some(hand_off));
}

/// Runs `wait` (a park of the calling thread), telling the thread's
/// [`HandOff`], if one is registered, before and after.
pub(crate) fn parked<R>(wait: impl FnOnce() -> R) -> R {
    let Some(hand_off) = HAND_OFF.with(|registered| registered.borrow().clone()) else { return wait() };
    hand_off.parked();
    let waited = wait();
    hand_off.resumed();
    waited
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what it hears.
    #[derive(Default)]
    struct Heard(Mutex<Vec<&'static str>>);

    impl HandOff for Heard {
        fn parked(&self) {
            self.0.lock().unwrap().push("parked");
        }

        fn resumed(&self) {
            self.0.lock().unwrap().push("resumed");
        }
    }

    #[test]
    fn only_a_thread_with_a_hand_off_tells_it_around_each_wait() {
        let heard = Arc::new(Heard::default());
        let registered = heard.clone();
        let on_registered = std::thread::spawn(move || {
            register(registered.clone());
            parked(|| registered.0.lock().unwrap().push("waited"))
        });
        on_registered.join().unwrap();
        assert_eq!(*heard.0.lock().unwrap(), ["parked", "waited", "resumed"]);
        let unregistered = heard.clone();
        std::thread::spawn(move || parked(|| unregistered.0.lock().unwrap().push("waited alone"))).join().unwrap();
        assert_eq!(heard.0.lock().unwrap().last(), Some(&"waited alone"));
        assert_eq!(heard.0.lock().unwrap().len(), 4);
    }
}
