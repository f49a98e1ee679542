//! The instances of one component, matcher or agent alike: linked once,
//! pre-instantiated, and pooled for reuse, each in its own store under the
//! sandbox's limits. An instance that faulted is never handed out again.
//!
//! When the pooling allocator cannot give an instance a slot (the pool is
//! exhausted by many plugins' idle instances, or the machine refuses the
//! memory), the instance is made on an on-demand engine instead: the run
//! goes on, a little slower, rather than failing.

use crate::errors::Fault;
use crate::plugin::engine::Runtime;
use crate::plugin::guest;
use crate::plugin::host::{Capabilities, wasi_linker};
use crate::plugin::sandbox::{CallBudget, Limits, SandboxState, classify, new_store};
use std::sync::{Arc, Mutex, OnceLock};
use wasmtime::Store;
use wasmtime::component::{Component, InstancePre, Linker};

/// The most idle instances a component keeps for reuse.
const MAX_IDLE_INSTANCES: usize = 64;

/// A world's generated bindings, as the pool needs them.
pub(crate) trait World: Sized + Send + 'static {
    /// The pre-instantiated form (`*Pre`).
    type Pre: Send + Sync + 'static;

    /// Adds the world's own imports (beyond WASI) to `linker`.
    fn link(linker: &mut Linker<SandboxState>) -> wasmtime::Result<()>;

    /// Checks the exports of a pre-instantiated component.
    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre>;

    /// The engine `pre` belongs to.
    fn engine(pre: &Self::Pre) -> &wasmtime::Engine;

    /// Instantiates into `store`.
    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self>;
}

/// One instance and its store.
pub(crate) struct Guest<W> {
    /// The store: limits, log, capabilities.
    pub store: Store<SandboxState>,
    /// The instance's exports.
    pub bindings: W,
}

/// How instances of a component are made.
#[derive(Clone, Debug)]
pub(crate) struct InstanceSettings {
    pub limits: Limits,
    pub capabilities: Capabilities,
    pub deterministic: bool,
}

/// Why a component could not be prepared.
#[derive(Debug)]
pub(crate) enum PrepareError {
    /// WASI or the world's imports could not be linked.
    Link(String),
    /// The component lacks the world's exports.
    Exports(String),
}

/// The pooled instances of one component.
pub(crate) struct Instances<W: World> {
    runtime: Runtime,
    /// The component's bytes, for compiling it again for the fallback engine.
    bytes: Arc<[u8]>,
    pre: W::Pre,
    fallback: OnceLock<Result<W::Pre, String>>,
    settings: InstanceSettings,
    idle: Mutex<Vec<Guest<W>>>,
}

impl<W: World> Instances<W> {
    /// Links and pre-instantiates `component` (compiled by `runtime` from
    /// `bytes`).
    pub(crate) fn new(
        runtime: &Runtime,
        bytes: Arc<[u8]>,
        component: &Component,
        settings: InstanceSettings,
    ) -> Result<Instances<W>, PrepareError> {
        let pre = prepare::<W>(component, settings.deterministic)?;
        Ok(Instances {
            runtime: runtime.clone(),
            bytes,
            pre,
            fallback: OnceLock::new(),
            settings,
            idle: Mutex::default(),
        })
    }

    /// The settings instances are made with.
    pub(crate) fn settings(&self) -> &InstanceSettings {
        &self.settings
    }

    /// An idle instance, or a fresh one made under the instantiation
    /// deadline.
    pub(crate) fn take(&self) -> Result<Guest<W>, Fault> {
        if let Some(guest) = self.idle.lock().expect("instance pool poisoned").pop() {
            return Ok(guest);
        }
        match self.instantiate(&self.pre) {
            Err(InstantiateError::NoSlot(_)) if self.runtime.is_pooling() => {
                let fallback = self.fallback.get_or_init(|| self.prepare_fallback());
                match fallback {
                    Ok(pre) => self.instantiate(pre).map_err(InstantiateError::into_fault),
                    Err(cause) => Err(Fault::Trap(cause.clone())),
                }
            }
            made => made.map_err(InstantiateError::into_fault),
        }
    }

    /// Returns a healthy instance for reuse.
    pub(crate) fn give_back(&self, guest: Guest<W>) {
        let mut idle = self.idle.lock().expect("instance pool poisoned");
        if idle.len() < MAX_IDLE_INSTANCES {
            idle.push(guest);
        }
    }

    /// Makes one call on an idle or fresh instance under `budget`; the
    /// instance goes back to the pool unless the call faulted.
    pub(crate) fn call<T>(
        &self,
        budget: CallBudget,
        call: impl AsyncFnOnce(&W, &mut Store<SandboxState>) -> wasmtime::Result<T>,
    ) -> Result<T, Fault> {
        let mut guest = self.take()?;
        let bindings = &guest.bindings;
        let answer = guest::call(&mut guest.store, budget, async |store| call(bindings, store).await)?;
        self.give_back(guest);
        Ok(answer)
    }

    fn instantiate(&self, pre: &W::Pre) -> Result<Guest<W>, InstantiateError> {
        let settings = &self.settings;
        let mut store =
            new_store(W::engine(pre), &settings.limits, settings.capabilities.clone(), settings.deterministic);
        let budget = CallBudget {
            deadline: settings.limits.instantiation_deadline,
            fuel: settings.limits.fuel,
            capability_calls: 0,
        };
        match guest::call_raw(&mut store, budget, async |store| W::instantiate(pre, store).await) {
            Ok(bindings) => Ok(Guest { store, bindings }),
            Err(None) => Err(InstantiateError::Fault(Fault::Deadline(budget.deadline))),
            Err(Some(error)) => {
                let fault = classify(&error, store.data(), budget.deadline, budget.fuel);
                // An error that is no trap, no limit and no exit is not the
                // guest's doing: the allocator had no slot to give.
                let guests_doing = error.downcast_ref::<wasmtime::Trap>().is_some()
                    || error.downcast_ref::<wasmtime_wasi::I32Exit>().is_some()
                    || !matches!(fault, Fault::Trap(_));
                Err(if guests_doing {
                    InstantiateError::Fault(fault)
                } else {
                    InstantiateError::NoSlot(format!("{error:#}"))
                })
            }
        }
    }

    fn prepare_fallback(&self) -> Result<W::Pre, String> {
        let engine = self.runtime.on_demand_engine();
        let (component, _) = self.runtime.compile_for(engine, &self.bytes).map_err(|e| format!("{e:#}"))?;
        prepare::<W>(&component, self.settings.deterministic).map_err(|e| format!("{e:?}"))
    }
}

/// Why an instantiation failed.
enum InstantiateError {
    /// The guest faulted (a start function trapped, ran out of time, …).
    Fault(Fault),
    /// The allocator had no slot for it.
    NoSlot(String),
}

impl InstantiateError {
    fn into_fault(self) -> Fault {
        match self {
            InstantiateError::Fault(fault) => fault,
            InstantiateError::NoSlot(cause) => Fault::Trap(cause),
        }
    }
}

/// Links WASI and the world's imports and pre-instantiates `component`.
fn prepare<W: World>(component: &Component, deterministic: bool) -> Result<W::Pre, PrepareError> {
    let link = |e: wasmtime::Error| PrepareError::Link(format!("{e:#}"));
    let mut linker = wasi_linker(component.engine(), deterministic).map_err(link)?;
    W::link(&mut linker).map_err(link)?;
    let pre = linker.instantiate_pre(component).map_err(link)?;
    W::pre(pre).map_err(|e| PrepareError::Exports(format!("{e:#}")))
}
