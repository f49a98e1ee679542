//! The sandbox every component runs in, whatever it is: a matcher plugin or
//! an agent.
//!
//! The main type is the [`Runtime`]: the process's wasmtime engines and
//! its [`CompileCache`]. On it, the component host (`component_host.rs`)
//! loads one component — checks its pin, compiles it, checks its imports
//! against its [`Grants`], links and pre-instantiates it — and keeps a pool
//! of its instances; each call runs under the component's [`Limits`] and
//! ends in an answer or a [`Fault`](crate::errors::Fault). `plugin/` and
//! `agent/` load their components through it ([`ComponentOptions`],
//! [`ComponentSource`]) and never touch a wasmtime store or linker.
//!
//! Files, from the ground up: `limits.rs`, `limiter.rs` and `call_clock.rs`
//! (the bounds of an instance and of one call), `policy.rs` (the imports a
//! component's grants allow), `cache.rs` (the compile cache),
//! `precompiled.rs` (the built-ins compiled when assay is built),
//! `component_file.rs` (reading a component, its source and sha256),
//! `engine_config.rs` (how every engine is configured), `engine.rs` (the
//! [`Runtime`]), `bindings.rs` (the only `bindgen!`s),
//! `host/` (the host side of every imported interface: log, judge,
//! embeddings, WASI's standard streams and clocks, each with its own
//! state), `state.rs` (the store's data, composed of those states),
//! `guest.rs` (how one call runs to its deadline), `hand_off.rs` (what a
//! guest's thread tells its owner while the guest waits in WASI, so that a
//! sleeping guest holds no CPU), `component_host.rs` and
//! `worlds.rs` (the host, and the worlds it hosts: matchers of every
//! contract version, and agents), `value.rs` (0.3.0's typed values to and
//! from JSON values, a guest's extras read as untrusted input).
//!
//! The WIT contracts live in `wit/plugin-0.3/plugin.wit` (package
//! `assay:plugin@0.3.0`: the expected value and the extras cross as typed
//! values), `wit/plugin-0.2/plugin.wit` (`assay:plugin@0.2.0`, frozen, still
//! linked: they cross as JSON text; its `judge` and `embeddings` fail with
//! a typed `capability-error`), `wit/plugin/plugin.wit` (`assay:plugin@0.1.0`,
//! frozen, still linked: its `judge` and `embeddings` fail with a sentence)
//! and `wit/agent/agent.wit` (`assay:agent@0.1.0`).

pub mod bindings;
mod cache;
mod call_clock;
mod component_file;
mod component_host;
mod engine;
mod engine_config;
mod guest;
pub(crate) mod hand_off;
pub mod host;
mod limiter;
mod limits;
mod policy;
pub mod precompiled;
mod state;
mod value;
mod worlds;

pub use cache::{CacheStatus, CompileCache};
pub use component_file::{ComponentFileError, ComponentSource, MAX_COMPONENT_BYTES, read_component_file, sha256_hex};
pub use component_host::ComponentOptions;
pub(crate) use component_host::{ComponentHost, Logged};
pub use engine::{CompileNotice, EPOCH_TICK, Runtime, SLOW_COMPILE_BYTES};
pub use host::clocks::FIXED_WALL_CLOCK_SECS;
pub use host::log::LogLine;
pub use host::{Answered, Capabilities, Grader};
pub use limits::Limits;
pub use policy::Grants;
pub(crate) use value::{MAX_DEPTH as MAX_EXTRAS_DEPTH, depth_of, size_of as value_size, value_of};
pub(crate) use worlds::{Answer, CheckArg, Extras, Matcher};
