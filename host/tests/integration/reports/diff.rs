//! `assay diff OLD NEW` on two real runs of the binary: the echo and flaky
//! demo agents over `direct`, cases edited between the runs, rouge
//! (`plugins/rouge/rouge.wasm`, by `--plugin`) scoring the answers. A
//! regression is reported and exits 1, improvements alone exit 0, added
//! and removed cases are listed, score moves are measured, bad input exits
//! 2 naming what is wrong, and `--json` has the documented shape.

use crate::util::{assay, root, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Case files in a folder of their own, run into results directories
/// beside it.
struct Runs {
    dir: tempfile::TempDir,
}

impl Runs {
    fn new() -> Runs {
        let runs = Runs { dir: tempfile::tempdir().unwrap() };
        std::fs::create_dir(runs.cases()).unwrap();
        runs
    }

    fn cases(&self) -> PathBuf {
        self.dir.path().join("cases")
    }

    /// Writes (or rewrites) the case `name`.hocon.
    fn write(&self, name: &str, hocon: &str) {
        std::fs::write(self.cases().join(format!("{name}.hocon")), hocon).unwrap();
    }

    fn remove(&self, name: &str) {
        std::fs::remove_file(self.cases().join(format!("{name}.hocon"))).unwrap();
    }

    /// Runs every case into `results/NAME` (with `args`): its directory.
    fn run(&self, name: &str, args: &[&str]) -> PathBuf {
        let results = self.dir.path().join("results").join(name);
        let cases = self.cases();
        let mut all = vec!["run", cases.to_str().unwrap(), "--results", results.to_str().unwrap(), "-q"];
        all.extend(args);
        let output = assay(&all);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{}{}", stdout(&output), stderr(&output));
        results
    }
}

fn diff(old: &Path, new: &Path, args: &[&str]) -> Output {
    let mut all = vec!["diff", old.to_str().unwrap(), new.to_str().unwrap()];
    all.extend(args);
    assay(&all)
}

fn diff_json(old: &Path, new: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["--json"];
    all.extend(args);
    let output = diff(old, new, &all);
    let json = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&output), stderr(&output)));
    (output.status.code(), json)
}

/// An echo case whose answer (the text sent) must hold `keyword`.
fn echo(text: &str, keyword: &str) -> String {
    format!(
        r#"{{ agent: echo, interactions: [{{ text: "{text}", response {{ text {{ keywords: "{keyword}" }} }} }}] }}"#
    )
}

/// A flaky-agent case (odd samples answer `fail`) needing `ratio`.
fn flaky(ratio: &str) -> String {
    format!(
        r#"{{ agent: flaky, success_ratio: "{ratio}", interactions: [{{ text: "stable?", response {{ text {{ value: "pass" }} }} }}] }}"#
    )
}

/// An echo case whose answer rouge scores against `reference` (never
/// failing it).
fn rouge(text: &str, reference: &str) -> String {
    format!(
        r#"{{ agent: echo, interactions: [{{ text: "{text}", response {{ text {{ rouge {{ reference: "{reference}", threshold: 0 }} }} }} }}] }}"#
    )
}

/// `summary.json` of a results directory.
fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn a_case_that_newly_fails_is_reported_and_exits_1_unless_allowed() {
    let runs = Runs::new();
    runs.write("hello", &echo("hello there", "hello"));
    runs.write("stable", &echo("stable", "stable"));
    runs.write("broken", &echo("broken", "missing"));
    let old = runs.run("old", &[]);
    runs.write("hello", &echo("hello there", "goodbye"));
    let new = runs.run("new", &[]);

    let output = diff(&old, &new, &[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}{}", stderr(&output));
    assert!(text.contains("  NEWLY FAILING hello (passed → failed)\n"), "{text}");
    assert!(text.contains("REGRESSED 1 newly failing (allowed 0)"), "{text}");
    assert!(
        text.contains("Diff: 1 newly failing, 0 newly passing, 0 newly flaky, 0 no longer flaky, 1 still failing, 1 unchanged; 0 added, 0 removed"),
        "{text}"
    );
    // Each run's counts are its own summary's.
    for (name, dir) in [("Old", &old), ("New", &new)] {
        let s = summary(dir);
        let line = format!(
            "{name} {}: {} test cases: {} passed, {} failed, {} flaky, {} errors\n",
            dir.display(),
            s["cases"],
            s["passed"],
            s["failed"],
            s["flaky"],
            s["errors"]
        );
        assert!(text.contains(&line), "{line} in {text}");
    }
    // Not a terminal: no colour.
    assert!(!text.contains('\x1b'), "{text}");

    let allowed = diff(&old, &new, &["--allow", "newly-failing=1"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stdout(&allowed));
    assert!(stdout(&allowed).ends_with("NO REGRESSION\n"), "{}", stdout(&allowed));
}

#[test]
fn improvements_alone_exit_0() {
    let runs = Runs::new();
    runs.write("hello", &echo("hello there", "goodbye"));
    runs.write("ratio", &flaky("2/3"));
    let old = runs.run("old", &[]);
    runs.write("hello", &echo("hello there", "hello"));
    runs.write("ratio", &flaky("1/1"));
    let new = runs.run("new", &[]);

    let output = diff(&old, &new, &[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    assert!(text.contains("  NEWLY PASSING hello (failed → passed)\n"), "{text}");
    assert!(text.contains("NO LONGER FLAKY ratio (flaky → passed)\n"), "{text}");
    assert!(text.ends_with("NO REGRESSION\n"), "{text}");
}

#[test]
fn the_flaky_agent_with_more_samples_needed_is_newly_flaky_then_newly_failing() {
    // Sample 0 passes, sample 1 fails, sample 2 passes.
    let runs = Runs::new();
    runs.write("coin", &flaky("1/1"));
    let passed = runs.run("passed", &[]);
    runs.write("coin", &flaky("2/3"));
    let flaky_run = runs.run("flaky", &[]);
    runs.write("coin", &flaky("3/4"));
    let failed = runs.run("failed", &[]);

    let output = diff(&passed, &flaky_run, &[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("    NEWLY FLAKY coin (passed → flaky)\n"), "{text}");
    assert!(text.contains("REGRESSED 1 newly flaky (allowed 0)"), "{text}");
    assert_eq!(diff(&passed, &flaky_run, &["--allow", "newly-flaky=1"]).status.code(), Some(0));

    let (code, json) = diff_json(&flaky_run, &failed, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(json["newly_failing"], serde_json::json!([{ "id": "coin", "old": "flaky", "new": "failed" }]));
}

#[test]
fn added_and_removed_cases_are_listed_and_are_no_regression() {
    let runs = Runs::new();
    runs.write("kept", &echo("kept", "kept"));
    runs.write("gone", &echo("gone", "missing"));
    let old = runs.run("old", &[]);
    runs.remove("gone");
    runs.write("fresh", &echo("fresh", "fresh"));
    let new = runs.run("new", &[]);

    let output = diff(&old, &new, &[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("          ADDED fresh (passed)\n"), "{text}");
    assert!(text.contains("        REMOVED gone (was failed)\n"), "{text}");
    assert!(text.contains("1 unchanged; 1 added, 1 removed"), "{text}");
}

#[test]
fn rouge_score_moves_are_measured_and_a_mean_drop_regresses_beyond_its_allowance() {
    let plugin = root().join("plugins/rouge/rouge.wasm");
    let args = ["--plugin", plugin.to_str().unwrap()];
    let reference = "the cat sat on the mat";
    let runs = Runs::new();
    runs.write("same", &rouge(reference, reference));
    runs.write("worse", &rouge(reference, reference));
    runs.write("better", &rouge("a dog ran", reference));
    let old = runs.run("old", &args);
    runs.write("worse", &rouge("a dog ran in the park", reference));
    runs.write("better", &rouge("the cat sat on a mat", reference));
    let new = runs.run("new", &args);

    let (code, json) = diff_json(&old, &new, &[]);
    let [scores] = json["scores"].as_array().unwrap().as_slice() else { panic!("{json:#}") };
    assert_eq!(scores["key"], "rouge");
    assert_eq!(scores["paired"], 3);
    let (dropped, rose) = (&scores["dropped"][0], &scores["rose"][0]);
    assert_eq!((&dropped["id"], &dropped["old"]), (&Value::from("worse"), &Value::from(1.0)));
    assert_eq!(rose["id"], "better");
    assert_eq!(scores["dropped"].as_array().unwrap().len(), 1, "{json:#}");
    // The mean change is the mean of the paired cases' changes.
    let change = |m: &Value| m["change"].as_f64().unwrap();
    let mean = (change(dropped) + change(rose)) / 3.0;
    assert!((scores["change"].as_f64().unwrap() - mean).abs() < 1e-12, "{json:#}");
    assert!(mean < 0.0, "{json:#}");
    assert_eq!(code, Some(1));
    assert_eq!(json["verdict"]["regressions"][0]["what"], "score-drop");
    assert_eq!(json["verdict"]["regressions"][0]["key"], "rouge");

    let output = diff(&old, &new, &[]);
    let text = stdout(&output);
    assert!(text.contains("          SCORE rouge: mean "), "{text}");
    assert!(text.contains(&format!("{:+.3} over 3 cases in both", mean)), "{text}");
    assert!(text.contains(&format!("{:+.3} worse (1.000 → ", change(dropped))), "{text}");
    assert!(text.contains(&format!("REGRESSED mean rouge dropped {:.3} (allowed 0)", -mean)), "{text}");

    let generous = format!("score-drop={:.3}", -mean + 0.01);
    assert_eq!(diff(&old, &new, &["--allow", &generous]).status.code(), Some(0));
    let by_key = format!("score-drop:rouge={:.3}", -mean + 0.01);
    assert_eq!(diff(&old, &new, &["--allow", "score-drop=0", "--allow", &by_key]).status.code(), Some(0));
    assert_eq!(diff(&old, &new, &["--allow", "score-drop:bleu=1"]).status.code(), Some(1));
}

#[test]
fn what_is_not_a_run_or_a_bad_allowance_exits_2_saying_why() {
    let runs = Runs::new();
    runs.write("hello", &echo("hello", "hello"));
    let run = runs.run("2024-05-01T00-00-00Z", &[]);
    let results = run.parent().unwrap();

    let output = diff(results, &run, &[]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("it is not the results directory of a run (it holds no results.jsonl)"), "{message}");
    assert!(
        message.contains(&format!("Consider one of the runs in it (newest first): `{}`", run.display())),
        "{message}"
    );

    let output = diff(&run, &results.join("nowhere"), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("nowhere`: no such directory"), "{}", stderr(&output));

    let torn = runs.dir.path().join("torn");
    std::fs::create_dir(&torn).unwrap();
    let line = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    std::fs::write(torn.join("results.jsonl"), format!("{line}{}", &line[..line.len() / 2])).unwrap();
    let output = diff(&run, &torn, &[]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains(&format!(
            "failed to read `{}`: line 2 is not a case's result: EOF while parsing",
            torn.join("results.jsonl").display()
        )),
        "{message}"
    );

    let output = diff(&run, &run, &["--allow", "newly-failing=some"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--allow `newly-failing=some`: newly-failing takes a count of cases"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn json_has_both_runs_every_list_the_scores_and_the_verdict() {
    let runs = Runs::new();
    runs.write("hello", &echo("hello", "hello"));
    runs.write("gone", &echo("gone", "gone"));
    let old = runs.run("old", &[]);
    runs.write("hello", &echo("hello", "bye"));
    runs.remove("gone");
    let new = runs.run("new", &[]);

    let (code, json) = diff_json(&old, &new, &["--allow", "score-drop=0.1"]);
    assert_eq!(code, Some(1));
    let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "old",
            "new",
            "newly_failing",
            "newly_passing",
            "newly_flaky",
            "no_longer_flaky",
            "still_failing",
            "unchanged",
            "added",
            "removed",
            "scores",
            "verdict"
        ]
    );
    assert_eq!(
        json["old"],
        serde_json::json!({ "dir": old, "cases": 2, "passed": 2, "flaky": 0, "failed": 0, "errors": 0 })
    );
    assert_eq!(json["new"]["failed"], 1);
    assert_eq!(json["newly_failing"], serde_json::json!([{ "id": "hello", "old": "passed", "new": "failed" }]));
    assert_eq!(json["removed"], serde_json::json!([{ "id": "gone", "status": "passed" }]));
    assert_eq!(json["scores"], serde_json::json!([]));
    assert_eq!(
        json["verdict"],
        serde_json::json!({
            "regressed": true,
            "regressions": [{ "what": "newly-failing", "found": 1, "allowed": 0 }],
            "allowed": { "newly_failing": 0, "newly_flaky": 0, "score_drop": 0.1 }
        })
    );
}
