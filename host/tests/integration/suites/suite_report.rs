//! The seed-style flags and the per-suite summary of a real run: cases read
//! from HOCON, several of them moved into one file (a suite, as a
//! `*.suite.toml` makes them), run by the library's `Runner` with the demo
//! agents, an `http` server that is down and the hostile plugin (whose
//! `score` key scores what it is given, and whose `panic` key faults),
//! reported by the real terminal, results directory and JUnit reporters.
//! And a run of HOCON files alone, through the binary, which shows no suite.

use crate::util::{assay, load, quick_limits, runtime, stderr, stdout};
use assay::agent::{AgentCatalog, Agents, HttpAgents, HttpSettings};
use assay::formats::discover;
use assay::job::{CaseSource, LoadedCase, load_cases};
use assay::plugin::Registry;
use assay::report::{JunitReport, ReporterSet, ResultsDir, Terminal, Verbosity};
use assay::run::{RunOptions, Runner};
use assay::sandbox::{ComponentOptions, Limits};
use serde_json::{Value, json};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a run left: the terminal's output, `results.jsonl` by case id,
/// `summary.json`, the JUnit XML, and the suite file's path.
struct Reported {
    terminal: String,
    lines: Vec<Value>,
    summary: Value,
    junit: String,
    suite: PathBuf,
}

impl Reported {
    fn line(&self, id: &str) -> &Value {
        self.lines.iter().find(|l| l["id"] == id).unwrap_or_else(|| panic!("no line for {id}: {:?}", self.lines))
    }
}

/// Every case of the suite: (name, HOCON).
const SUITE: &[(&str, &str)] = &[
    (
        "low",
        r#"{ agent: echo, interactions: [{ text: "alpha", response { text { keywords: "alpha", score: 0.25 } } }] }"#,
    ),
    ("high", r#"{ agent: echo, interactions: [{ text: "beta", response { text { score: 0.75 } } }] }"#),
    // echo answers the empty text it is sent.
    ("blank", r#"{ agent: echo, interactions: [{ text: "", response { text { keywords: "gamma" } } }] }"#),
    (
        "down",
        r#"{ agent: echo, connections: [http], interactions: [{ text: "delta", response { text { score: 1 } } }] }"#,
    ),
    ("fault", r#"{ agent: echo, interactions: [{ text: "epsilon", response { text { panic: 1 } } }] }"#),
];

/// A case in a file of its own.
const ALONE: &str = r#"{ agent: echo, interactions: [{ text: "zeta", response { text { score: 0.5 } } }] }"#;

/// Runs [`SUITE`], its cases all in one file, and [`ALONE`].
fn run_suite() -> Reported {
    let dir = tempfile::tempdir().unwrap();
    let cases_dir = dir.path().join("cases");
    std::fs::create_dir_all(&cases_dir).unwrap();
    for (name, text) in SUITE.iter().chain(&[("alone", ALONE)]) {
        std::fs::write(cases_dir.join(format!("{name}.hocon")), text).unwrap();
    }
    let suite = dir.path().join("specs.suite.toml");

    let mut registry = Registry::with_builtins(runtime()).unwrap();
    let hostile =
        load("plugins/hostile/hostile.wasm", ComponentOptions { limits: quick_limits(), ..Default::default() });
    registry.add(hostile.unwrap()).unwrap();
    let registry = Arc::new(registry);
    let down = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let http = HttpAgents::new(HttpSettings { base_url: format!("http://127.0.0.1:{down}"), ..Default::default() });
    let agents = Agents::new(AgentCatalog::with_demo_agents(runtime().clone(), Limits::default()), http.unwrap());

    let files = discover(&[cases_dir]).unwrap();
    let mut cases = load_cases(&files, registry.as_ref(), &Default::default(), None);
    for case in &mut cases {
        match case {
            LoadedCase::Ready(job) if job.id != "alone" => job.file = suite.clone(),
            LoadedCase::Ready(_) => {}
            LoadedCase::Broken { id, error } => panic!("{id}: {error}"),
        }
    }

    let terminal = dir.path().join("terminal.txt");
    let results = dir.path().join("results");
    let junit = dir.path().join("junit.xml");
    let mut reporters = ReporterSet::builder()
        .terminal(Terminal::new(Verbosity::Quiet, std::fs::File::create(&terminal).unwrap(), io::sink()))
        .results_dir(ResultsDir::create(&results).unwrap())
        .junit(JunitReport::new(junit.clone()))
        .build();
    let summary =
        Runner::new(registry, agents, RunOptions::default()).run_blocking(CaseSource::loaded(cases), &mut reporters);
    assert_eq!(summary.cases, 6, "{summary:?}");

    let read = |path: &Path| std::fs::read_to_string(path).unwrap();
    Reported {
        terminal: read(&terminal),
        lines: read(&results.join("results.jsonl")).lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
        summary: serde_json::from_str(&read(&results.join("summary.json"))).unwrap(),
        junit: read(&junit),
        suite,
    }
}

/// The three flags of a line, in order; each must be there as a boolean.
fn flags(line: &Value) -> [bool; 3] {
    ["api_error", "empty_output", "evaluation_error"]
        .map(|flag| line[flag].as_bool().unwrap_or_else(|| panic!("no boolean `{flag}` in {line}")))
}

#[test]
fn every_line_says_whether_the_request_failed_the_answer_was_empty_or_a_check_errored() {
    let run = run_suite();
    assert_eq!(flags(run.line("low")), [false, false, false]);
    assert_eq!(flags(run.line("alone")), [false, false, false]);
    assert_eq!(flags(run.line("down")), [true, false, false], "{}", run.line("down"));
    assert_eq!(flags(run.line("blank")), [false, true, false], "{}", run.line("blank"));
    assert_eq!(flags(run.line("fault")), [false, false, true], "{}", run.line("fault"));
    assert_eq!(run.summary["flags"], json!({ "api_error": 1, "empty_output": 1, "evaluation_error": 1 }));

    // Each check's score stays on its check, beside the matcher's message.
    let check = &run.line("low")["samples"][0]["runs"][0]["interactions"][0]["checks"][1];
    assert_eq!((&check["key"], &check["score"], &check["message"]), (&json!("score"), &json!(0.25), &json!("scored")));

    // JUnit carries a flag as a property of its case.
    let down = run.junit.split("<testcase ").find(|c| c.starts_with(r#"name="down""#)).unwrap();
    assert!(down.contains(r#"<property name="api_error" value="true"/>"#), "{down}");
}

#[test]
fn a_file_of_many_cases_gets_a_line_with_its_pass_rate_and_mean_scores() {
    let run = run_suite();
    let suite = run.suite.display().to_string();
    // Passed: low and high; the mean score: of low and high (down never
    // reached its check), not of the case alone in its file.
    let suite_lines: Vec<&str> = run.terminal.lines().filter(|l| l.contains("SUITE")).collect();
    assert_eq!(suite_lines, [format!("   SUITE {suite}: 2/5 passed (40%); mean score 0.500")], "{}", run.terminal);
    let summary_line = run.terminal.lines().position(|l| l.starts_with("Summary")).unwrap();
    let suite_line = run.terminal.lines().position(|l| l.contains("SUITE")).unwrap();
    assert!(summary_line < suite_line, "{}", run.terminal);

    assert_eq!(
        run.summary["suites"],
        json!([{ "file": suite, "cases": 5, "passed": 2, "mean_scores": { "score": 0.5 } }])
    );
    assert!(run.junit.contains(&format!(r#"<testsuite name="{suite}" tests="5""#)), "{}", run.junit);
    assert!(run.junit.contains(r#"<property name="mean_score.score" value="0.5000"/>"#), "{}", run.junit);
    assert!(run.junit.contains(r#"<testsuite name="assay" tests="1""#), "{}", run.junit);
}

#[test]
fn a_run_of_case_files_alone_shows_no_suite_and_still_flags_every_line() {
    let out = tempfile::tempdir().unwrap();
    let output = assay(&["run", "--results", out.path().to_str().unwrap(), "fixtures/cases/echo"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stdout(&output).contains("SUITE"), "{}", stdout(&output));
    let summary: Value = serde_json::from_slice(&std::fs::read(out.path().join("summary.json")).unwrap()).unwrap();
    assert!(summary.get("suites").is_none(), "{summary}");
    assert_eq!(summary["flags"], json!({ "api_error": 0, "empty_output": 0, "evaluation_error": 0 }));
    let lines = std::fs::read_to_string(out.path().join("results.jsonl")).unwrap();
    let lines: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| flags(l) == [false; 3]), "{lines:?}");
}
