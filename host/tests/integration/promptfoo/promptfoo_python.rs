//! promptfoo's `python` assertions, run by the embedded Python runner
//! (`plugins/python/python.wasm`: CPython in the sandbox) through `assay run
//! promptfooconfig.yaml`: inline expressions and function bodies, a file's
//! `get_assert` or named function, the result shapes promptfoo reads
//! (true/false, a score, a GradingResult dict) with `threshold` and
//! `not-python`, exceptions as failing verdicts with promptfoo's reason;
//! and a hostile corpus, one test per attempt to leave the sandbox, each
//! contained with a clear reason while the other cases of the run go on
//! and every case is reported once.
//!
//! The expected reasons are promptfoo 0.123.1's (`handlePython` and
//! `normalizeScriptResult` in its `dist/src/evaluator-*.js`, and the Python
//! wrapper's error path in `pythonUtils-*.js`), and
//! `the_runner_agrees_with_promptfoo` checks 32 cases against verdicts
//! recorded from promptfoo itself (`plugins/python/differential/`).

use crate::hostile::hostile_support::{log_text, warm_plugin};
use crate::promptfoo::promptfoo_suite::{Ran, run, run_with, suite};
use crate::util::{assay_command, stdout};
use serde_json::{Value, json};

/// The committed runner, which the binary embeds.
const COMPONENT: &str = "plugins/python/python.wasm";

/// Runs `config` (echo answers with the prompt `{{q}}`) with `files` beside
/// it, once the runner is compiled into the tests' cache (a cold compile
/// takes half a minute; one at a time).
fn ran(config: &str, files: &[(&str, &str)]) -> Ran {
    warm_plugin(COMPONENT);
    let dir = suite(config, files);
    run(dir.path(), &[])
}

/// The `index`-th check of the case whose id ends with `suffix`.
fn check(ran: &Ran, suffix: &str, index: usize) -> Value {
    ran.case(suffix)["samples"][0]["runs"][0]["interactions"][0]["checks"][index].clone()
}

/// The check's outcome and message.
fn verdict(ran: &Ran, suffix: &str, index: usize) -> (String, String) {
    let check = check(ran, suffix, index);
    (check["outcome"].as_str().unwrap_or_default().to_owned(), check["message"].as_str().unwrap_or_default().to_owned())
}

/// Every case is reported once: `ids` are the run's cases, in order.
fn assert_each_once(ran: &Ran, ids: &[&str]) {
    let reported = ran.ids();
    assert_eq!(reported.len(), ids.len(), "{reported:?}");
    for id in ids {
        assert_eq!(reported.iter().filter(|r| r.ends_with(&format!("/{id}"))).count(), 1, "{id}: {reported:?}");
    }
}

#[test]
fn inline_python_is_an_expression_or_a_function_body_and_sees_output_and_context() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: expression
    vars: {q: hello world, who: world}
    assert:
      - {type: python, value: "len(output) > 3 and context['vars']['who'] in output"}
      - {type: python, value: "output.startswith('{{who}}')"}
      - {type: python, value: "__import__('statistics').mean([1, 2, 3]) == 2 and __import__('difflib').SequenceMatcher(None, output, output).ratio() == 1"}
  - description: body
    vars: {q: three little words}
    assert:
      - type: python
        value: |
          words = output.split()
          if len(words) == 3:
              return {'pass': True, 'score': 0.5, 'reason': f"{len(words)} words; prompt {context['prompt']!r}"}
          return False
  - file://rows.csv
"#;
    // A CSV row's `__expected` of `python: CODE` is a python assertion.
    let rows = "q,__expected,__description\nhello csv,python: output.endswith('csv'),from csv\n";
    let ran = ran(config, &[("rows.csv", rows)]);
    assert_eq!(ran.output.status.code(), Some(1), "{}", stdout(&ran.output));
    assert_eq!(verdict(&ran, "/from csv", 0), ("pass".into(), "Assertion passed".into()));
    assert_eq!(verdict(&ran, "/expression", 0), ("pass".into(), "Assertion passed".into()));
    // The value is a template, rendered with the vars before it runs (so
    // `world` fails); a failure's reason ends with the value as written,
    // as promptfoo's does.
    assert_eq!(
        verdict(&ran, "/expression", 1),
        ("fail".into(), "Python code returned false\noutput.startswith('{{who}}')".into())
    );
    // The standard library is there (what the component imported when it
    // was built: it has no files to import more from).
    assert_eq!(verdict(&ran, "/expression", 2), ("pass".into(), "Assertion passed".into()));
    let body = check(&ran, "/body", 0);
    assert_eq!((&body["outcome"], &body["score"]), (&json!("pass"), &json!(0.5)), "{body}");
    assert_eq!(body["message"], "3 words; prompt 'three little words'");
    assert_eq!(ran.case("/body")["status"], "passed");
}

#[test]
fn a_file_gives_its_get_assert_or_the_function_named_after_the_colon() {
    let checks = r#"
import re


def get_assert(output, context):
    print("graded", context["vars"]["q"])
    return bool(re.search(r"\bcat\b", output))


class Rubric:
    def length(output, context):
        limit = context["config"]["max"]
        return {"pass_": len(output) <= limit, "score": min(1, len(output) / limit), "reason": f"{len(output)} of {limit}"}
"#;
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: get_assert
    vars: {q: the cat sat}
    assert:
      - {type: python, value: file://checks.py}
      - {type: python, value: "file://checks.py:Rubric.length", config: {max: 22}}
  - description: missing function
    vars: {q: x}
    assert: [{type: python, value: "file://checks.py:nope"}]
  - description: outside the folder
    vars: {q: x}
    assert: [{type: python, value: "file://../OTHER/checks.py"}]
"#;
    // A real file beside the config's folder.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("checks.py"), checks).unwrap();
    let other_name = other.path().file_name().unwrap().to_str().unwrap();
    let ran = ran(&config.replace("OTHER", other_name), &[("checks.py", checks)]);
    assert_eq!(verdict(&ran, "/get_assert", 0), ("pass".into(), "Assertion passed".into()));
    let length = check(&ran, "/get_assert", 1);
    assert_eq!(
        (&length["outcome"], &length["score"], &length["message"]),
        (&json!("pass"), &json!(0.5), &json!("11 of 22"))
    );
    // What the file prints is the plugin's log.
    let interaction = &ran.case("/get_assert")["samples"][0]["runs"][0]["interactions"][0];
    assert_eq!(log_text(interaction, "promptfoo-python", "stdout"), "graded the cat sat");
    assert_eq!(
        verdict(&ran, "/missing function", 0),
        ("fail".into(), "Error running Python script: AttributeError: module 'checks' has no attribute 'nope'".into())
    );
    // The file is read with the config, beneath its folder.
    let outside = ran.case("/outside the folder")["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(
        outside.contains("tests[2] (\"outside the folder\")")
            && outside.contains(&format!("`file://../{other_name}/checks.py` is outside the config's folder")),
        "{outside}"
    );
}

#[test]
fn scores_and_grading_results_meet_thresholds_as_promptfoo_reads_them() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: scores
    vars: {q: twenty characters ok}
    assert:
      - {type: python, value: "len(output) / 100"}
      - {type: python, value: "len(output) / 100", threshold: 0.3}
      - {type: python, value: "0"}
      - {type: python, value: "len(output) / 2"}
  - description: grading results
    vars: {q: hi}
    assert:
      - {type: python, value: "{'pass_': True, 'score': 0.4, 'reason': 'fine'}", threshold: 0.5}
      - {type: python, value: "json.dumps({'pass': True, 'score': 1, 'reason': 'as JSON text'})"}
      - {type: python, value: "{'pass': True, 'score': 1}"}
      - {type: python, value: "None"}
  - description: a test threshold weighs the python scores
    threshold: 0.6
    vars: {q: hi}
    assert:
      - {type: python, value: "0.9"}
      - {type: python, value: "0.3", weight: 0.5}
"#;
    let ran = ran(config, &[]);
    let scored = |index: usize| {
        let check = check(&ran, "/scores", index);
        (check["outcome"].as_str().unwrap().to_owned(), check["score"].as_f64().unwrap())
    };
    // A number passes above 0, or from the threshold.
    assert_eq!(scored(0), ("pass".into(), 0.2));
    assert_eq!(scored(1), ("fail".into(), 0.2));
    assert_eq!(scored(2), ("fail".into(), 0.0));
    // A score above 1 is assay's 1; promptfoo's number is kept.
    assert_eq!(scored(3), ("pass".into(), 1.0));
    assert_eq!(check(&ran, "/scores", 3)["extras"]["promptfoo_score"], json!(10.0));
    assert_eq!(
        verdict(&ran, "/grading results", 0),
        ("fail".into(), "Python score 0.4 is less than threshold 0.5: fine".into())
    );
    assert_eq!(verdict(&ran, "/grading results", 1), ("pass".into(), "as JSON text".into()));
    // promptfoo wants `reason` too.
    let (outcome, message) = verdict(&ran, "/grading results", 2);
    assert_eq!(outcome, "fail");
    assert!(
        message.starts_with(
            "Python code execution failed: Python assertion must return a boolean, number, or {pass, score, reason} object. Got instead:\n{\n  \"pass\": true,"
        ),
        "{message}"
    );
    assert_eq!(
        verdict(&ran, "/grading results", 3),
        (
            "fail".into(),
            "Python code execution failed: Python assertion must return a boolean, number, or {pass, score, reason} object. Instead got:\nnull".into()
        )
    );
    // (0.9 × 1 + 0.3 × 0.5) / 1.5 = 0.7 reaches 0.6.
    assert_eq!(ran.case("/a test threshold weighs the python scores")["status"], "passed");
    let graded = ran.promptfoo_result("a test threshold weighs the python scores");
    assert!((graded["score"].as_f64().unwrap() - 0.7).abs() < 1e-9, "{graded}");
}

#[test]
fn not_python_negates_as_promptfoo_does() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: negated
    vars: {q: a polite answer}
    assert:
      - {type: not-python, value: "'rude' in output"}
      - {type: not-python, value: "'polite' in output"}
      - {type: not-python, value: "0.25"}
      - {type: not-python, value: "{'pass': True, 'score': 0.75, 'reason': 'kept'}"}
      - {type: not-python, value: "1 / 0"}
"#;
    let ran = ran(config, &[]);
    assert_eq!(verdict(&ran, "/negated", 0), ("pass".into(), "Assertion passed".into()));
    assert_eq!(verdict(&ran, "/negated", 1), ("fail".into(), "Python code returned true\n'polite' in output".into()));
    // promptfoo keeps a number's and a GradingResult's score when it negates.
    let number = check(&ran, "/negated", 2);
    assert_eq!((&number["outcome"], &number["score"]), (&json!("fail"), &json!(0.25)), "{number}");
    let dict = check(&ran, "/negated", 3);
    assert_eq!(
        (&dict["outcome"], &dict["score"], &dict["message"]),
        (&json!("fail"), &json!(0.75), &json!("Python code returned true"))
    );
    // Code that cannot run fails whichever the form.
    assert_eq!(verdict(&ran, "/negated", 4).0, "fail");
    assert_eq!(check(&ran, "/negated", 0)["key"], "not_pf_python");
}

#[test]
fn an_exception_fails_with_the_tracebacks_last_line_and_logs_the_traceback() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: raises
    vars: {q: x}
    assert:
      - type: python
        value: |
          def parse(text):
              return int(text)
          return parse(output) > 1
"#;
    let ran = ran(config, &[]);
    assert_eq!(
        verdict(&ran, "/raises", 0),
        (
            "fail".into(),
            "Python code execution failed: Error running Python script: ValueError: invalid literal for int() with base 10: 'x'".into()
        )
    );
    let interaction = &ran.case("/raises")["samples"][0]["runs"][0]["interactions"][0];
    let traceback = log_text(interaction, "promptfoo-python", "stderr");
    assert!(traceback.contains("Traceback (most recent call last)") && traceback.contains("in parse"), "{traceback}");
}

#[test]
fn a_case_cannot_change_the_interpreter_of_the_cases_after_it() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: poisons
    vars: {q: x}
    assert:
      - type: python
        value: |
          import builtins, statistics
          builtins.len = lambda x: -1
          statistics.mean = lambda xs: -1
          return len(output) == -1 and statistics.mean([1]) == -1
  - {description: after 1, vars: {q: hello}, assert: [{type: python, value: "len(output) == 5 and __import__('statistics').mean([1, 2, 3]) == 2"}]}
  - {description: after 2, vars: {q: hello}, assert: [{type: python, value: "len(output) == 5 and __import__('statistics').mean([1, 2, 3]) == 2"}]}
"#;
    warm_plugin(COMPONENT);
    let dir = suite(config, &[]);
    // One case at a time: each would get the instance the one before used.
    let ran = run(dir.path(), &["-j", "1"]);
    assert_each_once(&ran, &["poisons", "after 1", "after 2"]);
    for id in ["/poisons", "/after 1", "/after 2"] {
        assert_eq!(ran.case(id)["status"], "passed", "{id}: {}", stdout(&ran.output));
    }
}

/// A config whose first test runs the hostile `code`, then a test that
/// must still pass; both are reported once.
fn hostile(code: &str) -> Ran {
    let config = format!(
        "prompts: ['{{{{q}}}}']\nproviders: [echo]\ntests:\n  - description: hostile\n    vars: {{q: x}}\n    assert:\n      - type: python\n        value: {}\n  - description: after\n    vars: {{q: fine}}\n    assert: [{{type: python, value: \"output == 'fine'\"}}]\n",
        serde_json::to_string(code).unwrap()
    );
    let ran = ran(&config, &[]);
    assert_each_once(&ran, &["hostile", "after"]);
    assert_eq!(ran.case("/after")["status"], "passed", "{}", stdout(&ran.output));
    ran
}

/// What a sandboxed call says, after what Python raised.
const SANDBOX: &str = " (assay runs Python assertions in a sandbox: the standard library only, no files, network, subprocesses or environment)";

#[test]
fn hostile_python_sees_an_empty_environment() {
    warm_plugin(COMPONENT);
    let code = "import os\nreturn {'pass': False, 'score': 0, 'reason': json.dumps(dict(os.environ))}";
    let config = format!(
        "prompts: ['{{{{q}}}}']\nproviders: [echo]\ntests:\n  - description: hostile\n    vars: {{q: x}}\n    assert:\n      - type: python\n        value: {}\n",
        serde_json::to_string(code).unwrap()
    );
    let dir = suite(&config, &[]);
    let mut command = assay_command();
    command.env("ASSAY_PY_SECRET", "hunter2-in-the-host");
    let ran = run_with(command, dir.path(), &[]);
    assert_each_once(&ran, &["hostile"]);
    assert_eq!(verdict(&ran, "/hostile", 0), ("fail".into(), "{}".into()));
    let everything = format!("{}{:?}{}", stdout(&ran.output), ran.lines, ran.promptfoo);
    assert!(!everything.contains("hunter2-in-the-host"));
}

#[test]
fn hostile_python_cannot_read_a_file() {
    let ran = hostile("open('/etc/passwd').read()");
    let expected = format!(
        "Python code execution failed: Error running Python script: FileNotFoundError: [Errno 44] No such file or directory: '/etc/passwd'{SANDBOX}"
    );
    assert_eq!(verdict(&ran, "/hostile", 0), ("fail".into(), expected));
}

#[test]
fn hostile_python_has_no_network() {
    let ran = hostile("import socket\nreturn socket.create_connection(('127.0.0.1', 80)) is not None");
    let expected = format!(
        "Python code execution failed: Error running Python script: ModuleNotFoundError: No module named 'socket'{SANDBOX}"
    );
    assert_eq!(verdict(&ran, "/hostile", 0), ("fail".into(), expected));
}

#[test]
fn hostile_python_cannot_start_a_program() {
    let ran = hostile("__import__('subprocess').run(['touch', '/tmp/assay-python-was-here']).returncode == 0");
    let expected = format!(
        "Python code execution failed: Error running Python script: ModuleNotFoundError: No module named 'subprocess'{SANDBOX}"
    );
    assert_eq!(verdict(&ran, "/hostile", 0), ("fail".into(), expected));
    assert!(!std::path::Path::new("/tmp/assay-python-was-here").exists());
    // Nor through os.
    let ran = hostile("__import__('os').system('touch /tmp/assay-python-was-here') == 0");
    let (outcome, message) = verdict(&ran, "/hostile", 0);
    assert_eq!(outcome, "fail");
    assert!(message.starts_with("Python code execution failed: Error running Python script: AttributeError: module 'os' has no attribute 'system'"), "{message}");
}

#[test]
fn hostile_python_looping_forever_ends_at_the_plugins_deadline() {
    let started = std::time::Instant::now();
    let ran = hostile("while True:\n    pass");
    assert_eq!(
        verdict(&ran, "/hostile", 0),
        ("error".into(), "plugin `promptfoo-python` exceeded its deadline of 2000 ms and was stopped".into())
    );
    assert_eq!(check(&ran, "/hostile", 0)["error_kind"], "deadline");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "{:?}", started.elapsed());
}

#[test]
fn hostile_python_asking_for_all_memory_stops_at_its_cap() {
    let ran = hostile("xs = []\nwhile True:\n    xs.append(bytearray(1 << 20))");
    let (outcome, message) = verdict(&ran, "/hostile", 0);
    assert_eq!(outcome, "error");
    assert!(message.starts_with("plugin `promptfoo-python` exceeded its memory limit of 64 MiB"), "{message}");
    assert_eq!(check(&ran, "/hostile", 0)["error_kind"], "memory");
}

/// The cases promptfoo 0.123.1 graded (`plugins/python/differential/`,
/// recorded by its `record.mjs` through promptfoo's own `runAssertion`
/// and the host's python3), each a test of one config run through assay:
/// the same pass, score (promptfoo's number where assay clamps it) and
/// reason (up to promptfoo's `Stack Trace`, which is Node's).
#[test]
fn the_runner_agrees_with_promptfoo() {
    let dir = crate::util::root().join("plugins/python/differential");
    let recorded = std::fs::read_to_string(dir.join("recorded.jsonl")).unwrap();
    let mut lines = recorded.lines().map(|line| serde_json::from_str::<Value>(line).unwrap());
    let header = lines.next().unwrap();
    assert_eq!(header["promptfoo"], "0.123.1");
    let cases: Vec<Value> = lines.collect();
    let tests: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let mut assertion = json!({"type": case["type"], "value": case["value"]});
            if !case["threshold"].is_null() {
                assertion["threshold"] = case["threshold"].clone();
            }
            json!({"description": format!("case {i}"), "vars": {"q": case["output"]}, "assert": [assertion]})
        })
        .collect();
    // JSON is YAML (the top-level keys start lines, as a config's do).
    let config = format!("prompts: ['{{{{q}}}}']\nproviders: [echo]\ntests: {}\n", Value::Array(tests));
    let checks = std::fs::read_to_string(dir.join("checks.py")).unwrap();
    let ran = ran(&config, &[("checks.py", &checks)]);
    assert_eq!(ran.lines.len(), cases.len(), "{}", stdout(&ran.output));
    for (i, case) in cases.iter().enumerate() {
        let check = check(&ran, &format!("/case {i}"), 0);
        let negated = case["type"] == "not-python";
        let extras = if negated { &check["extras"]["negated"] } else { &check["extras"] };
        let score = extras.get("promptfoo_score").unwrap_or(&check["score"]).as_f64();
        let reason = case["reason"].as_str().unwrap();
        let reason = reason.split("\nStack Trace:").next().unwrap();
        let outcome = if case["pass"] == true { "pass" } else { "fail" };
        assert_eq!(
            (check["outcome"].as_str(), score, check["message"].as_str()),
            (Some(outcome), case["score"].as_f64(), Some(reason)),
            "case {i}: {case}\n{check}"
        );
    }
}

#[test]
fn python_files_transform_answers_and_vars_and_score_tests_in_the_sandbox() {
    let config = r#"
prompts: ["{{q}} {{extra}}"]
providers: [echo]
defaultTest:
  vars: {extra: ""}
tests:
  - description: transformed
    vars: {q: hello}
    options: {transform: file://shape.py}
    assert:
      - {type: equals, value: HELLO}
      - {type: equals, value: "5", transform: "file://shape.py:length"}
  - description: vars
    vars: {q: hi}
    options: {transformVars: "file://shape.py:more_vars"}
    assert: [{type: equals, value: hi HI}]
  - description: scored
    vars: {q: owls}
    assert:
      - {type: contains, value: owls, metric: found}
      - {type: contains, value: bats, metric: missing}
    assertScoringFunction: file://score.py
  - description: scored by name
    vars: {q: owls}
    assert: [{type: contains, value: bats, metric: missing}]
    assertScoringFunction: file://score.py:lenient
  - description: raises
    vars: {q: x}
    options: {transform: "file://shape.py:broken"}
    assert: [{type: equals, value: x}]
  - description: nothing
    vars: {q: x}
    options: {transform: "file://shape.py:nothing"}
    assert: [{type: equals, value: x}]
"#;
    let shape = "def get_transform(output, context):\n    return output.strip().upper()\n\n\
                 def length(output, context):\n    return str(len(output))\n\n\
                 def more_vars(vars, context):\n    return {'extra': vars['q'].upper()}\n\n\
                 def broken(output, context):\n    return {}['missing']\n\n\
                 def nothing(output, context):\n    pass\n";
    let score = "def func(named_scores, context):\n    \
                 passed = named_scores['found'] == 1 and named_scores['missing'] == 0\n    \
                 return {'pass': passed, 'score': 0.5, 'reason': 'found but missing; threshold ' + str(context.get('threshold'))}\n\n\
                 def lenient(named_scores, context):\n    return {'pass': True, 'score': 1, 'reason': 'lenient'}\n";
    let ran = ran(config, &[("shape.py", shape), ("score.py", score)]);
    assert_each_once(&ran, &["transformed", "vars", "scored", "scored by name", "raises", "nothing"]);
    let status = |id: &str| ran.case(id)["status"].as_str().unwrap_or_default().to_owned();
    for id in ["/transformed", "/vars", "/scored", "/scored by name"] {
        assert_eq!(status(id), "passed", "{id}: {}", stdout(&ran.output));
    }
    // The test's transform, then an assertion's on what it gave.
    let transformed = &ran.case("/transformed")["samples"][0]["runs"][0]["interactions"][0]["checks"];
    let targets: Vec<&str> = transformed.as_array().unwrap().iter().map(|c| c["target"].as_str().unwrap()).collect();
    assert_eq!(targets, ["derived[0]", "derived[1]"]);
    // The scoring function's GradingResult decides the test.
    let scored = check(&ran, "/scored", 2);
    assert_eq!(
        (scored["target"].as_str(), scored["message"].as_str()),
        (Some("scoring"), Some("found but missing; threshold None"))
    );
    // A failing or empty transform is the case's error, with promptfoo's reason.
    assert_eq!(status("/raises"), "error");
    assert!(
        ran.case("/raises").to_string().contains("Error running Python script: KeyError: 'missing'"),
        "{}",
        ran.case("/raises")
    );
    assert_eq!(status("/nothing"), "error");
    assert!(
        ran.case("/nothing").to_string().contains("Transform function did not return a value"),
        "{}",
        ran.case("/nothing")
    );
}

#[test]
fn hostile_python_transforms_are_contained_like_assertions() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: environment
    vars: {q: x}
    options: {transformVars: "file://evil.py:environment"}
    assert: [{type: equals, value: x}]
  - description: file
    vars: {q: x}
    options: {transform: "file://evil.py:read"}
    assert: [{type: equals, value: x}]
  - description: after
    vars: {q: fine}
    assert: [{type: equals, value: fine}]
"#;
    let evil = "import os\n\ndef environment(vars, context):\n    return {'q': str(len(os.environ))}\n\n\
                def read(output, context):\n    return open('/etc/passwd').read()\n";
    let ran = ran(config, &[("evil.py", evil)]);
    assert_each_once(&ran, &["environment", "file", "after"]);
    // The environment is empty: the var is "0" and the echo answers it.
    assert_eq!(ran.case("/environment")["samples"][0]["runs"][0]["interactions"][0]["response"]["text"], "0");
    assert_eq!(ran.case("/file")["status"], "error");
    assert!(ran.case("/file").to_string().contains("FileNotFoundError"), "{}", ran.case("/file"));
    assert_eq!(ran.case("/after")["status"], "passed");
}

#[test]
fn var_functions_in_python_and_javascript_give_their_output_to_the_prompt_and_the_assertions() {
    let config = r#"
prompts: ["{{q}} | {{context}}"]
providers: [echo]
tests:
  - description: python
    vars: {q: owls, notes: file://notes.txt, context: file://load.py}
    assert: [{type: equals, value: "owls | docs about owls (notes: hoot)"}, {type: contains, value: "{{context}}"}]
  - description: javascript
    vars: {q: bats, context: file://load.js}
    assert: [{type: equals, value: "bats | context for bats"}]
  - description: error
    vars: {q: "", context: file://load.py}
    assert: [{type: equals, value: x}]
"#;
    let python = "def get_var(var_name, prompt, other_vars):\n    \
                  if not other_vars['q']:\n        return {'error': 'no question'}\n    \
                  return {'output': f\"  docs about {other_vars['q']} (notes: {other_vars['notes']})  \"}\n";
    let javascript = "module.exports = (varName, prompt, vars) => ({ output: `${varName} for ${vars.q}` });\n";
    let ran = ran(config, &[("load.py", python), ("load.js", javascript), ("notes.txt", "hoot\n")]);
    assert_each_once(&ran, &["python", "javascript", "error"]);
    assert_eq!(ran.case("/python")["status"], "passed", "{}", stdout(&ran.output));
    assert_eq!(ran.case("/javascript")["status"], "passed", "{}", stdout(&ran.output));
    let error = ran.case("/error")["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("its var `context` (`file://load.py`): it gave the error: no question"), "{error}");
}

#[test]
fn a_var_function_that_depends_on_the_prompt_is_refused_naming_the_var() {
    let config = r#"
prompts: ["first {{v}}", "second {{v}}"]
providers: [echo]
tests:
  - {description: prompt-dependent, vars: {v: file://v.py}}
  - {description: steady, vars: {v: file://steady.py}}
"#;
    let files = [
        ("v.py", "def get_var(name, prompt, others):\n    return {'output': prompt.split()[0]}\n"),
        ("steady.py", "def get_var(name, prompt, others):\n    return {'output': 'same'}\n"),
    ];
    let ran = ran(config, &files);
    let dependent: Vec<&Value> =
        ran.lines.iter().filter(|l| l["id"].as_str().unwrap_or_default().contains("prompt-dependent")).collect();
    assert_eq!(dependent.len(), 2, "one error case per prompt: {}", stdout(&ran.output));
    for line in dependent {
        let message = line["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("its var `v` (`file://v.py`): it gives different values for the config's prompts"),
            "{message}"
        );
    }
    // Results are written as cases end, in any order.
    let mut steady: Vec<&str> = ran
        .lines
        .iter()
        .filter(|l| l["id"].as_str().unwrap_or_default().contains("steady"))
        .map(|l| l["samples"][0]["runs"][0]["interactions"][0]["response"]["text"].as_str().unwrap_or_default())
        .collect();
    steady.sort_unstable();
    assert_eq!(steady, ["first same", "second same"]);
}

#[test]
fn python_run_while_a_config_is_read_stops_at_the_deadline_and_the_memory_cap() {
    let config = r#"
prompts: ["{{q}} {{extra}}"]
providers: [echo]
tests:
  - description: loops
    vars: {q: x, extra: file://loop.py}
  - description: bomb
    vars: {q: x, extra: ""}
    options: {transformVars: "file://bomb.py"}
  - description: after
    vars: {q: fine, extra: ""}
    assert: [{type: equals, value: "fine "}]
"#;
    let files = [
        ("loop.py", "def get_var(name, prompt, others):\n    while True:\n        pass\n"),
        ("bomb.py", "def get_transform(vars, context):\n    return {'extra': 'x' * (1 << 30)}\n"),
    ];
    let ran = ran(config, &files);
    assert_each_once(&ran, &["loops", "bomb", "after"]);
    let loops = ran.case("/loops")["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(loops.contains("its var `extra` (`file://loop.py`)") && loops.contains("deadline"), "{loops}");
    let bomb = ran.case("/bomb")["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(bomb.contains("`options.transformVars` failed (run sandboxed)") && bomb.contains("memory"), "{bomb}");
    assert_eq!(ran.case("/after")["status"], "passed", "{}", stdout(&ran.output));
}

#[test]
fn a_python_test_generator_gives_the_tests_run_sandboxed() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - file://gen.py
  - {path: "file://gen.py:numbered", config: {n: 2}}
  - file://gen.py:broken
"#;
    let generator = "def generate_tests():\n    return [{'description': 'plain', 'vars': {'q': 'hi'}, 'assert': [{'type': 'equals', 'value': 'hi'}]}]\n\n\
                     def numbered(config):\n    return [{'description': f'n{i}', 'vars': {'q': str(i)}, 'assert': [{'type': 'equals', 'value': str(i)}]} for i in range(config['n'])]\n\n\
                     def broken():\n    return {'not': 'a list'}\n";
    warm_plugin(COMPONENT);
    let dir = suite(config, &[("gen.py", generator)]);
    let ran = run(dir.path(), &[]);
    // The broken generator makes the config one error case naming it.
    assert_eq!(ran.lines.len(), 1, "{}", stdout(&ran.output));
    let message = ran.lines[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message
            .contains("Python test function must return a list of test cases, got the dictionary {\"not\":\"a list\"}"),
        "{message}"
    );
    std::fs::write(dir.path().join("promptfooconfig.yaml"), config.replace("  - file://gen.py:broken\n", "")).unwrap();
    let ran = run(dir.path(), &[]);
    assert_each_once(&ran, &["plain", "n0", "n1"]);
    for id in ["/plain", "/n0", "/n1"] {
        assert_eq!(ran.case(id)["status"], "passed", "{id}: {}", stdout(&ran.output));
    }
}
