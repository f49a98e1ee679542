//! Matcher plugins at run time: configuration, runtime, dispatch, the lazy registry, metrics against their references, conformance, caches, the precompiled built-ins, determinism.

pub mod caches;
pub mod conformance;
pub mod deterministic;
pub mod dispatch;
pub mod lazy_registry;
pub mod metrics;
pub mod plugin_config;
pub mod plugin_runtime;
pub mod precompiled;
