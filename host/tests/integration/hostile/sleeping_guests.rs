//! Issue 29, "A sleeping plugin stalls the run": a guest sleeping in WASI
//! holds no CPU thread, so the cases beside it run while it sleeps. The
//! sleeper is the WAT plugin `wasi-io` (`nap`: a legal 1 s sleep on a
//! monotonic-clock timer, then a failing verdict), run by the `assay`
//! binary over 1,000 ordinary cases on the in-process `echo` agent.

use crate::hostile::hostile_support::{Project, WASI_IO, assay_command, path, warm};
use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The ordinary cases, each passing at once.
const GOOD: usize = 1000;

/// A project with the `wasi-io` plugin and `extra` lines of assay.toml.
fn project(extra: &str) -> Project {
    let project = Project::new(&format!("[plugins.wasi-io]\npath = \"{}\"\n{extra}", path(WASI_IO)));
    warm(&project.config());
    project
}

/// A case of `echo` that passes: its answer is what it was sent.
fn good(project: &Project, id: &str) {
    project.simple_case(id, "echo", "hello", r#""value": "hello""#, None);
}

/// A case whose check sleeps 1 s in WASI and fails, `ratio` asking for its
/// samples.
fn sleeper(project: &Project, id: &str, ratio: &str) {
    project.case(
        id,
        &format!(
            r#"{{ "agent": "echo", "success_ratio": "{ratio}",
                 "interactions": [ {{ "text": "hello", "response": {{ "text": {{ "nap": "1 s" }} }} }} ] }}"#
        ),
    );
}

// See: issue 29. Before sleeping guests handed their CPU thread on, the
// sleepers took the run's CPU threads (one per CPU) a second at a time: ten
// sleepers per CPU kept every machine busy for about 10 s. Handed on, the
// sleeps overlap and the run takes about one. The bound leaves room for a
// loaded CI machine and still tells the two apart at a glance.
#[test]
fn a_thousand_cases_beside_ten_one_second_sleepers_per_cpu_finish_within_about_one_sleep() {
    let project = project("");
    let cpus = std::thread::available_parallelism().map_or(1, |cpus| cpus.get());
    let sleepers = 10 * cpus;
    // The sleepers spread among the others, so that they come while the
    // others run.
    let every = (GOOD + sleepers) / sleepers;
    for index in 0..GOOD + sleepers {
        let id = format!("case-{index:05}");
        if index % every == every / 2 && index / every < sleepers {
            sleeper(&project, &id, "1/1");
        } else {
            good(&project, &id);
        }
    }
    // At the default --jobs: a sleeping sample holds neither a CPU thread
    // nor its sample slot.
    let run = project.run(&[]);

    let bound = Duration::from_secs(3);
    assert!(run.finished.elapsed < bound, "the run took {:.2?}: {}", run.finished.elapsed, run.describe());
    // Every sleeper slept its second and woke up: the sleeps were real.
    assert!(run.finished.elapsed >= Duration::from_secs(1), "{}", run.describe());
    let (good, sleepers) = (GOOD as u64, sleepers as u64);
    assert_eq!((run.summary["passed"].as_u64(), run.summary["failed"].as_u64()), (Some(good), Some(sleepers)));
    let woke = run.results.iter().filter(|case| {
        case["samples"][0]["runs"][0]["interactions"][0]["checks"][0]["message"].as_str() == Some("woke up")
    });
    assert_eq!(woke.count() as u64, sleepers, "{}", run.describe());
}

/// A child killed (and reaped) when dropped, so that a failing test leaves
/// no run behind.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The cases `results.jsonl` in `dir` holds so far.
fn reported(dir: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap_or_default();
    // A line is whole once it ends in a newline: the last may be half
    // written.
    text.split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .map(|line| serde_json::from_str(line).expect("each finished line is JSON"))
        .collect()
}

// See: issue 29. Two sleepers that never reach their ratio sample for
// 100,000 s; before, they held both CPU threads of a two-core machine and
// no other case finished.
#[test]
fn cases_beside_two_sleepers_sampling_for_a_day_all_finish() {
    let project = project("[cases]\nmax_samples = 100000\n");
    // The sleepers come first.
    sleeper(&project, "a-sleeper-0", "1/100000");
    sleeper(&project, "a-sleeper-1", "1/100000");
    for index in 0..GOOD {
        good(&project, &format!("b-good-{index:04}"));
    }
    let results = project.path("results");
    let config = project.config();
    let cases = project.path("cases");
    let mut command =
        assay_command(&["run", cases.to_str().unwrap(), "--config", &config, "--results", results.to_str().unwrap()]);
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let started = Instant::now();
    let child = KillOnDrop(command.spawn().expect("failed to start assay"));

    let bound = Duration::from_secs(30);
    let mut passed = 0;
    while started.elapsed() < bound {
        let cases = reported(&results);
        passed = cases.iter().filter(|case| case["status"] == "passed").count();
        if passed == GOOD {
            // The sleepers are still sampling: neither has been reported.
            assert_eq!(cases.len(), GOOD, "{cases:?}");
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = started.elapsed();
    drop(child);
    assert_eq!(passed, GOOD, "{passed} of {GOOD} cases finished in {took:.2?} beside two sleepers");
}
