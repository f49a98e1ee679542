//! The sandboxed plugin runtime: real components in real wasmtime. The
//! built-in stock plugin evaluates real checks; the hostile fixture plugin
//! misbehaves one way per key, and each fault is contained, named, bounded
//! in time, and leaves the host serving the next check.

use crate::util::{check_input, eval_in, eval_one, fixture, load, quick_limits, runtime};
use assay::check::{Outcome, Verdict};
use assay::errors::Fault;
use assay::plugin::{ActualValue, EvaluationError, PluginScope, Registry, SMALL_INPUT_BYTES};
use assay::sandbox::host::CapabilitySpend;
use assay::sandbox::host::judge::Judge;
use assay::sandbox::{Answered, ComponentOptions, ComponentSource, Grants, Limits};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn hostile(limits: Limits) -> assay::plugin::MatcherPlugin {
    load("plugins/hostile/hostile.wasm", ComponentOptions { limits, ..ComponentOptions::default() }).unwrap()
}

/// The fault every check of a batch got.
fn fault_of(output: &assay::plugin::BatchOutput) -> (String, Fault) {
    match &output.results[0] {
        Err(EvaluationError::Fault { plugin, fault }) => (plugin.clone(), fault.clone()),
        other => panic!("expected a fault, got {other:?}"),
    }
}

fn passes_count(plugin: &assay::plugin::MatcherPlugin) -> String {
    let output = eval_one(plugin, "count", "x", "1");
    output.results[0].as_ref().expect("count passes").message.clone()
}

#[test]
fn builtin_stock_plugin_evaluates_a_batch_sharing_actuals() {
    let registry = Registry::with_builtins(runtime()).unwrap();
    let stock = registry.plugin_for("keywords").unwrap().get().unwrap();
    assert_eq!(stock.name(), "stock");
    let actuals = [ActualValue::Text("The Beatles were from Liverpool"), ActualValue::Json("19481.0")];
    let checks = [
        check_input("keywords", 0, "\"Beatles\""),
        check_input("keywords", 0, "\"Stones\""),
        check_input("value", 1, "19481"),
        check_input("greater", 1, "20000"),
        check_input("less", 0, "5"),
    ];
    let output = stock.evaluate(&actuals, &checks, &PluginScope::default(), None, None);
    let verdicts: Vec<Verdict> = output.results.into_iter().map(|r| assay::plugin::verdict_of(r, false)).collect();
    let outcomes: Vec<Outcome> = verdicts.iter().map(|v| v.outcome).collect();
    assert_eq!(outcomes, [Outcome::Pass, Outcome::Fail, Outcome::Pass, Outcome::Fail, Outcome::Error]);
    assert_eq!(verdicts[0].message, "found \"Beatles\" in a 31-character string");
    assert_eq!(verdicts[2].message, "19481.0 equals 19481");
    assert_eq!(
        verdicts[4].message,
        "less cannot compare the string \"The Beatles were from Liverpool\" with the number 5: compare numbers with numbers and strings with strings"
    );
}

#[test]
fn an_infinite_loop_is_stopped_by_the_deadline_and_the_host_goes_on() {
    let plugin = hostile(quick_limits());
    let started = Instant::now();
    let output = eval_one(&plugin, "spin", "x", "1");
    let elapsed = started.elapsed();
    let (name, fault) = fault_of(&output);
    assert_eq!(name, "hostile");
    assert_eq!(fault, Fault::Deadline(Duration::from_millis(200)));
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?} for a 200 ms deadline");
    let message = output.results[0].as_ref().unwrap_err().to_string();
    assert_eq!(message, "plugin `hostile` exceeded its deadline of 200 ms and was stopped");
    assert_eq!(passes_count(&plugin), "call 1", "a fresh instance serves the next check");
}

#[test]
fn a_memory_bomb_is_stopped_by_the_memory_limit() {
    // A generous deadline: touching 64 MiB takes a while on a loaded
    // machine, and this test is about the memory limit, not the clock.
    let plugin = hostile(Limits { deadline: Duration::from_secs(20), ..quick_limits() });
    let started = Instant::now();
    let (_, fault) = fault_of(&eval_one(&plugin, "hog", "x", "1"));
    match fault {
        Fault::Memory { limit, requested } => {
            assert_eq!(limit, 64 << 20);
            assert!(requested > limit);
        }
        other => panic!("expected a memory fault, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(passes_count(&plugin), "call 1");
}

#[test]
fn runaway_recursion_is_a_stack_overflow() {
    let plugin = hostile(quick_limits());
    let (_, fault) = fault_of(&eval_one(&plugin, "recurse", "x", "1"));
    assert_eq!(fault, Fault::StackOverflow);
    assert_eq!(passes_count(&plugin), "call 1");
}

#[test]
fn a_panic_is_reported_with_its_message_and_the_next_call_gets_a_fresh_instance() {
    let plugin = hostile(quick_limits());
    assert_eq!(passes_count(&plugin), "call 1");
    assert_eq!(passes_count(&plugin), "call 2", "a healthy instance is reused");
    let (_, fault) = fault_of(&eval_one(&plugin, "panic", "x", "1"));
    match fault {
        Fault::Panic(Some(message)) => {
            assert!(message.ends_with("the hostile plugin panics on purpose"), "{message}");
            assert!(message.starts_with("at fixtures/plugins/hostile/src/lib.rs:"), "{message}");
        }
        other => panic!("expected a panic with its message, got {other:?}"),
    }
    assert_eq!(passes_count(&plugin), "call 1", "the trapped instance was discarded");
}

#[test]
fn a_100_mb_message_hits_the_memory_limit() {
    let plugin = hostile(quick_limits());
    let (_, fault) = fault_of(&eval_one(&plugin, "shout", "x", "1"));
    assert!(matches!(fault, Fault::Memory { .. }), "{fault:?}");
}

#[test]
fn a_100_mb_message_within_memory_is_refused_at_the_transfer_cap() {
    // The plugin has the memory for it, but the host never copies more
    // than 16 MiB out of a guest in one call.
    let limits = Limits { memory_bytes: 512 << 20, ..Limits::default() };
    let plugin = hostile(limits);
    let (name, fault) = fault_of(&eval_one(&plugin, "shout", "x", "1"));
    assert_eq!(name, "hostile");
    assert_eq!(
        fault,
        Fault::BadAnswer("it handed the host more than 16 MiB in one call, the most one call may".into())
    );
}

#[test]
fn long_messages_are_cut_on_a_character_boundary() {
    let plugin = hostile(quick_limits());
    let output = eval_one(&plugin, "long", "x", "1");
    let evaluation = output.results[0].as_ref().unwrap();
    assert!(evaluation.truncated);
    let kept = evaluation.message.strip_suffix(" … [message truncated by assay]").unwrap();
    assert_eq!(kept, "é".repeat(2048));
}

#[test]
fn an_extras_flood_is_dropped_and_flagged() {
    let plugin = hostile(quick_limits());
    let output = eval_one(&plugin, "flood", "x", "1");
    let evaluation = output.results[0].as_ref().unwrap();
    assert!(evaluation.truncated);
    assert_eq!(evaluation.extras, None);
    // A 1 MiB string, quoted.
    assert_eq!(evaluation.message, "extras [extras of 1048578 bytes dropped: the limit is 65536 bytes]");
}

#[test]
fn typed_extras_a_plugin_lays_out_wrong_are_dropped_saying_what_is_wrong() {
    let plugin = hostile(quick_limits());
    let dropped = [
        ("nodes_unfinished", "the value ends inside 1 unfinished lists or objects (1 nodes)"),
        ("nodes_leftover", "the value ends at node 0, but 1 nodes follow"),
        ("nodes_twice", "an object has the key \"k\" twice"),
        ("nodes_nan", "node 0 is the number NaN, which JSON cannot hold"),
        ("nodes_deep", "node 64 nests deeper than 64 lists and objects"),
    ];
    for (key, why) in dropped {
        let output = eval_one(&plugin, key, "x", "1");
        let evaluation = output.results[0].as_ref().unwrap();
        assert_eq!(evaluation.extras, None, "{key}");
        assert_eq!(evaluation.message, format!("{key} [extras dropped: not a well-formed value: {why}]"));
    }
    // 100,000 nodes are counted against the cap before any is read.
    let output = eval_one(&plugin, "nodes_wide", "x", "1");
    let evaluation = output.results[0].as_ref().unwrap();
    assert!(evaluation.truncated && evaluation.extras.is_none());
    // `[` `]` and 99,999 commas, and 100,000 `null`s.
    assert_eq!(evaluation.message, "nodes_wide [extras of 500002 bytes dropped: the limit is 65536 bytes]");
    let output = eval_one(&plugin, "nodes_fine", "x", "1");
    let extras = output.results[0].as_ref().unwrap().extras.clone();
    assert_eq!(extras, Some(serde_json::json!({"a": [1, -2, u64::MAX, 0.5, "é", null, true]})));
}

#[test]
fn expected_values_reach_a_0_3_plugin_typed_as_they_were_written() {
    // stock's `value` compares the actual with the expected value it was
    // given: every kind of node, nested, compares equal to itself.
    let registry = Registry::with_builtins(runtime()).unwrap();
    let stock = registry.plugin_for("value").unwrap().get().unwrap();
    let written =
        r#"{"n": [1, -2, 18446744073709551615, 0.5, 1e300, "é\u0000", null, true, [], {}], "z": {"a": {"b": [[]]}}}"#;
    let different =
        r#"{"n": [1, -2, 18446744073709551615, 0.5, 1e300, "é\u0000", null, true, [], {}], "z": {"a": {"b": [[0]]}}}"#;
    let expected = check_input("value", 0, written);
    let other = check_input("value", 0, different);
    let output = stock.evaluate(&[ActualValue::Json(written)], &[expected, other], &PluginScope::default(), None, None);
    let passes: Vec<bool> = output.results.iter().map(|r| r.as_ref().unwrap().pass).collect();
    assert_eq!(passes, [true, false], "{:?}", output.results);
}

#[test]
fn a_log_flood_is_capped() {
    let plugin = hostile(Limits::default());
    let output = eval_one(&plugin, "chatter", "x", "1");
    assert!(output.results[0].as_ref().unwrap().message == "logged 100000 lines");
    assert_eq!(output.log.len(), 100);
    assert_eq!(output.log[0].message, "line 0");
    assert_eq!(output.log_dropped, 100_000 - 100);
}

#[test]
fn a_plugin_that_faults_repeatedly_is_disabled_in_that_scope_only() {
    let limits = Limits { deadline: Duration::from_millis(50), max_consecutive_faults: 3, ..Limits::default() };
    let plugin = hostile(limits);
    let run = PluginScope::default();
    for _ in 0..3 {
        assert!(matches!(fault_of(&eval_in(&plugin, &run, "panic", "x", "1")).1, Fault::Panic(_)));
    }
    let started = Instant::now();
    let (_, fault) = fault_of(&eval_in(&plugin, &run, "count", "x", "1"));
    assert_eq!(fault, Fault::Disabled(3));
    assert!(started.elapsed() < Duration::from_millis(50), "a disabled plugin is not run");
    // Another run (or another client of `assay serve`) still has it.
    let other = PluginScope::default();
    assert!(eval_in(&plugin, &other, "count", "x", "1").results[0].is_ok());
}

#[test]
fn faults_on_inputs_larger_than_any_the_plugin_answered_never_disable_it() {
    let limits = Limits { deadline: Duration::from_millis(50), max_consecutive_faults: 3, ..Limits::default() };
    let plugin = hostile(limits);
    let run = PluginScope::default();
    let big = "x".repeat(SMALL_INPUT_BYTES + 1);
    for _ in 0..10 {
        assert!(matches!(fault_of(&eval_in(&plugin, &run, "panic", &big, "1")).1, Fault::Panic(_)));
    }
    assert!(eval_in(&plugin, &run, "count", "x", "1").results[0].is_ok(), "ten big inputs disabled it");
}

#[test]
fn one_batch_fault_gives_every_check_of_the_batch_an_error() {
    let plugin = hostile(quick_limits());
    let checks = [check_input("count", 0, "1"), check_input("panic", 0, "1")];
    let output = plugin.evaluate(&[ActualValue::Text("x")], &checks, &PluginScope::default(), None, None);
    assert_eq!(output.results.len(), 2);
    assert!(output.results.iter().all(|r| matches!(r, Err(EvaluationError::Fault { .. }))));
}

#[test]
fn an_import_without_its_grant_is_refused_naming_import_and_grant() {
    let error = load("plugins/judge-importer/judge-importer.wasm", ComponentOptions::default()).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("failed to load plugin `"), "{message}");
    assert!(
        message.contains("judge-importer.wasm`: it imports `assay:plugin/judge@0.1.0`, which its grants do not cover."),
        "{message}"
    );
    assert!(message.contains("grants = [\"judge\"]"), "{message}");
}

struct EchoJudge;

impl Judge for EchoJudge {
    fn complete(&self, prompt: &str, _: &CapabilitySpend) -> Answered<String> {
        Answered::at_once(Ok(if prompt.starts_with("\"say pass\"") { "pass".into() } else { "fail".into() }))
    }
}

#[test]
fn a_granted_judge_is_reachable_and_an_absent_one_explains_itself() {
    let grants = Grants { judge: true, ..Grants::default() };
    let plugin =
        load("plugins/judge-importer/judge-importer.wasm", ComponentOptions { grants, ..ComponentOptions::default() })
            .unwrap();
    let output = eval_one(&plugin, "ask_judge", "text", "\"say pass\"");
    assert_eq!(
        output.results[0],
        Err(EvaluationError::Rejected("no judge is configured: set [judge] in assay.toml or ASSAY_JUDGE_URL".into()))
    );

    let mut options = ComponentOptions { grants, ..ComponentOptions::default() };
    options.capabilities.judge = Some(Arc::new(EchoJudge));
    let plugin = load("plugins/judge-importer/judge-importer.wasm", options).unwrap();
    let output = eval_one(&plugin, "ask_judge", "text", "\"say pass\"");
    assert!(output.results[0].as_ref().unwrap().pass);
    let output = eval_one(&plugin, "ask_judge", "text", "\"say fail\"");
    assert!(!output.results[0].as_ref().unwrap().pass);
}

/// A judge that takes longer than the plugin's whole deadline to answer.
struct SlowJudge;

impl Judge for SlowJudge {
    fn complete(&self, prompt: &str, _: &CapabilitySpend) -> Answered<String> {
        let wait = Duration::from_millis(500);
        std::thread::sleep(wait);
        let answer = if prompt.starts_with("\"say spin\"") { "spin".into() } else { "pass".into() };
        Answered { answer: Ok(answer), waited: wait }
    }
}

#[test]
fn the_deadline_counts_guest_time_not_time_waiting_on_the_host() {
    let grants = Grants { judge: true, ..Grants::default() };
    let mut options = ComponentOptions { grants, limits: quick_limits(), ..ComponentOptions::default() };
    options.capabilities.judge = Some(Arc::new(SlowJudge));
    let plugin = load("plugins/judge-importer/judge-importer.wasm", options).unwrap();
    // 500 ms in the judge, 200 ms of deadline: the wait does not count.
    let output = eval_one(&plugin, "ask_judge", "text", "\"say pass\"");
    assert!(output.results[0].as_ref().unwrap().pass, "{:?}", output.results[0]);
    // After the call returns, the guest spins: its own time still runs out.
    let started = Instant::now();
    let (name, fault) = fault_of(&eval_one(&plugin, "ask_judge", "text", "\"say spin\""));
    assert_eq!(name, "judge-importer");
    assert_eq!(fault, Fault::Deadline(Duration::from_millis(200)));
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
}

#[test]
fn a_sha256_mismatch_refuses_to_load() {
    let options = ComponentOptions { sha256: Some("00".repeat(32)), ..ComponentOptions::default() };
    let message = load("plugins/hostile/hostile.wasm", options).unwrap_err().to_string();
    assert!(message.contains(&format!("but assay.toml pins {}; refusing to load it", "00".repeat(32))), "{message}");
}

#[test]
fn a_truncated_component_is_refused() {
    let bytes = std::fs::read(fixture("plugins/hostile/hostile.wasm")).unwrap();
    let path = fixture("plugins/hostile/hostile.wasm");
    let error = assay::plugin::MatcherPlugin::load(
        runtime(),
        ComponentSource::File(path),
        &bytes[..bytes.len() / 2],
        ComponentOptions::default(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("it is not a valid WebAssembly component"), "{error}");
}

#[test]
fn two_plugins_claiming_one_key_is_an_error_naming_both() {
    let mut registry = Registry::with_builtins(runtime()).unwrap();
    registry.add_labelled(hostile(quick_limits()), "mine").unwrap();
    let error = registry.add_labelled(hostile(quick_limits()), "theirs").unwrap_err().to_string();
    assert!(error.starts_with("two plugins claim the key `spin`: hostile (`"), "{error}");
    assert!(error.contains("[keys] spin = \"mine\" (or \"theirs\")"), "{error}");
}

#[test]
fn the_registry_suggests_close_keys_only() {
    let registry = Registry::with_builtins(runtime()).unwrap();
    assert_eq!(registry.suggest("keywordz").as_deref(), Some("keywords"));
    assert_eq!(registry.suggest("not_valeu").as_deref(), Some("not_value"));
    assert_eq!(registry.suggest("Greter").as_deref(), Some("greater"));
    assert_eq!(registry.suggest("banana"), None);
}

#[test]
fn a_score_that_is_not_a_number_in_the_unit_interval_is_a_malformed_answer() {
    let plugin = hostile(quick_limits());
    for (expected, shown) in [("\"nan\"", "NaN"), ("\"inf\"", "inf"), ("1.5", "1.5"), ("-0.25", "-0.25")] {
        let (name, fault) = fault_of(&eval_one(&plugin, "score", "x", expected));
        assert_eq!(name, "hostile");
        assert_eq!(fault, Fault::BadAnswer(format!("its score {shown} is not a number between 0 and 1")));
    }
    // The bounds themselves are scores.
    for expected in ["0", "1", "0.5"] {
        let output = eval_one(&plugin, "score", "x", expected);
        let score = output.results[0].as_ref().unwrap().score.unwrap();
        assert_eq!(score, expected.parse::<f64>().unwrap());
    }
}

/// A judge answering `again` from its cache: at once, and counting its
/// calls.
#[derive(Default)]
struct CachedAgain {
    calls: std::sync::atomic::AtomicUsize,
}

impl Judge for CachedAgain {
    fn complete(&self, _prompt: &str, _: &CapabilitySpend) -> Answered<String> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // A cache read takes a little time; none of it is a network wait.
        std::thread::sleep(Duration::from_millis(1));
        Answered::at_once(Ok("again".into()))
    }
}

#[test]
fn a_plugin_looping_on_cached_judge_answers_is_stopped_at_its_deadline() {
    let grants = Grants { judge: true, ..Grants::default() };
    // No cap on judge calls: only the deadline can stop the loop.
    let limits = Limits { capability_calls_per_check: u32::MAX, ..quick_limits() };
    let mut options = ComponentOptions { grants, limits, ..ComponentOptions::default() };
    let judge = Arc::new(CachedAgain::default());
    options.capabilities.judge = Some(judge.clone());
    let plugin = load("plugins/judge-importer/judge-importer.wasm", options).unwrap();
    let started = Instant::now();
    let (name, fault) = fault_of(&eval_one(&plugin, "ask_judge", "text", "\"loop\""));
    let elapsed = started.elapsed();
    assert_eq!((name.as_str(), fault), ("judge-importer", Fault::Deadline(Duration::from_millis(200))));
    assert!(elapsed < Duration::from_secs(2), "a 200 ms deadline took {elapsed:?}");
    assert!(judge.calls.load(std::sync::atomic::Ordering::Relaxed) > 10);
}

/// A judge answering `again` after waiting on the network, counting its
/// calls.
#[derive(Default)]
struct RemoteAgain {
    calls: std::sync::atomic::AtomicUsize,
}

impl Judge for RemoteAgain {
    fn complete(&self, _prompt: &str, _: &CapabilitySpend) -> Answered<String> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let wait = Duration::from_millis(5);
        std::thread::sleep(wait);
        Answered { answer: Ok("again".into()), waited: wait }
    }
}

#[test]
fn judge_calls_are_capped_per_check_in_an_evaluate_call() {
    let grants = Grants { judge: true, ..Grants::default() };
    let mut options = ComponentOptions { grants, limits: quick_limits(), ..ComponentOptions::default() };
    let judge = Arc::new(RemoteAgain::default());
    options.capabilities.judge = Some(judge.clone());
    let plugin = load("plugins/judge-importer/judge-importer.wasm", options).unwrap();
    let checks = [check_input("ask_judge", 0, "\"a\""), check_input("ask_judge", 0, "\"b\"")];
    let output = plugin.evaluate(&[ActualValue::Text("text")], &checks, &PluginScope::default(), None, None);
    // Four calls per check of the batch, eight in all; then refusals.
    assert_eq!(judge.calls.load(std::sync::atomic::Ordering::Relaxed), 8);
    let refused = "this evaluate call has used every judge call it may make (judge and embeddings calls together are capped per check in the batch); the call was refused";
    for result in &output.results {
        assert_eq!(result, &Err(EvaluationError::Rejected(refused.into())));
    }
}

#[test]
fn instances_the_pool_has_no_slot_for_are_made_on_demand() {
    // A pool of one instance slot: the first plugin's instance takes it, so
    // every other instance must be made without the pool.
    let runtime = assay::sandbox::Runtime::with_pool_slots(Limits::default().memory_bytes, None, 1);
    assert!(runtime.is_pooling());
    let registry = Registry::with_builtins(&runtime).unwrap();
    let stock = registry.plugin_for("keywords").unwrap().get().unwrap();
    let gist = registry.plugin_for("gist").unwrap().get().unwrap();
    let output = eval_one(stock, "keywords", "The Beatles were from Liverpool", "\"Beatles\"");
    assert!(output.results[0].as_ref().unwrap().pass);
    let output = eval_one(gist, "gist", "text", "\"criteria\"");
    assert_eq!(
        output.results[0],
        Err(EvaluationError::Rejected("gist needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL".into()))
    );
    // Many at once: each thread needs an instance of its own.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..20 {
                    let output = eval_one(stock, "keywords", "Liverpool", "\"Liverpool\"");
                    assert!(output.results[0].as_ref().unwrap().pass, "{:?}", output.results[0]);
                }
            });
        }
    });
}
