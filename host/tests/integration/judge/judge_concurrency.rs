//! How many requests the judge has in flight: `[judge] concurrency` (default
//! 16, `ASSAY_JUDGE_CONCURRENCY`) bounds them, the `gist` checks of one
//! response are asked at once rather than in turn, and a value that is no
//! whole number of requests is refused naming the key. The judge is a real
//! OpenAI-compatible server on 127.0.0.1 that answers after a pause and
//! counts the requests it holds at once.

use crate::util::{assay_command, stderr, stdout};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// A judge answering `pass` to every request after `PAUSE`, on keep-alive
/// connections, counting the requests in flight.
struct CountingJudge {
    url: String,
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    answered: Arc<AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

/// How long the judge takes to answer: long enough that requests sent at
/// once are seen at once.
const PAUSE: Duration = Duration::from_millis(150);

impl CountingJudge {
    fn start() -> CountingJudge {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://127.0.0.1:{}/v1", listener.local_addr().unwrap().port());
        let (now, most, answered) = (Arc::default(), Arc::default(), Arc::default());
        let counters: (Arc<AtomicUsize>, Arc<AtomicUsize>, Arc<AtomicUsize>) =
            (Arc::clone(&now), Arc::clone(&most), Arc::clone(&answered));
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (now, most, answered) = (counters.0.clone(), counters.1.clone(), counters.2.clone());
                tokio::spawn(async move {
                    let mut stream = BufReader::new(stream);
                    loop {
                        let mut length = 0;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                                return;
                            }
                            if line == "\r\n" {
                                break;
                            }
                            if let Some((name, value)) = line.split_once(':')
                                && name.eq_ignore_ascii_case("content-length")
                            {
                                length = value.trim().parse().unwrap();
                            }
                        }
                        let mut body = vec![0; length];
                        if stream.read_exact(&mut body).await.is_err() {
                            return;
                        }
                        let in_flight = now.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(in_flight, Ordering::SeqCst);
                        tokio::time::sleep(PAUSE).await;
                        now.fetch_sub(1, Ordering::SeqCst);
                        answered.fetch_add(1, Ordering::SeqCst);
                        let answer = r#"{"choices":[{"message":{"role":"assistant","content":"pass"}}]}"#;
                        let response = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                            answer.len()
                        );
                        if stream.get_mut().write_all(response.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        CountingJudge { url, now, most, answered, _runtime: runtime }
    }

    /// The most requests it ever held at once.
    fn most_in_flight(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }
}

/// Writes `cases` cases, each with `checks` `gist` checks on the echo
/// agent's answer (every prompt different), and an assay.toml whose
/// `[judge]` section is the judge's URL plus `extra`.
fn suite(dir: &Path, cases: usize, checks: usize, judge: &CountingJudge, extra: &str) {
    std::fs::create_dir_all(dir.join("cases")).unwrap();
    for case in 0..cases {
        let criteria: Vec<String> = (0..checks).map(|k| format!("\"say pass ({case}.{k})\"")).collect();
        std::fs::write(
            dir.join(format!("cases/c{case:03}.hocon")),
            format!(
                r#"{{ "agent": "echo", "interactions": [ {{ "text": "request {case}", "response": {{ "text": {{ "gist": [{}] }} }} }} ] }}"#,
                criteria.join(", ")
            ),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("assay.toml"),
        format!("[judge]\nurl = \"{}\"\nmodel = \"m\"\nmax_calls = 10000\n{extra}", judge.url),
    )
    .unwrap();
}

/// `assay run` on the suite in `dir`, with `env` set.
fn run(dir: &Path, env: &[(&str, &str)]) -> std::process::Output {
    run_with(dir, env, &[])
}

/// [`run`] with more arguments.
fn run_with(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let results = dir.join("results");
    let mut command = assay_command();
    command
        .args(["run", "--no-judge-cache", "--quiet", "--config"])
        .arg(dir.join("assay.toml"))
        .arg("--results")
        .arg(&results)
        .arg(dir.join("cases"))
        .args(args)
        .env_remove("ASSAY_JUDGE_URL")
        .env_remove("ASSAY_JUDGE_MODEL")
        .env_remove("ASSAY_JUDGE_CONCURRENCY");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn the_judge_never_has_more_requests_in_flight_than_its_concurrency() {
    let judge = CountingJudge::start();
    let dir = tempfile::tempdir().unwrap();
    // 24 cases of 2 checks: far more than 3 could be asked at once.
    suite(dir.path(), 24, 2, &judge, "concurrency = 3\n");
    let output = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(judge.answered.load(Ordering::SeqCst), 48);
    assert_eq!(judge.most_in_flight(), 3, "the bound is reached and never passed");
    assert_eq!(judge.now.load(Ordering::SeqCst), 0);

    // The variable wins over the file.
    let judge = CountingJudge::start();
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 24, 2, &judge, "concurrency = 3\n");
    let output = run(dir.path(), &[("ASSAY_JUDGE_CONCURRENCY", "5")]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(judge.most_in_flight(), 5);
}

#[test]
fn cases_waiting_on_the_judge_hold_no_sample_slot() {
    // One sample slot, one check per case: the judge still gets six
    // requests at once, from six cases admitted to wait on it.
    let judge = CountingJudge::start();
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 24, 1, &judge, "concurrency = 6\n");
    let output = run_with(dir.path(), &[], &["-j", "1"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(judge.answered.load(Ordering::SeqCst), 24);
    assert_eq!(judge.most_in_flight(), 6);
    let results = std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap();
    assert_eq!(results.lines().count(), 24, "every case reported once");
}

#[test]
fn the_judge_checks_of_one_response_are_asked_at_once() {
    let judge = CountingJudge::start();
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1, 4, &judge, "");
    let output = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(judge.answered.load(Ordering::SeqCst), 4);
    assert_eq!(judge.most_in_flight(), 4, "one case's four checks overlap");
    // Every check has its own verdict, in order.
    let results = std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap();
    let case: serde_json::Value = serde_json::from_str(results.lines().next().unwrap()).unwrap();
    let checks = &case["samples"][0]["runs"][0]["interactions"][0]["checks"];
    let expected: Vec<String> = (0..4).map(|k| format!("say pass (0.{k})")).collect();
    let got: Vec<&str> = checks.as_array().unwrap().iter().map(|c| c["expected"].as_str().unwrap()).collect();
    assert_eq!(got, expected);
    assert!(checks.as_array().unwrap().iter().all(|c| c["outcome"] == "pass"), "{checks}");
}

#[test]
fn the_default_concurrency_is_16() {
    assert_eq!(assay::backend::JudgeSettings::openai("http://127.0.0.1:1/v1", "m").concurrency, 16);
    // Twenty checks on one response: sixteen are asked at once, no more.
    let judge = CountingJudge::start();
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1, 20, &judge, "");
    let output = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(judge.answered.load(Ordering::SeqCst), 20);
    assert_eq!(judge.most_in_flight(), 16);
}

#[test]
fn a_concurrency_that_is_no_whole_number_of_requests_is_refused_naming_the_key() {
    let judge = CountingJudge::start();
    for (extra, env, says) in [
        ("concurrency = 0\n", None, "[judge] concurrency in `"),
        ("concurrency = -2\n", None, "[judge] concurrency is the most judge requests in flight at once"),
        ("concurrency = \"many\"\n", None, "[judge] concurrency is the most judge requests in flight at once"),
        ("", Some("0"), "ASSAY_JUDGE_CONCURRENCY is 0"),
        ("", Some("lots"), "ASSAY_JUDGE_CONCURRENCY is \"lots\", not a whole number of requests"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        suite(dir.path(), 1, 1, &judge, extra);
        let env: Vec<(&str, &str)> = env.map(|value| ("ASSAY_JUDGE_CONCURRENCY", value)).into_iter().collect();
        let output = run(dir.path(), &env);
        assert_eq!(output.status.code(), Some(2), "{extra}{env:?}: {}", stderr(&output));
        let error = stderr(&output);
        assert!(error.contains(says), "{extra}{env:?}: {error}");
        assert!(error.contains("[judge] concurrency"), "{error}");
        assert!(error.contains("1 or more (default 16)"), "{error}");
    }
    assert_eq!(judge.answered.load(Ordering::SeqCst), 0, "no run started");
}

#[test]
fn alike_checks_of_one_response_ask_the_judge_once_with_the_cache() {
    let judge = CountingJudge::start();
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1, 1, &judge, "");
    std::fs::write(
        dir.path().join("cases/c000.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "request", "response": { "text": {
             "gist": ["say pass (a)", "say pass (b)", "say pass (a)", "say pass (b)"] } } } ] }"#,
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let output = assay_command()
        .args(["run", "--quiet", "--config"])
        .arg(dir.path().join("assay.toml"))
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--results")
        .arg(dir.path().join("results"))
        .arg(dir.path().join("cases"))
        .env_remove("ASSAY_JUDGE_URL")
        .env_remove("ASSAY_JUDGE_CONCURRENCY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    // The two distinct prompts were asked at once; each repeat waited for
    // its twin's answer in the cache.
    assert_eq!(judge.answered.load(Ordering::SeqCst), 2);
    assert_eq!(judge.most_in_flight(), 2);
}

#[test]
fn a_request_that_never_gets_its_turn_fails_within_the_timeout() {
    use assay::backend::{JudgeSettings, RemoteJudge};
    use assay::sandbox::host::judge::Judge;
    // One request at a time, each answered after 300 ms, and a timeout of
    // 1 s: of five asked at once, the last waits 1.2 s for its turn.
    let server = crate::fake_server::FakeServer::start(|_| {
        std::thread::sleep(Duration::from_millis(300));
        crate::judge::judge_server::completion("pass")
    });
    let mut settings = JudgeSettings::openai(format!("{}/v1", server.url()), "m");
    settings.concurrency = 1;
    settings.timeout = Duration::from_secs(1);
    let judge = Arc::new(RemoteJudge::new(settings).unwrap());
    let askers: Vec<_> = (0..5)
        .map(|i| {
            let judge = judge.clone();
            std::thread::spawn(move || {
                judge.complete(&format!("prompt {i}"), &assay::sandbox::host::CapabilitySpend::default())
            })
        })
        .collect();
    let answers: Vec<_> = askers.into_iter().map(|asker| asker.join().unwrap()).collect();
    let refused: Vec<&String> = answers.iter().filter_map(|a| a.answer.as_ref().err()).collect();
    assert!(answers.iter().filter(|a| a.answer.is_ok()).count() >= 1, "{refused:?}");
    assert!(!refused.is_empty(), "five requests of 300 ms in turn cannot all start within 1 s");
    for error in &refused {
        assert!(error.contains("had 1 request in flight for 1 s and this one never got its turn"), "{error}");
        assert!(error.contains("Consider raising [judge] concurrency or timeout_secs"), "{error}");
    }
    // The wait for a turn is the network's, not the plugin's.
    assert!(answers.iter().all(|a| a.waited >= Duration::from_millis(250) || a.answer.is_err()));
    assert_eq!(server.requests.lock().unwrap().len(), 5 - refused.len());
}

#[test]
fn checks_waiting_on_the_judge_end_with_the_cases_time_and_ask_no_more() {
    // Twenty checks asked in turn (one request at a time, 150 ms each)
    // would take 3 s; the run gives each case 1 s.
    let judge = CountingJudge::start();
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1, 20, &judge, "concurrency = 1\n");
    let started = std::time::Instant::now();
    let output = run_with(dir.path(), &[], &["--timeout", "1"]);
    let elapsed = started.elapsed();
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let results = std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap();
    assert!(
        results.contains("the run's --timeout of 1 s fired during interaction 1; its checks were stopped"),
        "{results}"
    );
    assert!(elapsed < Duration::from_millis(2500), "the case waited {elapsed:?} on its checks");
    // What was in flight when the time ran out was answered; nothing was
    // asked after it.
    std::thread::sleep(PAUSE * 3);
    let answered = judge.answered.load(Ordering::SeqCst);
    assert!(answered <= 8, "the judge answered {answered} of the 20 requests");
}
