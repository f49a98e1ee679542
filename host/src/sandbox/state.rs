//! [`SandboxState`], the data of every plugin or agent `Store`: it composes
//! the limiter and the state of each imported interface (`host/`), hands
//! each interface its view in the linker, arms a call's budget, and names
//! the cause of a trap as a [`Fault`].

use crate::errors::Fault;
use crate::sandbox::call_clock::{CallClock, ticks};
use crate::sandbox::host::Capabilities;
use crate::sandbox::host::budget::{CapabilityBudget, CapabilityView};
use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::judge::Judge;
use crate::sandbox::host::log::LogState;
use crate::sandbox::host::wasi::WasiState;
use crate::sandbox::limiter::MemoryLimiter;
use crate::sandbox::limits::{CallBudget, Limits};
use crate::sandbox::policy::Grants;
use wasmtime::{Store, Trap, UpdateDeadline};
use wasmtime_wasi::{WasiCtxView, WasiView};

/// The most bytes a guest may hand the host in one host call (a judge
/// prompt, a log line, texts to embed). wasmtime's default is 128 MiB;
/// nothing a plugin legitimately sends comes near this.
const HOSTCALL_FUEL: usize = 16 << 20;

/// The data of every plugin or agent `Store`: the limiter, the per-call
/// log, the capability backends and grants and the budget of calls to them,
/// and WASI with nothing granted.
pub(crate) struct SandboxState {
    memory: MemoryLimiter,
    log: LogState,
    capabilities: Capabilities,
    /// The current call's backends in place of `capabilities`, if it has
    /// its own (a check's [`crate::sandbox::Grader`]).
    call_capabilities: Option<std::sync::Arc<Capabilities>>,
    grants: Grants,
    budget: CapabilityBudget,
    wasi: WasiState,
}

impl SandboxState {
    /// Fresh state for one instance.
    fn new(limits: &Limits, capabilities: Capabilities, grants: Grants, deterministic: bool) -> Self {
        SandboxState {
            memory: MemoryLimiter::new(limits.memory_bytes),
            log: LogState::new(limits.max_log_lines, limits.max_log_bytes),
            capabilities,
            call_capabilities: None,
            grants,
            budget: CapabilityBudget::new(CallClock::new(limits.deadline)),
            wasi: WasiState::new(deterministic),
        }
    }

    /// The log, for the `log` interface and for what a call logged.
    pub(crate) fn log(&mut self) -> &mut LogState {
        &mut self.log
    }

    /// What the `judge` interface sees: the judge, when granted and
    /// configured.
    pub(crate) fn judge(&mut self) -> CapabilityView<'_, dyn Judge> {
        let capabilities = self.call_capabilities.as_deref().unwrap_or(&self.capabilities);
        CapabilityView::new(self.grants.judge, capabilities.judge.as_deref(), &mut self.budget)
    }

    /// What the `embeddings` interface sees: the embeddings backend, when
    /// granted and configured.
    pub(crate) fn embeddings(&mut self) -> CapabilityView<'_, dyn Embeddings> {
        let capabilities = self.call_capabilities.as_deref().unwrap_or(&self.capabilities);
        CapabilityView::new(self.grants.embeddings, capabilities.embeddings.as_deref(), &mut self.budget)
    }

    /// The next call's backends in place of the instance's own (`None`:
    /// its own).
    pub(crate) fn use_capabilities(&mut self, capabilities: Option<std::sync::Arc<Capabilities>>) {
        self.call_capabilities = capabilities;
    }

    /// The next calls' judge and embeddings requests count in `spend`.
    pub(crate) fn spend_in(&mut self, spend: std::sync::Arc<crate::sandbox::host::CapabilitySpend>) {
        self.budget.spend_in(spend);
    }

    /// Names the cause of `error`, from a call or an instantiation under
    /// `budget`.
    pub(crate) fn fault(&self, error: &wasmtime::Error, budget: &CallBudget) -> Fault {
        if let Some(fault) = self.memory.exceeded() {
            return fault.clone();
        }
        // The caller rejected the answer (see `ComponentHost::call`).
        if let Some(fault) = error.downcast_ref::<Fault>() {
            return fault.clone();
        }
        if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
            return Fault::Exit(exit.0);
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => Fault::Deadline(budget.deadline),
            Some(Trap::OutOfFuel) => Fault::Fuel(budget.fuel.unwrap_or_default()),
            Some(Trap::StackOverflow) => Fault::StackOverflow,
            Some(Trap::UnreachableCodeReached) => Fault::Panic(self.log.lock().panic_message()),
            Some(trap) => Fault::Trap(trap.to_string()),
            // wasmtime's error types for these are private; their messages
            // are not.
            None if format!("{error}").starts_with("resource limit exceeded: ") => {
                Fault::Resources(format!("{error}").trim_start_matches("resource limit exceeded: ").to_owned())
            }
            None if format!("{error}").contains("fuel allocated for hostcalls has been exhausted") => Fault::BadAnswer(
                format!("it handed the host more than {} MiB in one call, the most one call may", HOSTCALL_FUEL >> 20),
            ),
            None => Fault::Trap(format!("{error:#}")),
        }
    }
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        self.wasi.view(self.log.shared())
    }
}

/// Creates a store with the limiter installed, the hostcall fuel set, and
/// an epoch deadline that traps once the guest's own time is spent.
pub(crate) fn new_store(
    engine: &wasmtime::Engine,
    limits: &Limits,
    capabilities: Capabilities,
    grants: Grants,
    deterministic: bool,
) -> Store<SandboxState> {
    let mut store = Store::new(engine, SandboxState::new(limits, capabilities, grants, deterministic));
    store.limiter(|state| &mut state.memory);
    store.set_hostcall_fuel(HOSTCALL_FUEL);
    store.epoch_deadline_callback(|context| match context.data().budget.clock().remaining() {
        Some(left) => Ok(UpdateDeadline::Continue(ticks(left))),
        None => Err(Trap::Interrupt.into()),
    });
    store
}

/// Arms the store's deadline, fuel budget and capability-call budget for
/// the next call, and returns the clock the call is measured by.
pub(crate) fn arm(store: &mut Store<SandboxState>, budget: CallBudget) -> CallClock {
    let clock = CallClock::new(budget.deadline);
    store.set_epoch_deadline(ticks(budget.deadline));
    if let Some(fuel) = budget.fuel {
        // Fuel is only enabled on the fuel engine; set_fuel fails elsewhere.
        let _ = store.set_fuel(fuel);
    }
    let state = store.data_mut();
    state.budget.arm(budget.capability_calls, clock.clone(), budget.until);
    state.log.lock().clear();
    state.wasi.start_call();
    clock
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn names_the_cause_of_an_error_and_keeps_a_fault_the_caller_raised() {
        let state = SandboxState::new(&Limits::default(), Capabilities::default(), Grants::default(), false);
        let budget =
            CallBudget { deadline: Duration::from_millis(300), fuel: Some(7), capability_calls: 0, until: None };
        let fault = |error: wasmtime::Error| state.fault(&error, &budget);
        let rejected = Fault::BadAnswer("it returned 2 results for 3 checks".into());
        assert_eq!(fault(wasmtime::Error::new(rejected.clone())), rejected);
        assert_eq!(fault(Trap::Interrupt.into()), Fault::Deadline(Duration::from_millis(300)));
        assert_eq!(fault(Trap::OutOfFuel.into()), Fault::Fuel(7));
        assert_eq!(fault(Trap::StackOverflow.into()), Fault::StackOverflow);
        assert_eq!(fault(Trap::UnreachableCodeReached.into()), Fault::Panic(None));
        assert_eq!(fault(wasmtime::Error::new(wasmtime_wasi::I32Exit(1))), Fault::Exit(1));
        assert_eq!(fault(wasmtime::format_err!("something else")), Fault::Trap("something else".into()));
    }
}
