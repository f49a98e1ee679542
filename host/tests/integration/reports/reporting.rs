//! The event stream and its reporters end to end: every event of a real run
//! in order and on time, a reporter's failure cancelling the run (in the
//! library, and through the binary with a results file that cannot grow),
//! and a slow case shown while it runs.

use crate::util::{Served, assay, assay_command, runtime, stderr, stdout};
use assay::agent::{AgentCatalog, Agents, HttpAgents, HttpSettings};
use assay::formats::discover;
use assay::job::{CaseResult, CaseSource, load_cases};
use assay::plugin::Registry;
use assay::run::{EventKind, Reporter, RunEvent, RunOptions, RunSummary, Runner};
use assay::sandbox::Limits;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// What a reporter saw of one event, owned.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    RunStarted(usize),
    CaseStarted(String),
    Sample(String, u32, bool),
    Slow(String, Duration),
    CaseFinished(CaseResult),
    RunFinished(RunSummary),
}

/// Keeps every event with its time, and fails at the `fail_at`-th finished
/// case, if told to.
#[derive(Default)]
struct Record {
    seen: Vec<(Duration, Seen)>,
    fail_at: Option<usize>,
}

impl Reporter for Record {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        let seen = match event.kind {
            EventKind::RunStarted { cases } => Seen::RunStarted(cases),
            EventKind::CaseStarted { id } => Seen::CaseStarted(id.to_owned()),
            EventKind::SampleFinished { case, index, passed, .. } => Seen::Sample(case.to_owned(), index, passed),
            EventKind::CaseSlow { id, running } => Seen::Slow(id.to_owned(), running),
            EventKind::CaseFinished(case) => Seen::CaseFinished(case.clone()),
            EventKind::RunFinished(summary) => Seen::RunFinished(summary.clone()),
        };
        self.seen.push((event.elapsed, seen));
        let finished = self.seen.iter().filter(|(_, s)| matches!(s, Seen::CaseFinished(_))).count();
        match (&self.seen.last().unwrap().1, self.fail_at) {
            (Seen::CaseFinished(_), Some(at)) if finished == at => {
                Err(std::io::Error::other("write `the recorder`: it is full"))
            }
            _ => Ok(()),
        }
    }
}

/// Runs the cases under `dir` with the demo agents in process.
fn run(dir: &Path, options: RunOptions, reporter: &mut Record) -> RunSummary {
    let registry = Arc::new(Registry::with_builtins(runtime()).unwrap());
    let catalog = AgentCatalog::with_demo_agents(runtime().clone(), Limits::default());
    let agents = Agents::new(catalog, HttpAgents::new(HttpSettings::default()).unwrap());
    let files = discover(&[dir.to_path_buf()]).unwrap();
    let cases = CaseSource::loaded(load_cases(&files, registry.as_ref(), &Default::default(), None));
    Runner::new(registry, agents, options).run_blocking(cases, reporter)
}

/// Checks the shape of a recorded run: it starts and ends once, time never
/// goes back, and each case is started, then has exactly the samples its
/// result holds, then is finished once.
fn assert_well_formed(seen: &[(Duration, Seen)]) {
    assert!(matches!(seen.first(), Some((_, Seen::RunStarted(_)))), "{seen:?}");
    assert!(matches!(seen.last(), Some((_, Seen::RunFinished(_)))), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "elapsed times go back: {seen:?}");
    let mut open: Vec<(String, Vec<(u32, bool)>)> = Vec::new();
    for (_, event) in seen {
        match event {
            Seen::CaseStarted(id) => open.push((id.clone(), Vec::new())),
            Seen::Sample(id, index, passed) => {
                let case = open.iter_mut().find(|(open, _)| open == id).expect("a sample of a started case");
                case.1.push((*index, *passed));
            }
            Seen::CaseFinished(result) => {
                let at = open.iter().position(|(id, _)| *id == result.id).expect("a finished case was started");
                let (_, mut samples) = open.remove(at);
                samples.sort();
                let expected: Vec<(u32, bool)> = result.samples.iter().map(|s| (s.index, s.passed)).collect();
                assert_eq!(samples, expected, "the samples announced for {}", result.id);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "cases started and never finished: {open:?}");
}

#[test]
fn every_case_is_started_has_its_samples_and_is_finished_in_time_order() {
    let fixtures = crate::util::fixture("cases");
    let mut record = Record::default();
    let summary = run(&fixtures, RunOptions::default(), &mut record);
    assert!(summary.success(false), "{summary:?}");
    assert_well_formed(&record.seen);
    let (_, Seen::RunStarted(cases)) = &record.seen[0] else { unreachable!() };
    assert_eq!(*cases, summary.cases);
    let (elapsed, Seen::RunFinished(last)) = record.seen.last().unwrap() else { unreachable!() };
    assert_eq!(last, &summary);
    // The summary's duration is rounded to the microsecond.
    assert!(elapsed.as_secs_f64() * 1e3 + 0.0005 >= summary.duration_ms, "{elapsed:?} {}", summary.duration_ms);
    // The flaky case stopped after its samples 0, 1 and 2, and they were
    // each announced.
    let flaky: Vec<&Seen> = record
        .seen
        .iter()
        .map(|(_, s)| s)
        .filter(|s| matches!(s, Seen::Sample(id, ..) if id == "flaky/flaky"))
        .collect();
    assert_eq!(flaky.len(), 3, "{flaky:?}");
}

/// Writes `n` passing cases for the in-process echo agent.
fn passing_cases(dir: &Path, n: usize) {
    for i in 0..n {
        std::fs::write(
            dir.join(format!("case_{i:02}.hocon")),
            r#"{ "agent": "echo", "interactions": [ { "text": "hello", "response": { "text": { "keywords": "hello" } } } ] }"#,
        )
        .unwrap();
    }
}

#[test]
fn a_failing_reporter_cancels_the_run_and_the_cases_in_flight_are_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    passing_cases(dir.path(), 40);
    let mut record = Record { fail_at: Some(2), ..Record::default() };
    let options = RunOptions { jobs: 1, ..RunOptions::default() };
    let summary = run(dir.path(), options, &mut record);

    assert_eq!(summary.reporter_errors, ["write `the recorder`: it is full"]);
    assert!(summary.not_run > 0, "{summary:?}");
    assert_eq!(summary.cases + summary.not_run, 40, "{summary:?}");
    // Only the cases in flight ran after it: a case holds its place in
    // flight (2 per sample slot) until it is reported.
    assert!(summary.cases <= 2 + 2, "{summary:?}");
    assert!(summary.internal_errors.is_empty(), "{summary:?}");
    assert!(!summary.success(false));
    // The reporter that failed kept getting events (the runner records
    // every error; a ReporterSet is what drops a failed member).
    assert_well_formed(&record.seen);
    let (_, Seen::RunFinished(reported)) = record.seen.last().unwrap() else { unreachable!() };
    assert_eq!(reported.reporter_errors, summary.reporter_errors);
    assert_eq!(reported.not_run, summary.not_run);
}

#[cfg(unix)]
#[test]
fn a_results_file_that_cannot_grow_cancels_the_run_and_summary_json_says_so() {
    use std::os::unix::process::CommandExt;
    // A real write failure without root: a file size limit (RLIMIT_FSIZE)
    // on the child, with SIGXFSZ ignored so that a write past it fails
    // with EFBIG as on a full disk, instead of killing the process. The
    // limit is per file: results.jsonl, 16 KiB a line (each case's
    // sly_data comes back in its response), hits it after some 15 lines;
    // the small summary.json does not. No compile cache is written, and
    // wasmtime's memory images (memfds, which the limit covers too) stay
    // well under it: a component whose image outgrows it fails this test
    // loudly ("failed to load plugin …: File too large").
    const LIMIT: libc::rlim_t = 256 * 1024;
    const CASES: u64 = 40;
    let cases = tempfile::tempdir().unwrap();
    let sly_data = "x".repeat(16 * 1024);
    for i in 0..CASES {
        std::fs::write(
            cases.path().join(format!("case_{i:02}.hocon")),
            format!(
                r#"{{ "agent": "echo", "interactions": [ {{ "text": "hello", "sly_data": {{ "padding": "{sly_data}" }},
                     "response": {{ "text": {{ "keywords": "hello" }} }} }} ] }}"#
            ),
        )
        .unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("results");
    let mut command = assay_command();
    command.args(["run", "--no-cache", "--verbose", "-j", "1", "--results"]).arg(&results).arg(cases.path());
    // SAFETY: between fork and exec the child only calls signal and
    // setrlimit, both async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: LIMIT, rlim_max: LIMIT };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    let (out_text, err_text) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{out_text}{err_text}");

    let lines_path = results.join("results.jsonl");
    let failure = format!("write `{}`: File too large (os error 27)", lines_path.display());
    assert!(err_text.contains(&format!("error: failed to {failure}")), "{err_text}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["reporter_errors"], serde_json::json!([failure]), "{summary}");
    let (ran, not_run) = (summary["cases"].as_u64().unwrap(), summary["not_run"].as_u64().unwrap());
    assert!(not_run > 0, "{summary}");
    assert_eq!(ran + not_run, CASES, "{summary}");

    // The file holds whole lines only (the one that did not fit was taken
    // back), fewer than the cases that ran; the terminal reported them all.
    let lines = std::fs::read_to_string(&lines_path).unwrap();
    assert!(lines.len() as u64 <= LIMIT && lines.ends_with('\n'), "{} bytes", lines.len());
    let written = lines.lines().inspect(|l| drop(serde_json::from_str::<Value>(l).unwrap())).count() as u64;
    assert!(written < ran, "{written} lines for {ran} cases");
    assert_eq!(out_text.matches("  PASS [").count() as u64, ran, "{out_text}");
    assert!(out_text.contains(&format!("  CANCEL {not_run} test cases not run")), "{out_text}");
}

#[test]
fn a_case_slower_than_the_slow_timeout_is_shown_while_it_runs() {
    let served = Served::start(&["echo", "--latency-ms", "1100"]);
    let cases = tempfile::tempdir().unwrap();
    std::fs::write(
        cases.path().join("late.hocon"),
        r#"{ "agent": "echo", "connections": "http",
             "interactions": [ { "text": "hello", "response": { "text": { "keywords": "hello" } } } ] }"#,
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let args = |slow: &str| {
        let mut args = vec!["run", "--verbose", "--slow-timeout", slow, "--agent-url", &served.url, "--results"];
        args.push(out.path().to_str().unwrap());
        args.push(cases.path().to_str().unwrap());
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let output = assay(&args("0.5").iter().map(String::as_str).collect::<Vec<_>>());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    let lines: Vec<&str> = text.lines().collect();
    let at = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("{text}"));
    // Slow at 0.5 s and again at 1 s; finished after 1.1 s.
    let (first, second, passed) = (at("  SLOW [>  0.500s] late"), at("  SLOW [>  1.000s] late"), at("  PASS ["));
    assert!(first < second && second < passed, "{text}");

    let refused = assay(&args("0").iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("--slow-timeout 0 is not a positive number of seconds"), "{}", stderr(&refused));
}
