//! [`ComponentHost`], the generic host of one component, matcher plugin or
//! agent alike: its bytes checked against a pin and compiled, its imports
//! checked against its grants, linked once, pre-instantiated, instantiated
//! once to prove it starts, and then a pool of instances reused from call
//! to call, each in its own store under the sandbox's limits. An instance
//! that faulted is never handed out again.
//!
//! When the pooling allocator cannot give an instance a slot (the pool is
//! exhausted by many components' idle instances, or the machine refuses the
//! memory), the instance is made on an on-demand engine instead: the run
//! goes on, a little slower, rather than failing.

use crate::errors::{ComponentLoadError, ComponentLoadErrorKind, ComponentRole, Fault};
use crate::sandbox::cache::CacheStatus;
use crate::private_files::hex;
use crate::sandbox::component_file::{ComponentSource, as_component};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use crate::sandbox::engine::Runtime;
use crate::sandbox::guest;
use crate::sandbox::host::clocks::link_virtual_timers;
use crate::sandbox::host::log::LogLine;
use crate::sandbox::host::{Capabilities, CapabilitySpend};
use crate::sandbox::limits::{CallBudget, Limits};
use crate::sandbox::policy::{Grants, check_imports, requested_grants};
use crate::sandbox::state::{SandboxState, new_store};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Engine, Store};

/// The most idle instances a component keeps for reuse.
const MAX_IDLE_INSTANCES: usize = 64;

/// A world's generated bindings, as the host needs them (see `worlds.rs`).
pub(crate) trait World: Sized + Send + 'static {
    /// What a component of this world is loaded as.
    const ROLE: ComponentRole;

    /// The interface it must export, e.g. `assay:agent/chat@0.1.0` (a
    /// world of several versions names each).
    const EXPORTS: &'static str;

    /// The pre-instantiated form (`*Pre`).
    type Pre: Send + Sync + 'static;

    /// Adds the world's own imports (beyond WASI) to `linker`.
    fn link(linker: &mut Linker<SandboxState>) -> wasmtime::Result<()>;

    /// Checks the exports of a pre-instantiated component.
    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre>;

    /// The engine `pre` belongs to.
    fn engine(pre: &Self::Pre) -> &Engine;

    /// Instantiates into `store`.
    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self>;
}

/// How a component is loaded: its limits, grants and capability backends.
#[derive(Clone, Debug, Default)]
pub struct ComponentOptions {
    /// The sandbox limits.
    pub limits: Limits,
    /// The capabilities it may import (agents are granted none).
    pub grants: Grants,
    /// The backends behind its granted capabilities.
    pub capabilities: Capabilities,
    /// A pinned sha256 (lowercase hex); a mismatch refuses to load.
    pub sha256: Option<String>,
    /// Fixed WASI clocks and seeded randomness, for plugins that must give
    /// the same verdict for the same inputs.
    pub deterministic: bool,
    /// A fresh instance for every call, never one reused, so that nothing
    /// a call leaves behind (an interpreter whose builtins the code it ran
    /// replaced) reaches the next: for components that run code from test
    /// files. Costs an instantiation per call (~4 ms more a call for the
    /// Python runner), and freed instances wait for the pool's batched
    /// decommit (the Python runner's 64 dirty slots are ~0.5 GB of RSS).
    pub fresh_instances: bool,
}

impl ComponentOptions {
    /// The judge the component's calls ask: granted and configured.
    pub fn judge(&self) -> Option<&Arc<dyn crate::sandbox::host::judge::Judge>> {
        self.capabilities.judge.as_ref().filter(|_| self.grants.judge)
    }

    /// Whether its calls may wait on the network: it is granted a judge or
    /// an embeddings backend that is configured.
    pub fn asks_network(&self) -> bool {
        self.judge().is_some() || (self.grants.embeddings && self.capabilities.embeddings.is_some())
    }
}

/// One call's answer, and the lines the guest logged during it.
#[derive(Debug)]
pub(crate) struct Logged<T> {
    /// The answer, or why there is none.
    pub answer: Result<T, Fault>,
    /// The lines logged (its `log` calls and standard streams).
    pub log: Vec<LogLine>,
    /// How many lines the log's caps dropped.
    pub log_dropped: usize,
}

/// One instance and its store.
struct Guest<W> {
    store: Store<SandboxState>,
    bindings: W,
}

/// A loaded component and the pool of its instances.
pub(crate) struct ComponentHost<W: World> {
    runtime: Runtime,
    /// The component's bytes, for compiling it again for the fallback engine.
    bytes: Arc<[u8]>,
    /// Their sha256, which finds their precompiled or cached artifact.
    digest: [u8; 32],
    sha256: String,
    /// The grants its imports ask for.
    requested_grants: Vec<&'static str>,
    cache_status: CacheStatus,
    pre: W::Pre,
    fallback: OnceLock<Result<W::Pre, String>>,
    options: ComponentOptions,
    idle: Mutex<Vec<Guest<W>>>,
}

impl<W: World> ComponentHost<W> {
    /// Loads the component in `bytes` from `source`: verifies its pin,
    /// compiles it (a core module with an embedded component type is made
    /// a component first), checks its imports against its grants, links and
    /// pre-instantiates it, and instantiates it once for the pool.
    pub(crate) fn load(
        runtime: &Runtime,
        source: &ComponentSource,
        bytes: &[u8],
        options: ComponentOptions,
    ) -> Result<ComponentHost<W>, ComponentLoadError> {
        let fail = |kind| ComponentLoadError { role: W::ROLE, component: source.to_string(), kind };
        let given: [u8; 32] = Sha256::digest(bytes).into();
        let sha256 = hex(&given);
        if let Some(pinned) = &options.sha256
            && !pinned.eq_ignore_ascii_case(&sha256)
        {
            return Err(fail(ComponentLoadErrorKind::Sha256Mismatch { pinned: pinned.clone(), actual: sha256 }));
        }
        let bytes = as_component(bytes).map_err(|e| fail(ComponentLoadErrorKind::NotAComponent(e)))?;
        // A core module made a component is other bytes.
        let digest = match &bytes {
            Cow::Borrowed(_) => given,
            Cow::Owned(made) => Sha256::digest(made).into(),
        };
        let (component, cache_status) = runtime
            .compile(&source.to_string(), &bytes, &digest, options.limits.fuel.is_some())
            .map_err(|e| fail(ComponentLoadErrorKind::NotAComponent(format!("{e:#}"))))?;
        check_imports(component.engine(), &component, W::ROLE, &options.grants)
            .map_err(|d| fail(ComponentLoadErrorKind::Denied(d)))?;
        let requested_grants = requested_grants(component.engine(), &component);
        let pre = prepare::<W>(&component, options.deterministic).map_err(fail)?;
        let host = ComponentHost {
            runtime: runtime.clone(),
            bytes: Arc::from(bytes),
            digest,
            sha256,
            requested_grants,
            cache_status,
            pre,
            fallback: OnceLock::new(),
            options,
            idle: Mutex::default(),
        };
        let guest = host.take().map_err(|fault| fail(ComponentLoadErrorKind::Instantiate(fault)))?;
        host.give_back(guest);
        Ok(host)
    }

    /// The limits its instances run under.
    pub(crate) fn limits(&self) -> &Limits {
        &self.options.limits
    }

    /// The options it was loaded with.
    pub(crate) fn options(&self) -> &ComponentOptions {
        &self.options
    }

    /// The grants its imports ask for (`log`, `judge`, `embeddings`).
    pub(crate) fn requested_grants(&self) -> &[&'static str] {
        &self.requested_grants
    }

    /// The sha256 of its bytes as given (lowercase hex).
    pub(crate) fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Whether it was compiled or loaded from the compile cache.
    pub(crate) fn cache_status(&self) -> CacheStatus {
        self.cache_status
    }

    /// Makes one call, with no capability calls, on an idle or fresh
    /// instance within `deadline`; what it logged is dropped.
    pub(crate) fn call<T>(
        &self,
        deadline: Duration,
        call: impl AsyncFnOnce(&W, &mut Store<SandboxState>) -> wasmtime::Result<T>,
    ) -> Result<T, Fault> {
        self.call_logged(deadline, 0, None, &Arc::default(), None, call).answer
    }

    /// Makes one call on an idle or fresh instance within `deadline`,
    /// allowing it `capability_calls` judge or embeddings calls, whose
    /// requests count in `spend` (its scope's), made to `capabilities`'
    /// backends when given (else the instance's own). `call` may
    /// reject what the guest answered by failing with a [`Fault`] (a
    /// malformed answer). The instance goes back to the pool unless the
    /// call faulted.
    pub(crate) fn call_logged<T>(
        &self,
        deadline: Duration,
        capability_calls: u32,
        until: Option<std::time::Instant>,
        spend: &Arc<CapabilitySpend>,
        capabilities: Option<&Arc<Capabilities>>,
        call: impl AsyncFnOnce(&W, &mut Store<SandboxState>) -> wasmtime::Result<T>,
    ) -> Logged<T> {
        let mut guest = match self.take() {
            Ok(guest) => guest,
            Err(fault) => return Logged { answer: Err(fault), log: Vec::new(), log_dropped: 0 },
        };
        guest.store.data_mut().spend_in(spend.clone());
        guest.store.data_mut().use_capabilities(capabilities.cloned());
        let budget = CallBudget { deadline, fuel: self.options.limits.fuel, capability_calls, until };
        let bindings = &guest.bindings;
        let answer = guest::call(&mut guest.store, budget, async |store| call(bindings, store).await);
        guest.store.data_mut().use_capabilities(None);
        let (log, log_dropped) = guest.store.data_mut().log().lock().take();
        if answer.is_ok() {
            self.give_back(guest);
        }
        Logged { answer, log, log_dropped }
    }

    /// An idle instance, or a fresh one made under the instantiation
    /// deadline.
    fn take(&self) -> Result<Guest<W>, Fault> {
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

    /// Returns a healthy instance for reuse (unless every call wants a
    /// fresh one).
    fn give_back(&self, guest: Guest<W>) {
        if self.options.fresh_instances {
            return;
        }
        let mut idle = self.idle.lock().expect("instance pool poisoned");
        if idle.len() < MAX_IDLE_INSTANCES {
            idle.push(guest);
        }
    }

    fn instantiate(&self, pre: &W::Pre) -> Result<Guest<W>, InstantiateError> {
        let options = &self.options;
        let capabilities = options.capabilities.clone();
        let mut store = new_store(W::engine(pre), &options.limits, capabilities, options.grants, options.deterministic);
        let budget = CallBudget {
            deadline: options.limits.instantiation_deadline,
            fuel: options.limits.fuel,
            capability_calls: 0,
            until: None,
        };
        match guest::call_raw(&mut store, budget, async |store| W::instantiate(pre, store).await) {
            Ok(bindings) => Ok(Guest { store, bindings }),
            Err(None) => Err(InstantiateError::Fault(Fault::Deadline(budget.deadline))),
            Err(Some(error)) => {
                let fault = store.data().fault(&error, &budget);
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
        let what = format!("the fallback of component {}", self.sha256);
        let (component, _) = self.runtime.compile_for(&what, engine, &self.bytes, &self.digest).map_err(|e| format!("{e:#}"))?;
        prepare::<W>(&component, self.options.deterministic).map_err(|e| e.to_string())
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

/// Links WASI (async, nothing granted; a deterministic guest's timers fire
/// at once) and the world's imports, and pre-instantiates `component`.
fn prepare<W: World>(component: &Component, deterministic: bool) -> Result<W::Pre, ComponentLoadErrorKind> {
    let link = |e: wasmtime::Error| ComponentLoadErrorKind::Link(format!("{e:#}"));
    let mut linker = Linker::<SandboxState>::new(component.engine());
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(link)?;
    if deterministic {
        link_virtual_timers(&mut linker).map_err(link)?;
    }
    W::link(&mut linker).map_err(link)?;
    let pre = linker.instantiate_pre(component).map_err(link)?;
    W::pre(pre).map_err(|e| ComponentLoadErrorKind::Exports { interface: W::EXPORTS, cause: format!("{e:#}") })
}
