//! `assay run --replay DIR`: the answers a run recorded in its results
//! directory, checked again with the cases' current checks and no agent
//! asked; what has no recording is an error verdict naming it; a directory
//! that holds no run's results is a usage error naming the file and line.

use crate::util::{Served, assay, stderr, stdout};
use assay::check::Outcome;
use assay::errors::ErrorKind;
use assay::job::{CaseResult, Replay};
use assay::report::ResultsDir;
use assay::run::{EventKind, Reporter, RunEvent, RunOptions};
use assay::{Project, ProjectOptions};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A TCP proxy on 127.0.0.1 in front of a server's port, counting the HTTP
/// requests its clients send, whether or not the server is still up.
struct CountingProxy {
    url: String,
    requests: Arc<AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

/// What ends every HTTP/1.1 request line (JSON bodies hold no raw CR LF).
const REQUEST_LINE_END: &[u8] = b" HTTP/1.1\r\n";

impl CountingProxy {
    fn to(port: u16) -> CountingProxy {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        runtime.spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, port, counted.clone()));
            }
        });
        CountingProxy { url, requests, _runtime: runtime }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Passes bytes both ways between `client` and the server, counting the
/// request lines going to it (before it is asked, so that a request to a
/// server that is gone counts too).
async fn relay(client: TcpStream, port: u16, requests: Arc<AtomicUsize>) {
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = match TcpStream::connect(("127.0.0.1", port)).await {
        Ok(server) => {
            let (read, write) = server.into_split();
            (Some(read), Some(write))
        }
        Err(_) => (None, None),
    };
    let back = async {
        if let Some(from_server) = from_server.as_mut() {
            let _ = tokio::io::copy(from_server, &mut to_client).await;
        }
    };
    let forth = async {
        let (mut buffer, mut seen) = (vec![0; 16 << 10], Vec::new());
        loop {
            let n = match from_client.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            // What is kept of the last read is shorter than a line's end,
            // so no line is counted twice.
            seen.extend_from_slice(&buffer[..n]);
            let lines = seen.windows(REQUEST_LINE_END.len()).filter(|w| *w == REQUEST_LINE_END).count();
            requests.fetch_add(lines, Ordering::SeqCst);
            seen.drain(..seen.len().saturating_sub(REQUEST_LINE_END.len() - 1));
            let Some(to_server) = to_server.as_mut() else { break };
            if to_server.write_all(&buffer[..n]).await.is_err() {
                break;
            }
        }
        if let Some(to_server) = to_server.as_mut() {
            let _ = to_server.shutdown().await;
        }
    };
    tokio::join!(back, forth);
}

/// Writes each (name, text) under `dir`.
fn write_cases(dir: &Path, cases: &[(&str, &str)]) {
    for (name, text) in cases {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// `assay run CASES --results OUT ARGS…`, and the lines of
/// `OUT/results.jsonl` by case id.
fn run(cases: &Path, out: &Path, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    let mut args = vec!["run", cases.to_str().unwrap(), "--results", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let output = assay(&args);
    let mut lines: Vec<Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .map(|text| text.lines().map(|line| serde_json::from_str(line).unwrap()).collect())
        .unwrap_or_default();
    lines.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    (output, lines)
}

/// A results line without what differs from run to run: timings.
fn without_timings(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("duration_ms");
                map.remove("agent_ms");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// The line of case `id`.
fn case<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    lines.iter().find(|line| line["id"] == id).unwrap_or_else(|| panic!("no case `{id}` in {lines:#?}"))
}

/// The interactions of a case's sample `sample` over its `run`-th
/// connection.
fn interactions(line: &Value, sample: usize, run: usize) -> &Vec<Value> {
    line["samples"][sample]["runs"][run]["interactions"].as_array().unwrap()
}

#[test]
fn a_replay_gives_the_recorded_runs_verdicts_and_asks_no_agent() {
    let served = Served::start(&["echo", "flaky"]);
    let proxy = CountingProxy::to(served.port());
    let cases = tempfile::tempdir().unwrap();
    let long = format!("{}THE END", "word ".repeat(600));
    write_cases(
        cases.path(),
        &[
            (
                "greet.hocon",
                r#"{ "agent": "echo", "connections": ["http"], "interactions": [
                    { "text": "hello", "sly_data": { "who": "ann" },
                      "response": { "text": { "keywords": "hello" }, "sly_data": { "who": { "value": "ann" } },
                                    "structure": { "turn": { "value": 1 } } } },
                    { "text": "again", "response": { "text": { "value": "again" }, "structure": { "turn": { "value": 2 } } } } ] }"#,
            ),
            (
                "flaky.hocon",
                r#"{ "agent": "flaky", "connections": ["http"], "success_ratio": "2/3",
                     "interactions": [ { "text": "are you stable?", "response": { "text": { "value": "pass" } } } ] }"#,
            ),
            (
                "wrong.hocon",
                r#"{ "agent": "echo", "connections": ["http"],
                     "interactions": [ { "text": "yes", "response": { "text": { "value": "no" } } } ] }"#,
            ),
            (
                "both.hocon",
                r#"{ "agent": "echo", "connections": ["direct", "http"], "interactions": [
                    { "text": "a", "response": { "structure": { "turn": { "value": 1 } } } },
                    { "text": "b", "response": { "structure": { "turn": { "value": 2 } } } } ] }"#,
            ),
            (
                "long.hocon",
                &format!(
                    r#"{{ "agent": "echo", "connections": ["http"],
                         "interactions": [ {{ "text": "{long}", "response": {{ "text": {{ "keywords": "THE END" }} }} }} ] }}"#
                ),
            ),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let (recorded, first) = run(cases.path(), &out.path().join("first"), &["--agent-url", &proxy.url]);
    assert_eq!(recorded.status.code(), Some(1), "{}{}", stdout(&recorded), stderr(&recorded));
    let statuses = |lines: &[Value]| lines.iter().map(|l| (l["id"].clone(), l["status"].clone())).collect::<Vec<_>>();
    assert_eq!(
        statuses(&first),
        [("both", "passed"), ("flaky", "flaky"), ("greet", "passed"), ("long", "passed"), ("wrong", "failed")]
            .map(|(id, status)| (Value::from(id), Value::from(status)))
    );
    // greet 2 turns, flaky 3 samples, wrong 1, both 2 over http, long 1.
    assert_eq!(proxy.requests(), 9);
    // The whole answer is recorded: the text past any preview, the
    // conversation state.
    let long_answer = &interactions(case(&first, "long"), 0, 0)[0]["response"];
    assert_eq!(long_answer["text"], long.as_str());
    assert!(interactions(case(&first, "greet"), 0, 0)[0]["response"]["chat_context"].is_object());

    served.stop();
    let first_dir = out.path().join("first");
    let (replayed, second) = run(
        cases.path(),
        &out.path().join("second"),
        &["--replay", first_dir.to_str().unwrap(), "--agent-url", &proxy.url],
    );
    assert_eq!(replayed.status.code(), Some(1), "{}{}", stdout(&replayed), stderr(&replayed));
    assert_eq!(proxy.requests(), 9, "the replay asked an agent");
    let source = first_dir.join("results.jsonl");
    assert!(
        stdout(&replayed)
            .starts_with(&format!("Replaying 5 recorded cases of {}: no agent is asked\n", source.display())),
        "{}",
        stdout(&replayed)
    );
    // The same cases, samples, connections, interactions, checks, verdicts
    // and answers: all but the timings.
    assert_eq!(
        second.into_iter().map(without_timings).collect::<Vec<_>>(),
        first.into_iter().map(without_timings).collect::<Vec<_>>()
    );
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("second/summary.json")).unwrap()).unwrap();
    assert_eq!(
        (summary["passed"].clone(), summary["failed"].clone(), summary["flaky"].clone()),
        (3.into(), 1.into(), 1.into())
    );
}

/// Two passing cases for `greeter`, an in-process echo agent known only to
/// the recording run (a replay that asked it would get an error): `greet`
/// (two turns) and `solo`.
const GREET: &str = r#"{ "agent": "greeter", "interactions": [
    { "text": "hello", "response": { "text": { "keywords": "hello" } } },
    { "text": "again", "response": { "structure": { "turn": { "value": 2 } } } } ] }"#;
const SOLO: &str =
    r#"{ "agent": "greeter", "interactions": [ { "text": "alone", "response": { "text": { "value": "alone" } } } ] }"#;

/// Records a run of `cases` in `OUT/first`, with `greeter` the echo agent.
fn record(cases: &Path, out: &Path, extra: &[&str]) -> std::path::PathBuf {
    let first = out.join("first");
    let greeter = format!("greeter={}", crate::util::fixture("agents/echo/echo.wasm").display());
    let (output, lines) = run(cases, &first, &[&["--agent", greeter.as_str()], extra].concat());
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(lines.iter().all(|line| line["status"] == "passed"), "{lines:#?}");
    first
}

#[test]
fn an_edited_check_is_evaluated_on_the_recorded_answer() {
    let cases = tempfile::tempdir().unwrap();
    write_cases(cases.path(), &[("greet.hocon", GREET)]);
    let out = tempfile::tempdir().unwrap();
    let first = record(cases.path(), out.path(), &[]);

    write_cases(cases.path(), &[("greet.hocon", &GREET.replace(r#""keywords": "hello""#, r#""keywords": "goodbye""#))]);
    let (output, lines) = run(cases.path(), &out.path().join("second"), &["--replay", first.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let greet = case(&lines, "greet");
    assert_eq!(greet["status"], "failed");
    let interaction = &interactions(greet, 0, 0)[0];
    let check = &interaction["checks"][0];
    // The answer the check looked at is kept once, in the response.
    assert_eq!(
        (&check["key"], &check["expected"], &check["actual_is_answer"], &check["outcome"]),
        (&"keywords".into(), &"goodbye".into(), &true.into(), &"fail".into())
    );
    assert_eq!((&check.get("actual"), &interaction["response"]["text"]), (&None, &"hello".into()));
    assert!(check["message"].as_str().unwrap().contains("goodbye"), "{check}");
    assert_eq!(interactions(greet, 0, 0)[1]["checks"][0]["outcome"], "pass", "the unchanged check still passes");
}

#[test]
fn a_case_with_no_recording_is_an_error_naming_it_and_the_others_are_replayed() {
    let cases = tempfile::tempdir().unwrap();
    write_cases(cases.path(), &[("greet.hocon", GREET), ("solo.hocon", SOLO)]);
    let out = tempfile::tempdir().unwrap();
    let first = record(cases.path(), out.path(), &["--filter", "greet"]);

    let (output, lines) = run(cases.path(), &out.path().join("second"), &["--replay", first.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(case(&lines, "greet")["status"], "passed");
    let solo = case(&lines, "solo");
    assert_eq!(solo["status"], "error");
    assert_eq!(solo["error"]["kind"], "not-recorded");
    assert_eq!(
        solo["error"]["message"],
        format!(
            "case `solo` has no recording in `{}`\n\nConsider replaying the paths the recorded run was given (a case's id is its path below them), or running the case without --replay",
            first.join("results.jsonl").display()
        )
    );
    assert!(stdout(&output).contains("ERROR"), "{}", stdout(&output));
}

#[test]
fn an_interaction_sample_or_connection_beyond_the_recording_is_an_error_naming_it() {
    let cases = tempfile::tempdir().unwrap();
    write_cases(cases.path(), &[("greet.hocon", GREET), ("solo.hocon", SOLO), ("twice.hocon", SOLO)]);
    let out = tempfile::tempdir().unwrap();
    let first = record(cases.path(), out.path(), &[]);
    let source = first.join("results.jsonl").display().to_string();

    let third = r#"{ "text": "more", "response": { "text": { "value": "more" } } } ] }"#;
    write_cases(
        cases.path(),
        &[
            ("greet.hocon", &GREET.replace("] }", &format!(", {third}"))),
            ("solo.hocon", &SOLO.replace(r#""agent""#, r#""connections": ["direct", "http"], "agent""#)),
            ("twice.hocon", &SOLO.replace(r#""agent""#, r#""success_ratio": "2/2", "agent""#)),
        ],
    );
    let (output, lines) = run(cases.path(), &out.path().join("second"), &["--replay", first.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let error = |line: &Value, sample: usize, run: usize| {
        let last = interactions(line, sample, run).last().unwrap();
        assert_eq!(last["error"]["kind"], "not-recorded", "{line:#}");
        last["error"]["message"].as_str().unwrap().replace(&source, "SOURCE")
    };
    let consider = "\n\nConsider running the case without --replay to record it";

    let greet = case(&lines, "greet");
    assert_eq!(greet["status"], "error");
    let turns = interactions(greet, 0, 0);
    assert_eq!(turns.len(), 3);
    assert!(turns[..2].iter().all(|turn| turn["passed"] == true), "the recorded turns are checked: {greet:#}");
    assert_eq!(
        error(greet, 0, 0),
        format!(
            "case `greet` has no recording of interaction 3 of sample 0 over `direct` in `SOURCE` (the recording ends after interaction 2){consider}"
        )
    );

    let solo = case(&lines, "solo");
    assert_eq!(solo["samples"][0]["runs"][0]["passed"], true, "{solo:#}");
    assert_eq!(
        error(solo, 0, 1),
        format!(
            "case `solo` has no recording of sample 0 over `http` in `SOURCE` (sample 0 ran over `direct`){consider}"
        )
    );

    let twice = case(&lines, "twice");
    assert_eq!(twice["samples"][0]["passed"], true, "{twice:#}");
    assert_eq!(
        error(twice, 1, 0),
        format!("case `twice` has no recording of sample 1 in `SOURCE` (it holds 1 sample: 0){consider}")
    );
}

#[test]
fn a_results_directory_that_cannot_be_replayed_is_a_usage_error_naming_the_file_and_line() {
    let cases = tempfile::tempdir().unwrap();
    write_cases(cases.path(), &[("solo.hocon", SOLO)]);
    let out = tempfile::tempdir().unwrap();
    let empty = out.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let second = out.path().join("second");

    let (output, _) = run(cases.path(), &second, &["--replay", empty.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        format!(
            "error: failed to replay `{}`: No such file or directory (os error 2)\n\nConsider the results directory of an earlier `assay run` (it holds results.jsonl)\n",
            empty.join("results.jsonl").display()
        )
    );
    assert!(!second.exists(), "nothing was run");

    let first = record(cases.path(), out.path(), &[]);
    let recorded = std::fs::read_to_string(first.join("results.jsonl")).unwrap();
    let (output, _) = run(cases.path(), &first, &["--replay", first.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(first.join("results.jsonl")).unwrap(), recorded, "the recording is intact");
    assert_eq!(
        stderr(&output),
        format!(
            "error: --results `{}` is the directory --replay reads: a replay writes its results to another one\n",
            first.display()
        )
    );
    let results = first.join("results.jsonl");
    let line = std::fs::read_to_string(&results).unwrap();
    std::fs::write(&results, format!("{line}{}\n", &line[..line.len() / 2])).unwrap();
    let (output, _) = run(cases.path(), &second, &["--replay", first.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message
            .starts_with(&format!("error: failed to replay `{}`: line 2 is not a case's result: ", results.display())),
        "{message}"
    );
    assert!(!second.exists(), "nothing was run");
}

/// The results of the cases a run finished.
#[derive(Default)]
struct Finished(Vec<CaseResult>);

impl Reporter for Finished {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        if let EventKind::CaseFinished(case) = event.kind {
            self.0.push(case.clone());
        }
        Ok(())
    }
}

#[test]
fn the_library_replays_a_results_directory_given_in_the_run_options() {
    let cases = tempfile::tempdir().unwrap();
    write_cases(
        cases.path(),
        &[(
            "calc.hocon",
            r#"{ "agent": "calc", "interactions": [ { "text": "times", "sly_data": { "x": 2, "y": 3 },
                 "response": { "sly_data": { "equals": { "value": 6 } } } } ] }"#,
        )],
    );
    // `calc` is an agent of the recording project only.
    let open = |agents: Vec<(String, std::path::PathBuf)>| {
        Project::open(ProjectOptions {
            agents,
            no_cache: true,
            no_answer_cache: true,
            environment: Some(BTreeMap::new()),
            ..ProjectOptions::default()
        })
        .unwrap()
    };
    let recording = open(vec![("calc".into(), crate::util::fixture("agents/math_guy/math_guy.wasm"))]);
    let replaying = open(Vec::new());
    let run = |project: &Project, options: RunOptions, reporter: &mut dyn Reporter| {
        let files = project.discover(&[cases.path().to_owned()], None).unwrap();
        project.runner(options).unwrap().run_blocking(project.cases(files, None).unwrap(), reporter)
    };
    let out = tempfile::tempdir().unwrap();
    let mut results = ResultsDir::create(out.path()).unwrap();
    assert!(run(&recording, RunOptions::default(), &mut results).success(false));

    let mut asked = Finished::default();
    run(&replaying, RunOptions::default(), &mut asked);
    let error = asked.0[0].samples[0].runs[0].interactions[0].error.as_ref().unwrap();
    assert_eq!(error.kind, ErrorKind::UnknownAgent, "without the replay, `calc` is asked and unknown");

    let replay = Arc::new(Replay::read(out.path()).unwrap());
    let mut replayed = Finished::default();
    let options = RunOptions { replay: Some(replay), ..RunOptions::default() };
    assert!(run(&replaying, options, &mut replayed).success(false));
    let interaction = &replayed.0[0].samples[0].runs[0].interactions[0];
    assert_eq!(interaction.checks[0].verdict.outcome, Outcome::Pass);
    assert_eq!(interaction.response.as_ref().unwrap().sly_data.as_ref().unwrap()["equals"], 6.0);
}

/// A `results.jsonl` that is a link to a device, or a line with no end,
/// is refused at once, never read without bound.
#[cfg(unix)]
#[test]
fn a_recording_that_never_ends_is_refused() {
    let cases = tempfile::tempdir().unwrap();
    write_cases(cases.path(), &[("solo.hocon", SOLO)]);
    let out = tempfile::tempdir().unwrap();
    let zero = out.path().join("zero");
    std::fs::create_dir(&zero).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join("results.jsonl")).unwrap();
    let started = std::time::Instant::now();
    let (output, _) = run(cases.path(), &out.path().join("a"), &["--replay", zero.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("not a regular file"), "{}", stderr(&output));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    let long = out.path().join("long");
    std::fs::create_dir(&long).unwrap();
    let file = std::fs::File::create(long.join("results.jsonl")).unwrap();
    file.set_len(assay::job::MAX_RESULT_LINE_BYTES as u64 + 10).unwrap();
    let (output, _) = run(cases.path(), &out.path().join("b"), &["--replay", long.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("line 1 is not a case's result: it is longer than the 64 MiB"),
        "{}",
        stderr(&output)
    );
}
