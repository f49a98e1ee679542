//! The built-ins compiled when assay is built (`sandbox/precompiled.rs`):
//! each artifact is the one this wasmtime compiles from its component today,
//! every small built-in has one, loading one compiles nothing on either
//! engine, and what the artifact does not fit (a fuel budget, other bytes)
//! compiles as before.

use crate::util::{assay_command, eval_one, root, stderr, stdout};
use assay::agent::DEMO_AGENTS;
use assay::plugin::{BUILTIN_MATCHERS, JAVASCRIPT_PLUGIN, MatcherPlugin, PROMPTFOO_BUILTINS, PROMPTFOO_PYTHON_PLUGIN};
use assay::sandbox::precompiled::{ARTIFACT_SUFFIX, PRECOMPILED, artifact, precompile, without_artifact};
use assay::sandbox::{CacheStatus, CompileCache, ComponentOptions, ComponentSource, Limits, Runtime};
use sha2::{Digest, Sha256};
use std::path::Path;

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

#[test]
fn every_artifact_is_what_this_wasmtime_compiles_from_its_component_and_is_embedded() {
    let fix =
        "run `cargo xtask build` (or `cargo run -p assay --example precompile_builtins`) and commit what it writes";
    for path in PRECOMPILED {
        let component = std::fs::read(root().join(format!("{path}.wasm"))).unwrap();
        let committed = std::fs::read(root().join(format!("{path}{ARTIFACT_SUFFIX}")))
            .unwrap_or_else(|e| panic!("{path}{ARTIFACT_SUFFIX}: {e}; {fix}"));
        assert!(committed == precompile(&component).unwrap(), "{path}{ARTIFACT_SUFFIX} is stale: {fix}");
        let embedded = artifact(&sha256(&component)).unwrap_or_else(|| panic!("{path}: not embedded; {fix}"));
        assert!(embedded == committed, "{path}: the binary embeds another artifact; rebuild it");
    }
}

#[test]
fn every_built_in_but_the_python_and_javascript_runners_has_an_artifact() {
    let matchers = BUILTIN_MATCHERS.iter().chain(PROMPTFOO_BUILTINS).map(|b| (b.name, b.bytes));
    for (name, bytes) in matchers.chain(DEMO_AGENTS.iter().copied()) {
        let runner = [JAVASCRIPT_PLUGIN.name, PROMPTFOO_PYTHON_PLUGIN.name].contains(&name);
        assert_eq!(artifact(&sha256(bytes)).is_some(), !runner, "{name}");
    }
}

/// A runtime whose compile cache is in `dir`.
fn cached_runtime(dir: &Path, largest_memory: usize) -> Runtime {
    let cache = CompileCache::with_key_file(dir.join("cache"), dir.join("secret.key"));
    Runtime::with_cache(largest_memory, Some(cache))
}

fn load_stock(runtime: &Runtime, bytes: &[u8], limits: Limits) -> MatcherPlugin {
    let options = ComponentOptions { limits, ..ComponentOptions::default() };
    MatcherPlugin::load(runtime, ComponentSource::Builtin("stock"), bytes, options).unwrap()
}

fn passes(plugin: &MatcherPlugin) -> bool {
    eval_one(plugin, "keywords", "the Beatles", "\"Beatles\"").results[0].as_ref().unwrap().pass
}

#[test]
fn a_built_in_loads_without_compiling_on_the_pooling_and_the_on_demand_engine() {
    let stock = BUILTIN_MATCHERS[0].bytes;
    let dir = tempfile::tempdir().unwrap();
    let pooling = cached_runtime(dir.path(), Limits::default().memory_bytes);
    // More memory than a pool slot holds: the engine allocates on demand.
    let on_demand = cached_runtime(dir.path(), 2 << 30);
    assert!(pooling.is_pooling() && !on_demand.is_pooling());
    for runtime in [&pooling, &on_demand] {
        let plugin = load_stock(runtime, stock, Limits::default());
        assert_eq!(plugin.cache_status(), CacheStatus::Embedded);
        assert!(passes(&plugin));
    }
    assert!(!dir.path().join("cache").exists(), "nothing was compiled, so nothing was cached");
}

#[test]
fn a_fuel_budget_or_other_bytes_compile_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = cached_runtime(dir.path(), Limits::default().memory_bytes);
    // Fuel metering changes the code: the artifact does not fit that engine.
    let fueled = load_stock(&runtime, BUILTIN_MATCHERS[0].bytes, Limits { fuel: Some(1 << 30), ..Limits::default() });
    assert_eq!(fueled.cache_status(), CacheStatus::Compiled);
    assert!(passes(&fueled));
    // One byte more than the built-in: no artifact is its.
    let other = load_stock(&runtime, &without_artifact(BUILTIN_MATCHERS[0].bytes), Limits::default());
    assert_eq!(other.cache_status(), CacheStatus::Compiled);
    assert!(passes(&other));
}

#[test]
fn a_first_run_of_the_built_ins_compiles_nothing() {
    let home = tempfile::tempdir().unwrap();
    let cases = tempfile::tempdir().unwrap();
    std::fs::write(
        cases.path().join("one.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "hello", "response": { "text": { "keywords": "hello" } } } ] }"#,
    )
    .unwrap();
    let output = assay_command()
        .args(["run", "--quiet", "--results"])
        .arg(home.path().join("results"))
        .arg(cases.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let components = home.path().join("cache").join("assay").join("components");
    let compiled: Vec<_> =
        std::fs::read_dir(&components).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    assert!(compiled.is_empty(), "stock and echo came compiled, yet the cache holds {compiled:?}");
}
