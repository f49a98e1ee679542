//! Deterministic plugins (`ComponentOptions::deterministic`): fixed WASI clocks
//! and seeded WASI randomness, so that the same inputs give the same
//! verdicts; and what a plugin sees without it. The plugin under test is the
//! WAT fixture `fixtures/plugins/wat/wasi-clock.wat`, whose scores are what it
//! read from `wasi:clocks/wall-clock` and `wasi:random/random`, scaled into
//! [0, 1] by powers of two (exact, and within the host's score clamp).

use crate::util::{eval_one, load};
use assay::plugin::{EvaluationError, MatcherPlugin};
use assay::sandbox::{ComponentOptions, Limits};
use std::time::{SystemTime, UNIX_EPOCH};

const WASI_CLOCK: &str = "plugins/wat/wasi-clock.wasm";

/// The wall-clock time of a deterministic plugin, in seconds since the epoch.
const FIXED_SECONDS: f64 = 1_000_000_000.0;

fn deterministic() -> MatcherPlugin {
    load(WASI_CLOCK, ComponentOptions { deterministic: true, ..ComponentOptions::default() }).unwrap()
}

fn nondeterministic() -> MatcherPlugin {
    load(WASI_CLOCK, ComponentOptions::default()).unwrap()
}

/// The score of one check of `key`, which must pass with `message`.
fn score(plugin: &MatcherPlugin, key: &str, message: &str) -> f64 {
    let output = eval_one(plugin, key, "", "null");
    assert_eq!(output.results.len(), 1);
    let evaluation = output.results[0].as_ref().unwrap();
    assert!(evaluation.pass);
    assert_eq!(evaluation.message, message);
    assert_eq!(evaluation.extras, None);
    evaluation.score.unwrap()
}

/// The plugin's wall-clock seconds (its score is seconds * 2^-32).
fn wall_clock_seconds(plugin: &MatcherPlugin) -> f64 {
    score(plugin, "wall_clock", "now") * 2f64.powi(32)
}

/// The plugin's random number (its score is (get-random-u64 >> 11) * 2^-53).
fn random(plugin: &MatcherPlugin) -> f64 {
    let score = score(plugin, "random", "random");
    assert!((0.0..1.0).contains(&score), "{score}");
    score
}

#[test]
fn the_fixture_describes_itself_and_rejects_unknown_keys() {
    let plugin = nondeterministic();
    assert_eq!((plugin.name(), plugin.version()), ("wasi-clock", "0.1.0"));
    let keys: Vec<&str> = plugin.keys().iter().map(|k| k.key.as_str()).collect();
    assert_eq!(keys, ["wall_clock", "random"]);
    let output = eval_one(&plugin, "sundial", "", "null");
    assert_eq!(output.results, [Err(EvaluationError::Rejected("unknown key".to_owned()))]);
}

#[test]
fn a_deterministic_plugin_sees_a_fixed_wall_clock() {
    let plugin = deterministic();
    assert_eq!(wall_clock_seconds(&plugin), FIXED_SECONDS);
    assert_eq!(wall_clock_seconds(&plugin), FIXED_SECONDS);
}

#[test]
fn a_deterministic_plugin_sees_the_same_randomness_in_every_instance() {
    let a = random(&deterministic());
    let b = random(&deterministic());
    assert_eq!(a, b, "two instances of a deterministic plugin drew different numbers");
}

#[test]
fn a_deterministic_plugin_sees_the_same_randomness_in_every_call() {
    // Calls reuse a pooled instance: its randomness must not depend on the
    // calls before.
    let plugin = deterministic();
    let a = random(&plugin);
    let b = random(&plugin);
    assert_eq!(a, b, "a second call to a deterministic plugin drew a different number");
}

#[test]
fn a_plugin_sees_the_real_wall_clock_by_default() {
    let plugin = nondeterministic();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    let seen = wall_clock_seconds(&plugin);
    assert!((seen - now).abs() <= 120.0, "the plugin saw {seen} s, the host {now} s since the epoch");
}

#[test]
fn a_plugin_sees_fresh_randomness_in_every_instance_by_default() {
    let a = random(&nondeterministic());
    let b = random(&nondeterministic());
    assert_ne!(a, b, "two instances drew the same 53 random bits");
}

#[test]
fn a_deterministic_plugins_timers_fire_at_once() {
    // `sleep` waits on a timer of u64::MAX nanoseconds: for a deterministic
    // plugin it fires at once, and the plugin answers "woke up".
    let limits = Limits { deadline: std::time::Duration::from_secs(2), ..Limits::default() };
    let plugin =
        load("plugins/wat/wasi-io.wasm", ComponentOptions { limits, deterministic: true, ..Default::default() })
            .unwrap();
    for key in ["sleep", "poll"] {
        let started = std::time::Instant::now();
        let output = eval_one(&plugin, key, "x", "1");
        let evaluation = output.results[0].as_ref().unwrap();
        assert_eq!(evaluation.message, "woke up", "{key}");
        assert!(started.elapsed() < std::time::Duration::from_millis(500), "{key} took {:?}", started.elapsed());
    }
    // Without `deterministic`, the same timer runs into the deadline.
    let limits = Limits { deadline: std::time::Duration::from_millis(200), ..Limits::default() };
    let plugin = load("plugins/wat/wasi-io.wasm", ComponentOptions { limits, ..Default::default() }).unwrap();
    let output = eval_one(&plugin, "sleep", "x", "1");
    assert!(
        matches!(
            &output.results[0],
            Err(assay::plugin::EvaluationError::Fault { fault: assay::errors::Fault::Deadline(_), .. })
        ),
        "{:?}",
        output.results[0]
    );
}
