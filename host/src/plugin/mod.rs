//! Matchers: the sandboxed components that answer assertion keys.
//!
//! The main type is the [`Registry`], which maps assertion keys to
//! [`LazyPlugin`]s: [`MatcherPlugin`]s known by their description and
//! compiled on first use. A plugin is a component of the
//! `assay:plugin/capable-matcher-plugin` world (version 0.2.0, or the
//! frozen 0.1.0, whose capability errors are strings) hosted by the sandbox
//! ([`crate::sandbox`]: runtime, limits, grants, compile cache); this
//! module keeps what is particular to matchers: `matcher.rs` (describe,
//! batched evaluation, output caps, score validation), `dispatch.rs` (the
//! planned checks on one response, one batch per plugin), `registry.rs`
//! (keys, labels, `[keys]` preferences, and what its plugins count in its
//! scope, `scope.rs`), `lazy.rs` (a plugin compiled on
//! first use), `builtin.rs` (the plugins embedded in the binary, with their
//! descriptions) and `first_party.rs` (the metric plugins that ship beside
//! it).

mod builtin;
mod dispatch;
mod first_party;
mod lazy;
mod matcher;
mod registry;
mod scope;

pub use builtin::{
    BUILTIN_MATCHERS, BuiltinPlugin, JAVASCRIPT_PLUGIN, PROMPTFOO_BUILTINS, PROMPTFOO_PLUGIN, PROMPTFOO_PYTHON_PLUGIN,
};
pub use dispatch::{
    PluginLog, ResponseView, UnknownKey, compute, computed_value, derive, evaluate, evaluate_one, verdict_of,
};
pub use first_party::{FIRST_PARTY_PLUGINS, FirstParty, first_party_for};
pub use lazy::LazyPlugin;
pub use matcher::{ActualValue, BatchOutput, CheckInput, Evaluation, EvaluationError, MatcherKey, MatcherPlugin};
pub use registry::Registry;
pub use scope::{FaultStreak, PluginScope, PluginScopes, SMALL_INPUT_BYTES};
