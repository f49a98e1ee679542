//! The limits every plugin and agent instance runs under, the per-store
//! state that enforces them, and the translation of a trap into a [`Fault`]
//! that names its cause.

use crate::errors::Fault;
use crate::plugin::host::Capabilities;
use crate::plugin::host::clocks;
use crate::plugin::host::log::{LogBuffer, SharedLog};
use crate::plugin::host::stdio::LogStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The most table elements an instance may have, over all its tables.
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// The most core instances, memories and tables one store may create: a
/// component of any toolchain seen so far (componentize-py's included)
/// needs far fewer, and a cap keeps a hostile component from multiplying
/// them.
const MAX_INSTANCES: usize = 64;
const MAX_MEMORIES: usize = 16;
const MAX_TABLES: usize = 32;

/// The most bytes a guest may hand the host in one host call (a judge
/// prompt, a log line, texts to embed). wasmtime's default is 128 MiB;
/// nothing a plugin legitimately sends comes near this.
pub(crate) const HOSTCALL_FUEL: usize = 16 << 20;

/// The bounds of one plugin or agent. Every field has a safe default.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// The most linear memory an instance may have, in bytes (default 64 MiB).
    pub memory_bytes: usize,
    /// The wall-clock bound of one call (default 2 s). Time the guest spends
    /// waiting on a host capability (the judge, embeddings) does not count:
    /// those calls have their own timeouts.
    pub deadline: Duration,
    /// The wall-clock bound of instantiating (start functions, default 2 s).
    pub instantiation_deadline: Duration,
    /// An instruction budget per call, enforced with fuel on a separate
    /// engine (default none).
    pub fuel: Option<u64>,
    /// The longest verdict message kept, in bytes (default 4 KiB).
    pub max_message_bytes: usize,
    /// The largest verdict extras kept, in bytes of JSON (default 64 KiB).
    pub max_extras_bytes: usize,
    /// The most log lines kept per call (default 100).
    pub max_log_lines: usize,
    /// The most log bytes kept per call (default 16 KiB).
    pub max_log_bytes: usize,
    /// After this many faults in a row the plugin is marked failed and its
    /// remaining checks get an error verdict without being run (default 5).
    pub max_consecutive_faults: u32,
    /// How many judge or embeddings calls one `evaluate` call may make per
    /// check in its batch (default 4): the time they wait on the network
    /// does not count against the deadline, so their number is bounded.
    pub capability_calls_per_check: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            deadline: Duration::from_secs(2),
            instantiation_deadline: Duration::from_secs(2),
            fuel: None,
            max_message_bytes: 4 << 10,
            max_extras_bytes: 64 << 10,
            max_log_lines: 100,
            max_log_bytes: 16 << 10,
            max_consecutive_faults: 5,
            capability_calls_per_check: 4,
        }
    }
}

/// The data of every plugin or agent `Store`: the limiter, the capability
/// backends it was granted, the per-call log and WASI with nothing granted.
pub struct SandboxState {
    pub(crate) memory: MemoryLimiter,
    pub(crate) log: SharedLog,
    pub(crate) capabilities: Capabilities,
    pub(crate) clock: CallClock,
    /// Judge and embeddings calls the current call may still make.
    pub(crate) capability_calls_left: u32,
    deterministic: bool,
    wasi: Option<WasiCtx>,
    pub(crate) table: ResourceTable,
}

impl SandboxState {
    /// Fresh state for one instance.
    pub(crate) fn new(limits: &Limits, capabilities: Capabilities, deterministic: bool) -> Self {
        SandboxState {
            memory: MemoryLimiter::new(limits.memory_bytes),
            log: LogBuffer::shared(limits.max_log_lines, limits.max_log_bytes),
            capabilities,
            clock: CallClock::new(limits.deadline),
            capability_calls_left: 0,
            deterministic,
            wasi: None,
            table: ResourceTable::new(),
        }
    }
}

impl WasiView for SandboxState {
    /// WASI with nothing granted: no preopened directories, no environment,
    /// no arguments, no network (TCP, UDP and name lookups refused, every
    /// socket address denied), empty stdin, stdout and stderr into the
    /// plugin's capped log, clocks of millisecond resolution. A
    /// deterministic plugin gets fixed clocks and seeded randomness
    /// instead, so the same inputs always give the same verdicts.
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let deterministic = self.deterministic;
        let log = &self.log;
        let ctx = self.wasi.get_or_insert_with(|| {
            let mut builder = WasiCtx::builder();
            // The defaults already deny these; say so, so that a change of
            // defaults cannot grant them.
            builder
                .allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false)
                .socket_addr_check(|_, _| Box::pin(async { false }))
                .stdout(LogStream::stdout(log.clone()))
                .stderr(LogStream::stderr(log.clone()));
            if deterministic {
                use rand::SeedableRng;
                builder
                    .wall_clock(clocks::Fixed)
                    .monotonic_clock(clocks::Fixed)
                    .secure_random(rand::rngs::StdRng::seed_from_u64(DETERMINISTIC_SEED))
                    .insecure_random(rand::rngs::StdRng::seed_from_u64(DETERMINISTIC_SEED))
                    .insecure_random_seed(u128::from(DETERMINISTIC_SEED));
            } else {
                builder.wall_clock(clocks::Coarse).monotonic_clock(clocks::Coarse::monotonic());
            }
            builder.build()
        });
        WasiCtxView { ctx, table: &mut self.table }
    }
}

/// The seed of a deterministic plugin's randomness.
const DETERMINISTIC_SEED: u64 = 0x5eed;

/// Enforces the memory and table limits over all of an instance's memories
/// and tables together, and remembers a refusal, so that the trap it causes
/// can be reported as a memory or table fault. (A per-memory limit would
/// let a module with many memories, or many core instances, multiply it.)
pub(crate) struct MemoryLimiter {
    limit: usize,
    /// Bytes of linear memory granted so far, over every memory.
    used: usize,
    /// Table elements granted so far, over every table.
    elements: usize,
    exceeded: Option<Fault>,
}

impl MemoryLimiter {
    fn new(limit: usize) -> Self {
        MemoryLimiter { limit, used: 0, elements: 0, exceeded: None }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let total = self.used.saturating_sub(current).saturating_add(desired);
        if total > self.limit {
            self.exceeded = Some(Fault::Memory { limit: self.limit, requested: total });
            wasmtime::bail!("memory limit exceeded");
        }
        self.used = total;
        Ok(true)
    }

    fn table_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let total = self.elements.saturating_sub(current).saturating_add(desired);
        if total > MAX_TABLE_ELEMENTS {
            self.exceeded = Some(Fault::Table { limit: MAX_TABLE_ELEMENTS, requested: total });
            wasmtime::bail!("table limit exceeded");
        }
        self.elements = total;
        Ok(true)
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }
}

/// The wall-clock budget of the current call. Time spent waiting on the
/// network for a host capability (the judge, the embeddings backend) does
/// not count: epochs cannot interrupt a guest blocked in the host, and the
/// host bounds those calls with its own timeouts and the per-call budget of
/// capability calls. Without this, a guest would be stopped the moment a
/// slow judge answered. Cached answers and refusals cost the guest's own
/// time. The waited time is shared with the watchdog of `guest::call`,
/// which cancels a guest waiting in WASI (a sleep, a poll).
#[derive(Clone, Debug)]
pub(crate) struct CallClock {
    started: Instant,
    deadline: Duration,
    host_wait_nanos: Arc<AtomicU64>,
}

impl CallClock {
    /// A clock for a call starting now with `deadline` of guest time.
    pub(crate) fn new(deadline: Duration) -> Self {
        CallClock { started: Instant::now(), deadline, host_wait_nanos: Arc::new(AtomicU64::new(0)) }
    }

    /// Adds time the guest spent waiting on the network for the host.
    pub(crate) fn waited(&self, time: Duration) {
        let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        self.host_wait_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The guest's own time left, or `None` when it is spent.
    pub(crate) fn remaining(&self) -> Option<Duration> {
        let waited = Duration::from_nanos(self.host_wait_nanos.load(Ordering::Relaxed));
        let spent = self.started.elapsed().saturating_sub(waited);
        self.deadline.checked_sub(spent).filter(|left| !left.is_zero())
    }
}

/// Epoch ticks covering `time`, plus one: a deadline must not fire early.
fn ticks(time: Duration) -> u64 {
    let tick = crate::plugin::engine::EPOCH_TICK.as_millis().max(1);
    (time.as_millis().div_ceil(tick) + 1) as u64
}

/// Creates a store with the limiter installed, the hostcall fuel set, and
/// an epoch deadline that traps once the guest's own time is spent.
pub(crate) fn new_store(
    engine: &wasmtime::Engine,
    limits: &Limits,
    capabilities: Capabilities,
    deterministic: bool,
) -> Store<SandboxState> {
    let mut store = Store::new(engine, SandboxState::new(limits, capabilities, deterministic));
    store.limiter(|state| &mut state.memory);
    store.set_hostcall_fuel(HOSTCALL_FUEL);
    store.epoch_deadline_callback(|context| match context.data().clock.remaining() {
        Some(left) => Ok(UpdateDeadline::Continue(ticks(left))),
        None => Err(Trap::Interrupt.into()),
    });
    store
}

/// What one call may spend: its deadline, its fuel, and how many judge or
/// embeddings calls it may make.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallBudget {
    /// The guest time the call may take.
    pub deadline: Duration,
    /// The fuel it may burn, when fuel is metered.
    pub fuel: Option<u64>,
    /// The capability calls it may make.
    pub capability_calls: u32,
}

/// Arms the store's deadline, fuel budget and capability-call budget for
/// the next call, and returns the clock the call is measured by.
pub(crate) fn arm(store: &mut Store<SandboxState>, budget: CallBudget) -> CallClock {
    let clock = CallClock::new(budget.deadline);
    store.data_mut().clock = clock.clone();
    store.set_epoch_deadline(ticks(budget.deadline));
    if let Some(fuel) = budget.fuel {
        // Fuel is only enabled on the fuel engine; set_fuel fails elsewhere.
        let _ = store.set_fuel(fuel);
    }
    let state = store.data_mut();
    state.capability_calls_left = budget.capability_calls;
    state.log.lock().expect("the log is never poisoned").clear();
    if state.deterministic {
        // A fresh WASI context per call: the same inputs see the same clock
        // and the same random numbers however many calls came before.
        state.wasi = None;
    }
    clock
}

/// Names the cause of an error from a call or an instantiation.
pub(crate) fn classify(error: &wasmtime::Error, state: &SandboxState, deadline: Duration, fuel: Option<u64>) -> Fault {
    if let Some(fault) = &state.memory.exceeded {
        return fault.clone();
    }
    if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return Fault::Exit(exit.0);
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Fault::Deadline(deadline),
        Some(Trap::OutOfFuel) => Fault::Fuel(fuel.unwrap_or_default()),
        Some(Trap::StackOverflow) => Fault::StackOverflow,
        Some(Trap::UnreachableCodeReached) => {
            Fault::Panic(state.log.lock().expect("the log is never poisoned").panic_message())
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_and_tables_are_capped_together() {
        let mut limiter = MemoryLimiter::new(64 << 20);
        // Three memories of 20 MiB fit, a fourth does not, however small
        // each is on its own.
        for _ in 0..3 {
            assert!(limiter.memory_growing(0, 20 << 20, None).unwrap());
        }
        assert!(limiter.memory_growing(0, 20 << 20, None).is_err());
        assert_eq!(limiter.exceeded, Some(Fault::Memory { limit: 64 << 20, requested: 80 << 20 }));
        // Growing one memory counts only what it adds.
        let mut limiter = MemoryLimiter::new(64 << 20);
        assert!(limiter.memory_growing(0, 30 << 20, None).unwrap());
        assert!(limiter.memory_growing(30 << 20, 60 << 20, None).unwrap());
        assert!(limiter.memory_growing(60 << 20, 65 << 20, None).is_err());

        let mut limiter = MemoryLimiter::new(64 << 20);
        assert!(limiter.table_growing(0, 60_000, None).unwrap());
        assert!(limiter.table_growing(0, 40_000, None).unwrap());
        assert!(limiter.table_growing(40_000, 40_001, None).is_err());
        assert_eq!(limiter.exceeded, Some(Fault::Table { limit: MAX_TABLE_ELEMENTS, requested: 100_001 }));
    }

    #[test]
    fn exits_and_resource_refusals_say_what_happened() {
        assert_eq!(Fault::Exit(1).kind(), "exit");
        assert_eq!(
            Fault::Exit(1).to_string(),
            "called exit (with a failure status) instead of answering, and was stopped"
        );
        assert_eq!(
            Fault::Resources("table count too high at 100".into()).to_string(),
            "asked for more than the sandbox allows (table count too high at 100) and was stopped"
        );
    }
}
