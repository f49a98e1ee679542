//! [`CapabilityBudget`]: the judge and embeddings calls the current guest
//! call may still make (they share one count), the call's clock, which
//! hears how long each waited on the network, and the [`CapabilitySpend`]
//! of the scope the call belongs to (a run, one request of `assay serve`),
//! which each backend's budget of requests counts against; and
//! [`CapabilityView`], what each of those two interfaces sees of a store:
//! its backend (or why it has none) and the budget.

use crate::sandbox::call_clock::CallClock;
use crate::sandbox::host::answered::Answered;
use crate::sandbox::host::capability_error::CapabilityError;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use wasmtime::component::HasData;

/// The judge and embeddings requests one scope has sent (a run, or one
/// request of `assay serve`): each backend counts its `max_calls` budget
/// here, so that one run, or one client, cannot spend another's.
#[derive(Debug, Default)]
pub struct CapabilitySpend {
    /// Requests sent to the judge.
    pub judge: AtomicUsize,
    /// Requests sent to the embeddings backend.
    pub embeddings: AtomicUsize,
}

/// The capability calls left to the current guest call, its clock, and
/// the spend of its scope.
#[derive(Debug)]
pub(crate) struct CapabilityBudget {
    calls_left: u32,
    until: Option<std::time::Instant>,
    clock: CallClock,
    spend: Arc<CapabilitySpend>,
}

impl CapabilityBudget {
    /// A budget allowing no call, for a store between calls.
    pub(crate) fn new(clock: CallClock) -> Self {
        CapabilityBudget { calls_left: 0, until: None, clock, spend: Arc::default() }
    }

    /// The next calls belong to the scope whose spend is `spend`.
    pub(crate) fn spend_in(&mut self, spend: Arc<CapabilitySpend>) {
        self.spend = spend;
    }

    /// Starts a call that may make `calls` capability calls until `until`
    /// (the case's deadline), timed by `clock`.
    pub(crate) fn arm(&mut self, calls: u32, clock: CallClock, until: Option<std::time::Instant>) {
        self.calls_left = calls;
        self.until = until;
        self.clock = clock;
    }

    /// The current call's clock.
    pub(crate) fn clock(&self) -> &CallClock {
        &self.clock
    }

    /// Takes one call of `capability` (`judge`, `embeddings`) from the
    /// budget, or explains to the guest that it is spent.
    pub(crate) fn take(&mut self, capability: &str) -> Result<(), CapabilityError> {
        if self.until.is_some_and(|until| std::time::Instant::now() >= until) {
            return Err(CapabilityError::Failed(format!(
                "the case's time ran out before this {capability} call; the call was not made"
            )));
        }
        match self.calls_left.checked_sub(1) {
            Some(left) => {
                self.calls_left = left;
                Ok(())
            }
            None => Err(CapabilityError::Failed(format!(
                "this evaluate call has used every {capability} call it may make (judge and embeddings calls together are capped per check in the batch); the call was refused"
            ))),
        }
    }
}

/// What a capability interface of one store sees: the backend `B` (a judge,
/// an embeddings backend) or why the guest has none, and the current call's
/// budget.
pub(crate) struct CapabilityView<'a, B: ?Sized> {
    backend: Result<&'a B, CapabilityError>,
    budget: &'a mut CapabilityBudget,
}

impl<'a, B: ?Sized> CapabilityView<'a, B> {
    /// The view of a guest that is `granted` the capability or not, with
    /// its `backend`, if one is configured.
    pub(crate) fn new(granted: bool, backend: Option<&'a B>, budget: &'a mut CapabilityBudget) -> Self {
        let backend = match backend {
            _ if !granted => Err(CapabilityError::NotGranted),
            None => Err(CapabilityError::NotConfigured),
            Some(backend) => Ok(backend),
        };
        CapabilityView { backend, budget }
    }

    /// Asks the backend with `ask` (given the scope's spend), taking one
    /// call of `capability` from the budget. Only the time the backend says
    /// it waited on the network is kept off the call's deadline.
    pub(crate) fn ask<T>(
        &mut self,
        capability: &str,
        ask: impl FnOnce(&B, &CapabilitySpend) -> Answered<T>,
    ) -> Result<T, CapabilityError> {
        let backend = self.backend.clone()?;
        self.budget.take(capability)?;
        let answered = ask(backend, &self.budget.spend);
        self.budget.clock.waited(answered.waited);
        answered.answer.map_err(CapabilityError::Failed)
    }
}

/// Links a capability interface to [`CapabilityView`]s of a store's state.
pub(crate) struct CapabilityHost<B: ?Sized + 'static>(PhantomData<B>);

impl<B: ?Sized + 'static> HasData for CapabilityHost<B> {
    type Data<'a> = CapabilityView<'a, B>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The reason of a failed call.
    fn reason(error: CapabilityError) -> String {
        match error {
            CapabilityError::Failed(reason) => reason,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn judge_and_embeddings_calls_share_one_count() {
        let mut budget = CapabilityBudget::new(CallClock::new(Duration::from_secs(1)));
        assert!(budget.take("judge").is_err(), "a store between calls may make none");
        budget.arm(2, CallClock::new(Duration::from_secs(1)), None);
        assert_eq!(budget.take("judge"), Ok(()));
        assert_eq!(budget.take("embeddings"), Ok(()));
        let refused = reason(budget.take("judge").unwrap_err());
        assert!(refused.starts_with("this evaluate call has used every judge call it may make"), "{refused}");
        budget.arm(1, CallClock::new(Duration::from_secs(1)), None);
        assert_eq!(budget.take("embeddings"), Ok(()));
    }

    #[test]
    fn after_the_cases_time_no_call_is_made_whatever_the_count_left() {
        let mut budget = CapabilityBudget::new(CallClock::new(Duration::from_secs(1)));
        let soon = std::time::Instant::now() + Duration::from_millis(50);
        budget.arm(5, CallClock::new(Duration::from_secs(1)), Some(soon));
        assert_eq!(budget.take("judge"), Ok(()));
        std::thread::sleep(Duration::from_millis(60));
        let refused = reason(budget.take("embeddings").unwrap_err());
        assert_eq!(refused, "the case's time ran out before this embeddings call; the call was not made");
        // The next call is armed afresh.
        budget.arm(1, CallClock::new(Duration::from_secs(1)), None);
        assert_eq!(budget.take("judge"), Ok(()));
    }

    #[test]
    fn a_backends_wait_on_the_network_is_kept_off_the_deadline() {
        let clock = CallClock::new(Duration::from_millis(50));
        let mut budget = CapabilityBudget::new(clock.clone());
        budget.arm(2, clock.clone(), None);
        let backend = "a backend";
        let mut view = CapabilityView::new(true, Some(backend), &mut budget);
        // The backend takes longer than the whole deadline, all of it (and
        // more, so that a slow machine cannot fail this) on the network.
        let answer = view.ask("judge", |backend: &str, _| {
            std::thread::sleep(Duration::from_millis(80));
            Answered { answer: Ok(backend.len()), waited: Duration::from_secs(10) }
        });
        assert_eq!(answer, Ok(9));
        assert!(clock.remaining().is_some(), "the wait on the network was taken from the deadline");
        // A cached answer, or a refusal, costs the guest's own time.
        let refused = view.ask("judge", |_, _| Answered::<()>::at_once(Err("refused".into())));
        assert_eq!(refused, Err(CapabilityError::Failed("refused".into())));
        let spent = view.ask("judge", |_, _| Answered::at_once(Ok(())));
        assert!(reason(spent.unwrap_err()).contains("has used every judge call it may make"));
    }

    #[test]
    fn a_backend_is_reached_only_when_granted_and_configured() {
        let clock = CallClock::new(Duration::from_secs(1));
        let mut budget = CapabilityBudget::new(clock.clone());
        budget.arm(3, clock, None);
        let asked = |view: &mut CapabilityView<'_, str>| view.ask("judge", |b, _| Answered::at_once(Ok(b.len())));
        let ungranted = asked(&mut CapabilityView::new(false, Some("a backend"), &mut budget));
        assert_eq!(ungranted, Err(CapabilityError::NotGranted));
        let unconfigured = asked(&mut CapabilityView::new(true, None, &mut budget));
        assert_eq!(unconfigured, Err(CapabilityError::NotConfigured));
        assert_eq!(asked(&mut CapabilityView::new(true, Some("a backend"), &mut budget)), Ok(9));
        // Neither refusal took a call from the budget.
        assert_eq!(budget.calls_left, 2);
    }
}
