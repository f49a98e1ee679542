//! What a day with assay needs (issue "Every day with assay"): the project
//! found from a subfolder, case ids that do not depend on how a path was
//! typed, `results/latest` and the commands that default to it, reruns that
//! never pass by running nothing, a case that checks nothing refused,
//! `--fail-fast`/`--max-fail`, `NO_COLOR`/`CLICOLOR_FORCE`, and `--quiet`'s
//! reasons.

use crate::util::{assay_command, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Output;

const PASSING: &str = r#"{ agent: echo, interactions: [ { text: hi, response: { text: { value: hi } } } ] }"#;
const FAILING: &str = r#"{ agent: echo, interactions: [ { text: hi, response: { text: { value: bye } } } ] }"#;

/// A project: `assay.toml` at its root, cases under `cases/`.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(cases: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("assay.toml"), "# the project\n").unwrap();
        for (name, text) in cases {
            let path = dir.path().join("cases").join(format!("{name}.hocon"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Project { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `assay ARGS` run from `folder` of the project.
    fn assay_in(&self, folder: &str, args: &[&str]) -> Output {
        assay_command().current_dir(self.path(folder)).args(args).output().unwrap()
    }

    fn latest(&self) -> PathBuf {
        std::fs::canonicalize(self.path("results/latest")).unwrap()
    }
}

/// The ids and statuses of a results folder's `results.jsonl`.
fn statuses(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut lines: Vec<(String, String)> = text
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            (value["id"].as_str().unwrap().to_owned(), value["status"].as_str().unwrap().to_owned())
        })
        .collect();
    lines.sort();
    lines
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(id, status)| ((*id).to_owned(), (*status).to_owned())).collect()
}

#[test]
fn from_a_subfolder_the_project_is_found_ids_are_paths_from_its_root_and_latest_names_the_run() {
    let project = Project::new(&[("greet/hello", PASSING), ("greet/bye", FAILING)]);
    // No path: the project's folder, from a subfolder.
    let output = project.assay_in("cases/greet", &["run"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let first = project.latest();
    assert!(first.starts_with(std::fs::canonicalize(project.path("results")).unwrap()), "{}", first.display());
    assert_eq!(statuses(&first), pairs(&[("cases/greet/bye", "failed"), ("cases/greet/hello", "passed")]));

    // Every spelling of a path gives the same ids.
    for (folder, path) in
        [("", "cases"), ("", "./cases/greet/../greet"), ("cases/greet", "."), ("cases", "greet/bye.hocon")]
    {
        let output = project.assay_in(folder, &["run", "--list", path]);
        let listed = stdout(&output);
        assert!(listed.contains("cases/greet/bye  agent echo"), "{folder} {path}: {listed}{}", stderr(&output));
    }

    // `--rerun-failed` with no folder reruns the last run's failures,
    // whichever spelling the rerun's paths use, and becomes the latest.
    let output = project.assay_in("cases", &["run", "greet", "--rerun-failed"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("latest: 1 of 2 cases\n"), "{}", stdout(&output));
    let rerun = project.latest();
    assert_ne!(rerun, first);
    assert_eq!(statuses(&rerun), pairs(&[("cases/greet/bye", "failed")]));

    // `assay report` and `assay diff` default to the last runs.
    let output = project.assay_in("cases/greet", &["report"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(rerun.join("report.html").is_file());
    let output = project.assay_in("", &["diff", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let compared: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(compared.to_string().contains("cases/greet/hello"), "the old run's case: {compared}");
}

#[test]
fn a_rerun_that_selects_nothing_is_an_error_never_a_green_run() {
    let project = Project::new(&[("a", PASSING), ("b", FAILING)]);
    let output = project.assay_in("", &["run", "--rerun-failed"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("there is no last run"), "{}", stderr(&output));

    assert_eq!(project.assay_in("", &["run", "cases"]).status.code(), Some(1));
    let first = project.latest();
    // The failed case is gone from the files: nothing to rerun is an error.
    std::fs::remove_file(project.path("cases/b.hocon")).unwrap();
    let output = project.assay_in("", &["run", "cases", "--rerun-failed"]);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    let error = stderr(&output);
    assert!(error.contains("found none of the 1 case to rerun from"), "{error}");
    assert!(error.contains("nothing was run"), "{error}");
    assert_eq!(project.latest(), first, "no run was made");

    // A run that failed nothing has nothing to rerun.
    let passed = project.path("passed");
    assert_eq!(project.assay_in("", &["run", "cases", "--results", passed.to_str().unwrap()]).status.code(), Some(0));
    let output = project.assay_in("", &["run", "cases", "--rerun-failed", passed.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("found nothing to rerun: no case of"), "{}", stderr(&output));

    // No path and no project: named, with the fix.
    let bare = tempfile::tempdir().unwrap();
    let output = assay_command().current_dir(bare.path()).arg("run").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no path to run: name the case files or folders"), "{}", stderr(&output));
}

#[test]
fn a_case_that_checks_nothing_is_an_error_naming_where_a_check_goes() {
    let unchecked = r#"{ agent: echo, interactions: [ { text: hi }, { text: again } ] }"#;
    let project = Project::new(&[("unchecked", unchecked), ("fine", PASSING)]);
    let output = project.assay_in("", &["run", "cases"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let out = stdout(&output);
    assert!(out.contains(" ERROR [   0.000s] cases/unchecked"), "{out}");
    assert!(
        out.contains(
            "invalid `interactions[1].response`: no interaction has a `response`, so the case would check nothing"
        ),
        "{out}"
    );
    assert_eq!(statuses(&project.latest()), pairs(&[("cases/fine", "passed"), ("cases/unchecked", "error")]));
}

#[test]
fn fail_fast_stops_starting_cases_and_says_how_many_were_not_run() {
    let cases: Vec<(String, &str)> = (0..6).map(|i| (format!("f{i}"), FAILING)).collect();
    let cases: Vec<(&str, &str)> = cases.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let project = Project::new(&cases);
    // With one slot, the case the scheduler holds ready when the first
    // failure is reported may still run: at most one beyond the limit.
    for (flags, limit) in [(vec!["--fail-fast"], 1), (vec!["--max-fail", "2"], 2)] {
        let mut args = vec!["run", "cases", "-j", "1"];
        args.extend(flags.iter().copied());
        let output = project.assay_in("", &args);
        assert_eq!(output.status.code(), Some(1));
        let out = stdout(&output);
        let ran = statuses(&project.latest()).len();
        assert!((limit..=limit + 1).contains(&ran), "{ran} ran: {out}");
        let cancel = format!(
            "CANCEL {} not run: the run was stopped: {} failed or errored, and --max-fail is {limit}",
            assay::plural::count(6 - ran, "test case"),
            assay::plural::count(limit, "case"),
        );
        assert!(out.contains(&cancel), "{cancel}\n{out}");
    }
    let output = project.assay_in("", &["run", "cases", "--max-fail", "0"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn colour_follows_no_color_and_clicolor_force_and_quiet_keeps_a_reason() {
    let project = Project::new(&[("bye", FAILING)]);
    let run = |vars: &[(&str, &str)]| {
        let mut command = assay_command();
        command
            .current_dir(project.path(""))
            .args(["run", "cases"])
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE");
        stdout(&command.envs(vars.iter().copied()).output().unwrap())
    };
    assert!(!run(&[]).contains('\u{1b}'), "not a terminal: no colour");
    assert!(run(&[("CLICOLOR_FORCE", "1")]).contains("\u{1b}["), "forced");
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\u{1b}'), "NO_COLOR wins");

    let output = project.assay_in("", &["run", "cases", "--quiet"]);
    let out = stdout(&output);
    assert!(
        out.contains("  FAILED cases/bye: cases/bye.hocon:1: [direct] interaction 1: text value \"bye\": \"hi\" does not equal \"bye\""),
        "{out}"
    );
}

#[test]
fn init_makes_a_project_whose_case_passes_and_never_overwrites_one() {
    let dir = tempfile::tempdir().unwrap();
    let output = assay_command().current_dir(dir.path()).args(["init", "proj"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "Created proj/assay.toml\nCreated proj/cases/hello.hocon\nCreated proj/.github/workflows/assay.yml\nNext:\n  cd proj\n  assay run             # runs cases/ against the demo agent `echo`\n  then point cases/hello.hocon's `agent` at yours (see \"Test cases\" in the book, docs/book/src/cases.md)\n"
    );
    let project = dir.path().join("proj");
    let output = assay_command().current_dir(&project).arg("run").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("1 test case: 1 passed"), "{}", stdout(&output));

    let before = std::fs::read_to_string(project.join("assay.toml")).unwrap();
    std::fs::write(project.join("cases/hello.hocon"), "mine").unwrap();
    let again = assay_command().current_dir(&project).arg("init").output().unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("`./assay.toml` exists already"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(project.join("assay.toml")).unwrap(), before);
    assert_eq!(std::fs::read_to_string(project.join("cases/hello.hocon")).unwrap(), "mine");
}

/// Lines of a child's stdout, as they come.
fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead as _;
    let (sender, receiver) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                return;
            }
        }
    });
    receiver
}

/// The lines up to and including the next that starts with `until`.
fn read_until(lines: &std::sync::mpsc::Receiver<String>, until: &str) -> Vec<String> {
    let mut read = Vec::new();
    loop {
        match lines.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(line) => {
                let done = line.starts_with(until);
                read.push(line);
                if done {
                    return read;
                }
            }
            Err(_) => panic!("no line starting with {until:?} within 30 s; read:\n{}", read.join("\n")),
        }
    }
}

#[test]
fn watch_reruns_the_case_file_that_changed_and_everything_when_assay_toml_does() {
    let project = Project::new(&[("a", PASSING), ("b", FAILING)]);
    let mut child = assay_command()
        .current_dir(project.path("cases"))
        .args(["run", "--watch"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = lines_of(&mut child);
    let first = read_until(&lines, "Watching ");
    assert!(first.iter().any(|l| l == "Running 2 test cases"), "{first:?}");

    std::fs::write(project.path("cases/b.hocon"), PASSING).unwrap();
    let second = read_until(&lines, "Watching ");
    let changed = std::fs::canonicalize(project.path("cases/b.hocon")).unwrap();
    assert_eq!(second[0], format!("`{}` changed: running it", changed.display()), "{second:?}");
    assert!(second.iter().any(|l| l == "Running 1 test case"), "{second:?}");
    assert!(second.iter().any(|l| l.starts_with("Summary") && l.contains("1 passed")), "{second:?}");

    std::fs::write(project.path("assay.toml"), "# changed\n").unwrap();
    let third = read_until(&lines, "Watching ");
    assert!(third[0].ends_with("assay.toml` changed: running every case"), "{third:?}");
    assert!(third.iter().any(|l| l.starts_with("Summary") && l.contains("2 passed")), "{third:?}");
    let _ = child.kill();
    let _ = child.wait();
    // Each run is a run of its own; the last is the latest.
    assert_eq!(statuses(&project.latest()), pairs(&[("cases/a", "passed"), ("cases/b", "passed")]));
}

/// The `file:line` prefixes of the lines `stdout` shows under failed cases.
fn places(stdout: &str) -> Vec<String> {
    let mut places: Vec<String> = stdout
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let (place, _) = line.split_once(": [")?;
            place.rsplit_once(':').filter(|(_, number)| number.parse::<u32>().is_ok()).map(|_| place.to_owned())
        })
        .collect();
    places.sort();
    places
}

// See: issue 32, "each failure names `file:line` of the check (HOCON, YAML
// and JSONL spans)".
#[test]
fn each_failing_check_names_the_file_and_line_that_asks_for_it() {
    let project = Project::new(&[
        // JSON with comments (the reader's fast path): a list's elements
        // each on their own line.
        (
            "fast",
            "# a case\n{\n  \"agent\": \"echo\",\n  \"interactions\": [\n    {\n      \"text\": \"hello there\",\n      \"response\": {\n        \"text\": {\n          \"keywords\": [\n            \"hello\",\n            \"goodbye\"\n          ],\n          \"not_keywords\": \"there\"\n        }\n      }\n    }\n  ]\n}\n",
        ),
        // HOCON proper (the full parser): dotted keys and `=`.
        (
            "full",
            "agent = echo\ninteractions = [\n  { text = hi }\n  {\n    text = again\n    response.text.value = hi\n  }\n]\n",
        ),
    ]);
    std::fs::write(
        project.path("cases/checks.yaml"),
        "prompts: [\"say {{word}}\"]\nproviders: [echo]\ntests:\n  - vars: {word: yes}\n    assert:\n      - type: contains\n        value: yes\n      - type: equals\n        value: no\n",
    )
    .unwrap();
    std::fs::create_dir_all(project.path("cases/suite/specs")).unwrap();
    std::fs::write(
        project.path("cases/suite/lines.suite.toml"),
        "specs = [\"specs/*.jsonl\"]\nagent = \"echo\"\ntext = \"{{question}}\"\n\n[[checks]]\nkey = \"keywords\"\nexpected = [\"{{expected}}\"]\n",
    )
    .unwrap();
    std::fs::write(
        project.path("cases/suite/specs/a.jsonl"),
        "{\"id\": \"one\", \"question\": \"red\", \"expected\": \"red\"}\n\n{\"id\": \"two\", \"question\": \"red\", \"expected\": \"blue\"}\n",
    )
    .unwrap();

    // Named from the folder they are in, as the user typed them.
    let run = project.assay_in("cases", &["run", ".", "checks.yaml", "--results", "../out", "--junit", "../junit.xml"]);
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    let shown = stdout(&run);
    assert_eq!(
        places(&shown),
        ["checks.yaml:8", "fast.hocon:11", "fast.hocon:13", "full.hocon:6", "suite/specs/a.jsonl:3"],
        "{shown}"
    );

    // results.jsonl keeps the line of each check that did not pass, and of
    // no other.
    let text = std::fs::read_to_string(project.path("out/results.jsonl")).unwrap();
    let mut recorded = Vec::new();
    for line in text.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        for sample in case["samples"].as_array().unwrap() {
            for run in sample["runs"].as_array().unwrap() {
                for interaction in run["interactions"].as_array().unwrap() {
                    for check in interaction["checks"].as_array().unwrap() {
                        if check["outcome"] == "pass" {
                            assert!(check.get("line").is_none(), "{check}");
                        } else {
                            recorded.push((case["file"].as_str().unwrap().to_owned(), check["line"].as_u64()));
                        }
                    }
                }
            }
        }
    }
    recorded.sort();
    assert_eq!(recorded.len(), 5, "{recorded:?}");
    assert!(recorded.iter().all(|(_, line)| line.is_some()), "{recorded:?}");
    // JUnit's failure text names them as the terminal does.
    let junit = std::fs::read_to_string(project.path("junit.xml")).unwrap();
    assert!(junit.contains("fast.hocon:13: [direct] interaction 1"), "{junit}");
}
