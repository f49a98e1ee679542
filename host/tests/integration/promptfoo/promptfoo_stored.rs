//! promptfoo's `options.storeOutputAs`, through the `assay` binary with the
//! `echo` provider (its answer is the prompt): a test's answer becomes a
//! var of every case after it, in promptfoo's order (tests, then
//! providers, then prompts), whatever runs at once, is filtered out or is
//! replayed. The expected answers are promptfoo 0.123.1's own on this
//! config.

use super::promptfoo_suite::{Ran, run, suite};
use crate::util::stdout;
use serde_json::Value;

const CHAINED: &str = r#"
prompts: ['A {{q}} {{prev}}', 'B {{q}} {{prev}}']
providers: [echo]
tests:
  - vars: {q: one}
    options: {storeOutputAs: prev}
    assert: [{type: contains, value: one}]
  - vars: {q: two}
    options: {storeOutputAs: prev}
    assert: [{type: contains, value: "B one"}]
  - vars: {q: three, prev: its own}
    assert: [{type: contains, value: "B two"}]
"#;

/// promptfoo 0.123.1's answers to [`CHAINED`] (`promptfoo eval`, echo
/// provider), by case id suffix.
const PROMPTFOOS: &[(&str, &str)] = &[
    ("[A {{q}} {{prev}}] test 1", "A one "),
    ("[B {{q}} {{prev}}] test 1", "B one A one "),
    ("[A {{q}} {{prev}}] test 2", "A two B one A one "),
    ("[B {{q}} {{prev}}] test 2", "B two A two B one A one "),
    ("[A {{q}} {{prev}}] test 3", "A three B two A two B one A one "),
    ("[B {{q}} {{prev}}] test 3", "B three B two A two B one A one "),
];

fn answer(ran: &Ran, suffix: &str) -> String {
    let text = &ran.case(suffix)["samples"][0]["runs"][0]["interactions"][0]["response"]["text"];
    text.as_str().unwrap_or_default().to_owned()
}

#[test]
fn each_case_gets_the_outputs_stored_before_it_in_promptfoos_order() {
    for jobs in ["1", "8"] {
        let dir = suite(CHAINED, &[]);
        let ran = run(dir.path(), &["-j", jobs]);
        assert_eq!(ran.lines.len(), 6, "{}", stdout(&ran.output));
        for (suffix, expected) in PROMPTFOOS {
            assert_eq!(answer(&ran, suffix), *expected, "{suffix} with -j {jobs}");
            assert_eq!(ran.case(suffix)["status"], "passed", "{suffix}: {}", stdout(&ran.output));
        }
    }
}

#[test]
fn a_filtered_run_still_asks_the_cases_before_and_a_replay_gives_the_same_answers() {
    let dir = suite(CHAINED, &[]);
    let ran = run(dir.path(), &["--filter", "test 3"]);
    assert_eq!(ran.lines.len(), 2, "{}", stdout(&ran.output));
    assert_eq!(answer(&ran, "[B {{q}} {{prev}}] test 3"), "B three B two A two B one A one ");

    let dir = suite(CHAINED, &[]);
    run(dir.path(), &[]);
    let recorded = dir.path().join("recorded");
    std::fs::rename(dir.path().join("results"), &recorded).unwrap();
    let replayed = run(dir.path(), &["--replay", recorded.to_str().unwrap()]);
    assert_eq!(replayed.lines.len(), 6, "{}", stdout(&replayed.output));
    for (suffix, expected) in PROMPTFOOS {
        assert_eq!(answer(&replayed, suffix), *expected, "{suffix} replayed");
    }
}

#[test]
fn what_promptfoo_would_not_store_is_refused_naming_it() {
    let config = r#"
prompts: ['a {{x}}', 'b {{x}}']
providers: [echo]
tests:
  - description: not a name
    vars: {x: 1}
    options: {storeOutputAs: 5}
  - description: outside options
    vars: {x: 1}
    storeOutputAs: x
  - description: compared
    vars: {x: 1}
    options: {storeOutputAs: y}
    assert: [{type: max-score}, {type: contains, value: a}]
"#;
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    let message = |suffix: &str| -> String {
        let error: &Value = &ran.case(suffix)["error"]["message"];
        error.as_str().unwrap_or_default().to_owned()
    };
    assert!(
        message("[a {{x}}] not a name").contains("`options.storeOutputAs` is the number 5, not the name of a var"),
        "{}",
        message("[a {{x}}] not a name")
    );
    assert!(
        message("[a {{x}}] outside options").contains("promptfoo reads it under `options` only"),
        "{}",
        message("[a {{x}}] outside options")
    );
    assert!(
        message("[b {{x}}] compared").contains("not supported in a config whose tests store outputs"),
        "{}",
        message("[b {{x}}] compared")
    );
}

#[test]
fn cases_run_in_turn_are_reported_as_each_ends_not_when_the_last_does() {
    // The third question takes the server four seconds; the second case's
    // result is in results.jsonl well before that.
    let server = crate::fake_server::FakeServer::start(|request| {
        let asked = request.body["input"].as_str().unwrap_or_default().to_owned();
        if asked.starts_with("three") {
            std::thread::sleep(std::time::Duration::from_secs(4));
        }
        crate::connections::connections_openai::json_reply(200, "", &serde_json::json!({ "answer": asked }))
    });
    let config = format!(
        r#"
prompts: ['{{{{q}}}} {{{{prev}}}}']
providers:
  - id: http://127.0.0.1:{port}/ask
    config: {{body: {{input: "{{{{prompt}}}}"}}, transformResponse: json.answer}}
tests:
  - vars: {{q: one}}
    options: {{storeOutputAs: prev}}
  - vars: {{q: two}}
    options: {{storeOutputAs: prev}}
  - vars: {{q: three}}
"#,
        port = server.port
    );
    let dir = suite(&config, &[]);
    let results = dir.path().join("results");
    let mut child = crate::util::assay_command()
        .args(["run", "promptfooconfig.yaml", "--results", results.to_str().unwrap()])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let second_reported = loop {
        let lines = std::fs::read_to_string(results.join("results.jsonl")).unwrap_or_default();
        if lines.contains("promptfooconfig/test 1") && lines.contains("promptfooconfig/test 2") {
            break started.elapsed();
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "tests 1 and 2 were never reported");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let still_running = child.try_wait().unwrap().is_none();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}{}", stdout(&output), crate::util::stderr(&output));
    assert!(still_running, "tests 1 and 2 were reported only when the run ended ({second_reported:?})");
    let lines = std::fs::read_to_string(results.join("results.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 3);
    assert!(lines.contains("\"text\":\"three two one \""), "{lines}");
}
