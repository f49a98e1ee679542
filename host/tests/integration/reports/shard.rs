//! `--shard K/N` through the binary: over the fixtures and a generated
//! suite of 1,000 cases against `echo`, the shards are disjoint, cover
//! every case, follow the documented hash (FNV-1a 64 of the id, modulo N),
//! and keep each case's shard when cases are added; four shard processes
//! started side by side and merged equal one run of everything; bad
//! values are clear errors on `run`, `assess` and `eval`.

use crate::util::{assay, assay_command, fixture, stderr, stdout};
use assay::run::Shard;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A suite of `count` cases over `echo` (which answers with the question),
/// written under `dir`: every seventh case wants a word the answer lacks,
/// and fails. Its cases are `big/c0000`, `big/c0001`, ….
pub fn write_big_suite(dir: &Path, count: usize) -> PathBuf {
    let suite = dir.join("big");
    std::fs::create_dir_all(suite.join("specs")).unwrap();
    let toml = "specs = [\"specs/*.jsonl\"]\nagent = \"echo\"\ntext = \"{{question}}\"\n\n\
                [[checks]]\nkey = \"keywords\"\nexpected = \"{{want}}\"\n";
    std::fs::write(suite.join("big.suite.toml"), toml).unwrap();
    add_specs(&suite, "a.jsonl", 0..count);
    suite
}

/// Adds the cases `range` to the suite in `suite`, as the spec file `name`.
pub fn add_specs(suite: &Path, name: &str, range: std::ops::Range<usize>) {
    let lines: String = range
        .map(|i| {
            let want = if i % 7 == 0 { "zzz" } else { "q" };
            format!("{{\"id\":\"c{i:04}\",\"question\":\"q {i}\",\"want\":\"{want}\"}}\n")
        })
        .collect();
    std::fs::write(suite.join("specs").join(name), lines).unwrap();
}

/// The ids `assay run PATHS --list ARGS` lists.
fn listed(paths: &[&Path], args: &[&str]) -> BTreeSet<String> {
    let mut all = vec!["run".to_owned(), "--list".to_owned()];
    all.extend(paths.iter().map(|p| p.to_str().unwrap().to_owned()));
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let output = assay_command().args(&all).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output).lines().map(|line| line.split_whitespace().next().unwrap().to_owned()).collect()
}

/// Asserts that the `total` shards of what `paths` hold are disjoint,
/// cover everything, and hold the cases the hash puts in them: each
/// case's shard, by id.
fn assert_partition(paths: &[&Path], total: u32) -> BTreeMap<String, u32> {
    let everything = listed(paths, &[]);
    let mut shard_of = BTreeMap::new();
    for index in 1..=total {
        let shard = format!("{index}/{total}");
        for id in listed(paths, &["--shard", &shard]) {
            assert_eq!(Shard::index_of(&id, total), index, "{id} is in shard {shard}, not where its hash puts it");
            assert!(shard_of.insert(id.clone(), index).is_none(), "{id} is in two shards");
        }
    }
    assert_eq!(shard_of.keys().cloned().collect::<BTreeSet<_>>(), everything, "the shards cover every case");
    shard_of
}

#[test]
fn the_shards_of_the_fixtures_are_disjoint_and_complete() {
    let (cases, suites) = (fixture("cases"), fixture("suites"));
    for total in [1, 2, 3, 5] {
        let shards = assert_partition(&[&cases, &suites], total);
        assert!(shards.len() >= 8, "{shards:?}");
    }
}

#[test]
fn the_shards_of_a_thousand_cases_are_disjoint_complete_balanced_and_stable() {
    let dir = tempfile::tempdir().unwrap();
    let suite = write_big_suite(dir.path(), 1000);
    let before = assert_partition(&[&suite], 4);
    assert_eq!(before.len(), 1000);
    for index in 1..=4 {
        let size = before.values().filter(|&&k| k == index).count();
        assert!((150..=350).contains(&size), "shard {index}/4 holds {size} of 1,000 cases");
    }
    // 200 cases more: every case keeps its shard.
    add_specs(&suite, "b.jsonl", 1000..1200);
    let after = assert_partition(&[&suite], 4);
    assert_eq!(after.len(), 1200);
    for (id, index) in &before {
        assert_eq!(after[id], *index, "{id} moved");
    }
}

/// The lines of `dir`'s results.jsonl: status by id, each id once.
pub fn statuses(dir: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut by_id = BTreeMap::new();
    for line in text.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        let status = line["status"].as_str().unwrap().to_owned();
        assert!(by_id.insert(line["id"].as_str().unwrap().to_owned(), status).is_none(), "a case twice in {dir:?}");
    }
    by_id
}

/// `dir`'s summary.json.
pub fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// How many test cases a JUnit file holds (its `<testsuites tests="N">`).
pub fn junit_tests(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let start = text.find("<testsuites").unwrap();
    let attribute = &text[start..][text[start..].find(" tests=\"").unwrap() + 8..];
    attribute[..attribute.find('"').unwrap()].parse().unwrap()
}

#[test]
fn four_shard_processes_side_by_side_merge_into_what_one_run_gives() {
    let dir = tempfile::tempdir().unwrap();
    let suite = write_big_suite(dir.path(), 1000);
    let cases = fixture("cases");
    let results = dir.path().join("results");
    let path = |name: &str| results.join(name).to_str().unwrap().to_owned();
    let run_args = |shard: Option<&str>, out: &str, junit: &str| {
        let mut args = vec!["run", suite.to_str().unwrap(), cases.to_str().unwrap(), "-q", "-j", "2"]
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>();
        args.extend(["--results".to_owned(), out.to_owned(), "--junit".to_owned(), junit.to_owned()]);
        if let Some(shard) = shard {
            args.extend(["--shard".to_owned(), shard.to_owned()]);
        }
        args
    };
    let shards: Vec<_> = (1..=4)
        .map(|k| {
            let args =
                run_args(Some(&format!("{k}/4")), &path(&format!("shard-{k}")), &path(&format!("junit-{k}.xml")));
            assay_command().args(args).stdout(std::process::Stdio::null()).spawn().unwrap()
        })
        .collect();
    let single = assay_command().args(run_args(None, &path("single"), &path("single.xml"))).output().unwrap();
    assert_eq!(single.status.code(), Some(1), "every seventh case fails: {}", stderr(&single));
    let mut shard_cases = 0;
    for (k, mut child) in shards.into_iter().enumerate() {
        assert_eq!(child.wait().unwrap().code(), Some(1), "shard {}", k + 1);
        let shard = results.join(format!("shard-{}", k + 1));
        assert_eq!(summary(&shard)["shard"], serde_json::json!({"index": k + 1, "total": 4}));
        shard_cases += statuses(&shard).len();
        assert_eq!(junit_tests(&results.join(format!("junit-{}.xml", k + 1))), statuses(&shard).len());
    }

    let dirs: Vec<String> = (1..=4).map(|k| path(&format!("shard-{k}"))).collect();
    let mut merge_args = vec!["merge".to_owned()];
    merge_args.extend(dirs);
    merge_args.extend(["--results".to_owned(), path("merged"), "-q".to_owned()]);
    let merged = assay_command().args(&merge_args).output().unwrap();
    assert_eq!(merged.status.code(), Some(1), "{}", stderr(&merged));

    let (single, merged) = (results.join("single"), results.join("merged"));
    assert_eq!(statuses(&merged), statuses(&single));
    assert_eq!(statuses(&merged).len(), shard_cases);
    assert!(statuses(&merged).len() > 1000);
    let (one, all) = (summary(&single), summary(&merged));
    for field in ["cases", "passed", "flaky", "failed", "errors", "flags", "suites"] {
        assert_eq!(all[field], one[field], "{field}");
    }
    // Each run lists the cases that did not pass in the order they finished.
    let not_passed = |summary: &Value| -> BTreeMap<String, BTreeSet<String>> {
        serde_json::from_value(summary["not_passed"].clone()).unwrap()
    };
    assert_eq!(not_passed(&all), not_passed(&one));
    assert!(all.get("shard").is_none());
    let sources = all["merged_from"].as_array().unwrap();
    assert_eq!(sources.len(), 4);
    assert_eq!(sources.iter().map(|s| s["cases"].as_u64().unwrap() as usize).sum::<usize>(), shard_cases);
    assert_eq!(junit_tests(&merged.join("junit.xml")), junit_tests(&results.join("single.xml")));
    // The merged report is the report of the merged directory (its data is
    // compressed: report_html.rs reads such pages in a browser).
    let html = std::fs::read(merged.join("report.html")).unwrap();
    let output = assay(&["report", merged.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(std::fs::read(merged.join("report.html")).unwrap(), html);
}

#[test]
fn a_shard_run_records_its_shard_and_says_so_and_an_empty_shard_still_writes_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r");
    let cases = fixture("cases/echo");
    // The last of three shards that holds a case.
    let all = listed(&[&cases], &[]);
    let shard = (1..=3).rev().find(|k| all.iter().any(|id| Shard::index_of(id, 3) == *k)).unwrap();
    let flag = format!("{shard}/3");
    let output = assay(&["run", cases.to_str().unwrap(), "--shard", &flag, "--results", results.to_str().unwrap()]);
    assert!(stdout(&output).contains(&format!("Running shard {flag}: ")), "{}", stdout(&output));
    assert_eq!(summary(&results)["shard"], serde_json::json!({"index": shard, "total": 3}));
    let expected: Vec<String> = all.into_iter().filter(|id| Shard::index_of(id, 3) == shard).collect();
    assert!(!expected.is_empty());
    assert_eq!(statuses(&results).into_keys().collect::<Vec<_>>(), expected);

    // Three cases in 64 shards: most shards are empty, and still a run.
    let single = fixture("cases/echo/ratio.hocon");
    let id = listed(&[&single], &[]).into_iter().next().unwrap();
    let other = (Shard::index_of(&id, 64) % 64) + 1;
    let empty = dir.path().join("empty");
    let output = assay(&[
        "run",
        single.to_str().unwrap(),
        "--shard",
        &format!("{other}/64"),
        "--results",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(summary(&empty)["cases"], 0);
    assert_eq!(summary(&empty)["shard"]["index"], other);
}

#[test]
fn bad_shard_values_are_clear_errors_on_run_assess_and_eval() {
    let cases = fixture("cases/echo");
    let scenarios = fixture("scenarios");
    let bad = [
        ("0/3", "`0/3` is not a shard: K counts from 1 to N (1/3 to 3/3)"),
        ("4/3", "`4/3` is not a shard: K counts from 1 to N (1/3 to 3/3)"),
        ("1/0", "`1/0` is not a shard: there must be at least one shard (1/1)"),
        ("a/b", "`a/b` is not a shard: write K/N, e.g. 2/4 for the second of four"),
        ("3", "`3` is not a shard: write K/N"),
    ];
    for command in ["run", "assess", "eval"] {
        let path = if command == "eval" { &scenarios } else { &cases };
        for (value, message) in bad {
            let output = assay(&[command, path.to_str().unwrap(), "--shard", value]);
            assert_eq!(output.status.code(), Some(2), "{command} --shard {value}");
            let error = stderr(&output);
            assert!(error.contains("--shard <K/N>") && error.contains(message), "{command} --shard {value}: {error}");
        }
    }
}

#[test]
fn eval_shards_scenarios_by_their_id() {
    let project = assay::Project::open(assay::ProjectOptions::default()).unwrap();
    let scenarios = project.scenarios(&[fixture("scenarios")]).unwrap();
    let all: Vec<String> = scenarios.iter().map(assay::eval::scenario_id).collect();
    assert!(all.len() >= 2, "{all:?}");
    let mut seen = Vec::new();
    for index in 1..=3 {
        let shard = Shard::new(index, 3).unwrap();
        let again = project.scenarios(&[fixture("scenarios")]).unwrap();
        for id in shard.select(again, assay::eval::scenario_id).iter().map(assay::eval::scenario_id) {
            assert_eq!(Shard::index_of(&id, 3), index);
            seen.push(id);
        }
    }
    seen.sort();
    let mut all = all;
    all.sort();
    assert_eq!(seen, all);
}

#[test]
fn assess_runs_only_its_shard_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let cases = fixture("cases");
    let results = dir.path().join("assess");
    let output = assay(&["assess", cases.to_str().unwrap(), "--shard", "2/2", "--results", results.to_str().unwrap()]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    let expected: Vec<String> = listed(&[&cases], &[]).into_iter().filter(|id| Shard::index_of(id, 2) == 2).collect();
    assert!(stdout(&output).contains(&format!("Running shard 2/2: {} of ", expected.len())), "{}", stdout(&output));
    assert_eq!(statuses(&results).into_keys().collect::<Vec<_>>(), expected);
    assert_eq!(summary(&results)["shard"], serde_json::json!({"index": 2, "total": 2}));
}
