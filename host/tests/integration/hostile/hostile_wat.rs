//! Hostile plugins that cannot be written in Rust, hand-written in WAT
//! (`fixtures/plugins/wat/`, assembled by `cargo xtask build`): a core module
//! whose start function never returns, and a component reaching for files
//! and sockets through WASI. Each is otherwise a valid matcher plugin.

use crate::util::{eval_one, fixture, load, quick_limits, runtime};
use assay::errors::{ComponentLoadErrorKind, Fault};
use assay::plugin::Registry;
use assay::sandbox::bindings::matcher_0_1::CapableMatcherPluginPre;
use assay::sandbox::bindings::matcher_0_1::assay::plugin::log::Level;
use assay::sandbox::bindings::matcher_types::{Actual, Check};
use assay::sandbox::{ComponentOptions, Grants, Limits};
use std::time::{Duration, Instant};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};

const START_LOOP: &str = "plugins/wat/start-loop.wasm";
const WASI_FS: &str = "plugins/wat/wasi-fs.wasm";

#[test]
fn a_start_function_that_never_returns_is_stopped_by_the_instantiation_deadline() {
    let limit = Duration::from_millis(200);
    let limits = Limits { instantiation_deadline: limit, ..quick_limits() };
    let started = Instant::now();
    let error = load(START_LOOP, ComponentOptions { limits, ..ComponentOptions::default() }).unwrap_err();
    let elapsed = started.elapsed();

    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?} for a {limit:?} instantiation deadline");
    match &error.kind {
        ComponentLoadErrorKind::Instantiate(Fault::Deadline(deadline)) => assert_eq!(*deadline, limit),
        other => panic!("expected an instantiation deadline fault, got {other:?}"),
    }
    let message = error.to_string();
    assert!(message.starts_with("failed to load plugin `"), "{message}");
    assert!(
        message.ends_with("start-loop.wasm`: instantiating it exceeded its deadline of 200 ms and was stopped"),
        "{message}"
    );

    // The host goes on: the built-in plugin still loads and evaluates.
    let registry = Registry::with_builtins(runtime()).unwrap();
    let stock = registry.plugin_for("keywords").unwrap().get().unwrap();
    let output = eval_one(stock, "keywords", "The Beatles were from Liverpool", "\"Beatles\"");
    let evaluation = output.results[0].as_ref().unwrap();
    assert!(evaluation.pass);
    assert_eq!(evaluation.message, "found \"Beatles\" in a 31-character string");
}

#[test]
fn wasi_files_and_sockets_are_linked_with_nothing_granted() {
    let all = Grants { log: true, judge: true, embeddings: true };
    for grants in [Grants::default(), all] {
        let plugin = load(WASI_FS, ComponentOptions { grants, ..ComponentOptions::default() }).unwrap();
        let output = eval_one(&plugin, "wasi_fs", "anything", "true");
        let evaluation = output.results[0].as_ref().unwrap();
        assert_eq!(evaluation.message, "found no preopened directory, and creating a TCP socket was refused");
        assert!(evaluation.pass);
    }
}

/// The imports and exports of a fixture component, by name.
fn interfaces(engine: &Engine, component: &Component) -> (Vec<String>, Vec<String>) {
    let ty = component.component_type();
    let imports = ty.imports(engine).map(|(name, _)| name.to_owned()).collect();
    let exports = ty.exports(engine).map(|(name, _)| name.to_owned()).collect();
    (imports, exports)
}

#[test]
fn the_wat_fixtures_are_matcher_plugins_but_for_their_one_fault() {
    let engine = Engine::default();
    let start_loop = Component::from_file(&engine, fixture(START_LOOP)).unwrap();
    let wasi_fs = Component::from_file(&engine, fixture(WASI_FS)).unwrap();
    let (imports, exports) = interfaces(&engine, &start_loop);
    assert!(imports.iter().all(|i| i.starts_with("assay:plugin/")), "{imports:?}");
    assert!(exports.contains(&"assay:plugin/matcher@0.1.0".to_owned()), "{exports:?}");
    let (imports, exports) = interfaces(&engine, &wasi_fs);
    let foreign: Vec<&String> = imports.iter().filter(|i| !i.starts_with("assay:plugin/")).collect();
    assert!(foreign.contains(&&"wasi:filesystem/preopens@0.2.0".to_owned()), "{foreign:?}");
    assert!(foreign.contains(&&"wasi:sockets/tcp-create-socket@0.2.0".to_owned()), "{foreign:?}");
    assert!(exports.contains(&"assay:plugin/matcher@0.1.0".to_owned()), "{exports:?}");

    // Outside assay's sandbox, given a directory and the network, wasi-fs
    // finds both and says so: its probe is real.
    let mut linker = Linker::<Permissive>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).unwrap();
    linker
        .root()
        .instance("assay:plugin/log@0.1.0")
        .unwrap()
        .func_wrap("emit", |_, (_, _): (Level, String)| Ok(()))
        .unwrap();
    let granted = tempfile::tempdir().unwrap();
    let mut wasi = WasiCtx::builder();
    wasi.preopened_dir(granted.path(), "data", FsPerms::ReadOnly).unwrap();
    wasi.inherit_network().allow_tcp(true);
    let state = Permissive { wasi: wasi.build(), table: ResourceTable::new() };
    let pre = CapableMatcherPluginPre::new(linker.instantiate_pre(&wasi_fs).unwrap()).unwrap();
    let mut store = Store::new(&engine, state);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let plugin = runtime.block_on(pre.instantiate_async(&mut store)).unwrap();
    let matcher = plugin.assay_plugin_matcher();
    let info = runtime.block_on(matcher.call_describe(&mut store)).unwrap();
    assert_eq!((info.name.as_str(), info.version.as_str()), ("wasi-fs", "0.2.0"));
    assert_eq!(info.matchers.len(), 1);
    assert_eq!(info.matchers[0].key, "wasi_fs");

    let actuals = [Actual::Text("x"), Actual::Json("[1, 2]")];
    let checks =
        [Check { key: "wasi_fs", actual: 0, expected: "\"x\"" }, Check { key: "wasi_fs", actual: 1, expected: "2" }];
    let results = runtime.block_on(matcher.call_evaluate(&mut store, &actuals, &checks)).unwrap();
    assert_eq!(results.len(), 2);
    for result in results {
        let verdict = result.unwrap();
        assert!(!verdict.pass);
        assert_eq!(verdict.message, "WASI gave it a preopened directory or a TCP socket");
    }
}

/// WASI with a directory and the network granted: what assay never gives.
struct Permissive {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Permissive {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}
