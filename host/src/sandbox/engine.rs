//! The process-wide wasmtime [`Runtime`]: one `Engine` configured for the
//! sandbox (component model, epoch interruption driven by a ticker thread,
//! the pooling allocator when the machine allows it), a second engine with
//! fuel metering, created only when a plugin asks for a fuel budget (fuel
//! changes code generation, so it cannot share the first engine), and an
//! on-demand engine, created only when the pool has no slot left for an
//! instance.

use crate::sandbox::cache::{self, CacheStatus, CompileCache};
use crate::sandbox::engine_config::{POOLED_MEMORY_MAX, config};
use crate::sandbox::limits::Limits;
use crate::sandbox::precompiled;
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::Duration;
use wasmtime::component::Component;
use wasmtime::Engine;

/// How often the ticker thread advances the epoch: the granularity of every
/// deadline.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The wasmtime engines shared by every plugin and agent of a process.
///
/// Cheap to clone (it is an `Arc` inside).
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<RuntimeInner>,
}

struct RuntimeInner {
    engine: Engine,
    fuel_engine: OnceLock<Engine>,
    on_demand_engine: OnceLock<Engine>,
    pooling: bool,
    cache: Option<CompileCache>,
    /// Told of each compile that the cache cannot spare, of a component
    /// large enough to take a while ([`Runtime::on_slow_compile`]).
    notice: OnceLock<CompileNoticeFn>,
}

/// What [`Runtime::on_slow_compile`] is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileNotice {
    /// The component, as its source says it: `plugin `python``, a path.
    pub what: String,
    /// Its size in bytes.
    pub bytes: usize,
}

type CompileNoticeFn = Box<dyn Fn(&CompileNotice) + Send + Sync>;

/// Components from this size on take a second or more to compile: their
/// first compile is announced ([`Runtime::on_slow_compile`]).
pub const SLOW_COMPILE_BYTES: usize = 2 << 20;

/// How many component instances the pool has slots for by default.
const POOLED_COMPONENT_INSTANCES: u32 = 512;

impl Runtime {
    /// Creates the engine, using the pooling allocator when `largest_memory`
    /// (the largest memory limit any plugin will have) fits in a pool slot and
    /// the machine grants the address space the pool reserves, and falling
    /// back to on-demand allocation otherwise (as Spin does).
    pub fn new(largest_memory: usize) -> Runtime {
        Runtime::with_cache(largest_memory, None)
    }

    /// [`Runtime::new`], compiling through `cache` when one is given.
    pub fn with_cache(largest_memory: usize, cache: Option<CompileCache>) -> Runtime {
        Runtime::with_pool_slots(largest_memory, cache, POOLED_COMPONENT_INSTANCES)
    }

    /// [`Runtime::with_cache`] with a pool of `instances` component
    /// instance slots (default 512). Instances beyond the pool are made on
    /// an on-demand engine, so a small pool costs speed, never a failure.
    pub fn with_pool_slots(largest_memory: usize, cache: Option<CompileCache>, instances: u32) -> Runtime {
        let pooled =
            (largest_memory <= POOLED_MEMORY_MAX).then(|| Engine::new(&config(false, Some(instances))).ok()).flatten();
        let pooling = pooled.is_some();
        let engine =
            pooled.unwrap_or_else(|| Engine::new(&config(false, None)).expect("the on-demand engine config is valid"));
        start_ticker(&engine);
        let inner = RuntimeInner {
            engine,
            fuel_engine: OnceLock::new(),
            on_demand_engine: OnceLock::new(),
            pooling,
            cache,
            notice: OnceLock::new(),
        };
        Runtime { inner: Arc::new(inner) }
    }

    /// The engine for plugins without a fuel budget.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The engine for plugins with a fuel budget (created on first use).
    pub fn fuel_engine(&self) -> &Engine {
        self.inner.fuel_engine.get_or_init(|| {
            let engine = Engine::new(&config(true, None)).expect("the fuel engine config is valid");
            start_ticker(&engine);
            engine
        })
    }

    /// The engine without pooling that instances fall back to when the
    /// pool has no slot (created on first use; the main engine itself when
    /// it does not pool).
    pub(crate) fn on_demand_engine(&self) -> &Engine {
        if !self.inner.pooling {
            return &self.inner.engine;
        }
        self.inner.on_demand_engine.get_or_init(|| {
            let engine = Engine::new(&config(false, None)).expect("the on-demand engine config is valid");
            start_ticker(&engine);
            engine
        })
    }

    /// Calls `notice` before each compile of a component of
    /// [`SLOW_COMPILE_BYTES`] or more that the compile cache cannot spare
    /// (its first use on this machine, or no cache): a Python plugin takes
    /// 20 s or more, which should not pass in silence. Set once; later
    /// calls are ignored.
    pub fn on_slow_compile(&self, notice: impl Fn(&CompileNotice) + Send + Sync + 'static) {
        let _ = self.inner.notice.set(Box::new(notice));
    }

    /// Compiles a component for the main engine or, with `fuel`, the fuel
    /// engine, through the compile cache if there is one. `what` names it
    /// in the slow-compile notice.
    /// A component whose modules the pool cannot hold (more memories or
    /// tables per module than a pool slot has) is compiled for the
    /// on-demand engine instead: multi-memory is standard WebAssembly, and
    /// a plugin must not load on one machine and not on another.
    /// `component_sha` is the sha256 of `bytes`, which the caller has.
    pub fn compile(
        &self,
        what: &str,
        bytes: &[u8],
        component_sha: &[u8; 32],
        fuel: bool,
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        let engine = if fuel { self.fuel_engine() } else { self.engine() };
        match self.compile_for(what, engine, bytes, component_sha) {
            Err(error) if !fuel && self.inner.pooling && format!("{error:#}").contains("pooling allocator") => {
                self.compile_for(what, self.on_demand_engine(), bytes, component_sha)
            }
            compiled => compiled,
        }
    }

    /// Compiles a component (`bytes`, whose sha256 is `component_sha`) for
    /// `engine`, one of this runtime's: from the artifact embedded in the
    /// binary when there is one that `engine` can run (`precompiled.rs`),
    /// else through the compile cache if there is one.
    pub(crate) fn compile_for(
        &self,
        what: &str,
        engine: &Engine,
        bytes: &[u8],
        component_sha: &[u8; 32],
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        let announce = || {
            if let Some(notice) = self.inner.notice.get()
                && bytes.len() >= SLOW_COMPILE_BYTES
            {
                notice(&CompileNotice { what: what.to_owned(), bytes: bytes.len() });
            }
        };
        if let Some(component) = precompiled::load(engine, component_sha) {
            return Ok((component, CacheStatus::Embedded));
        }
        cache::compile(engine, self.inner.cache.as_ref(), bytes, component_sha, &announce)
    }

    /// The compile cache, if any.
    pub fn cache(&self) -> Option<&CompileCache> {
        self.inner.cache.as_ref()
    }

    /// Whether the main engine uses the pooling allocator.
    pub fn is_pooling(&self) -> bool {
        self.inner.pooling
    }
}

impl Default for Runtime {
    /// A runtime for plugins with the default limits.
    fn default() -> Self {
        Runtime::new(Limits::default().memory_bytes)
    }
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until the engine is
/// dropped.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    thread::Builder::new()
        .name("assay-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                thread::sleep(EPOCH_TICK);
            }
        })
        .expect("failed to spawn the epoch ticker thread");
}
