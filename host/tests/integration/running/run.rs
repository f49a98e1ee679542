//! `assay run` end to end: the real binary against the demo agents
//! (in-process and behind `assay agent serve`) and a fault-injecting
//! server, asserting exit codes, `results.jsonl`, `summary.json` and JUnit.

use crate::fake_server::{FakeServer, Reply};
use crate::util::{Served, assay, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Writes a test case file.
fn case(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The lines of `results.jsonl`, by case id.
fn results(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The result of the case whose id is `id` or ends in `/id` (ids are
/// paths from the project's root: `fixtures/cases/…` in this repository).
fn result<'a>(results: &'a [Value], id: &str) -> &'a Value {
    let suffix = format!("/{id}");
    results
        .iter()
        .find(|r| r["id"] == id || r["id"].as_str().is_some_and(|i| i.ends_with(&suffix)))
        .unwrap_or_else(|| panic!("no result for {id} in {results:?}"))
}

/// Runs `assay run` with a results directory in `out` and the given args.
fn run(out: &Path, args: &[&str]) -> std::process::Output {
    let results = out.to_str().unwrap();
    let mut all = vec!["run", "--results", results];
    all.extend_from_slice(args);
    assay(&all)
}

#[test]
fn the_project_fixtures_pass_against_the_demo_agents() {
    let out = tempfile::tempdir().unwrap();
    let output = run(out.path(), &["fixtures/"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let results = results(out.path());
    let root = crate::util::root().display().to_string();
    let hocon = glob::glob(&format!("{root}/fixtures/**/*.hocon")).unwrap().count();
    let spec_lines: usize = glob::glob(&format!("{root}/fixtures/suites/**/specs/*.jsonl"))
        .unwrap()
        .map(|spec| std::fs::read_to_string(spec.unwrap()).unwrap().lines().filter(|l| !l.trim().is_empty()).count())
        .sum();
    assert!(spec_lines >= 4, "the fixture suite's spec lines are cases too");
    let files = hocon + spec_lines;
    assert_eq!(results.len(), files);
    for line in &results {
        let expected = if line["agent"] == "flaky" { "flaky" } else { "passed" };
        assert_eq!(line["status"], expected, "{line}");
    }
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["cases"], files);
    assert_eq!(summary["flaky"], 1);
    assert!(stdout(&output).contains("FLAKY"), "{}", stdout(&output));
}

#[test]
fn the_project_fixtures_pass_over_http_against_assay_agent_serve() {
    let served = Served::start(&[]);
    let out = tempfile::tempdir().unwrap();
    let output = run(out.path(), &["fixtures/cases", "--connection", "http", "--agent-url", &served.url]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let results = results(out.path());
    let history = result(&results, "music_nerd_pro/history");
    assert_eq!(history["status"], "passed");
    assert_eq!(history["samples"][0]["runs"][0]["connection"], "http");
    let checks = &history["samples"][0]["runs"][0]["interactions"][1]["checks"];
    assert_eq!(checks[0]["target"], "structure.answer");
    assert_eq!(checks[0]["outcome"], "pass");
}

#[test]
fn both_connections_run_each_from_a_fresh_conversation() {
    let served = Served::start(&["echo"]);
    let dir = tempfile::tempdir().unwrap();
    case(
        dir.path(),
        "two.hocon",
        r#"{ "agent": "echo", "connections": ["direct", "http"],
             "interactions": [ { "text": "a", "response": { "structure": { "turn": { "value": 1 } } } },
                               { "text": "b", "response": { "structure": { "turn": { "value": 2 } } } } ] }"#,
    );
    let out = tempfile::tempdir().unwrap();
    let output = run(out.path(), &[dir.path().to_str().unwrap(), "--agent-url", &served.url]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let line = &results(out.path())[0];
    let runs = line["samples"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|r| r["connection"].as_str().unwrap()).collect::<Vec<_>>(), ["direct", "http"]);
}

#[test]
fn a_failing_case_exits_1_and_is_reported_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    case(
        dir.path(),
        "wrong.hocon",
        r#"{ "agent": "math_guy", "interactions": [ { "text": "times", "sly_data": { "x": 2, "y": 3 },
             "response": { "sly_data": { "equals": { "value": 7 } }, "text": { "keywords": "6" } } } ] }"#,
    );
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let output = run(out.path(), &[dir.path().to_str().unwrap(), "--junit", junit.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("[direct] interaction 1: sly_data.equals value 7:"), "{text}");

    let line = &results(out.path())[0];
    assert_eq!(line["status"], "failed");
    let checks = &line["samples"][0]["runs"][0]["interactions"][0]["checks"];
    assert_eq!(checks[0]["outcome"], "fail");
    assert_eq!(checks[0]["actual"], "6.0");
    assert_eq!(checks[1]["outcome"], "pass");

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"<testcase name="wrong" classname="math_guy""#), "{xml}");
    // The failure names the line of the case file that asks for the check.
    let place = format!("{}:2: ", dir.path().join("wrong.hocon").display());
    assert!(
        xml.contains(&format!(r#"<failure message="{place}[direct] interaction 1: sly_data.equals value 7: "#)),
        "{xml}"
    );
}

#[test]
fn a_flaky_case_passes_unless_fail_on_flaky_and_junit_marks_it_as_nextest_does() {
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let output = run(out.path(), &["fixtures/cases/flaky", "--junit", junit.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let line = &results(out.path())[0];
    assert_eq!(line["status"], "flaky");
    let samples: Vec<(u64, bool)> = line["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["index"].as_u64().unwrap(), s["passed"].as_bool().unwrap()))
        .collect();
    assert_eq!(samples, [(0, true), (1, false), (2, true)]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<flakyFailure message=\"sample 1 failed\""), "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");

    let strict = tempfile::tempdir().unwrap();
    let output = run(strict.path(), &["fixtures/cases/flaky", "--fail-on-flaky"]);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn success_ratio_two_of_five_stops_after_two_passing_samples() {
    let out = tempfile::tempdir().unwrap();
    let output = run(out.path(), &["fixtures/cases/echo/ratio.hocon"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let line = &results(out.path())[0];
    assert_eq!(line["status"], "passed");
    assert_eq!(line["samples"].as_array().unwrap().len(), 2, "{line}");
}

#[test]
fn a_case_that_cannot_reach_its_ratio_stops_early() {
    let dir = tempfile::tempdir().unwrap();
    // Samples 1 and 3 fail: after sample 1 fails and 3 fails, 3 of 4 is out
    // of reach.
    case(
        dir.path(),
        "hopeless.hocon",
        r#"{ "agent": "flaky", "success_ratio": "3/4",
             "interactions": [ { "text": "x", "response": { "text": { "value": "pass" } } } ] }"#,
    );
    let out = tempfile::tempdir().unwrap();
    let output = run(out.path(), &[dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let line = &results(out.path())[0];
    assert_eq!(line["status"], "failed");
    // The case is decided the moment samples 1 and 3 have failed: samples
    // 0 and 2 may or may not have finished by then (their results are kept
    // only if they did).
    let failed: Vec<u64> = line["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["passed"] == false)
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    assert_eq!(failed, [1, 3], "{line}");
}

/// A server that answers `echo` correctly after `pause`.
fn slow_server(pause: Duration) -> FakeServer {
    FakeServer::start(move |_| {
        Reply::Chunks(vec![(pause, "{\"response\": {\"type\": \"AI\", \"text\": \"slow answer\"}}\n".into())])
    })
}

#[test]
fn timeouts_cancel_the_request_and_name_the_limit() {
    let server = slow_server(Duration::from_secs(20));
    let dir = tempfile::tempdir().unwrap();
    case(
        dir.path(),
        "interaction.hocon",
        r#"{ "agent": "echo", "connections": "http",
             "interactions": [ { "text": "x", "timeout_in_seconds": 0.3, "response": { "text": { "keywords": "answer" } } } ] }"#,
    );
    case(
        dir.path(),
        "case.hocon",
        r#"{ "agent": "echo", "connections": "http", "timeout_in_seconds": 0.3,
             "interactions": [ { "text": "x", "response": { "text": { "keywords": "answer" } } } ] }"#,
    );
    let out = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let output = run(out.path(), &[dir.path().to_str().unwrap(), "--agent-url", &server.url()]);
    assert!(started.elapsed() < Duration::from_secs(15), "the timeouts did not cancel");
    assert_eq!(output.status.code(), Some(1));
    let results = results(out.path());
    for (id, kind, limit) in [
        ("interaction", "interaction-timeout", "exceeded its timeout_in_seconds of 0.3 s"),
        ("case", "case-timeout", "the case's timeout_in_seconds of 0.3 s fired during interaction 1"),
    ] {
        let line = result(&results, id);
        assert_eq!(line["status"], "error", "{line}");
        let error = &line["samples"][0]["runs"][0]["interactions"][0]["error"];
        assert_eq!(error["kind"], kind);
        assert!(error["message"].as_str().unwrap().contains(limit), "{error}");
    }

    // --timeout overrides the case's own limit.
    let out = tempfile::tempdir().unwrap();
    let server = slow_server(Duration::from_millis(500));
    let output = run(
        out.path(),
        &[dir.path().join("case.hocon").to_str().unwrap(), "--agent-url", &server.url(), "--timeout", "10"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn a_bad_file_is_an_error_and_the_others_still_run() {
    let dir = tempfile::tempdir().unwrap();
    case(
        dir.path(),
        "good.hocon",
        r#"{ "agent": "echo", "interactions": [ { "text": "hi", "response": { "text": { "value": "hi" } } } ] }"#,
    );
    case(dir.path(), "broken.hocon", "{ \"agent\": \"echo\",\n  \"interactions\": [ { \"text\" \"hi\" } ] }");
    case(
        dir.path(),
        "typo.hocon",
        r#"{ "agent": "echo", "interactions": [ { "text": "hi", "response": { "text": { "keywordz": "hi" } } } ] }"#,
    );
    let out = tempfile::tempdir().unwrap();
    let output = run(out.path(), &[dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let results = results(out.path());
    assert_eq!(result(&results, "good")["status"], "passed");
    let broken = result(&results, "broken");
    assert_eq!(broken["status"], "error");
    assert_eq!(broken["error"]["kind"], "bad-file");
    let message = broken["error"]["message"].as_str().unwrap();
    assert!(message.contains("broken.hocon") && message.contains("HOCON syntax error at 2:"), "{message}");
    let typo = result(&results, "typo")["error"]["message"].as_str().unwrap();
    assert!(typo.contains("did you mean `keywords`?"), "{typo}");
    assert!(stdout(&output).contains("did you mean `keywords`?"));
}

#[test]
fn an_agent_server_that_is_down_is_an_error_naming_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let out = tempfile::tempdir().unwrap();
    let output =
        run(out.path(), &["fixtures/cases/math_guy/multiply.hocon", "--connection", "http", "--agent-url", &url]);
    assert_eq!(output.status.code(), Some(1));
    let line = &results(out.path())[0];
    assert_eq!(line["status"], "error");
    let error = &line["samples"][0]["runs"][0]["interactions"][0]["error"];
    assert_eq!(error["kind"], "unreachable");
    assert!(error["message"].as_str().unwrap().contains(&format!("{url}/api/v1/math_guy/streaming_chat")), "{error}");
}

#[test]
fn list_and_filter_select_cases_without_running_them() {
    let output = assay(&["run", "fixtures/", "--list", "--filter", "math_guy/(multiply|operations)"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed = stdout(&output);
    let ids: Vec<&str> = listed.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(ids, ["fixtures/cases/math_guy/multiply", "fixtures/cases/math_guy/operations"]);

    let output = assay(&["run", "fixtures/", "--filter", "no-such-case"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no test case matches --filter `no-such-case`"));
}

#[test]
fn no_test_files_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = assay(&["run", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no test case files"), "{}", stderr(&output));
}

#[cfg(unix)]
#[test]
fn a_killed_run_keeps_every_case_it_reported_finished() {
    use std::io::BufRead;
    let server = slow_server(Duration::from_millis(150));
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        case(
            dir.path(),
            &format!("case{i:02}.hocon"),
            r#"{ "agent": "echo", "connections": "http", "interactions": [ { "text": "x", "response": { "text": { "keywords": "slow" } } } ] }"#,
        );
    }
    let out = tempfile::tempdir().unwrap();
    let mut child = crate::util::assay_command()
        .args(["run", "--verbose", "-j", "1", "--agent-url", &server.url(), "--results"])
        .arg(out.path())
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reported = Vec::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.contains("PASS") {
            reported.push(line.split_whitespace().last().unwrap().to_owned());
            if reported.len() == 5 {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let text = std::fs::read_to_string(out.path().join("results.jsonl")).unwrap();
    assert!(text.ends_with('\n'), "a partial line was left: {text:?}");
    let ids: Vec<String> =
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_str().unwrap().to_owned()).collect();
    assert!(ids.len() < 40, "the run finished before it was killed");
    for id in &reported {
        assert!(ids.contains(id), "{id} was reported finished but is not in results.jsonl: {ids:?}");
    }
}

#[test]
fn assay_toml_names_agent_components_and_the_server() {
    let served = Served::start(&["echo"]);
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("agents")).unwrap();
    std::fs::copy(crate::util::fixture("agents/math_guy/math_guy.wasm"), project.path().join("agents/calc.wasm"))
        .unwrap();
    let config = project.path().join("assay.toml");
    std::fs::write(&config, format!("[agent]\nurl = \"{}\"\n\n[agents]\ncalc = \"agents/calc.wasm\"\n", served.url))
        .unwrap();
    case(
        project.path(),
        "cases/calc.hocon",
        r#"{ "agent": "calc", "interactions": [ { "text": "times", "sly_data": { "x": 2, "y": 3 },
             "response": { "sly_data": { "equals": { "value": 6 } } } } ] }"#,
    );
    case(
        project.path(),
        "cases/remote.hocon",
        r#"{ "agent": "echo", "connections": "http", "interactions": [ { "text": "hi", "response": { "text": { "value": "hi" } } } ] }"#,
    );
    let out = tempfile::tempdir().unwrap();
    let cases = project.path().join("cases");
    let output = run(out.path(), &[cases.to_str().unwrap(), "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));

    std::fs::write(&config, "[agent]\nurll = \"x\"\n").unwrap();
    let output = run(out.path(), &[cases.to_str().unwrap(), "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown field `urll`"), "{}", stderr(&output));
}

#[test]
fn two_cases_with_one_id_are_both_reported_the_second_as_an_error_naming_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let case =
        r#"{ "agent": "echo", "interactions": [ { "text": "hi", "response": { "text": { "value": "hi" } } } ] }"#;
    for folder in ["a", "b"] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        std::fs::write(dir.path().join(folder).join("x.hocon"), case).unwrap();
    }
    // A suite `qa.suite.toml` beside `qa/s1.hocon` gives its line `s1` the same id.
    std::fs::create_dir_all(dir.path().join("a/qa")).unwrap();
    std::fs::write(dir.path().join("a/qa/s1.hocon"), case).unwrap();
    std::fs::write(
        dir.path().join("a/qa.suite.toml"),
        "specs = [\"s.jsonl\"]\nagent = \"echo\"\ntext = \"{{q}}\"\n[[checks]]\nkey = \"value\"\nexpected = \"hi\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a/s.jsonl"), "{\"id\": \"s1\", \"q\": \"hi\"}\n").unwrap();

    let out = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let output = run(out.path(), &[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let results = results(out.path());
    let mut ids: Vec<&str> = results.iter().map(|line| line["id"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["qa/s1", "qa/s1~2", "x", "x~2"], "every case once, under an id of its own");
    assert_eq!(result(&results, "x")["status"], "passed");
    let second = result(&results, "x~2");
    assert_eq!(second["status"], "error");
    let message = second["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("`{}`", b.join("x.hocon").display())), "{message}");
    assert!(
        message.contains(&format!("is the id of the case from `{}` too", a.join("x.hocon").display())),
        "{message}"
    );
    assert_eq!(result(&results, "qa/s1~2")["status"], "error");
}

/// Issue 29: a 150-byte case asking for four billion samples is an error
/// case naming the cap, at once; the other cases run; assay.toml (never a
/// case file) raises the cap.
/// `assay run cases` in `dir` with `toml` as its assay.toml, into a fresh
/// `results`: the process's output and the lines of `results.jsonl`.
fn run_with_config(dir: &std::path::Path, toml: &str) -> (std::process::Output, Vec<serde_json::Value>) {
    std::fs::write(dir.join("assay.toml"), toml).unwrap();
    let results = dir.join("results");
    let _ = std::fs::remove_dir_all(&results);
    let output = crate::util::assay_command()
        .current_dir(dir)
        .args(["run", "cases", "--results", results.to_str().unwrap()])
        .output()
        .unwrap();
    let text = std::fs::read_to_string(results.join("results.jsonl")).unwrap_or_default();
    (output, text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

#[test]
fn a_case_asking_for_more_samples_than_the_cap_is_an_error_and_assay_toml_raises_it() {
    let dir = tempfile::tempdir().unwrap();
    let huge = r#"{ agent: echo, success_ratio: "4000000000/4000000000", interactions: [ { text: hi, response: { text: { value: hi } } } ] }"#;
    let many = r#"{ agent: echo, success_ratio: "1/1500", interactions: [ { text: hi, response: { text: { value: hi } } } ] }"#;
    let good = r#"{ agent: echo, interactions: [ { text: hi, response: { text: { value: hi } } } ] }"#;
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    for (name, text) in [("huge", huge), ("many", many), ("good", good)] {
        std::fs::write(dir.path().join(format!("cases/{name}.hocon")), text).unwrap();
    }
    let run = |toml: &str| {
        let started = std::time::Instant::now();
        let (output, lines) = run_with_config(dir.path(), toml);
        let status = |id: &str| lines.iter().find(|l| l["id"] == format!("cases/{id}")).cloned().unwrap_or_default();
        (output, status("huge"), status("many"), status("good"), started.elapsed())
    };
    let (output, huge, many, good, took) = run("");
    assert_eq!(output.status.code(), Some(1), "{}", crate::util::stdout(&output));
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    let message = huge["error"]["message"].as_str().unwrap_or_else(|| panic!("{huge}"));
    assert!(
        message.contains("4000000000 samples, over the cap of 1000") && message.contains("max_samples"),
        "{message}"
    );
    assert_eq!(many["status"], "error", "{many}");
    assert_eq!(good["status"], "passed", "{good}");
    let (_, huge, many, good, _) = run("[cases]\nmax_samples = 2000\n");
    assert_eq!(
        (huge["status"].clone(), many["status"].clone(), good["status"].clone()),
        ("error".into(), "passed".into(), "passed".into())
    );
    let (output, ..) = run("[cases]\nmax_samples = 0\n");
    assert!(crate::util::stderr(&output).contains("max_samples"), "{}", crate::util::stderr(&output));
}

/// A list `expected` is a check per element: a case planning more checks
/// than the cap is one error case naming it, run by nothing, and
/// assay.toml raises the cap.
#[test]
fn a_case_planning_more_checks_than_the_cap_is_an_error_and_assay_toml_raises_it() {
    let dir = tempfile::tempdir().unwrap();
    let words: Vec<String> = (0..1500).map(|i| format!("\"w{i}\"")).collect();
    let many = format!(
        r#"{{ agent: echo, interactions: [ {{ text: hi, response: {{ text: {{ not_keywords: [{}] }} }} }} ] }}"#,
        words.join(", ")
    );
    let good = r#"{ agent: echo, interactions: [ { text: hi, response: { text: { value: hi } } } ] }"#;
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::write(dir.path().join("cases/many.hocon"), many).unwrap();
    std::fs::write(dir.path().join("cases/good.hocon"), good).unwrap();
    let run = |toml: &str| {
        let (output, lines) = run_with_config(dir.path(), toml);
        let case = |id: &str| lines.iter().find(|l| l["id"] == format!("cases/{id}")).cloned().unwrap_or_default();
        let bytes = lines.iter().map(|line| line.to_string().len()).sum::<usize>();
        (output, case("many"), case("good"), bytes)
    };
    let (output, many, good, bytes) = run("");
    assert_eq!(output.status.code(), Some(1), "{}", crate::util::stdout(&output));
    let message = many["error"]["message"].as_str().unwrap_or_else(|| panic!("{many}"));
    assert!(message.contains("1500 checks") && message.contains("max_checks = 1500"), "{message}");
    assert_eq!(good["status"], "passed", "{good}");
    assert!(bytes < 100_000, "the refused case wrote {bytes} bytes of results");
    let (_, many, _, _) = run("[cases]\nmax_checks = 2000\n");
    assert_eq!(many["status"], "passed", "{many}");
    let (output, ..) = run("[cases]\nmax_checks = 0\n");
    assert!(crate::util::stderr(&output).contains("max_checks"), "{}", crate::util::stderr(&output));
}

/// A case of many samples of large answers keeps the answers of its first
/// samples (up to half a results line) and the verdicts of all: its memory
/// and its results line stay bounded.
#[test]
fn a_case_of_many_large_answers_keeps_its_verdicts_and_leaves_later_answers_out() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    let text = "w ".repeat(512 << 10);
    let case = serde_json::json!({
        "agent": "echo",
        "success_ratio": "150/150",
        "interactions": [{ "text": text, "response": { "text": { "keywords": "w" } } }]
    });
    std::fs::write(dir.path().join("cases/big.hocon"), case.to_string()).unwrap();
    let (cases, results) = (dir.path().join("cases"), dir.path().join("results"));
    let mut child = crate::util::assay_command()
        .args(["run", cases.to_str().unwrap(), "--results", results.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Its own peak, read from /proc while it runs (`wait4`'s can be the
    // test process's own, when the child was forked from it).
    let mut peak_kb = 0u64;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let text = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        let hwm = text.lines().find_map(|line| line.strip_prefix("VmHWM:"));
        peak_kb = peak_kb.max(hwm.and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()).unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(status.success(), "{status:?}");
    let line: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(results.join("results.jsonl")).unwrap().trim()).unwrap();
    let samples = line["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 150);
    assert!(samples.iter().all(|s| s["passed"] == true));
    let left_out = samples.iter().filter(|s| s["answers_left_out"] == true).count();
    assert!(left_out > 100 && left_out < 150, "{left_out} of 150 samples left their answers out");
    assert!(samples[0]["runs"][0]["interactions"][0]["response"]["text"].as_str().unwrap().len() >= 1 << 20);
    assert!(samples[149]["runs"][0]["interactions"][0].get("response").is_none_or(|r| r.is_null()));
    // 150 answers of 1 MiB, each also the check's actual, kept whole would
    // be 300 MiB.
    assert!(peak_kb < 200 << 10, "peak resident memory {peak_kb} KiB");
}
