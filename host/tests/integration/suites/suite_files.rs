//! Suite files (`*.suite.toml`): spec lines as cases over the `echo` demo
//! agent, through the binary and the library: ids, `--list`, `--filter`,
//! `assay plan`; a setup per cluster state (asserted from the log its
//! script writes); located errors; non-gating checks recorded and not
//! deciding; every case reported exactly once. The suites written here are
//! trusted for their runs (`--allow-commands`): `trust.rs` tests a suite
//! that is data.

use crate::util::{Collect, assay, root, stderr, stdout};
use assay::job::CaseStatus;
use assay::run::RunOptions;
use assay::{Project, ProjectOptions, TrustedFiles};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A suite over `echo` (which answers with the question): one gating check
/// that the answer is the question, one non-gating check that fails.
const SUITE: &str = r#"
specs = ["specs/*.jsonl"]
agent = "echo"
text = "{{question}}"

[setup]
command = ["./setup.sh", "{{clusterStateId}}"]
skip = ["none"]

[[checks]]
key = "value"
expected = "{{question}}"

[[checks]]
key = "keywords"
expected = "{{never}}"
gate = false
"#;

/// Logs its state; fails for the state `broken`, complaining on stderr.
const SETUP: &str = r#"#!/bin/sh
echo "$1" >> setup.log
if [ "$1" = broken ]; then echo "no data for broken" >&2; exit 3; fi
"#;

fn write_suite(dir: &Path, suite: &str, specs: &[(&str, &str)]) {
    std::fs::create_dir_all(dir.join("specs")).unwrap();
    std::fs::write(dir.join("qa.suite.toml"), suite).unwrap();
    let setup = dir.join("setup.sh");
    std::fs::write(&setup, SETUP).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&setup, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for (name, text) in specs {
        std::fs::write(dir.join("specs").join(name), text).unwrap();
    }
}

/// Four states: `alerting` (three cases), `spider` (one), `none` (skipped),
/// and a line without a state.
const GOOD_SPECS: &str = r#"{"id":"a1","clusterStateId":"alerting","question":"how many alerts?","never":"zzz"}
{"id":"a2","clusterStateId":"alerting","question":"how many monitors?","never":"zzz"}

{"id":"s1","clusterStateId":"spider","question":"how many shards?","never":"zzz"}
{"id":"n1","clusterStateId":"none","question":"what is an index?","never":"zzz"}
{"id":"a3","clusterStateId":"alerting","question":"which monitor?","never":"zzz"}
{"id":"free","question":"no state here","never":"zzz"}
"#;

/// The lines of `results.jsonl`, by case id.
fn results(dir: &Path) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let by_id: BTreeMap<String, Value> =
        lines.iter().map(|line| (line["id"].as_str().unwrap().to_owned(), line.clone())).collect();
    assert_eq!(by_id.len(), lines.len(), "every case is reported exactly once: {text}");
    by_id
}

fn setup_log(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("setup.log")).unwrap_or_default();
    let mut states: Vec<String> = text.lines().map(str::to_owned).collect();
    states.sort();
    states
}

#[test]
fn a_suite_over_echo_passes_with_one_case_per_spec_line_and_setup_once_per_state() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), SUITE, &[("a.jsonl", GOOD_SPECS)]);
    let out = dir.path().join("results");
    let suite = dir.path().to_str().unwrap();
    let run = assay(&["run", "--allow-commands", suite, "-j", "8", "--results", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}{}", stdout(&run), stderr(&run));
    assert!(stdout(&run).contains("6 test cases: 6 passed"), "{}", stdout(&run));

    // Once per state with cases, whatever the concurrency; never for the
    // skipped `none`, nor for the line without a state.
    assert_eq!(setup_log(dir.path()), ["alerting", "spider"]);

    let results = results(&out);
    let ids: Vec<&str> = results.keys().map(String::as_str).collect();
    assert_eq!(ids, ["qa/a1", "qa/a2", "qa/a3", "qa/free", "qa/n1", "qa/s1"]);
    let a1 = &results["qa/a1"];
    assert_eq!(a1["status"], "passed");
    assert_eq!(a1["file"], dir.path().join("specs/a.jsonl").to_str().unwrap());
    let checks = &a1["samples"][0]["runs"][0]["interactions"][0]["checks"];
    assert_eq!(checks[0]["expected"], "how many alerts?");
    assert_eq!(checks[0]["outcome"], "pass");
    assert!(checks[0].get("gate").is_none(), "a gating check says nothing: {checks}");
    // The non-gating check failed, is recorded as such, and the case passed.
    assert_eq!(checks[1]["key"], "keywords");
    assert_eq!(checks[1]["expected"], "zzz");
    assert_eq!(checks[1]["outcome"], "fail");
    assert_eq!(checks[1]["gate"], false);

    // A replay asks no agent, so it sets nothing up either.
    std::fs::remove_file(dir.path().join("setup.log")).unwrap();
    let again = dir.path().join("replayed");
    let replay = assay(&[
        "run",
        "--allow-commands",
        suite,
        "--replay",
        out.to_str().unwrap(),
        "--results",
        again.to_str().unwrap(),
    ]);
    assert!(replay.status.success(), "{}{}", stdout(&replay), stderr(&replay));
    assert_eq!(self::results(&again).len(), 6);
    assert_eq!(setup_log(dir.path()), Vec::<String>::new());
}

#[test]
fn list_filter_and_plan_read_suites_without_running_a_setup() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), SUITE, &[("a.jsonl", GOOD_SPECS)]);
    let suite = dir.path().join("qa.suite.toml");
    let suite = suite.to_str().unwrap();

    let list = assay(&["run", "--allow-commands", suite, "--list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    // A suite file named by its path has that path as its id, as a case
    // file does; then each line's id.
    let ids: Vec<String> = stdout(&list).lines().map(|line| line.split("  ").next().unwrap().to_owned()).collect();
    let wanted = ["a1", "a2", "s1", "n1", "a3", "free"].map(|id| format!("{}/qa/{id}", dir.path().display()));
    assert_eq!(ids, wanted, "{}", stdout(&list));
    assert!(stdout(&list).contains("agent echo  connections direct  success_ratio 1/1  (2 checks)"));

    let filtered = assay(&["run", "--allow-commands", suite, "--list", "--filter", "/a[13]$"]);
    assert_eq!(stdout(&filtered).lines().count(), 2, "{}", stdout(&filtered));
    let none = assay(&["run", "--allow-commands", suite, "--filter", "nothing-matches"]);
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));

    let plan = assay(&["plan", "--allow-commands", suite]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert!(stdout(&plan).contains(r#"1. "how many alerts?""#), "{}", stdout(&plan));
    assert!(stdout(&plan).contains(r#"keywords       "zzz"  (not gating)"#), "{}", stdout(&plan));
    let json = assay(&["plan", "--allow-commands", suite, "--json"]);
    let first: Value = serde_json::from_str(stdout(&json).lines().next().unwrap()).unwrap();
    assert_eq!(first["case"]["interactions"][0]["text"], "how many alerts?");
    assert_eq!(first["plan"]["interactions"][0][1]["gate"], false);

    assert_eq!(setup_log(dir.path()), Vec::<String>::new(), "listing or planning sets nothing up");
}

#[test]
fn a_failing_setup_errors_its_states_cases_only_naming_state_command_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let specs = r#"{"id":"b1","clusterStateId":"broken","question":"q1","never":"zzz"}
{"id":"ok","clusterStateId":"alerting","question":"q2","never":"zzz"}
{"id":"b2","clusterStateId":"broken","question":"q3","never":"zzz"}
"#;
    write_suite(dir.path(), SUITE, &[("a.jsonl", specs)]);
    let out = dir.path().join("results");
    let run = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", stdout(&run));
    assert_eq!(setup_log(dir.path()), ["alerting", "broken"], "a failed setup is not tried again");
    let results = results(&out);
    assert_eq!(results["qa/ok"]["status"], "passed");
    for id in ["qa/b1", "qa/b2"] {
        assert_eq!(results[id]["status"], "error");
        assert_eq!(results[id]["error"]["kind"], "setup");
        let message = results[id]["error"]["message"].as_str().unwrap();
        for part in ["cluster state \"broken\"", "`./setup.sh broken`", "exited with status 3", "no data for broken"] {
            assert!(message.contains(part), "{part:?} is not in {message}");
        }
    }
}

#[test]
fn a_setup_that_runs_too_long_is_killed_and_one_that_cannot_start_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let suite = SUITE
        .replace("skip = [\"none\"]", "skip = [\"none\"]\ntimeout_secs = 0.5")
        .replace("command = [\"./setup.sh\", \"{{clusterStateId}}\"]", "command = [\"./slow-{{clusterStateId}}.sh\"]");
    let specs = r#"{"id":"slow","clusterStateId":"sleepy","question":"q","never":"zzz"}
{"id":"gone","clusterStateId":"missing","question":"q","never":"zzz"}
"#;
    write_suite(dir.path(), &suite, &[("a.jsonl", specs)]);
    let script = dir.path().join("slow-sleepy.sh");
    std::fs::write(&script, "#!/bin/sh\nsleep 30\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = dir.path().join("results");
    let started = std::time::Instant::now();
    let run = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "the timeout stopped the setup");
    assert_eq!(run.status.code(), Some(1));
    let results = results(&out);
    let message = |id: &str| results[id]["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message("qa/slow").contains("did not finish within its timeout_secs of 0.5 s and was killed"),
        "{}",
        message("qa/slow")
    );
    assert!(message("qa/gone").contains("`./slow-missing.sh` in"), "{}", message("qa/gone"));
    assert!(message("qa/gone").contains("could not start"), "{}", message("qa/gone"));
}

#[test]
fn missing_fields_bad_lines_and_duplicate_ids_are_located_error_cases() {
    let dir = tempfile::tempdir().unwrap();
    let specs = r#"{"id":"q1","clusterStateId":"none","question":"fine","never":"zzz"}
{"id":"q2","clusterStateId":"none","never":"zzz"}

not json
[1, 2]
{"question":"no id","never":"zzz"}
{"id":"q1","clusterStateId":"none","question":"again","never":"zzz"}
"#;
    let other = r#"{"id":"q2","clusterStateId":"none","question":"elsewhere","never":"zzz"}
"#;
    write_suite(dir.path(), SUITE, &[("a.jsonl", specs), ("b.jsonl", other)]);
    let out = dir.path().join("results");
    let run = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let results = results(&out);
    let ids: Vec<&str> = results.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "qa/q1",
            "qa/q2",
            "qa/specs/a.jsonl:4",
            "qa/specs/a.jsonl:5",
            "qa/specs/a.jsonl:6",
            "qa/specs/a.jsonl:7",
            "qa/specs/b.jsonl:1"
        ]
    );
    assert_eq!(results["qa/q1"]["status"], "passed");
    let message = |id: &str| {
        assert_eq!(results[id]["status"], "error", "{id}");
        results[id]["error"]["message"].as_str().unwrap().to_owned()
    };
    let a = dir.path().join("specs/a.jsonl");
    let a = a.display();
    assert_eq!(
        message("qa/q2"),
        format!(
            "`{a}`: line 2: it has no field `question`, which the suite's text uses (`{}`); the line has `id`, \
             `clusterStateId`, `never`",
            dir.path().join("qa.suite.toml").display()
        )
    );
    assert!(message("qa/specs/a.jsonl:4").starts_with(&format!("`{a}`: line 4: it is not JSON (")));
    assert!(message("qa/specs/a.jsonl:5").starts_with(&format!("`{a}`: line 5: it is not a JSON object: \"[1, 2]\"")));
    assert_eq!(
        message("qa/specs/a.jsonl:6"),
        format!("`{a}`: line 6: it has no `id`; every spec line needs one, unique in its suite")
    );
    assert!(
        message("qa/specs/a.jsonl:7").starts_with(&format!("`{a}`: line 7: its id \"q1\" is also the id of line 1;"))
    );
    assert!(
        message("qa/specs/b.jsonl:1").contains(&format!("line 1: its id \"q2\" is also the id of `{a}` line 2;")),
        "{}",
        message("qa/specs/b.jsonl:1")
    );
}

#[test]
fn a_bad_suite_file_is_one_error_case_naming_the_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &SUITE.replace("key = \"value\"", "key = \"valeu\""), &[("a.jsonl", GOOD_SPECS)]);
    let listed = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--list"]);
    assert!(
        stderr(&listed).contains("unknown matcher key `valeu` at `checks[0].key` (did you mean `value`?)"),
        "{}",
        stderr(&listed)
    );

    write_suite(dir.path(), &SUITE.replace("specs = [\"specs/*.jsonl\"]", "specs = [\"spec/*.jsonl\"]"), &[]);
    let out = dir.path().join("results");
    let run = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let results = results(&out);
    let message = results["qa"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("qa.suite.toml`: invalid `specs[0]`: `spec/*.jsonl` matches no file in"), "{message}");

    write_suite(dir.path(), "specs = [\"specs/*.jsonl\"]\nagent = \"echo\"\ntext = \"{{question\"\n", &[]);
    let listed = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--list"]);
    assert!(
        stderr(&listed).contains(
            "invalid `text`: syntax error: unexpected end of input, expected end of variable block (line 1: `{{question`)"
        ),
        "{}",
        stderr(&listed)
    );
}

#[test]
fn a_setup_of_indices_alone_feeds_date_templates_and_none_is_left_unresolved() {
    let dir = tempfile::tempdir().unwrap();
    // `[setup]` with only the documents (and a skipped state): nothing to
    // prepare, and no `command` needed.
    let suite = r#"
specs = ["specs/*.jsonl"]
agent = "echo"
text = "{{question}}"

[setup]
indices = "data/indices"
skip = ["quiet"]

[[checks]]
key = "value"
expected = "{{question}}"
"#;
    let specs = r#"{"id":"dated","clusterStateId":"alerting","question":"since <m1.start_time,date>?"}
{"id":"skipped","clusterStateId":"quiet","question":"since <m1.start_time,date>?"}
{"id":"stateless","question":"since <m1.start_time,date>?"}
{"id":"plain","clusterStateId":"quiet","question":"a <b> tag"}
"#;
    write_suite(dir.path(), suite, &[("a.jsonl", specs)]);
    let group = dir.path().join("data/indices/alerting/monitors");
    std::fs::create_dir_all(&group).unwrap();
    std::fs::write(group.join("mappings.json"), "{}").unwrap();
    std::fs::write(group.join("documents.ndjson"), "{\"id\":\"m1\",\"start_time\":\"2023-12-06T13:40:00Z\"}\n")
        .unwrap();
    let out = dir.path().join("results");
    let run = assay(&["run", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    let results = results(&out);
    assert_eq!(results["qa/dated"]["status"], "passed", "{}", results["qa/dated"]);
    assert_eq!(results["qa/plain"]["status"], "passed", "{}", results["qa/plain"]);
    // A skipped state, or a line of none, has no documents: its template is
    // an error naming it, not text sent as it is.
    for id in ["qa/skipped", "qa/stateless"] {
        let message = results[id]["error"]["message"].as_str().unwrap_or_else(|| panic!("{}", results[id]));
        assert!(message.contains("resolve the date template `<m1.start_time,date>`"), "{id}: {message}");
    }
}

#[test]
fn a_failing_gating_check_fails_its_case_and_a_failing_non_gating_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let suite = r#"
specs = ["specs/*.jsonl"]
agent = "echo"
text = "{{question}}"
[[checks]]
key = "keywords"
expected = ["{{must}}"]
[[checks]]
key = "value"
expected = "{{may}}"
gate = false
"#;
    let specs = r#"{"id":"kept","question":"red apples","must":"apples","may":"pears"}
{"id":"broken","question":"red apples","must":"pears","may":"red apples"}
"#;
    write_suite(dir.path(), suite, &[("a.jsonl", specs)]);
    let out = dir.path().join("results");
    let run = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let results = results(&out);
    assert_eq!(results["qa/kept"]["status"], "passed");
    assert_eq!(results["qa/broken"]["status"], "failed");
    // The failure shown is the gating check's, not the non-gating one's.
    assert!(stdout(&run).contains(r#"keywords "pears""#), "{}", stdout(&run));
    let checks = &results["qa/broken"]["samples"][0]["runs"][0]["interactions"][0]["checks"];
    assert_eq!(checks[1]["outcome"], "pass");
    assert_eq!(checks[1]["gate"], false);

    // --verbose marks a missed non-gating check as a note, not a failure.
    let verbose = assay(&[
        "run",
        dir.path().to_str().unwrap(),
        "--filter",
        "kept",
        "--verbose",
        "--results",
        out.to_str().unwrap(),
    ]);
    let shown = stdout(&verbose);
    let place = format!("{}:1: ", dir.path().join("specs/a.jsonl").display());
    assert!(shown.contains(&format!(r#"note {place}[direct] sample 0 interaction 1: text value "pears""#)), "{shown}");
    assert!(!shown.contains("FAIL [direct]"), "{shown}");
}

/// OpenSearch's `os_query_eval` as a suite check: the agent's answer is a
/// result table (echo hands back the table in the question), compared by
/// `table_equivalence` with the spec line's gold rows, which `{{gold_rows}}`
/// hands over as the list it is.
#[test]
fn a_suite_compares_result_tables_with_table_equivalence() {
    let dir = tempfile::tempdir().unwrap();
    let suite = r#"
specs = ["specs/*.jsonl"]
agent = "echo"
text = "{{question}}"
[[checks]]
key = "table_equivalence"
expected = { rows = "{{gold_rows}}" }
"#;
    let specs = r#"{"id":"same-rows","question":"[{\"name\": \"Bob\", \"n\": 5}, {\"name\": \"Ann\", \"n\": 3}]","gold_rows":[["Ann",3],["Bob",5]]}
{"id":"wrong-count","question":"[{\"name\": \"Ann\", \"n\": 4}]","gold_rows":[["Ann",3]]}
"#;
    write_suite(dir.path(), suite, &[("q.jsonl", specs)]);
    let plugin = root().join("plugins/table-equivalence/table_equivalence.wasm");
    let out = dir.path().join("results");
    let run = assay(&[
        "run",
        dir.path().to_str().unwrap(),
        "--plugin",
        plugin.to_str().unwrap(),
        "--results",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    let results = results(&out);
    assert_eq!(results["qa/same-rows"]["status"], "passed", "{}", results["qa/same-rows"]);
    assert_eq!(results["qa/wrong-count"]["status"], "failed", "{}", results["qa/wrong-count"]);
    let check = &results["qa/wrong-count"]["samples"][0]["runs"][0]["interactions"][0]["checks"][0];
    assert_eq!(check["key"], "table_equivalence", "{check}");
}

#[test]
fn the_library_runs_a_suite_through_the_front_door_reporting_every_case_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut specs = GOOD_SPECS.to_owned();
    specs.push_str("{\"id\":\"late\",\"clusterStateId\":\"broken\",\"question\":\"q\",\"never\":\"zzz\"}\n");
    specs.push_str("not json\n");
    write_suite(dir.path(), SUITE, &[("a.jsonl", &specs)]);
    let project = Project::open(ProjectOptions {
        no_cache: true,
        no_answer_cache: true,
        environment: Some(BTreeMap::new()),
        trusted_files: TrustedFiles::Everything,
        ..ProjectOptions::default()
    })
    .unwrap();
    let cases = project.discover(&[dir.path().to_path_buf()], None).unwrap();
    assert_eq!(cases.len(), 8);
    let source = project.cases(cases, None).unwrap();
    assert_eq!(source.len(), 8);
    let mut collect = Collect::default();
    let summary = project.runner(RunOptions::default()).unwrap().run_blocking(source, &mut collect);
    assert!(summary.internal_errors.is_empty(), "{:?}", summary.internal_errors);
    let mut statuses: Vec<(String, CaseStatus)> = collect.0.iter().map(|c| (c.id.clone(), c.status)).collect();
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    let errors: Vec<&str> =
        statuses.iter().filter(|(_, status)| *status == CaseStatus::Error).map(|(id, _)| id.as_str()).collect();
    assert_eq!(statuses.len(), 8);
    assert_eq!(errors, ["qa/late", "qa/specs/a.jsonl:9"]);
    assert_eq!(setup_log(dir.path()), ["alerting", "broken", "spider"]);
}

#[test]
fn ten_thousand_spec_lines_are_indexed_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let mut specs = String::new();
    for i in 0..10_000 {
        specs.push_str(&format!(
            "{{\"id\":\"q{i}\",\"clusterStateId\":\"none\",\"question\":\"question number {i} {}\",\"never\":\"zzz\"}}\n",
            "padding ".repeat(20)
        ));
    }
    write_suite(dir.path(), SUITE, &[("big.jsonl", &specs)]);
    let list = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--list", "--filter", "q9999$"]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert_eq!(stdout(&list).lines().count(), 1);
    assert!(stdout(&list).starts_with("qa/q9999  agent echo"), "{}", stdout(&list));
}

#[test]
#[ignore = "reads the OpenSearch spec files in ../shared/reference, which are not part of this repository"]
fn every_reference_opensearch_spec_file_reads_as_spec_lines() {
    let folder = root().join("../shared/reference/opensearch");
    assert!(
        folder.is_dir(),
        "{} does not exist: this test needs the OpenSearch reference specs there",
        folder.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let mut count = 0;
    for group in ["specs", "skills-eval-specs"] {
        let specs = folder.join(group).canonicalize().unwrap();
        let files: Vec<_> = std::fs::read_dir(&specs)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        assert!(!files.is_empty(), "no spec files in {}", specs.display());
        // One suite per file (two of them share ids, as the seed's variants
        // of one test set), with a trivial mapping: every line's question
        // sent to echo, and checked.
        for file in files {
            count += 1;
            let suite = format!(
                "specs = [{:?}]\nagent = \"echo\"\ntext = \"{{{{question}}}}\"\n[[checks]]\nkey = \"value\"\nexpected = \"{{{{question}}}}\"\n",
                file.display().to_string()
            );
            let name = format!("{group}-{}.suite.toml", file.file_stem().unwrap().to_string_lossy());
            std::fs::write(dir.path().join(name), suite).unwrap();
        }
    }
    let plan = assay(&["plan", "--allow-commands", dir.path().to_str().unwrap()]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let planned = stdout(&plan).lines().filter(|line| !line.starts_with(' ')).count();
    let lines: usize = ["specs", "skills-eval-specs"]
        .iter()
        .flat_map(|group| std::fs::read_dir(folder.join(group)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .map(|path| std::fs::read_to_string(path).unwrap().lines().filter(|l| !l.trim().is_empty()).count())
        .sum();
    assert_eq!(planned, lines, "every line of the {count} spec files is one planned case");
}

#[test]
fn cases_of_other_states_do_not_wait_for_a_slow_setup() {
    let dir = tempfile::tempdir().unwrap();
    let specs = r#"{"id":"late","clusterStateId":"slow","question":"q1","never":"zzz"}
{"id":"early","clusterStateId":"fast","question":"q2","never":"zzz"}
"#;
    write_suite(dir.path(), SUITE, &[("a.jsonl", specs)]);
    let setup = "#!/bin/sh\nif [ \"$1\" = slow ]; then sleep 2; fi\necho \"$1\" >> setup.log\n";
    std::fs::write(dir.path().join("setup.sh"), setup).unwrap();
    let out = dir.path().join("results");
    let run = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stdout(&run));
    // results.jsonl is written as cases finish: the case of `fast`, second
    // in the spec, is done while `slow` is still being set up.
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let order: Vec<String> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(order, ["qa/early", "qa/late"]);
    // The slow case waited for its setup (its duration counts the wait).
    assert_eq!(std::fs::read_to_string(dir.path().join("setup.log")).unwrap(), "fast\nslow\n");
    let late: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert!(late["duration_ms"].as_f64().unwrap() >= 1900.0, "{late}");
    let early: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert!(early["duration_ms"].as_f64().unwrap() < 1900.0, "{early}");
}

#[test]
fn an_opensearch_setup_is_checked_when_read_and_runs_the_loader_once_per_state() {
    let dir = tempfile::tempdir().unwrap();
    let suite = SUITE.replace(
        "command = [\"./setup.sh\", \"{{clusterStateId}}\"]",
        "opensearch = { url = \"http://127.0.0.1:9\", indices = \"data/indices\" }\ntimeout_secs = 10",
    );
    let specs = r#"{"id":"a1","clusterStateId":"alerting","question":"q1","never":"zzz"}
{"id":"n1","clusterStateId":"none","question":"q2","never":"zzz"}
"#;
    write_suite(dir.path(), &suite, &[("a.jsonl", specs)]);
    // Not a folder yet: the suite is one error case naming the setting.
    let listed = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--list"]);
    assert!(stderr(&listed).contains("invalid `setup.opensearch.indices`"), "{}", stderr(&listed));

    let group = dir.path().join("data/indices/alerting/alerts");
    std::fs::create_dir_all(&group).unwrap();
    std::fs::write(group.join("mappings.json"), r#"{"mappings":{"properties":{"name":{"type":"keyword"}}}}"#).unwrap();
    std::fs::write(group.join("documents.ndjson"), "{\"id\":\"x1\",\"name\":\"first\"}\n").unwrap();
    let out = dir.path().join("results");
    let run = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", stdout(&run));
    let results = results(&out);
    // Nothing listens on port 9: the loader fails, and only its state's
    // case is an error.
    assert_eq!(results["qa/n1"]["status"], "passed");
    assert_eq!(results["qa/a1"]["error"]["kind"], "setup");
    let message = results["qa/a1"]["error"]["message"].as_str().unwrap();
    let loading = format!("loading `{}` into http://127.0.0.1:9", dir.path().join("data/indices/alerting").display());
    assert!(message.contains("cluster state \"alerting\"") && message.contains(&loading), "{message}");

    let bad = suite.replace("http://127.0.0.1:9", "localhost:9200");
    write_suite(dir.path(), &bad, &[]);
    let listed = assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--list"]);
    assert!(
        stderr(&listed).contains("invalid `setup.opensearch.url`: `localhost:9200` is not an http(s) URL"),
        "{}",
        stderr(&listed)
    );
}
