//! Startup cost: creating the runtime, compiling components cold vs loading
//! them from the compile cache or from the artifacts the binary embeds, and
//! creating instances.
//!
//! Criterion benchmarks (ids `startup/...`):
//!
//! - `runtime/new`: `Runtime::new` (the engine, with the pooling allocator's
//!   reservation, and its epoch ticker thread).
//! - `load/NAME/embedded`: loading a built-in as a run does: from the
//!   native artifact the binary embeds (`sandbox/precompiled.rs`), then what
//!   a load does after (link, one instance, `describe`). NAME is each
//!   built-in matcher plugin (`stock`, ...: `MatcherPlugin::load`) or
//!   `agent-X` for each demo agent (`AgentComponent::load`). One runtime for
//!   all iterations.
//! - `load/NAME/cold`: the same component with a custom section appended
//!   (bytes with no embedded artifact), compiled with no cache: what a
//!   component of its size costs to compile.
//! - `load/NAME/cached`: that load with a filled `CompileCache` in a
//!   temporary directory (a verified artifact is deserialized instead of
//!   compiled).
//! - `start/cold` and `start/cached`: what `assay run` does for one case of
//!   one stock check, in-process: a runtime with a compile cache (a fresh
//!   empty directory each iteration for cold, a filled one for cached), the
//!   built-in registry (loaded on first use), the `echo` agent and the
//!   stock plugin loaded one after the other (from their embedded
//!   artifacts: cold compiles nothing), one chat and one check.
//! - `call/evaluate-warm`: one `keywords` check on a 100-byte text with an
//!   idle instance in the plugin's pool.
//! - `call/echo-chat`: one chat with the `echo` agent; agents get a fresh
//!   instance per call, so this is instantiation + call.
//!
//! Then, timed by hand (criterion cannot time one call after a costly
//! setup without running the setup tens of thousands of times), printed as
//! median / mean / p90 over N runs:
//!
//! - first evaluate on a freshly loaded plugin: it reuses the instance that
//!   answered `describe` during the load, so this is no instantiation;
//! - evaluate with a fresh instance: the plugin's pool is emptied first by a
//!   batch that faults (an actual larger than its memory limit, which
//!   discards the instance), so the next evaluate instantiates;
//! - evaluate with a warm instance, for comparison.
//!
//! Run: `cargo bench -p assay --bench startup -- --warm-up-time 1 --measurement-time 3`

use assay::agent::{AgentCatalog, AgentComponent, ChatRequest, DEMO_AGENTS};
use assay::plugin::{ActualValue, BUILTIN_MATCHERS, BuiltinPlugin, CheckInput, MatcherPlugin, PluginScope, Registry};
use assay::sandbox::precompiled::without_artifact;
use assay::sandbox::{CacheStatus, CompileCache, ComponentOptions, ComponentSource, Limits, Runtime};
use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};

const TEXT: &str =
    "The quick brown fox jumps over the lazy dog, and the dog does not mind it at all: it is a lazy dog.";

fn stock() -> BuiltinPlugin {
    *BUILTIN_MATCHERS.iter().find(|p| p.name == "stock").expect("the stock plugin is built in")
}

/// Options for a built-in plugin: the grants the built-in policy gives it.
fn builtin_options(plugin: &BuiltinPlugin) -> ComponentOptions {
    ComponentOptions { grants: plugin.grants, ..ComponentOptions::default() }
}

fn load_builtin(runtime: &Runtime, plugin: &BuiltinPlugin, options: ComponentOptions) -> MatcherPlugin {
    MatcherPlugin::load(runtime, ComponentSource::Builtin(plugin.name), plugin.bytes, options)
        .expect("the built-in plugin loads")
}

fn stock_options() -> ComponentOptions {
    builtin_options(&stock())
}

fn load_stock(runtime: &Runtime, options: ComponentOptions) -> MatcherPlugin {
    load_builtin(runtime, &stock(), options)
}

fn load_agent(runtime: &Runtime, name: &'static str, bytes: &[u8]) -> AgentComponent {
    AgentComponent::load(runtime, ComponentSource::Builtin(name), bytes, Limits::default()).expect("the agent loads")
}

/// One `keywords` check on [`TEXT`]; true when it passed.
fn one_check(plugin: &MatcherPlugin) -> bool {
    let output = plugin.evaluate(
        &[ActualValue::Text(TEXT)],
        &[CheckInput { key: "keywords", actual: 0, expected: &serde_json::json!("fox"), expected_json: "\"fox\"" }],
        &PluginScope::default(),
        None,
        None,
    );
    output.results[0].as_ref().expect("a verdict").pass
}

fn echo_request() -> ChatRequest {
    let sly_data = serde_json::json!({ "id": 7, "score": 0.9 }).as_object().cloned();
    ChatRequest { agent: "echo".into(), text: TEXT.into(), sly_data, ..ChatRequest::default() }
}

/// What `assay run` does for one case of one stock check, against `cache`
/// with the cache key in `key_file`.
fn start(cache: &std::path::Path, key_file: &std::path::Path) {
    let runtime =
        Runtime::with_cache(Limits::default().memory_bytes, Some(CompileCache::with_key_file(cache, key_file)));
    let registry = Registry::with_builtins(&runtime).expect("the built-ins are registered");
    let stock = registry.plugin_for("keywords").expect("stock has keywords");
    let catalog = AgentCatalog::with_demo_agents(runtime, Limits::default());
    let echo = catalog.get("echo").expect("echo loads").expect("echo is a demo agent");
    let messages = echo.chat(&echo_request(), None).expect("echo answers");
    assert!(!messages.is_empty());
    assert!(one_check(stock.get().expect("stock loads")));
}

fn startup(c: &mut Criterion) {
    let mut group = c.benchmark_group("startup");

    group.bench_function("runtime/new", |b| b.iter(|| black_box(Runtime::new(Limits::default().memory_bytes))));

    // Cold loads take hundreds of milliseconds: few samples, one run each.
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    let uncached = Runtime::new(Limits::default().memory_bytes);
    let cache_dir = tempfile::tempdir().expect("a temporary directory");
    // The cache key, outside the cache directories (never the user's own).
    let key_dir = tempfile::tempdir().expect("a temporary directory");
    let key_file = key_dir.path().join("secret.key");
    let cache = CompileCache::with_key_file(cache_dir.path(), &key_file);
    let cached = Runtime::with_cache(Limits::default().memory_bytes, Some(cache));
    // Fill the cache with the components as bytes it has no artifact for.
    let plugins: Vec<(BuiltinPlugin, Vec<u8>)> =
        BUILTIN_MATCHERS.iter().map(|plugin| (*plugin, without_artifact(plugin.bytes))).collect();
    let agents: Vec<(&'static str, &'static [u8], Vec<u8>)> =
        DEMO_AGENTS.iter().map(|(name, bytes)| (*name, *bytes, without_artifact(bytes))).collect();
    for (plugin, compiled) in &plugins {
        MatcherPlugin::load(&cached, ComponentSource::Builtin(plugin.name), compiled, builtin_options(plugin))
            .expect("the built-in plugin loads");
    }
    for (name, _, compiled) in &agents {
        load_agent(&cached, name, compiled);
    }
    assert_eq!(load_stock(&cached, stock_options()).cache_status(), CacheStatus::Embedded);

    for (plugin, compiled) in &plugins {
        let options = builtin_options(plugin);
        let load = |runtime: &Runtime, bytes: &[u8]| {
            MatcherPlugin::load(runtime, ComponentSource::Builtin(plugin.name), bytes, options.clone())
                .expect("the built-in plugin loads")
        };
        group.bench_function(format!("load/{}/embedded", plugin.name), |b| {
            b.iter(|| black_box(load(&uncached, plugin.bytes)))
        });
        group.bench_function(format!("load/{}/cold", plugin.name), |b| b.iter(|| black_box(load(&uncached, compiled))));
        assert_eq!(load(&cached, compiled).cache_status(), CacheStatus::Hit);
        group.bench_function(format!("load/{}/cached", plugin.name), |b| b.iter(|| black_box(load(&cached, compiled))));
    }
    for (name, bytes, compiled) in &agents {
        group.bench_function(format!("load/agent-{name}/embedded"), |b| {
            b.iter(|| black_box(load_agent(&uncached, name, bytes)))
        });
        group.bench_function(format!("load/agent-{name}/cold"), |b| {
            b.iter(|| black_box(load_agent(&uncached, name, compiled)))
        });
        group.bench_function(format!("load/agent-{name}/cached"), |b| {
            b.iter(|| black_box(load_agent(&cached, name, compiled)))
        });
    }

    group.bench_function("start/cold", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("a temporary directory"),
            |empty| start(empty.path(), &key_file),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("start/cached", |b| b.iter(|| start(cache_dir.path(), &key_file)));

    group.sample_size(50).sampling_mode(SamplingMode::Auto);
    let plugin = load_stock(&cached, stock_options());
    group.bench_function("call/evaluate-warm", |b| b.iter(|| black_box(one_check(&plugin))));
    let echo = load_agent(&cached, "echo", DEMO_AGENTS.iter().find(|(n, _)| *n == "echo").expect("echo").1);
    let request = echo_request();
    group.bench_function("call/echo-chat", |b| b.iter(|| black_box(echo.chat(&request, None).expect("echo answers"))));
    group.finish();

    fresh_instances(&cached);
}

/// Median, mean and p90 of `times`, in microseconds.
fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = times.iter().map(|&d| micros(d)).sum::<f64>() / times.len() as f64;
    let p90 = times[(times.len() * 9 / 10).min(times.len() - 1)];
    format!("median {:>8.1} µs   mean {mean:>8.1} µs   p90 {:>8.1} µs", micros(times[times.len() / 2]), micros(p90))
}

/// The instance measurements criterion cannot make (see the module doc).
fn fresh_instances(cached: &Runtime) {
    const RUNS: usize = 200;
    println!("\nInstances (timed by hand, {RUNS} runs each):");

    let mut first = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let plugin = load_stock(cached, stock_options());
        let started = Instant::now();
        assert!(one_check(&plugin));
        first.push(started.elapsed());
    }
    println!("  startup/instance/first-evaluate-fresh-plugin   {}", summary(&mut first));

    // A small memory limit makes the faulting batch cheap: the guest cannot
    // even allocate the actual.
    let limits = Limits { memory_bytes: 8 << 20, max_consecutive_faults: u32::MAX, ..Limits::default() };
    let plugin = load_stock(cached, ComponentOptions { limits, ..stock_options() });
    let too_big = "x".repeat(9 << 20);
    let fault = || {
        let output = plugin.evaluate(
            &[ActualValue::Text(&too_big)],
            &[CheckInput { key: "keywords", actual: 0, expected: &serde_json::json!("x"), expected_json: "\"x\"" }],
            &PluginScope::default(),
            None,
            None,
        );
        assert!(output.results[0].is_err(), "the oversized batch faults");
    };
    let mut fresh = Vec::with_capacity(RUNS);
    let mut warm = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        fault();
        let started = Instant::now();
        assert!(one_check(&plugin));
        fresh.push(started.elapsed());
        let started = Instant::now();
        assert!(one_check(&plugin));
        warm.push(started.elapsed());
    }
    println!("  startup/instance/evaluate-new-instance         {}", summary(&mut fresh));
    println!("  startup/instance/evaluate-warm-instance        {}", summary(&mut warm));
}

criterion_group!(benches, startup);
criterion_main!(benches);
