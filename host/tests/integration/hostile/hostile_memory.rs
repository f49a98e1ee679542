//! The memory cap counts the whole instance, on both engines: a plugin with
//! eleven memories, each under the 64 MiB default on its own but 400 MiB
//! together, and a plugin with 100 tables grown as far as they go, run by
//! `assay check` while the process's peak resident memory is measured.
//!
//! The on-demand engine runs every plugin when one plugin's memory limit is
//! over 1 GiB (here: a second plugin with `memory_mb = 2048`), and plugins
//! with a fuel budget. On the pooled engine, a component whose modules a
//! pool slot cannot hold (more than one memory) is compiled for the
//! on-demand engine, so it runs, and is capped, there too. A plugin with
//! more tables than a store may have is refused at load, naming it.

use crate::hostile::hostile_support::{
    Finished, HOSTILE_RUST, MAX_PEAK_RSS_MB, MULTI_MEMORY, Project, SLACK, TABLE_BOMB, assay_bounded, path, warm,
};
use assay::sandbox::Limits;
use serde_json::Value;

/// The default memory cap, in bytes.
const CAP: u64 = 64 << 20;

/// The bytes of host memory a table element takes.
const TABLE_ELEMENT_BYTES: u64 = 8;

/// The engines a plugin can run on, and the settings that select each.
const ENGINES: [(&str, &str, &str); 3] = [
    ("pooled", "", ""),
    // Another plugin's limit over 1 GiB puts every plugin on demand.
    ("on-demand", "", "[plugins.big]\npath = \"BIG\"\nmemory_mb = 2048\n"),
    ("fuel", "fuel = 100000000000\n", ""),
];

/// `assay check --key KEY` with `file` as the plugin `bomb` on `engine`.
fn check_on(engine: &(&str, &str, &str), file: &str, key: &str) -> Finished {
    let (_, settings, other) = engine;
    let project = Project::new(&format!(
        "[plugins.bomb]\npath = \"{}\"\n{settings}\n{}",
        path(file),
        other.replace("BIG", &path(HOSTILE_RUST))
    ));
    let config = project.config();
    // Warm what loads (the bomb itself may be refused on the pooled engine).
    let without_bomb = Project::new(&other.replace("BIG", &path(HOSTILE_RUST)));
    warm(&without_bomb.config());
    assay_bounded(&["check", "--config", &config, "--key", key, "--actual", "\"x\"", "--expected", "1", "--json"])
}

/// Runs `key` of `file` on every engine in parallel: each engine's name and
/// how the command ended.
fn on_every_engine(file: &str, key: &str) -> Vec<(&'static str, Finished)> {
    std::thread::scope(|scope| {
        let runs: Vec<_> =
            ENGINES.iter().map(|engine| (engine.0, scope.spawn(move || check_on(engine, file, key)))).collect();
        runs.into_iter().map(|(name, run)| (name, run.join().unwrap())).collect()
    })
}

/// What is wrong with how the bomb `plugin` ended: it must have finished in
/// time, stayed under the peak-memory bound, and either been refused at load
/// (naming its configuration and `what` it has too many of, when
/// `refusal_allowed`), or been given a `memory` error verdict naming it, or
/// a failing verdict for which `within_cap` holds.
fn problems(
    engine: &str,
    finished: &Finished,
    plugin: &str,
    refusal_allowed: bool,
    what: &str,
    within_cap: impl Fn(&Value) -> bool,
) -> Option<String> {
    let bound = Limits::default().deadline + SLACK;
    let problem = if finished.killed || finished.elapsed > bound {
        format!("it took {:.2?}", finished.elapsed)
    } else if finished.peak_rss_mb > MAX_PEAK_RSS_MB {
        format!("the process peaked at {} MiB of resident memory", finished.peak_rss_mb)
    } else if finished.peak_rss_mb == 0 && finished.elapsed > std::time::Duration::from_millis(50) {
        // A process running this long holds memory: none measured means
        // the measurement is broken, and the bound above checks nothing.
        format!("no resident memory was measured over {:.2?}", finished.elapsed)
    } else if finished.stdout.is_empty() {
        let named = finished.stderr.contains("[plugins.bomb]") && finished.stderr.contains(what);
        if refusal_allowed && named && finished.code != Some(0) {
            return None;
        }
        "it gave no verdict, and was not refused at load naming the plugin and the cause".to_owned()
    } else if finished.code != Some(1) {
        format!("the exit code is {:?}, not 1", finished.code)
    } else {
        let named = |verdict: &Value| {
            verdict["message"].as_str().is_some_and(|m| m.starts_with(&format!("plugin `{plugin}` ")))
        };
        match serde_json::from_str::<Value>(&finished.stdout) {
            Ok(verdict) if verdict["error_kind"] == "memory" && named(&verdict) => return None,
            Ok(verdict) if verdict["outcome"] == "fail" && within_cap(&verdict) => return None,
            Ok(verdict) => format!("the verdict is {verdict}"),
            Err(e) => format!("stdout is not one JSON verdict ({e})"),
        }
    };
    Some(format!("on the {engine} engine: {problem}\n{}", finished.describe()))
}

#[test]
fn eleven_memories_are_capped_together_on_every_engine() {
    let problems: Vec<String> = on_every_engine(MULTI_MEMORY, "memories")
        .iter()
        // Where the plugin loads it must get a memory verdict: its own
        // answer means it grew every memory, never within the cap.
        .filter_map(|(engine, finished)| problems(engine, finished, "multi-memory", false, "memor", |_| false))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn a_hundred_tables_are_capped_together_on_every_engine() {
    // The fixture's score is the number of elements its tables hold, times
    // 2^-32.
    let within_cap = |verdict: &Value| {
        verdict["score"].as_f64().is_some_and(|score| (score * 2f64.powi(32)) as u64 * TABLE_ELEMENT_BYTES <= CAP)
    };
    let problems: Vec<String> = on_every_engine(TABLE_BOMB, "tables")
        .iter()
        .filter_map(|(engine, finished)| problems(engine, finished, "table-bomb", true, "table", within_cap))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
