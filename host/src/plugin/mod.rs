//! Matchers as sandboxed WebAssembly components.
//!
//! The main type is the [`Registry`], which maps assertion keys to loaded
//! [`MatcherPlugin`]s; every plugin runs in the one [`Runtime`] of the
//! process, under [`Limits`] and with the capabilities its [`Grants`] allow.
//!
//! The WIT contract lives in `wit/plugin/plugin.wit` (package
//! `assay:plugin@0.1.0`) and `wit/agent/agent.wit` (`assay:agent@0.1.0`);
//! `bindings.rs` is the only place bindings are generated, `host/` holds the
//! host side of each imported interface (WASI's standard streams and clocks
//! included), `sandbox.rs` the limits, `guest.rs` how one call runs under
//! its deadline, `instances.rs` the pool of instances of one component
//! (matcher or agent), and `policy.rs` the capability check run before
//! anything of a component runs.

pub mod bindings;
mod builtin;
mod cache;
mod component_file;
mod engine;
mod first_party;
mod guest;
pub mod host;
pub(crate) mod instances;
mod matcher;
mod policy;
mod registry;
mod sandbox;

pub use builtin::{BUILTIN_MATCHERS, BuiltinPlugin};
pub use cache::{CacheStatus, CompileCache};
pub use component_file::{ComponentFileError, MAX_COMPONENT_BYTES, read_component_file};
pub use engine::{EPOCH_TICK, Runtime};
pub use first_party::{FIRST_PARTY_PLUGINS, FirstParty, first_party_for};
pub use host::clocks::FIXED_WALL_CLOCK_SECS;
pub use host::log::LogLine;
pub use host::{Answered, Capabilities};
pub use matcher::{
    ActualValue, BatchOutput, CheckInput, Evaluation, EvaluationError, MatcherKey, MatcherPlugin, PluginOptions,
    PluginSource, sha256_hex,
};
pub use policy::Grants;
pub(crate) use policy::check_imports;
pub use registry::Registry;
pub(crate) use sandbox::CallBudget;
pub use sandbox::{Limits, SandboxState};
