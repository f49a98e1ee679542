//! promptfoo's `javascript` assertions, run by the embedded `javascript`
//! plugin (a JavaScript engine inside a sandboxed component) through the
//! `assay` binary: the fixture's verdicts against promptfoo's own (inline
//! expressions, multi-line bodies, `file://` functions, GradingResults,
//! numbers and thresholds, promises, `not-javascript`), a hostile corpus
//! (each case contained, with a clear message, and reported exactly once)
//! and the errors that name the test and the fix.

use crate::promptfoo::promptfoo_suite::{run, suite};
use crate::util::{assay_command, stderr, stdout};
use serde_json::Value;
use std::collections::BTreeMap;

/// promptfoo's own verdicts on the fixture, recorded with
/// `NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules node
/// benches/promptfoo_eval.mjs fixtures/promptfoo/javascript/promptfooconfig.yaml
/// fixtures/promptfoo/javascript/promptfoo-output.json` (promptfoo 0.123.1,
/// Node 22).
const RECORDED: &str = include_str!("../../../../fixtures/promptfoo/javascript/promptfoo-output.json");

/// A results document's results by test description.
fn by_description(document: &Value) -> BTreeMap<String, Value> {
    let results = document["results"]["results"].as_array().expect("results.results");
    results.iter().map(|r| (r["testCase"]["description"].as_str().unwrap().to_owned(), r.clone())).collect()
}

/// Whether two reasons of a thrown error agree: the same first line, but
/// where the engine words the error itself (a syntax error, `JSON.parse`),
/// which V8 and Boa word differently.
fn same_reason(ours: &str, theirs: &str) -> bool {
    let engine_worded = theirs.contains("Stack Trace: SyntaxError");
    match theirs.strip_prefix("Custom function threw error: ") {
        Some(_) if engine_worded => ours.starts_with("Custom function threw error: ") && ours.contains("SyntaxError"),
        Some(_) => ours.lines().next() == theirs.lines().next(),
        None => ours == theirs,
    }
}

#[test]
fn the_fixture_gives_promptfoos_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let results = dir.path().join("results");
    let output = assay_command()
        .args(["run", "fixtures/promptfoo/javascript/promptfooconfig.yaml", "--results", results.to_str().unwrap()])
        .args(["-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("8 test cases: 2 passed, 5 failed, 0 flaky, 1 error"), "{}", stdout(&output));
    let ours: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    let theirs: Value = serde_json::from_str(RECORDED).unwrap();
    for field in ["successes", "failures", "errors"] {
        assert_eq!(ours["results"]["stats"][field], theirs["results"]["stats"][field], "stats.{field}");
    }
    let (ours, theirs) = (by_description(&ours), by_description(&theirs));
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>());
    let mut components = 0;
    for (test, theirs) in &theirs {
        let mine = &ours[test];
        assert_eq!(
            (&mine["success"], &mine["failureReason"]),
            (&theirs["success"], &theirs["failureReason"]),
            "{test}"
        );
        let score = |r: &Value| r["score"].as_f64().unwrap();
        assert!((score(mine) - score(theirs)).abs() < 1e-9, "{test}: score {} vs {}", score(mine), score(theirs));
        if theirs["gradingResult"].is_null() {
            // promptfoo's error: the file's function threw, at its line.
            let (mine, theirs) = (mine["error"].as_str().unwrap(), theirs["error"].as_str().unwrap());
            assert!(
                mine.starts_with("file://checks.js:explode threw RangeError: cannot judge 30 characters"),
                "{mine}"
            );
            assert!(mine.contains("checks.js:15:9") && theirs.contains("checks.js:15:9"), "{mine}\n{theirs}");
            continue;
        }
        let list = |r: &Value| r["gradingResult"]["componentResults"].as_array().unwrap().clone();
        for (i, (mine, theirs)) in list(mine).iter().zip(list(theirs).iter()).enumerate() {
            let at = format!("{test}, assert[{i}] {}", theirs["assertion"]);
            assert_eq!(mine["pass"], theirs["pass"], "{at}");
            assert!((mine["score"].as_f64().unwrap() - theirs["score"].as_f64().unwrap()).abs() < 1e-9, "{at}");
            let (a, b) = (mine["reason"].as_str().unwrap(), theirs["reason"].as_str().unwrap());
            assert!(same_reason(a, b), "{at}:\n  assay:     {a:?}\n  promptfoo: {b:?}");
            components += 1;
        }
    }
    assert_eq!(components, 26);
}

/// Each hostile assertion is contained: the engine's loop ends at the
/// plugin's deadline and a memory bomb at its memory cap (error verdicts),
/// what a sandbox cannot give throws a clear error (failed assertions), and
/// the run goes on: every case is reported exactly once.
#[test]
fn hostile_javascript_is_contained_and_every_case_is_reported_once() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: endless loop
    vars: {q: a}
    assert:
      - type: javascript
        value: |
          let spins = 0;
          while (true) spins++;
  - description: memory bomb
    vars: {q: b}
    assert:
      - type: javascript
        value: |
          const hoard = [];
          while (true) hoard.push(new ArrayBuffer(8 << 20));
  - description: require fs
    vars: {q: c}
    assert: [{type: javascript, value: "require('fs').readFileSync('/etc/passwd', 'utf8').length > 0"}]
  - description: environment
    vars: {q: d}
    assert: [{type: javascript, value: "process.env.HOME !== undefined"}]
  - description: network
    vars: {q: e}
    assert: [{type: javascript, value: "fetch('http://127.0.0.1:9/').then(r => r.ok)"}]
  - description: dynamic import
    vars: {q: f}
    assert: [{type: javascript, value: "import('os').then(os => os.homedir().length > 0)"}]
  - description: a promise that never settles
    vars: {q: g}
    assert: [{type: javascript, value: "new Promise(() => {})"}]
  - description: after them all
    vars: {q: fine}
    assert: [{type: javascript, value: "output === 'fine'"}]
"#;
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    assert_eq!(ran.output.status.code(), Some(1), "{}", stdout(&ran.output));
    let mut ids = ran.ids();
    assert_eq!(ids.len(), 8, "{ids:?}");
    ids.dedup();
    assert_eq!(ids.len(), 8, "a case was reported twice: {ids:?}");
    assert!(
        stdout(&ran.output).contains("8 test cases: 1 passed, 5 failed, 0 flaky, 2 errors"),
        "{}",
        stdout(&ran.output)
    );
    let check = |suffix: &str| {
        let case = ran.case(suffix);
        let check = &case["samples"][0]["runs"][0]["interactions"][0]["checks"][0];
        (case["status"].as_str().unwrap().to_owned(), check["message"].as_str().unwrap().to_owned())
    };
    let (status, message) = check("/endless loop");
    assert_eq!(status, "error");
    assert!(message.contains("exceeded its deadline of 10000 ms"), "{message}");
    let (status, message) = check("/memory bomb");
    assert_eq!(status, "error");
    assert!(message.contains("exceeded its memory limit of 64 MiB"), "{message}");
    for (suffix, error) in [
        ("/require fs", "require('fs') is not available: assertions run sandboxed"),
        ("/environment", "process.env is not available: assertions run sandboxed (no environment variables)"),
        ("/network", "fetch is not available: assertions run sandboxed (no network)"),
        ("/dynamic import", "import('os') is not available: assertions run sandboxed"),
        ("/a promise that never settles", "the promise the function returned never settled"),
    ] {
        let (status, message) = check(suffix);
        assert_eq!(status, "failed", "{suffix}: {message}");
        assert!(message.starts_with(&format!("Custom function threw error: {error}")), "{suffix}: {message}");
    }
    assert_eq!(check("/after them all").0, "passed");
}

#[test]
fn javascript_that_cannot_run_is_an_error_naming_the_test_and_the_fix() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: outside
    assert: [{type: javascript, value: "file://../outside.js"}]
  - description: missing
    assert: [{type: javascript, value: "file://missing.js"}]
  - description: typescript
    vars: {q: hello}
    assert: [{type: javascript, value: "file://check.ts"}]
  - description: broken typescript
    assert: [{type: javascript, value: "file://broken.ts"}]
  - description: tsx
    assert: [{type: javascript, value: "file://check.tsx"}]
  - description: typescript that is javascript
    vars: {q: hello}
    assert: [{type: javascript, value: "file://plain.ts"}]
  - description: package
    assert: [{type: javascript, value: "package:my-checks:isGood"}]
  - description: no value
    assert: [{type: javascript}]
  - description: shared module
    vars: {q: hello}
    assert: [{type: javascript, value: "file://check.js:long"}, {type: not-javascript, value: "file://check.js:long"}]
  - file://rows.csv
"#;
    let files = [
        (
            "check.ts",
            "interface Seen { length: number }\nexport default (output: string): boolean => (output as Seen).length > 0;",
        ),
        ("broken.ts", "export default (output: string) => {\n  return output.length >;\n};"),
        ("plain.ts", "export default function (output, context) {\n  return output === context.vars.q;\n}\n"),
        ("check.js", "exports.long = (output) => output.length > 3;"),
        ("rows.csv", "q,__expected\nhey,javascript: output.length === 3\nhi,fn: output === 'hi'\n"),
    ];
    let dir = suite(config, &files);
    std::fs::write(dir.path().parent().unwrap().join("outside.js"), "module.exports = () => true;").ok();
    let ran = run(dir.path(), &[]);
    let error = |suffix: &str| ran.case(suffix)["error"]["message"].as_str().unwrap_or_default().to_owned();
    let outside = error("/outside");
    assert!(outside.contains("tests[0] (\"outside\")") && outside.contains("outside the config's folder"), "{outside}");
    let missing = error("/missing");
    assert!(missing.contains("tests[1] (\"missing\")") && missing.contains("`file://missing.js`"), "{missing}");
    // TypeScript has its types stripped in the sandbox, as promptfoo's
    // `tsx` strips them; one that does not parse says where and what to do.
    assert_eq!(ran.case("/typescript that is javascript")["status"], "passed");
    assert_eq!(ran.case("/typescript")["status"], "passed");
    let broken = ran.case("/broken typescript");
    assert_eq!(broken["status"], "error");
    assert!(broken.to_string().contains("broken.ts:2: "), "{broken}");
    assert!(broken.to_string().contains("compile it and name the `.js` file"), "{broken}");
    let tsx = error("/tsx");
    assert!(tsx.contains("`file://check.tsx` is TSX") && tsx.contains("Consider compiling it to JavaScript"), "{tsx}");
    let package = error("/package");
    assert!(package.contains("loads an npm package, which assay does not run"), "{package}");
    let no_value = error("/no value");
    assert!(no_value.contains("needs a `value`: the JavaScript code, or a `file://` module"), "{no_value}");
    // One module, read once, serves both forms; CSV rows' `javascript:`
    // and `fn:` expectations run too.
    let shared = ran.case("/shared module");
    assert_eq!(shared["status"], "failed", "{shared}");
    let checks = shared["samples"][0]["runs"][0]["interactions"][0]["checks"].as_array().unwrap();
    let outcomes: Vec<&str> = checks.iter().map(|c| c["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["pass", "fail"]);
    assert_eq!(ran.case("/test 10")["status"], "passed");
    assert_eq!(ran.case("/test 11")["status"], "passed");
    // A check's line shows the start of its long expected value.
    let printed = stdout(&ran.output);
    let line = printed.lines().find(|l| l.contains("not_pf_javascript")).unwrap_or_default();
    assert!(line.contains("…: Custom function returned true"), "{printed}");
}
