//! The limits every plugin and agent instance runs under, the per-store
//! state that enforces them, and the translation of a trap into a [`Fault`]
//! that names its cause.

use crate::plugin::host::Capabilities;
use crate::plugin::host::log::LogBuffer;
use std::fmt;
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The most table elements an instance may grow to.
const MAX_TABLE_ELEMENTS: usize = 100_000;

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
        }
    }
}

/// Why a call into a component did not return normally.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// The wall-clock deadline fired.
    Deadline(Duration),
    /// The instance tried to grow its memory past the limit.
    Memory {
        /// The limit in bytes.
        limit: usize,
        /// The size asked for in bytes.
        requested: usize,
    },
    /// The fuel budget ran out.
    Fuel(u64),
    /// The call stack overflowed (runaway recursion).
    StackOverflow,
    /// The guest panicked (`unreachable`), with its panic message when it
    /// logged one.
    Panic(Option<String>),
    /// Any other trap, or a failure to instantiate.
    Trap(String),
    /// The component answered with something malformed.
    BadAnswer(String),
    /// The plugin faulted this many times in a row and is no longer called.
    Disabled(u32),
}

impl Fault {
    /// A short name for reports and results files: `deadline`, `memory`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Deadline(_) => "deadline",
            Fault::Memory { .. } => "memory",
            Fault::Fuel(_) => "fuel",
            Fault::StackOverflow => "stack-overflow",
            Fault::Panic(_) => "panic",
            Fault::Trap(_) => "trap",
            Fault::BadAnswer(_) => "bad-answer",
            Fault::Disabled(_) => "disabled",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Deadline(d) => write!(f, "exceeded its deadline of {} ms and was stopped", d.as_millis()),
            Fault::Memory { limit, requested } => write!(
                f,
                "exceeded its memory limit of {} (it asked for {}) and was stopped",
                mebibytes(*limit),
                mebibytes(*requested)
            ),
            Fault::Fuel(fuel) => write!(f, "ran out of its fuel budget of {fuel} units and was stopped"),
            Fault::StackOverflow => write!(f, "overflowed its call stack (runaway recursion?) and was stopped"),
            Fault::Panic(Some(message)) => write!(f, "panicked: {message}"),
            Fault::Panic(None) => write!(f, "panicked (wasm trap: unreachable)"),
            Fault::Trap(message) => write!(f, "trapped: {message}"),
            Fault::BadAnswer(message) => write!(f, "gave a malformed answer: {message}"),
            Fault::Disabled(n) => {
                write!(f, "is disabled after {n} faults in a row; its remaining checks were not run")
            }
        }
    }
}

fn mebibytes(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) { format!("{} MiB", bytes >> 20) } else { format!("{bytes} bytes") }
}

/// The data of every plugin or agent `Store`: the limiter, the capability
/// backends it was granted, the per-call log and WASI with nothing granted.
pub struct SandboxState {
    pub(crate) memory: MemoryLimiter,
    pub(crate) log: LogBuffer,
    pub(crate) capabilities: Capabilities,
    pub(crate) clock: CallClock,
    deterministic: bool,
    wasi: Option<WasiCtx>,
    table: ResourceTable,
}

impl SandboxState {
    /// Fresh state for one instance.
    pub(crate) fn new(limits: &Limits, capabilities: Capabilities, deterministic: bool) -> Self {
        SandboxState {
            memory: MemoryLimiter { limit: limits.memory_bytes, exceeded: None },
            log: LogBuffer::new(limits.max_log_lines, limits.max_log_bytes),
            capabilities,
            clock: CallClock { started: Instant::now(), deadline: limits.deadline, host_wait: Duration::ZERO },
            deterministic,
            wasi: None,
            table: ResourceTable::new(),
        }
    }
}

impl WasiView for SandboxState {
    /// WASI with nothing granted: no preopened directories, no environment,
    /// no arguments, no network (TCP, UDP and name lookups refused, every
    /// socket address denied), empty stdin, stdout and stderr discarded.
    /// A deterministic plugin also gets fixed clocks and seeded randomness,
    /// so the same inputs always give the same verdicts.
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let deterministic = self.deterministic;
        let ctx = self.wasi.get_or_insert_with(|| {
            let mut builder = WasiCtx::builder();
            // The defaults already deny these; say so, so that a change of
            // defaults cannot grant them.
            builder
                .allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false)
                .socket_addr_check(|_, _| Box::pin(async { false }));
            if deterministic {
                use rand::SeedableRng;
                builder
                    .wall_clock(FixedClock)
                    .monotonic_clock(FixedClock)
                    .secure_random(rand::rngs::StdRng::seed_from_u64(DETERMINISTIC_SEED))
                    .insecure_random(rand::rngs::StdRng::seed_from_u64(DETERMINISTIC_SEED))
                    .insecure_random_seed(u128::from(DETERMINISTIC_SEED));
            }
            builder.build()
        });
        WasiCtxView { ctx, table: &mut self.table }
    }
}

/// The seed of a deterministic plugin's randomness.
const DETERMINISTIC_SEED: u64 = 0x5eed;

/// The time a deterministic plugin sees: 1,000,000,000 s after the epoch
/// (2001-09-09), standing still.
pub const FIXED_WALL_CLOCK_SECS: u64 = 1_000_000_000;

/// A clock that never moves.
struct FixedClock;

impl wasmtime_wasi::HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::from_secs(FIXED_WALL_CLOCK_SECS)
    }
}

impl wasmtime_wasi::HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}

/// Enforces the memory limit and remembers a refusal, so that the trap it
/// causes can be reported as a memory fault.
pub(crate) struct MemoryLimiter {
    limit: usize,
    exceeded: Option<usize>,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.exceeded = Some(desired);
            wasmtime::bail!("memory limit exceeded");
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// The wall-clock budget of the current call. Time spent waiting in a host
/// capability (the judge, the embeddings backend) does not count: epochs
/// cannot interrupt a guest blocked in the host, and the host bounds those
/// calls with its own timeouts. Without this, a guest would be stopped the
/// moment a slow judge answered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallClock {
    started: Instant,
    deadline: Duration,
    host_wait: Duration,
}

impl CallClock {
    /// Adds time the guest spent waiting for the host.
    pub(crate) fn waited(&mut self, time: Duration) {
        self.host_wait += time;
    }

    /// The guest's own time left, or `None` when it is spent.
    fn remaining(&self) -> Option<Duration> {
        let spent = self.started.elapsed().saturating_sub(self.host_wait);
        self.deadline.checked_sub(spent).filter(|left| !left.is_zero())
    }
}

/// Epoch ticks covering `time`, plus one: a deadline must not fire early.
fn ticks(time: Duration) -> u64 {
    let tick = crate::plugin::engine::EPOCH_TICK.as_millis().max(1);
    (time.as_millis().div_ceil(tick) + 1) as u64
}

/// Creates a store with the limiter installed and an epoch deadline that
/// traps once the guest's own time is spent.
pub(crate) fn new_store(
    engine: &wasmtime::Engine,
    limits: &Limits,
    capabilities: Capabilities,
    deterministic: bool,
) -> Store<SandboxState> {
    let mut store = Store::new(engine, SandboxState::new(limits, capabilities, deterministic));
    store.limiter(|state| &mut state.memory);
    store.epoch_deadline_callback(|context| match context.data().clock.remaining() {
        Some(left) => Ok(UpdateDeadline::Continue(ticks(left))),
        None => Err(Trap::Interrupt.into()),
    });
    store
}

/// Arms the store's deadline (and fuel budget) for the next call.
pub(crate) fn arm(store: &mut Store<SandboxState>, deadline: Duration, fuel: Option<u64>) {
    store.data_mut().clock = CallClock { started: Instant::now(), deadline, host_wait: Duration::ZERO };
    store.set_epoch_deadline(ticks(deadline));
    if let Some(fuel) = fuel {
        // Fuel is only enabled on the fuel engine; set_fuel fails elsewhere.
        let _ = store.set_fuel(fuel);
    }
    let state = store.data_mut();
    state.log.clear();
    if state.deterministic {
        // A fresh WASI context per call: the same inputs see the same clock
        // and the same random numbers however many calls came before.
        state.wasi = None;
    }
}

/// Names the cause of an error from a call or an instantiation.
pub(crate) fn classify(error: &wasmtime::Error, state: &SandboxState, deadline: Duration, fuel: Option<u64>) -> Fault {
    if let Some(requested) = state.memory.exceeded {
        return Fault::Memory { limit: state.memory.limit, requested };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Fault::Deadline(deadline),
        Some(Trap::OutOfFuel) => Fault::Fuel(fuel.unwrap_or_default()),
        Some(Trap::StackOverflow) => Fault::StackOverflow,
        Some(Trap::UnreachableCodeReached) => Fault::Panic(state.log.panic_message()),
        Some(trap) => Fault::Trap(trap.to_string()),
        None => Fault::Trap(format!("{error:#}")),
    }
}
