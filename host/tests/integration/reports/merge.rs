//! `assay merge DIR… --results OUT` and `assay run --rerun-failed DIR`
//! through the binary: merge refuses overlapping shards, shards of
//! different totals, a shard twice, missing shards (unless allowed, and
//! then says so), a killed run's directory (unless allowed), a broken
//! line, and writing into an input; a rerun runs exactly the failed cases
//! (flaky ones with `--rerun-flaky`), warns of a case gone, and merged
//! with the run it reran replaces those cases' results.

use crate::reports::shard::{statuses, summary, write_big_suite};
use crate::util::{assay, fixture, stderr, stdout};
use assay::run::Shard;
use std::path::{Path, PathBuf};
use std::process::Output;

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `assay run PATH --results OUT -q ARGS`: the exit code.
fn run(path: &Path, out: &Path, args: &[&str]) -> Option<i32> {
    let mut all = vec!["run", s(path), "--results", s(out), "-q"];
    all.extend(args);
    let output = assay(&all);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}{}", stdout(&output), stderr(&output));
    output.status.code()
}

fn merge(dirs: &[&Path], out: &Path, args: &[&str]) -> Output {
    let mut all = vec!["merge"];
    all.extend(dirs.iter().map(|d| s(d)));
    all.extend(["--results", s(out)]);
    all.extend(args);
    assay(&all)
}

/// Asserts that the merge was refused with exit code 2, an error holding
/// every one of `parts`, and nothing written.
fn refused(output: &Output, out: &Path, parts: &[&str]) {
    let error = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{error}");
    for part in parts {
        assert!(error.contains(part), "{part:?} not in {error}");
    }
    assert!(!out.exists(), "a refused merge writes nothing");
}

#[test]
fn merge_refuses_overlaps_other_totals_a_shard_twice_missing_shards_and_killed_runs() {
    let dir = tempfile::tempdir().unwrap();
    let suite = write_big_suite(dir.path(), 60);
    let at = |name: &str| dir.path().join(name);
    for k in 1..=3 {
        run(&suite, &at(&format!("s{k}")), &["--shard", &format!("{k}/3")]);
    }
    run(&suite, &at("half"), &["--shard", "1/2"]);
    run(&suite, &at("all"), &[]);
    let out = at("out");

    let output = merge(&[&at("s1"), &at("all")], &out, &[]);
    refused(&output, &out, &["failed to merge: case `big/c", "` is in both `", "s1` and `", "all`", "--rerun-failed"]);
    let output = merge(&[&at("s1"), &at("half")], &out, &[]);
    refused(&output, &out, &["s1` is shard 1/3 and `", "half` is shard 1/2: shards of different totals"]);
    let output = merge(&[&at("s1"), &at("s2"), &at("s1")], &out, &[]);
    refused(&output, &out, &["s1` and `", "s1` are both shard 1/3"]);
    let output = merge(&[&at("s1"), &at("s3")], &out, &[]);
    refused(&output, &out, &["failed to merge: 1 shard of 3 missing (2/3)", "--allow-missing"]);
    let output = merge(&[&at("s1")], &out, &[]);
    refused(&output, &out, &["2 shards of 3 missing (2/3, 3/3)"]);
    let output = merge(&[&at("s1"), &at("s2"), &at("s3")], &at("s1"), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("s1`: it is one of the directories merged"), "{}", stderr(&output));

    // Allowed, a merge without shard 2 says so, in summary.json too.
    let output = merge(&[&at("s1"), &at("s3")], &out, &["--allow-missing", "-q"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("warning: merged without shards 2/3 (--allow-missing)"), "{}", stderr(&output));
    assert_eq!(summary(&out)["missing_shards"], serde_json::json!([{"index": 2, "total": 3}]));
    let ids: Vec<String> = statuses(&out).into_keys().collect();
    assert!(ids.iter().all(|id| Shard::index_of(id, 3) != 2));
    assert_eq!(ids.len(), statuses(&at("s1")).len() + statuses(&at("s3")).len());

    // A killed shard (no summary.json): refused, then merged when allowed,
    // its shard told by its cases' ids.
    std::fs::remove_file(at("s2").join("summary.json")).unwrap();
    let out = at("out2");
    let output = merge(&[&at("s1"), &at("s2"), &at("s3")], &out, &[]);
    refused(&output, &out, &["s2`: it holds no summary.json, so its run never finished", "--allow-incomplete"]);
    let output = merge(&[&at("s1"), &at("s2"), &at("s3")], &out, &["--allow-incomplete", "-q"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(statuses(&out), statuses(&at("all")));
    let killed = &summary(&out)["merged_from"][1];
    assert_eq!((killed["incomplete"].as_bool(), killed["shard"]["index"].as_u64()), (Some(true), Some(2)));
    assert!(stderr(&output).contains("s2` never finished (--allow-incomplete)"), "{}", stderr(&output));

    // A line that is not a case's result is located.
    let lines = std::fs::read_to_string(at("s3").join("results.jsonl")).unwrap();
    std::fs::write(at("s3").join("results.jsonl"), format!("{lines}{{\"id\":\"x\",\"status\":\"passed\"}}\n")).unwrap();
    let out = at("out3");
    let output = merge(&[&at("s1"), &at("s2"), &at("s3")], &out, &["--allow-incomplete"]);
    let line = lines.lines().count() + 1;
    refused(&output, &out, &[&format!("s3/results.jsonl`: line {line} is not a case's result: missing field")]);
    let output = merge(&[&at("nothing-here")], &out, &[]);
    refused(&output, &out, &["nothing-here`: no such directory"]);
}

/// A folder of echo cases: `name`.hocon passes unless `fails`.
fn write_case(dir: &Path, name: &str, fails: bool) {
    let want = if fails { "not in the answer" } else { "hello" };
    let hocon = format!(
        r#"{{ "agent": "echo", "interactions": [ {{ "text": "hello {name}", "response": {{ "text": {{ "keywords": "{want}" }} }} }} ] }}"#
    );
    std::fs::write(dir.join(format!("{name}.hocon")), hocon).unwrap();
}

fn cases_dir(root: &Path) -> PathBuf {
    let cases = root.join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    for name in ["a", "b", "c", "d", "e"] {
        write_case(&cases, name, false);
    }
    cases
}

#[test]
fn rerun_failed_runs_exactly_the_failed_cases_and_merge_puts_their_new_results_in() {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases_dir(dir.path());
    write_case(&cases, "b", true);
    write_case(&cases, "d", true);
    std::fs::copy(fixture("cases/flaky/flaky.hocon"), cases.join("flaky.hocon")).unwrap();
    let old = dir.path().join("old");
    assert_eq!(run(&cases, &old, &[]), Some(1));
    let before = statuses(&old);
    assert_eq!(before["b"], "failed");
    assert_eq!(before["flaky"], "flaky");

    // b is fixed, d still fails.
    write_case(&cases, "b", false);
    let rerun = dir.path().join("rerun");
    let output = assay(&["run", s(&cases), "--rerun-failed", s(&old), "--results", s(&rerun)]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).contains(&format!("Rerunning the failed cases of {}: 2 of 6 cases", old.display())));
    let again = statuses(&rerun);
    assert_eq!(again.keys().collect::<Vec<_>>(), ["b", "d"]);
    assert_eq!((again["b"].as_str(), again["d"].as_str()), ("passed", "failed"));
    assert_eq!(summary(&rerun)["rerun_of"], s(&old));

    let merged = dir.path().join("merged");
    let output = assay(&["merge", s(&old), s(&rerun), "--results", s(&merged), "-q"]);
    assert_eq!(output.status.code(), Some(1), "d still fails: {}", stderr(&output));
    let after = statuses(&merged);
    assert_eq!(after.len(), before.len());
    assert_eq!(after["b"], "passed");
    assert_eq!(after["d"], "failed");
    assert_eq!(after["a"], before["a"]);
    let merged_summary = summary(&merged);
    assert_eq!((merged_summary["cases"].as_u64(), merged_summary["failed"].as_u64()), (Some(6), Some(1)));
    let sources = &merged_summary["merged_from"];
    assert_eq!(sources[1]["rerun_of"], s(&old));
    assert_eq!((sources[1]["replaced"].as_u64(), sources[1]["cases"].as_u64()), (Some(2), Some(2)));
    assert_eq!(sources[0]["cases"], 4);

    // d fixed, a rerun of the rerun; then the three merged pass.
    write_case(&cases, "d", false);
    let second = dir.path().join("second");
    assert_eq!(run(&cases, &second, &["--rerun-failed", s(&rerun)]), Some(0));
    assert_eq!(statuses(&second).into_keys().collect::<Vec<_>>(), ["d"]);
    let output = assay(&["merge", s(&old), s(&rerun), s(&second), "--results", s(&dir.path().join("m2")), "-q"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = assay(&[
        "merge",
        s(&old),
        s(&rerun),
        s(&second),
        "--results",
        s(&dir.path().join("m3")),
        "-q",
        "--fail-on-flaky",
    ]);
    assert_eq!(output.status.code(), Some(1), "flaky counts as failure when asked");

    // With --rerun-flaky the flaky case runs too; a case gone is named.
    std::fs::remove_file(cases.join("d.hocon")).unwrap();
    let flaky = dir.path().join("flaky");
    let output = assay(&["run", s(&cases), "--rerun-failed", s(&old), "--rerun-flaky", "--results", s(&flaky), "-q"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(statuses(&flaky).into_keys().collect::<Vec<_>>(), ["b", "flaky"]);
    assert!(
        stderr(&output)
            .contains(&format!("warning: case `d` of `{}` is in none of the case files any more", old.display())),
        "{}",
        stderr(&output)
    );

    // A rerun's case that none of the others holds is refused.
    let lone = dir.path().join("lone");
    let output = assay(&["merge", s(&rerun), "--results", s(&lone)]);
    refused(&output, &lone, &["rerun` reran case `", "which none of the other directories holds"]);
    let output = assay(&["run", s(&cases), "--rerun-flaky", "--results", s(&lone)]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--rerun-failed"), "{}", stderr(&output));
    let output = assay(&["run", s(&cases), "--rerun-failed", s(&dir.path().join("gone")), "--results", s(&lone)]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("gone`: no such directory"), "{}", stderr(&output));
}

#[test]
fn a_rerun_of_one_shard_merges_with_all_the_shards() {
    let dir = tempfile::tempdir().unwrap();
    let suite = write_big_suite(dir.path(), 40);
    let at = |name: &str| dir.path().join(name);
    for k in 1..=2 {
        run(&suite, &at(&format!("s{k}")), &["--shard", &format!("{k}/2")]);
    }
    // Every seventh case failed; now each wants what the answer holds.
    let lines: String =
        (0..40).map(|i| format!("{{\"id\":\"c{i:04}\",\"question\":\"q {i}\",\"want\":\"q\"}}\n")).collect();
    std::fs::write(suite.join("specs").join("a.jsonl"), lines).unwrap();
    assert_eq!(run(&suite, &at("r1"), &["--rerun-failed", s(&at("s1")), "--shard", "1/2"]), Some(0));
    assert_eq!(run(&suite, &at("r2"), &["--rerun-failed", s(&at("s2"))]), Some(0));
    let output = merge(&[&at("s1"), &at("s2"), &at("r1"), &at("r2")], &at("out"), &["-q"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let merged = statuses(&at("out"));
    assert_eq!(merged.len(), 40);
    assert!(merged.values().all(|status| status == "passed"), "{merged:?}");
}

// See: issue 34, "`assay merge` … streams in bounded memory": the merge
// keeps a hash of each id, not the id; a case twice, in one file or in a
// rerun, is still found and named with both its lines.
#[test]
fn a_case_twice_in_one_results_file_or_one_rerun_is_refused_naming_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases_dir(dir.path());
    write_case(&cases, "c", true);
    let old = dir.path().join("old");
    assert_eq!(run(&cases, &old, &[]), Some(1));
    let rerun = dir.path().join("rerun");
    assert_eq!(run(&cases, &rerun, &["--rerun-failed", s(&old)]), Some(1));
    let out = dir.path().join("out");

    // The rerun's one case, twice.
    let rerun_lines = std::fs::read_to_string(rerun.join("results.jsonl")).unwrap();
    std::fs::write(rerun.join("results.jsonl"), format!("{rerun_lines}{rerun_lines}")).unwrap();
    let output = merge(&[&old, &rerun], &out, &[]);
    refused(&output, &out, &["rerun/results.jsonl`: line 2 holds case `c` again (first on line 1)"]);

    // The old run's third case again at its end.
    let lines = std::fs::read_to_string(old.join("results.jsonl")).unwrap();
    let third = lines.lines().nth(2).unwrap();
    let id = serde_json::from_str::<serde_json::Value>(third).unwrap()["id"].as_str().unwrap().to_owned();
    std::fs::write(old.join("results.jsonl"), format!("{lines}{third}\n")).unwrap();
    let output = merge(&[&old], &out, &[]);
    let again = lines.lines().count() + 1;
    refused(&output, &out, &[&format!("old/results.jsonl`: line {again} holds case `{id}` again (first on line 3)")]);
}
