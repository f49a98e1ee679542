//! `assay serve`, the real binary on a free 127.0.0.1 port, spoken to over
//! plain HTTP/1.1: checks as `assay check` answers them, runs with their
//! event streams, the token, the root, hostile bodies, promptfoo's webhook
//! and the OpenAPI document.

use crate::util::{Served, assay_command, stderr, stdout};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

/// A long enough token.
const TOKEN: &str = "3f9a1c0e5b7d2468ace13579bdf02468";

/// Starts `assay serve --port 0 ARGS…` from the repository root, with
/// `--no-token` unless ARGS give a token (the tests of the token ask for
/// it), and `--results` in the tests' folder unless ARGS give one.
fn serve(args: &[&str]) -> Served {
    serve_with_env(args, &[])
}

/// The same, with more variables in its environment.
fn serve_with_env(args: &[&str], vars: &[(&str, &str)]) -> Served {
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command.args(["serve", "--port", "0"]).args(args).env_remove("ASSAY_SERVE_TOKEN");
    if !args.contains(&"--token-file") {
        command.arg("--no-token");
    }
    // Runs write under the tests' folder, not the repository's `.assay/`.
    if !args.contains(&"--results") {
        command.arg("--results").arg(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-runs"));
    }
    command.envs(vars.iter().copied());
    Served::spawn(command)
}

/// An answer: its status, headers (lowercase names) and body.
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// Sends one request on a new connection (closed after it) with `headers`,
/// and reads the whole answer, de-chunked.
fn request(served: &Served, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let host = served.url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).unwrap();
    // A server may answer (413) before it has read the whole body.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer to {method} {path}: {text:?}"));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let head = head.to_ascii_lowercase();
    let body = if head.contains("transfer-encoding: chunked") { dechunk(body) } else { body.to_owned() };
    Answer { status, head, body }
}

fn dechunk(mut text: &str) -> String {
    let mut body = String::new();
    loop {
        let (size, rest) = text.split_once("\r\n").expect("a chunk size");
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return body;
        }
        body.push_str(&rest[..size]);
        text = &rest[size + 2..];
    }
}

fn get(served: &Served, path: &str) -> Answer {
    request(served, "GET", path, &[], b"")
}

fn post(served: &Served, path: &str, body: &Value) -> Answer {
    request(served, "POST", path, &[("content-type", "application/json")], body.to_string().as_bytes())
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

#[test]
fn a_batch_of_checks_answers_as_assay_check_does() {
    let served = serve(&[]);
    let checks = [
        ("keywords", json!("the Beatles were a band"), json!("Beatles")),
        ("not_keywords", json!("the Beatles"), json!("Stones")),
        ("value", json!({"a": 1}), json!({"a": 2})),
        ("keywords", json!("text"), json!(["a list"])),
    ];
    let body = json!({ "checks": checks.iter().map(|(k, a, e)| json!({"key": k, "actual": a, "expected": e})).collect::<Vec<_>>() });
    let answer = post(&served, "/v1/check", &body);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.head.contains("content-type: application/json"));
    let verdicts = answer.json()["verdicts"].as_array().unwrap().clone();
    assert_eq!(verdicts.len(), checks.len());
    for ((key, actual, expected), verdict) in checks.iter().zip(&verdicts) {
        let cli = assay_command()
            .args([
                "check",
                "--key",
                key,
                "--actual",
                &actual.to_string(),
                "--expected",
                &expected.to_string(),
                "--json",
            ])
            .output()
            .unwrap();
        let cli: Value = serde_json::from_str(&stdout(&cli)).unwrap();
        assert_eq!(&cli, verdict, "{key}");
    }
    let outcomes: Vec<&str> = verdicts.iter().map(|v| v["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["pass", "pass", "fail", "error"]);

    let unknown = post(&served, "/v1/check", &json!({"checks": [{"key": "keywordz", "actual": "a", "expected": "b"}]}));
    assert_eq!(unknown.status, 400);
    assert_eq!(
        unknown.json()["error"],
        "evaluate `checks[0]`: unknown matcher key `keywordz`: did you mean `keywords`?"
    );
}

/// Every server-sent event of a stream: `(event, data as JSON)`.
fn events_of(stream: &str) -> Vec<(String, Value)> {
    stream
        .split("\n\n")
        .filter(|block| !block.trim().is_empty() && !block.starts_with(':'))
        .map(|block| {
            let field = |name: &str| {
                block.lines().find_map(|line| line.strip_prefix(name)).map(str::to_owned).unwrap_or_default()
            };
            (field("event: "), serde_json::from_str(&field("data: ")).unwrap())
        })
        .collect()
}

#[test]
fn a_run_streams_every_event_to_its_end_and_its_summary_matches() {
    let results = tempfile::tempdir().unwrap();
    let served = serve(&["--results", results.path().to_str().unwrap()]);
    let inline = r#"{ agent: echo, interactions: [ { text: hi, response: { text: { value: hi } } } ] }"#;
    let started = post(
        &served,
        "/v1/runs",
        &json!({"paths": ["fixtures/cases/echo", "fixtures/cases/math_guy/multiply.hocon"], "cases": [{"name": "mine", "text": inline}]}),
    );
    assert_eq!(started.status, 202, "{started:?}");
    let id = started.json()["id"].as_str().unwrap().to_owned();

    // Connected after (maybe long after) the run started: every event, from the first.
    let stream = get(&served, &format!("/v1/runs/{id}/events"));
    assert_eq!(stream.status, 200);
    assert!(stream.head.contains("content-type: text/event-stream"), "{}", stream.head);
    let events = events_of(&stream.body);
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"run_started"));
    assert_eq!(names.last(), Some(&"run_finished"));
    for (name, data) in &events {
        assert_eq!(&data["event"], name);
    }
    let finished: Vec<&Value> = events.iter().filter(|(n, _)| n == "case_finished").map(|(_, d)| &d["case"]).collect();
    let mut ids: Vec<&str> = finished.iter().map(|case| case["id"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["conversation", "data_shapes", "fixtures/cases/math_guy/multiply", "mine", "ratio"]);
    assert_eq!(events.iter().filter(|(n, _)| n == "case_started").count(), 5);
    let streamed_summary = &events.last().unwrap().1["summary"];

    let status = get(&served, &format!("/v1/runs/{id}")).json();
    assert_eq!(status["status"], "finished");
    let summary = &status["summary"];
    for count in ["cases", "passed", "failed", "errors", "flaky"] {
        assert_eq!(summary[count], streamed_summary[count], "{count}");
    }
    assert_eq!(summary["cases"], 5);
    assert_eq!(summary["passed"], 5, "{summary}");
    // The results directory is `assay run`'s, under --results.
    let dir = results.path().join(&id);
    assert_eq!(status["results"], dir.to_str().unwrap());
    let lines = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 5);
    let on_disk: Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(&on_disk, summary);

    let unknown = get(&served, "/v1/runs/0123456789abcdef");
    assert_eq!(unknown.status, 404);
    assert!(unknown.json()["error"].as_str().unwrap().contains("no such run"));
    assert_eq!(get(&served, "/v1/runs/0123456789abcdef/events").status, 404);
}

#[test]
fn a_run_that_cannot_start_says_why() {
    let served = serve(&["--results", tempfile::tempdir().unwrap().path().to_str().unwrap()]);
    let error = |body: Value| {
        let answer = post(&served, "/v1/runs", &body);
        assert_eq!(answer.status, 400, "{answer:?}");
        answer.json()["error"].as_str().unwrap().to_owned()
    };
    assert!(error(json!({})).contains("names no case"));
    let broken = error(json!({"cases": [{"name": "bad", "text": "{ agent: echo, interactions: [ {"}]}));
    assert!(broken.contains("inline case `bad`") && broken.contains("cases[0]"), "{broken}");
    assert!(error(json!({"paths": ["fixtures/none"]})).contains("`paths[0]` (`fixtures/none`)"));
    assert!(error(json!({"paths": ["fixtures/cases"], "filter": "zzz-no-such"})).contains("`zzz-no-such`"));
    assert!(error(json!({"paths": ["fixtures/cases"], "timeout_secs": -1})).contains("timeout_secs"));
    assert!(error(json!({"paths": ["fixtures/cases"], "jbos": 2})).contains("unknown field `jbos`"));
    assert!(error(json!({"paths": ["fixtures/cases"], "jobs": 0})).contains("`jobs` 0"));
    assert!(error(json!({"paths": ["fixtures/cases"], "jobs": u64::MAX})).contains("`jobs`"));
}

#[test]
fn paths_outside_the_root_are_refused_links_included() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path();
    let outside = crate::util::fixture("cases/echo");
    std::fs::create_dir(root.join("cases")).unwrap();
    std::fs::copy(outside.join("ratio.hocon"), root.join("cases/ratio.hocon")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, root.join("linked_dir")).unwrap();
        std::os::unix::fs::symlink(outside.join("conversation.hocon"), root.join("cases/linked.hocon")).unwrap();
    }
    let results = tempfile::tempdir().unwrap();
    let served = serve(&["--root", root.to_str().unwrap(), "--results", results.path().to_str().unwrap()]);
    let absolute = outside.join("ratio.hocon");
    let mut refused = vec!["../", "cases/../../", absolute.to_str().unwrap()];
    if cfg!(unix) {
        refused.extend(["linked_dir", "linked_dir/ratio.hocon", "cases", "cases/linked.hocon"]);
    }
    for path in refused {
        let answer = post(&served, "/v1/runs", &json!({"paths": [path]}));
        assert_eq!(answer.status, 400, "`{path}` was not refused: {answer:?}");
        let error = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains("under the served root") || error.contains("outside the served root"), "{error}");
        // No server path in an answer.
        let (root_text, outside_text) = (root.to_str().unwrap(), outside.to_str().unwrap());
        assert!(!error.contains(root_text) && !error.contains(outside_text) || path.starts_with('/'), "{error}");
    }
    // Whether a path outside the root exists is not told: one answer for
    // an existing file out there and a missing one.
    let answer_for = |path: &str| {
        let error = post(&served, "/v1/runs", &json!({"paths": [path]})).json()["error"].as_str().unwrap().to_owned();
        error.replace(path, "PATH")
    };
    let depth = root.components().count();
    let up = "../".repeat(depth);
    let existing_outside = format!("{up}{}", outside.join("ratio.hocon").to_str().unwrap().trim_start_matches('/'));
    let missing_outside = format!("{up}{}", outside.join("nope.hocon").to_str().unwrap().trim_start_matches('/'));
    assert_eq!(answer_for(&existing_outside), answer_for(&missing_outside));
    assert_eq!(answer_for(&existing_outside), answer_for("cases/nope.hocon"));
    // Inside the root, a case runs (the link removed).
    #[cfg(unix)]
    std::fs::remove_file(root.join("cases/linked.hocon")).unwrap();
    let answer = post(&served, "/v1/runs", &json!({"paths": ["cases/ratio.hocon"]}));
    assert_eq!(answer.status, 202, "{answer:?}");
    let id = answer.json()["id"].as_str().unwrap().to_owned();
    let events = events_of(&get(&served, &format!("/v1/runs/{id}/events")).body);
    let case = &events.iter().find(|(n, _)| n == "case_finished").unwrap().1["case"];
    assert_eq!(case["id"], "cases/ratio");
}

#[test]
#[cfg(unix)]
fn a_link_swapped_in_after_a_run_started_is_not_read_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
    std::fs::create_dir_all(root.join("cases")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let case = |word: &str| {
        format!(
            r#"{{ agent: echo, interactions: [ {{ text: "{word}", response: {{ text: {{ keywords: "{word}" }} }} }} ] }}"#
        )
    };
    std::fs::write(outside.join("z.hocon"), case("OUTSIDE")).unwrap();
    std::fs::write(root.join("cases/z.hocon"), case("INSIDE")).unwrap();
    // Cases held by an agent that never answers, read (in name order) before
    // `z`: more than the readers read ahead, so with one job `z` is read
    // only once the agent goes.
    let held = r#"{ agent: echo, connections: [http], interactions: [ { text: "hi", response: { text: { keywords: "hi" } } } ] }"#;
    for n in 0..100 {
        std::fs::write(root.join(format!("cases/h{n:03}.hocon")), held).unwrap();
    }
    let (agent, url) = silent_agent();
    let results = tempfile::tempdir().unwrap();
    let served =
        serve(&["--root", root.to_str().unwrap(), "--agent-url", &url, "--results", results.path().to_str().unwrap()]);
    let started = post(&served, "/v1/runs", &json!({"paths": ["cases"], "jobs": 1}));
    assert_eq!(started.status, 202, "{started:?}");
    let id = started.json()["id"].as_str().unwrap().to_owned();
    // Checked and started: now `z.hocon` becomes a link out of the root.
    std::fs::remove_file(root.join("cases/z.hocon")).unwrap();
    std::os::unix::fs::symlink("../../outside/z.hocon", root.join("cases/z.hocon")).unwrap();
    drop(agent);
    let (events, cases) = wait_for_run(&served, &id);
    assert_eq!(cases.len(), 101);
    let z = cases.get("z").unwrap_or_else(|| panic!("{cases:?}"));
    assert_eq!(z["status"], "error", "{z}");
    assert!(z["error"]["message"].as_str().unwrap().contains("leads outside the served root"), "{z}");
    let everything =
        format!("{events:?}") + &std::fs::read_to_string(results.path().join(&id).join("results.jsonl")).unwrap();
    assert!(!everything.contains("OUTSIDE"), "the file outside the root was read: {z}");
    // What the client sees names paths under the root, never where it is.
    assert_eq!(z["file"], "cases/z.hocon", "{z}");
    let root_text = root.canonicalize().unwrap().to_str().unwrap().to_owned();
    assert!(!everything.contains(&root_text), "{everything}");
}

#[test]
fn with_a_token_every_request_but_the_document_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    // Beyond 127.0.0.1, still loopback: the token is what is tested.
    let served = serve(&["--bind", "127.0.0.2", "--token-file", token_file.to_str().unwrap()]);
    assert!(served.url.starts_with("http://127.0.0.2:"), "{}", served.url);
    let body = json!({"checks": [{"key": "keywords", "actual": "a b", "expected": "a"}]}).to_string();
    let check = |headers: &[(&str, &str)]| {
        let headers = [headers, &[("content-type", "application/json")]].concat();
        request(&served, "POST", "/v1/check", &headers, body.as_bytes())
    };

    for headers in [
        vec![],
        vec![("authorization", "Bearer")],
        vec![("authorization", "Bearer 3f9a1c0e5b7d2468ace13579bdf02469")],
        vec![("authorization", "Bearer 3f9a1c0e5b7d2468ace13579bdf0246")],
        vec![("authorization", "Basic 3f9a1c0e5b7d2468ace13579bdf02468")],
    ] {
        let answer = check(&headers);
        assert_eq!(answer.status, 401, "{headers:?}: {answer:?}");
        assert!(answer.head.contains("www-authenticate: bearer"));
        assert!(!answer.body.contains(TOKEN) && !answer.body.contains("3f9a1c0e"), "{answer:?}");
    }
    let bearer = bearer();
    assert_eq!(check(&[("authorization", &bearer)]).status, 200);
    assert_eq!(get(&served, "/v1/plugins").status, 401);
    assert_eq!(get(&served, "/v1/runs/abc").status, 401);
    assert_eq!(request(&served, "GET", "/v1/plugins", &[("authorization", &bearer)], b"").status, 200);
    assert_eq!(get(&served, "/v1/openapi.json").status, 200);
    // promptfoo's webhook sends no header of one's choosing: the query may carry it.
    let hook = json!({"output": "a b", "context": {"vars": {}}}).to_string();
    let path = "/v1/promptfoo/webhook?key=keywords&expected=%22a%22";
    assert_eq!(request(&served, "POST", path, &[], hook.as_bytes()).status, 401);
    let with_token = format!("{path}&token={TOKEN}");
    assert_eq!(request(&served, "POST", &with_token, &[], hook.as_bytes()).status, 200);
    // ... and only there.
    let elsewhere = format!("/v1/check?token={TOKEN}");
    assert_eq!(
        request(&served, "POST", &elsewhere, &[("content-type", "application/json")], body.as_bytes()).status,
        401
    );
    let log = served.stop();
    assert!(!log.contains(TOKEN), "the token reached the log: {log}");
}

#[test]
fn by_default_a_token_is_generated_printed_once_and_saved_for_the_user_alone() {
    let root = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command.args(["serve", "--port", "0", "--root", root.path().to_str().unwrap()]).env_remove("ASSAY_SERVE_TOKEN");
    let served = Served::spawn(command);
    let saved = root.path().join(".assay").join("serve-token");
    let token = std::fs::read_to_string(&saved).unwrap().trim().to_owned();
    assert_eq!(token.len(), 64, "{token:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let body = json!({"checks": [{"key": "keywords", "actual": "a b", "expected": "a"}]}).to_string();
    let json = ("content-type", "application/json");
    assert_eq!(request(&served, "POST", "/v1/check", &[json], body.as_bytes()).status, 401);
    let bearer = format!("Bearer {token}");
    assert_eq!(request(&served, "POST", "/v1/check", &[json, ("authorization", &bearer)], body.as_bytes()).status, 200);
    // A second server on the same root has a token of its own.
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command.args(["serve", "--port", "0", "--root", root.path().to_str().unwrap()]).env_remove("ASSAY_SERVE_TOKEN");
    let second = Served::spawn(command);
    let other = std::fs::read_to_string(&saved).unwrap().trim().to_owned();
    assert_ne!(other, token);
    assert_eq!(request(&second, "POST", "/v1/check", &[json, ("authorization", &bearer)], body.as_bytes()).status, 401);
    drop(second);
    // Printed once, on the line after the address, and nowhere else.
    let (out, err) = served.stop_with_stdout();
    assert_eq!(out.matches(&token).count(), 1, "{out}");
    assert!(out.lines().any(|line| line.starts_with("token: ") && line.contains(&token)), "{out}");
    assert!(!err.contains(&token), "{err}");
}

#[test]
fn beyond_loopback_without_a_token_it_refuses_to_start() {
    let output = assay_command()
        .args(["serve", "--bind", "0.0.0.0", "--port", "0", "--no-token"])
        .env_remove("ASSAY_SERVE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("--no-token") && error.contains("loopback only"), "{error}");
    assert!(error.contains("--token-file"), "{error}");
    // A token in the environment is never silently dropped.
    let output = assay_command()
        .args(["serve", "--port", "0", "--no-token"])
        .env("ASSAY_SERVE_TOKEN", "0123456789abcdef0123")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("ASSAY_SERVE_TOKEN is set too"), "{}", stderr(&output));

    // A token too short to protect anything is refused, and not shown.
    let output = assay_command()
        .args(["serve", "--bind", "0.0.0.0", "--port", "0"])
        .env("ASSAY_SERVE_TOKEN", "hunter2")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let error = stderr(&output);
    assert!(error.contains("ASSAY_SERVE_TOKEN") && error.contains("shorter than 16"), "{error}");
    assert!(!error.contains("hunter2"));

    for (flag, value, named) in [
        ("--bind", "localhost:x", "--bind"),
        ("--max-runs", "0", "--max-runs"),
        ("--root", "no/such/dir", "no/such/dir"),
    ] {
        let output = assay_command().args(["serve", "--port", "0", flag, value]).output().unwrap();
        assert!(!std::path::Path::new("no/such/dir").exists(), "a refused root was created");
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        assert!(stderr(&output).contains(named), "{flag}: {}", stderr(&output));
    }
}

#[test]
fn malformed_and_oversized_bodies_are_refused_and_the_server_goes_on() {
    let served = serve(&["--max-body-mb", "1"]);
    let send = |body: &[u8]| request(&served, "POST", "/v1/check", &[("content-type", "application/json")], body);
    for (body, says) in [
        (&b"{not json"[..], "not the JSON expected"),
        (b"", "not the JSON expected"),
        (b"{\"checks\": [{\"key\": \"keywords\"}]} trailing", "`checks[0]`"),
        (b"{\"checks\": {}}", "`checks`"),
        (b"{\"checks\": [], \"extra\": 1}", "unknown field `extra`"),
        (b"\xff\xfe", "not the JSON expected"),
    ] {
        let answer = send(body);
        assert_eq!(answer.status, 400, "{body:?}: {answer:?}");
        let error = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(says), "{body:?}: {error}");
    }
    let large = format!(
        "{{\"checks\": [{{\"key\": \"keywords\", \"actual\": \"{}\", \"expected\": \"a\"}}]}}",
        "a".repeat(2 << 20)
    );
    let answer = send(large.as_bytes());
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert!(answer.json()["error"].as_str().unwrap().contains("--max-body-mb"));
    // A body that lies about its length past the limit.
    let host = served.url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap();
    stream
        .write_all(b"POST /v1/check HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 999999999\r\nconnection: close\r\n\r\n{")
        .unwrap();
    let mut answer = String::new();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Too large, and chunked: no length to refuse it by, so it is cut off as it arrives.
    let mut stream = TcpStream::connect(host).unwrap();
    let head = b"POST /v1/check HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    stream.write_all(head).unwrap();
    let _ = stream.write_all(format!("{:x}\r\n{}\r\n0\r\n\r\n", 2 << 20, "a".repeat(2 << 20)).as_bytes());
    let mut answer = String::new();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    let fine = send(br#"{"checks": [{"key": "keywords", "actual": "a b", "expected": "a"}]}"#);
    assert_eq!(fine.status, 200);
    assert_eq!(get(&served, "/v1/nowhere").status, 404);
    assert_eq!(request(&served, "DELETE", "/v1/check", &[], b"").status, 405);
}

#[test]
fn promptfoo_s_webhook_gets_pass_score_and_reason() {
    let served = serve(&[]);
    // promptfoo posts {output, context: {prompt, vars}}.
    let hook = |path: &str, output: Value, vars: Value| {
        let answer = post(&served, path, &json!({"output": output, "context": {"prompt": "say hi", "vars": vars}}));
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.json()
    };
    let passed = hook("/v1/promptfoo/webhook?key=keywords&expected=%22Beatles%22", json!("the Beatles"), json!({}));
    assert_eq!(passed["pass"], true);
    assert_eq!(passed["score"], 1.0);
    assert!(passed["reason"].as_str().unwrap().contains("Beatles"));
    let by_vars = hook(
        "/v1/promptfoo/webhook",
        json!("the Stones"),
        json!({"assay_key": "keywords", "assay_expected": "Beatles"}),
    );
    assert_eq!(by_vars["pass"], false);
    assert_eq!(by_vars["score"], 0.0);
    let no_key = hook("/v1/promptfoo/webhook", json!("x"), json!({}));
    assert_eq!(no_key["pass"], false);
    assert!(no_key["reason"].as_str().unwrap().contains("?key=KEY"), "{no_key}");
    let unknown = hook("/v1/promptfoo/webhook?key=keywordz&expected=1", json!("x"), json!({}));
    assert!(unknown["reason"].as_str().unwrap().contains("did you mean `keywords`"), "{unknown}");
    let bad_expected = hook("/v1/promptfoo/webhook?key=keywords&expected=Beatles", json!("x"), json!({}));
    assert!(bad_expected["reason"].as_str().unwrap().contains("quote a string"), "{bad_expected}");
    // Not promptfoo's shape at all.
    assert_eq!(post(&served, "/v1/promptfoo/webhook?key=keywords", &json!({"answer": "x"})).status, 400);
}

#[test]
fn the_openapi_document_lists_every_route_and_each_is_served() {
    let served = serve(&[]);
    let document = get(&served, "/v1/openapi.json").json();
    assert_eq!(document["openapi"], "3.1.0");
    let paths = document["paths"].as_object().unwrap();
    assert_eq!(paths.len(), 7);
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            let concrete = path.replace("{id}", "0000000000000000");
            let answer = request(&served, &method.to_uppercase(), &concrete, &[], b"{}");
            // Served: answered by its handler (a 404 only for the unknown run).
            assert_ne!(answer.status, 405, "{method} {path}");
            if answer.status == 404 {
                assert!(answer.body.contains("no such run"), "{method} {path}: {answer:?}");
            }
        }
    }
    let plugins = get(&served, "/v1/plugins").json();
    let keys: Vec<&str> = plugins["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["keys"].as_array().unwrap())
        .map(|k| k["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"keywords"), "{keys:?}");
}

/// An `assay.toml` loading the hostile plugin with a deadline of `ms`, in
/// `dir`.
fn hostile_config(dir: &std::path::Path, ms: u64) -> std::path::PathBuf {
    let config = dir.join("assay.toml");
    let plugin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/plugins/hostile/hostile.wasm");
    let table = format!("[plugins.hostile]\npath = {:?}\ndeadline_ms = {ms}\n", plugin.to_str().unwrap());
    std::fs::write(&config, table).unwrap();
    config
}

#[test]
fn a_request_gets_its_turn_and_its_answer_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let config = hostile_config(dir.path(), 3000);
    let served = serve(&["--config", config.to_str().unwrap(), "--request-timeout", "1", "--max-requests", "1"]);
    let host = served.url.trim_start_matches("http://").to_owned();
    // A check that spins for its 3 s deadline holds the one turn...
    let body = json!({"checks": [{"key": "spin", "actual": "x", "expected": 1}]}).to_string();
    let mut slow = TcpStream::connect(&host).unwrap();
    let head = format!(
        "POST /v1/check HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    slow.write_all(head.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // ... so the next request waits for a turn: until the slow one is cut off.
    let started = std::time::Instant::now();
    let waiting = post(&served, "/v1/check", &json!({"checks": []}));
    assert_eq!(waiting.status, 200, "{waiting:?}");
    assert!(started.elapsed() >= Duration::from_millis(600), "it did not wait: {:?}", started.elapsed());
    // The slow one is cut off at its timeout.
    let mut answer = String::new();
    slow.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = slow.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(answer.contains("--request-timeout"), "{answer}");
    // And then the turn is free again.
    let fine = post(&served, "/v1/check", &json!({"checks": [{"key": "keywords", "actual": "a", "expected": "a"}]}));
    assert_eq!(fine.status, 200);
}

#[test]
fn no_secret_reaches_an_answer_an_event_or_the_results() {
    const SECRET: &str = "s3cr3t-value-of-the-api-key";
    let results = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    // The echo agent answers the secret back, and the check fails naming it.
    // (A case file under the root sees the variables the server allows by
    // name; an inline case sees none: see the next tests.)
    let case = r#"{ agent: echo, interactions: [ { text: ${ASSAY_CASE_API_KEY}, response: { text: { value: "nothing like it" } } } ] }"#;
    std::fs::write(root.path().join("leaky.hocon"), case).unwrap();
    let (results_arg, root_arg) = (results.path().to_str().unwrap(), root.path().to_str().unwrap());
    let args = ["--results", results_arg, "--root", root_arg, "--allow-env", "ASSAY_CASE_API_KEY"];
    let served = serve_with_env(&args, &[("ASSAY_CASE_API_KEY", SECRET)]);
    let started = post(&served, "/v1/runs", &json!({"paths": ["leaky.hocon"]}));
    assert_eq!(started.status, 202, "{started:?}");
    let id = started.json()["id"].as_str().unwrap().to_owned();
    let stream = get(&served, &format!("/v1/runs/{id}/events")).body;
    let status = get(&served, &format!("/v1/runs/{id}")).body;
    assert!(status.contains("\"failed\":1"), "{status}");
    let lines = std::fs::read_to_string(results.path().join(&id).join("results.jsonl")).unwrap();
    for text in [&stream, &status, &lines] {
        assert!(!text.contains(SECRET), "the secret leaked: {text}");
    }
    assert!(stream.contains("[REDACTED]"), "{stream}");
    let check =
        post(&served, "/v1/check", &json!({"checks": [{"key": "keywords", "actual": SECRET, "expected": "zzz"}]}));
    assert!(!check.body.contains(SECRET), "{check:?}");
}

/// A served case file reads no variable by its `ASSAY_CASE_` prefix, only
/// those the server allows by name: else a check on `${VAR}` would be an
/// oracle for its value, redacted in every answer as it is.
#[test]
fn a_served_case_reads_only_the_variables_the_server_allows_by_name() {
    const SECRET: &str = "s3cr3t-value-of-the-api-token";
    let root = tempfile::tempdir().unwrap();
    let probe = |name: &str, guess: &str| {
        format!(
            r#"{{ agent: echo, interactions: [ {{ text: ${{{name}}}, response: {{ text: {{ keywords: "{guess}" }} }} }} ] }}"#
        )
    };
    std::fs::write(root.path().join("probe.hocon"), probe("ASSAY_CASE_API_TOKEN", "s3c")).unwrap();
    std::fs::write(root.path().join("name.hocon"), probe("ASSAY_CASE_NAME", "Ada")).unwrap();
    std::fs::write(root.path().join("assay.toml"), "[cases]\nallow_env = [\"ASSAY_CASE_NAME\"]\n").unwrap();
    let config = root.path().join("assay.toml");
    let vars = [("ASSAY_CASE_API_TOKEN", SECRET), ("ASSAY_CASE_NAME", "Ada")];
    let args = ["--root", root.path().to_str().unwrap(), "--config", config.to_str().unwrap()];
    let served = serve_with_env(&args, &vars);
    let cases = run_paths(&served, &["probe.hocon", "name.hocon"]);
    assert_eq!(cases["probe"]["status"], "error", "{cases:?}");
    let message = cases["probe"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("ASSAY_CASE_API_TOKEN") && message.contains("allow_env"), "{message}");
    assert!(message.contains("only those the server allows by name"), "{message}");
    assert_eq!(cases["name"]["status"], "passed", "{cases:?}");
}

/// Runs `paths` on `served` and waits for its end: the finished cases'
/// results, by id.
fn run_paths(served: &Served, paths: &[&str]) -> std::collections::BTreeMap<String, Value> {
    let answer = post(served, "/v1/runs", &json!({ "paths": paths }));
    assert_eq!(answer.status, 202, "{answer:?}");
    let id = answer.json()["id"].as_str().unwrap().to_owned();
    let events = events_of(&get(served, &format!("/v1/runs/{id}/events")).body);
    let finished = events.iter().filter(|(n, _)| n == "case_finished").map(|(_, d)| d["case"].clone());
    finished.map(|case| (case["id"].as_str().unwrap().to_owned(), case)).collect()
}

#[test]
fn a_server_trusts_no_file_unless_started_with_allow_commands() {
    let root = tempfile::tempdir().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    let suite = "specs = [\"*.jsonl\"]\nagent = \"echo\"\ntext = \"{{q}}\"\n[setup]\ncommand = [\"sh\", \"-c\", \"touch PWNED\"]\n\
                 [[checks]]\nkey = \"keywords\"\nexpected = [\"{{q}}\"]\n";
    std::fs::create_dir(root_path.join("contrib")).unwrap();
    std::fs::write(root_path.join("contrib/x.suite.toml"), suite).unwrap();
    std::fs::write(root_path.join("contrib/a.jsonl"), "{\"id\": \"one\", \"q\": \"hi\", \"clusterStateId\": \"s\"}\n")
        .unwrap();
    // The project's own assay.toml trusts it: a server's clients are not its user.
    std::fs::write(root_path.join("assay.toml"), "[trust]\ncommands = [\"contrib/*.suite.toml\"]\n").unwrap();
    let config = root_path.join("assay.toml");
    let pwned = root_path.join("contrib/PWNED");
    let results = tempfile::tempdir().unwrap();
    let args = ["--root", root_path.to_str().unwrap(), "--results", results.path().to_str().unwrap()];
    let config_args = ["--config", config.to_str().unwrap()];

    let served = serve_with_env(&[&args[..], &config_args].concat(), &[("ASSAY_ALLOW_COMMANDS", "1")]);
    let cases = run_paths(&served, &["contrib"]);
    assert!(!pwned.exists(), "a served run ran a suite's command");
    let error = cases["x"]["error"]["message"].as_str().unwrap_or_else(|| panic!("{cases:?}"));
    assert!(error.contains("it is data") && error.contains("touch PWNED"), "{error}");
    drop(served);

    let served = serve(&[&args[..], &config_args, &["--allow-commands"]].concat());
    let cases = run_paths(&served, &["contrib/x.suite.toml"]);
    assert!(pwned.exists(), "{cases:?}");
    assert_eq!(cases["contrib/x/one"]["status"], "passed", "{cases:?}");
}

#[test]
fn a_server_runs_promptfoo_configs_through_the_one_door_and_inline_cases_see_no_environment() {
    let root = tempfile::tempdir().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    let config = "prompts: ['say {{w}}']\nproviders: [echo]\ntests: [{vars: {w: hi}, assert: [{type: contains, value: say hi}]}]\n";
    std::fs::write(root_path.join("promptfooconfig.yaml"), config).unwrap();
    let results = tempfile::tempdir().unwrap();
    let served = serve_with_env(
        &["--root", root_path.to_str().unwrap(), "--results", results.path().to_str().unwrap()],
        &[("ASSAY_CASE_TOKEN", "case-secret-4321")],
    );
    let cases = run_paths(&served, &["promptfooconfig.yaml"]);
    assert_eq!(cases.len(), 1, "{cases:?}");
    let (id, case) = cases.iter().next().unwrap();
    assert_eq!(case["status"], "passed", "{id}: {case}");
    // A config that runs a program is data to a server: one error case.
    std::fs::create_dir(root_path.join("exec")).unwrap();
    let exec = "prompts: ['hi']\nproviders: [\"exec:sh -c 'touch PWNED'\"]\ntests: [{vars: {}}]\n";
    std::fs::write(root_path.join("exec/promptfooconfig.yaml"), exec).unwrap();
    let cases = run_paths(&served, &["exec/promptfooconfig.yaml"]);
    assert!(!root_path.join("exec/PWNED").exists(), "a served run ran exec:");
    let error = cases["exec/promptfooconfig"]["error"]["message"].as_str().unwrap_or_else(|| panic!("{cases:?}"));
    assert!(error.contains("it is data") && error.contains("touch PWNED"), "{error}");

    let inline =
        r#"{ agent: echo, interactions: [ { text: ${ASSAY_CASE_TOKEN}, response: { text: { value: x } } } ] }"#;
    let answer = post(&served, "/v1/runs", &json!({"cases": [{"name": "env", "text": inline}]}));
    assert_eq!(answer.status, 400, "{answer:?}");
    let error = answer.json()["error"].as_str().unwrap().to_owned();
    assert!(error.contains("ASSAY_CASE_TOKEN") && error.contains("sees no environment variable"), "{error}");
    assert!(!answer.body.contains("case-secret-4321"));
}

#[test]
fn a_served_suite_reads_no_file_outside_its_folder() {
    let root = tempfile::tempdir().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    let secret = root_path.join("secret.jsonl");
    std::fs::write(&secret, "{\"id\": \"tok\", \"q\": \"sk-live-TOKEN-0123456789\"}\n").unwrap();
    std::fs::create_dir(root_path.join("contrib")).unwrap();
    for spec in ["/etc/passwd", "../secret.jsonl"] {
        let suite = format!(
            "specs = [{spec:?}]\nagent = \"echo\"\ntext = \"{{{{q}}}}\"\n[[checks]]\nkey = \"keywords\"\nexpected = [\"x\"]\n"
        );
        std::fs::write(root_path.join("contrib/x.suite.toml"), suite).unwrap();
        let results = tempfile::tempdir().unwrap();
        let served = serve(&["--root", root_path.to_str().unwrap(), "--results", results.path().to_str().unwrap()]);
        let answer = post(&served, "/v1/runs", &json!({ "paths": ["contrib"] }));
        assert_eq!(answer.status, 202, "{answer:?}");
        let id = answer.json()["id"].as_str().unwrap().to_owned();
        let stream = get(&served, &format!("/v1/runs/{id}/events")).body;
        assert!(stream.contains("it is data") && stream.contains("it reads `"), "{spec}: {stream}");
        assert!(!stream.contains("sk-live-TOKEN") && !stream.contains("root:x:0"), "{spec}: {stream}");
    }
}

/// A suite file under `dir` checking spec files `specs` (a TOML list).
fn suite_with_specs(dir: &std::path::Path, name: &str, specs: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let suite = format!(
        "specs = {specs}\nagent = \"echo\"\ntext = \"{{{{q}}}}\"\n[[checks]]\nkey = \"keywords\"\nexpected = [\"x\"]\n"
    );
    std::fs::write(dir.join(name), suite).unwrap();
}

#[test]
#[cfg(unix)]
fn a_served_suite_s_spec_patterns_never_walk_out_of_its_folder_or_in_circles() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    // A pattern from `/` (which walked the whole disk, /proc included), and
    // one through links that loop (which grew memory without end).
    suite_with_specs(&root.join("s1"), "a.suite.toml", r#"["/**/nomatch-zzz.jsonl"]"#);
    suite_with_specs(&root.join("s2"), "b.suite.toml", r#"["specs/**/*.jsonl"]"#);
    std::fs::create_dir_all(root.join("s2/specs")).unwrap();
    std::fs::write(root.join("s2/specs/a.jsonl"), "{\"id\": \"one\", \"q\": \"x\"}\n").unwrap();
    for link in ["l1", "l2", "l3"] {
        std::os::unix::fs::symlink(".", root.join("s2/specs").join(link)).unwrap();
    }
    let results = tempfile::tempdir().unwrap();
    let served = serve(&["--root", root.to_str().unwrap(), "--results", results.path().to_str().unwrap()]);
    let asked = std::time::Instant::now();
    let answer = post(&served, "/v1/runs", &json!({ "paths": ["s1", "s2"] }));
    assert_eq!(answer.status, 202, "{answer:?}");
    let (events, cases) = wait_for_run(&served, answer.json()["id"].as_str().unwrap());
    assert!(asked.elapsed() < Duration::from_secs(10), "it took {:?}", asked.elapsed());
    assert_eq!(cases.len(), 2, "{events:?}");
    let refused = cases["a"]["error"]["message"].as_str().unwrap();
    assert!(refused.contains("it reads `/`") && refused.contains("it is data"), "{refused}");
    // The loop is walked once: its one spec line is one case.
    assert_eq!(cases["b/one"]["status"], "passed", "{events:?}");
}

#[test]
#[cfg(unix)]
fn a_client_learns_nothing_of_files_outside_the_root_nor_where_the_root_is() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
    std::fs::create_dir_all(outside.join("private/deep")).unwrap();
    std::fs::write(outside.join("private/deep/hidden-name.suite.toml"), "").unwrap();
    std::fs::write(outside.join("bbb-private-name.txt"), "").unwrap();
    // A folder holding a link out; a suite whose pattern lists a folder out
    // there; a suite at the root itself that matches nothing.
    std::fs::create_dir_all(root.join("cases")).unwrap();
    std::os::unix::fs::symlink("../../outside", root.join("cases/l")).unwrap();
    suite_with_specs(&root.join("s1"), "x.suite.toml", r#"["../../outside/[b]*"]"#);
    suite_with_specs(&root, "root.suite.toml", r#"["nomatch*.jsonl"]"#);
    // The results folder cannot be made (a file stands in its way): an
    // error answer of the server's own.
    std::fs::create_dir_all(root.join(".assay")).unwrap();
    std::fs::write(root.join(".assay/serve-runs"), "in the way").unwrap();
    let root = root.canonicalize().unwrap();
    let root_text = root.to_str().unwrap().to_owned();
    // From `/`, as systemd starts a service.
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command.args(["serve", "--port", "0", "--no-token", "--root", &root_text]).current_dir("/");
    command.env_remove("ASSAY_SERVE_TOKEN");
    let served = Served::spawn(command);
    let mut seen = String::new();
    let walked = post(&served, "/v1/runs", &json!({ "paths": ["cases"] }));
    assert_eq!(walked.status, 400, "{walked:?}");
    assert!(walked.body.contains("it holds a link leading outside the served root"), "{walked:?}");
    seen += &walked.body;
    let failed = post(&served, "/v1/runs", &json!({ "paths": ["s1", "root.suite.toml"] }));
    assert_eq!(failed.status, 500, "{failed:?}");
    assert!(failed.body.contains("results directory `.assay/serve-runs/"), "{failed:?}");
    seen += &failed.body;
    // With somewhere to write, the suites' errors.
    std::fs::remove_file(root.join(".assay/serve-runs")).unwrap();
    let started = post(&served, "/v1/runs", &json!({ "paths": ["s1", "root.suite.toml"] }));
    assert_eq!(started.status, 202, "{started:?}");
    let id = started.json()["id"].as_str().unwrap().to_owned();
    let (events, cases) = wait_for_run(&served, &id);
    assert_eq!(cases.len(), 2, "{events:?}");
    let message = |id: &str| cases[id]["error"]["message"].as_str().unwrap_or_else(|| panic!("{cases:?}")).to_owned();
    assert!(message("root").contains("matches no file in `.`"), "{}", message("root"));
    // The hint names the file under the root, not from `/`.
    assert!(message("x").contains("commands = [\"s1/x.suite.toml\"]"), "{}", message("s1/x"));
    seen += &format!("{events:?}{}", get(&served, &format!("/v1/runs/{id}")).body);
    for leaked in [root_text.as_str(), root_text.trim_start_matches('/'), "hidden-name", "bbb-private-name"] {
        assert!(!seen.contains(leaked), "`{leaked}` reached a client: {seen}");
    }
}

#[test]
fn pages_of_other_origins_rebound_names_and_bodies_that_are_not_json_are_refused() {
    let served = serve(&["--allow-origin", "https://app.example"]);
    let address = served.url.trim_start_matches("http://").to_owned();
    let port = address.rsplit(':').next().unwrap().to_owned();
    let body = json!({"checks": [{"key": "keywords", "actual": "a b", "expected": "a"}]}).to_string();
    let check = |headers: &[(&str, &str)]| request(&served, "POST", "/v1/check", headers, body.as_bytes());
    let json_type = ("content-type", "application/json");
    // What a page elsewhere sends with fetch(..., {mode: "no-cors"}): an Origin and text/plain.
    let from_page = check(&[("origin", "http://evil.example"), ("content-type", "text/plain")]);
    assert_eq!(from_page.status, 403, "{from_page:?}");
    assert!(from_page.json()["error"].as_str().unwrap().contains("--allow-origin http://evil.example"));
    assert_eq!(check(&[("origin", "http://evil.example"), json_type]).status, 403);
    // Without a browser's Origin, a body that is not JSON is still refused.
    let text = check(&[("content-type", "text/plain")]);
    assert_eq!(text.status, 415, "{text:?}");
    assert_eq!(check(&[]).status, 415);
    // The server's own origin, and an allowed one, are answered.
    let own = format!("http://{address}");
    assert_eq!(check(&[("origin", &own), json_type]).status, 200);
    assert_eq!(check(&[("origin", "https://app.example"), json_type]).status, 200);
    assert_eq!(check(&[json_type]).status, 200);
    // DNS rebinding: a name that resolves to 127.0.0.1 is not a name this server answers to.
    let mut stream = TcpStream::connect(&address).unwrap();
    let head = format!("GET /v1/plugins HTTP/1.1\r\nhost: rebound.example:{port}\r\nconnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 421"), "{answer}");
    assert!(answer.contains("DNS rebinding"), "{answer}");
    let local = request(&served, "GET", "/v1/plugins", &[], b"");
    assert_eq!(local.status, 200);
}

/// A server on 127.0.0.1 that answers every request with `page` (HTML) and
/// keeps each request's head, lowercased.
struct PageServer {
    url: String,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl PageServer {
    fn start(page: String) -> PageServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = heads.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut request = [0; 8192];
                let n = stream.read(&mut request).unwrap_or(0);
                kept.lock().unwrap().push(String::from_utf8_lossy(&request[..n]).to_lowercase());
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        PageServer { url, heads }
    }
}

/// Loads `url` in headless Chromium until its scripts are done.
fn load_in_chromium(url: &str) {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--virtual-time-budget=5000",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
            url,
        ])
        .output()
        .unwrap_or_else(|e| panic!("failed to start `chromium` ({e}): `apt-get install chromium` (.ci/run does)"));
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(dom.contains("sent"), "the page's script did not finish: {dom}");
}

/// The attack of issue 29, in real Chromium: a page on another origin posts
/// a run with `fetch(…, {mode: "no-cors", Content-Type: text/plain})`,
/// which needs no preflight. The server starts no run.
#[test]
fn a_page_of_another_origin_starts_no_run_in_real_chromium() {
    let root = tempfile::tempdir().unwrap();
    let case = r#"{ agent: echo, interactions: [ { text: hi, response: { text: { value: hi } } } ] }"#;
    std::fs::write(root.path().join("a.hocon"), case).unwrap();
    let results = tempfile::tempdir().unwrap();
    let served = serve(&["--root", root.path().to_str().unwrap(), "--results", results.path().to_str().unwrap()]);
    let page = |target: &str| {
        format!(
            "<html><body><script>fetch('{target}/v1/runs', {{method: 'POST', mode: 'no-cors', headers: \
             {{'Content-Type': 'text/plain'}}, body: JSON.stringify({{paths: ['a.hocon']}})}})\
             .catch(function () {{}}).finally(function () {{ document.body.append('sent'); }});</script></body></html>"
        )
    };
    // The page reaching a recorder shows what a browser sends: the POST,
    // its Origin and text/plain (so the test can tell it was made).
    let recorder = PageServer::start(String::new());
    let recorder_page = PageServer::start(page(&recorder.url));
    load_in_chromium(&recorder_page.url);
    let heads = recorder.heads.lock().unwrap().clone();
    let sent = heads.iter().find(|head| head.starts_with("post /v1/runs")).unwrap_or_else(|| panic!("{heads:?}"));
    assert!(
        sent.contains(&format!("origin: {}", recorder_page.url)) && sent.contains("content-type: text/plain"),
        "{sent}"
    );

    // The same page against the server: refused, no run.
    let attacker = PageServer::start(page(&served.url));
    load_in_chromium(&attacker.url);
    let started: Vec<_> = std::fs::read_dir(results.path()).unwrap().flatten().map(|e| e.path()).collect();
    assert!(started.is_empty(), "a page of another origin started a run: {started:?}");
    // A client of the server's own starts one, so the folder would show it.
    let own = post(&served, "/v1/runs", &json!({"paths": ["a.hocon"]}));
    assert_eq!(own.status, 202, "{own:?}");
    assert_eq!(std::fs::read_dir(results.path()).unwrap().count(), 1);
}

/// One client's faulting checks disable the plugin for that request at
/// most, never for the next client: five requests of five faults each
/// (past the sandbox's five in a row), then a good request still passes.
#[test]
fn a_plugin_faulting_for_one_client_still_answers_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("assay.toml");
    let plugin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/plugins/hostile/hostile.wasm");
    std::fs::write(&config, format!("[plugins.hostile]\npath = {:?}\n", plugin.to_str().unwrap())).unwrap();
    let served = serve(&["--config", config.to_str().unwrap()]);
    let panic = json!({"key": "panic", "actual": "x", "expected": 1});
    for _ in 0..5 {
        let answer = post(&served, "/v1/check", &json!({"checks": vec![panic.clone(); 6]}));
        assert_eq!(answer.status, 200, "{answer:?}");
        let verdicts = answer.json()["verdicts"].as_array().unwrap().clone();
        assert!(verdicts.iter().all(|v| v["outcome"] == "error"), "{verdicts:?}");
        // Within the request, five in a row disable it for the sixth.
        assert!(verdicts[5]["message"].as_str().unwrap().contains("disabled after 5 faults"), "{verdicts:?}");
    }
    let good = post(&served, "/v1/check", &json!({"checks": [{"key": "count", "actual": "x", "expected": 1}]}));
    assert_eq!(good.json()["verdicts"][0]["outcome"], "pass", "{good:?}");
    let hook = json!({"output": "x", "context": {"vars": {}}});
    let answer = post(&served, "/v1/promptfoo/webhook?key=count&expected=1", &hook);
    assert_eq!(answer.json()["pass"], true, "{answer:?}");
}

/// An agent server that takes connections and never answers (the kernel
/// completes each handshake; nothing reads): it would hold a case until
/// its timeouts.
fn silent_agent() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    (listener, url)
}

/// A case over http to the `--agent-url`, and one in-process that passes.
fn held_and_quick_cases() -> Value {
    let held = r#"{ agent: echo, connections: [http], interactions: [ { text: "hi", response: { text: { keywords: "hi" } } } ] }"#;
    let quick = r#"{ agent: echo, interactions: [ { text: "hi", response: { text: { keywords: "hi" } } } ] }"#;
    json!({"cases": [{"name": "held", "text": held}, {"name": "quick", "text": quick}]})
}

/// The events of run `id` (waiting for its end), and its finished cases by
/// id.
fn wait_for_run(served: &Served, id: &str) -> (Vec<(String, Value)>, std::collections::BTreeMap<String, Value>) {
    let events = events_of(&get(served, &format!("/v1/runs/{id}/events")).body);
    let cases = events
        .iter()
        .filter(|(name, _)| name == "case_finished")
        .map(|(_, data)| (data["case"]["id"].as_str().unwrap().to_owned(), data["case"].clone()))
        .collect();
    (events, cases)
}

#[test]
fn delete_stops_a_run_held_by_a_silent_agent_and_each_case_is_reported_once() {
    let (_agent, url) = silent_agent();
    let results = tempfile::tempdir().unwrap();
    let served = serve(&["--agent-url", &url, "--results", results.path().to_str().unwrap()]);
    let started = post(&served, "/v1/runs", &held_and_quick_cases());
    assert_eq!(started.status, 202, "{started:?}");
    let id = started.json()["id"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(500));
    let stopping = request(&served, "DELETE", &format!("/v1/runs/{id}"), &[], b"");
    assert_eq!((stopping.status, &stopping.json()["status"]), (202, &json!("stopping")), "{stopping:?}");
    let asked = std::time::Instant::now();
    let (events, cases) = wait_for_run(&served, &id);
    assert!(asked.elapsed() < Duration::from_secs(10), "the run went on for {:?}", asked.elapsed());
    assert_eq!(cases.len(), 2, "{events:?}");
    assert_eq!(cases["quick"]["status"], "passed");
    assert_eq!((&cases["held"]["status"], &cases["held"]["error"]["kind"]), (&json!("error"), &json!("stopped")));
    assert!(cases["held"]["error"]["message"].as_str().unwrap().contains("DELETE /v1/runs/"), "{cases:?}");
    let summary = &events.last().unwrap().1["summary"];
    assert!(summary["stopped"].as_str().unwrap().contains("cancelled"), "{summary}");
    let lines = std::fs::read_to_string(results.path().join(&id).join("results.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    // Once finished, DELETE answers as GET does.
    let again = request(&served, "DELETE", &format!("/v1/runs/{id}"), &[], b"");
    assert_eq!((again.status, &again.json()["status"]), (200, &json!("finished")), "{again:?}");
    assert_eq!(request(&served, "DELETE", "/v1/runs/0123456789abcdef", &[], b"").status, 404);
}

#[test]
fn a_run_past_the_servers_run_timeout_is_stopped() {
    let (_agent, url) = silent_agent();
    let served = serve(&["--agent-url", &url, "--run-timeout", "1"]);
    let started = post(&served, "/v1/runs", &held_and_quick_cases());
    let id = started.json()["id"].as_str().unwrap().to_owned();
    let posted = std::time::Instant::now();
    let (events, cases) = wait_for_run(&served, &id);
    assert!(posted.elapsed() < Duration::from_secs(8), "the run went on for {:?}", posted.elapsed());
    assert_eq!(cases["held"]["error"]["kind"], "stopped", "{cases:?}");
    let summary = &events.last().unwrap().1["summary"];
    assert!(summary["stopped"].as_str().unwrap().contains("--run-timeout of 1 second"), "{summary}");
    let status = get(&served, &format!("/v1/runs/{id}")).json();
    assert_eq!(status["status"], "finished");
}

#[test]
fn events_are_kept_in_the_results_and_only_the_last_runs_are_kept() {
    let results = tempfile::tempdir().unwrap();
    std::fs::write(results.path().join("notes.txt"), "not a run").unwrap();
    let served = serve(&["--results", results.path().to_str().unwrap(), "--keep-runs", "2", "--jobs", "4"]);
    // A case of many samples: every one an event, read back from the file.
    let case = r#"{ agent: echo, success_ratio: "300/300", interactions: [ { text: "hi", response: { text: { keywords: "hi" } } } ] }"#;
    let mut ids = Vec::new();
    for _ in 0..4 {
        let started = post(&served, "/v1/runs", &json!({"cases": [{"name": "many", "text": case}]}));
        let id = started.json()["id"].as_str().unwrap().to_owned();
        let (events, cases) = wait_for_run(&served, &id);
        assert_eq!(cases["many"]["status"], "passed");
        assert_eq!(events.iter().filter(|(name, _)| name == "sample_finished").count(), 300);
        let file = std::fs::read_to_string(results.path().join(&id).join("events.jsonl")).unwrap_or_default();
        if ids.len() == 3 {
            assert_eq!(file.lines().count(), events.len(), "the stream is the file");
        }
        ids.push(id);
    }
    let mut left: Vec<String> =
        std::fs::read_dir(results.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    let mut kept = vec![ids[2].clone(), ids[3].clone(), "notes.txt".to_owned()];
    kept.sort();
    assert_eq!(left, kept);
    assert_eq!(get(&served, &format!("/v1/runs/{}", ids[0])).status, 404);
    assert_eq!(get(&served, &format!("/v1/runs/{}", ids[3])).status, 200);
    // A run may not ask more samples in flight than the server's --jobs.
    let greedy = post(&served, "/v1/runs", &json!({"cases": [{"name": "x", "text": case}], "jobs": 4096}));
    assert_eq!(greedy.status, 400, "{greedy:?}");
    assert!(greedy.json()["error"].as_str().unwrap().contains("--jobs"), "{greedy:?}");
}

/// Connections that announce a body and send it a byte at a time (or not
/// at all) hold no turn: with every turn's worth of them open, a good
/// request is answered at once, and each slow one gets 408 at the read
/// timeout.
#[test]
fn slow_request_bodies_hold_no_turn_of_a_good_request() {
    let served = serve(&["--max-requests", "2", "--request-timeout", "5", "--read-timeout", "2"]);
    let host = served.url.trim_start_matches("http://").to_owned();
    let slow: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut stream = TcpStream::connect(&host).unwrap();
            let head = format!(
                "POST /v1/check HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{"
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let asked = std::time::Instant::now();
    let good = post(&served, "/v1/check", &json!({"checks": [{"key": "keywords", "actual": "a b", "expected": "a"}]}));
    assert_eq!(good.status, 200, "{good:?}");
    assert!(asked.elapsed() < Duration::from_secs(1), "a good request waited {:?}", asked.elapsed());
    for mut stream in slow {
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("--read-timeout"), "{answer}");
    }
}

/// The CPU time the process `pid` has used, user and system.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    // After the name: state is field 3, utime 14 and stime 15 (1-based).
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// A batch of slow checks answered 504 at the request timeout stops being
/// evaluated then (it used to run to its end on a blocking thread).
#[test]
fn the_checks_of_a_request_given_up_stop_being_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let config = hostile_config(dir.path(), 1000);
    let served = serve(&["--config", config.to_str().unwrap(), "--request-timeout", "1"]);
    // Alternating with a passing check, so that no five faults come in a
    // row: each spin takes its whole 1 s deadline, 8 s in all.
    let spin = json!({"key": "spin", "actual": "x", "expected": 1});
    let count = json!({"key": "count", "actual": "x", "expected": 1});
    let checks: Vec<Value> = (0..8).flat_map(|_| [spin.clone(), count.clone()]).collect();
    let answer = post(&served, "/v1/check", &json!({ "checks": checks }));
    assert_eq!(answer.status, 504, "{answer:?}");
    // At most the check running then finishes (within its 1 s deadline).
    std::thread::sleep(Duration::from_millis(1500));
    let before = cpu_time(served.pid());
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_time(served.pid()) - before;
    assert!(spent < Duration::from_millis(500), "the checks went on: {spent:?} of CPU in 2 s");
}

/// The judge's `max_calls` budget counts per request: one client spending
/// it leaves the next a budget of its own.
#[test]
fn each_request_has_a_judge_budget_of_its_own() {
    let judge = crate::judge::judge_server::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("assay.toml");
    std::fs::write(&config, format!("[judge]\nurl = \"{}/v1\"\nmodel = \"m\"\nmax_calls = 1\n", judge.url())).unwrap();
    let served = serve(&["--config", config.to_str().unwrap(), "--no-judge-cache"]);
    let gist = |text: &str| json!({"key": "gist", "actual": text, "expected": "say pass"});
    let spent = post(&served, "/v1/check", &json!({"checks": [gist("first text"), gist("second text")]}));
    let verdicts = spent.json()["verdicts"].clone();
    assert_eq!(verdicts[0]["outcome"], "pass", "{verdicts}");
    assert!(verdicts[1]["message"].as_str().unwrap().contains("budget of 1 request"), "{verdicts}");
    let next = post(&served, "/v1/check", &json!({"checks": [gist("third text")]}));
    assert_eq!(next.json()["verdicts"][0]["outcome"], "pass", "{next:?}");
}

/// A run whose cases report without pause still hears DELETE (the stop
/// was starved by the events), and its in-process cases stop between
/// samples: every admitted case is reported once, the rest counted as not
/// run.
#[test]
fn a_busy_run_of_in_process_cases_is_stopped_by_delete() {
    let results = tempfile::tempdir().unwrap();
    let served = serve(&["--results", results.path().to_str().unwrap()]);
    let case = r#"{ agent: echo, success_ratio: "1000/1000", interactions: [ { text: "hi", response: { text: { keywords: "hi" } } } ] }"#;
    let cases: Vec<Value> = (0..200).map(|i| json!({"name": format!("busy-{i:03}"), "text": case})).collect();
    let started = post(&served, "/v1/runs", &json!({ "cases": cases }));
    assert_eq!(started.status, 202, "{started:?}");
    let id = started.json()["id"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(1500));
    let asked = std::time::Instant::now();
    assert_eq!(request(&served, "DELETE", &format!("/v1/runs/{id}"), &[], b"").status, 202);
    let (events, cases) = wait_for_run(&served, &id);
    assert!(asked.elapsed() < Duration::from_secs(10), "the run went on for {:?}", asked.elapsed());
    let summary = &events.last().unwrap().1["summary"];
    assert!(summary["stopped"].as_str().unwrap().contains("cancelled"), "{summary}");
    let (reported, not_run) = (summary["cases"].as_u64().unwrap(), summary["not_run"].as_u64().unwrap_or(0));
    assert_eq!(reported + not_run, 200, "{summary}");
    assert!(not_run > 0, "{summary}");
    assert_eq!(cases.len() as u64, reported);
    assert!(cases.values().any(|case| case["error"]["kind"] == "stopped"), "no case was stopped in flight");
    let lines = std::fs::read_to_string(results.path().join(&id).join("results.jsonl")).unwrap();
    assert_eq!(lines.lines().count() as u64, reported);
    // A case stopped between its samples keeps those it finished (in
    // results.jsonl: its event may be too large to carry them).
    let lines: Vec<Value> = lines.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let kept = lines
        .iter()
        .filter(|line| line["error"]["kind"] == "stopped")
        .any(|line| line["samples"].as_array().is_some_and(|samples| !samples.is_empty()));
    assert!(kept, "no stopped case kept the samples it finished");
}

/// A `POST /v1/runs` answered 504 (its cases took longer to read than the
/// request may) starts no run: its client could neither follow nor stop it.
#[test]
fn a_run_request_given_up_starts_no_run() {
    let results = tempfile::tempdir().unwrap();
    let served =
        serve(&["--results", results.path().to_str().unwrap(), "--request-timeout", "1", "--max-body-mb", "32"]);
    let case = r#"{ agent: echo, interactions: [ { text: "hi", response: { text: { keywords: "hi" } } } ] }"#;
    let cases: Vec<Value> = (0..60_000).map(|_| json!({ "text": case })).collect();
    let answer = post(&served, "/v1/runs", &json!({ "cases": cases }));
    assert_eq!(answer.status, 504, "the cases were read within the second: make the request larger");
    std::thread::sleep(Duration::from_secs(3));
    let runs: Vec<_> = std::fs::read_dir(results.path()).unwrap().collect();
    assert!(runs.is_empty(), "a run was started: {runs:?}");
    // And the slot is free.
    let one = post(&served, "/v1/runs", &json!({"cases": [{"text": case}]}));
    assert_eq!(one.status, 202, "{one:?}");
}

/// A case whose line is large (its answer) streams a brief event; the
/// results file has the whole line.
#[test]
fn a_large_case_streams_a_brief_event_and_the_results_keep_it_whole() {
    let results = tempfile::tempdir().unwrap();
    let served = serve(&["--results", results.path().to_str().unwrap()]);
    let text = "w ".repeat(200_000);
    let case = json!({"agent": "echo", "interactions": [{"text": text, "response": {"text": {"keywords": "w"}}}]});
    let started = post(&served, "/v1/runs", &json!({"cases": [{"name": "large", "text": case.to_string()}]}));
    assert_eq!(started.status, 202, "{started:?}");
    let id = started.json()["id"].as_str().unwrap().to_owned();
    let (events, cases) = wait_for_run(&served, &id);
    let finished = &events.iter().find(|(name, _)| name == "case_finished").unwrap().1;
    assert!(finished["case_left_out"].as_str().unwrap().contains("results.jsonl"), "{finished}");
    assert_eq!((&cases["large"]["status"], cases["large"].get("samples")), (&json!("passed"), None));
    let line = std::fs::read_to_string(results.path().join(&id).join("results.jsonl")).unwrap();
    assert!(line.len() > 400_000 && line.contains("\"samples\""), "{}", line.len());
}
