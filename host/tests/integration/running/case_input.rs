//! Case files are input, not code, and reports never leak or spoof: through
//! the `assay` binary, what `${VAR}` may read, how a hostile file fails
//! alone, that the run's secrets appear in no report, and that agent text
//! cannot write lines of its own on the terminal.

use crate::util::{root, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The API key the tests hand to cases; no report may contain it.
const SECRET: &str = "sk-assay-test-9f8e7d6c5b4a";

/// The project's case modelled on neuro-san's `with_user_api_key.hocon`.
fn api_key_case() -> PathBuf {
    root().join("host/tests/cases/with_user_api_key.hocon")
}

/// Runs `assay ARGS` with `vars` set and no judge or API key variables of
/// the caller's own.
fn assay_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command.args(args).current_dir(root());
    for name in ["ASSAY_JUDGE_URL", "ASSAY_JUDGE_API_KEY", "ASSAY_EMBEDDINGS_API_KEY", "OPENAI_API_KEY"] {
        command.env_remove(name);
    }
    command.envs(vars.iter().copied());
    command.output().unwrap()
}

/// Every file under `dir`, as text.
fn files_in(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_in(&path));
        } else {
            out.push((path.clone(), String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned()));
        }
    }
    out
}

/// Asserts that `SECRET` is in none of `texts` (nor its start), and that
/// each text that should show it shows `[REDACTED]`.
fn assert_redacted(texts: &[(String, String)]) {
    for (name, text) in texts {
        assert!(!text.contains(&SECRET[..12]), "{name} shows the secret:\n{text}");
    }
}

#[test]
fn a_variable_that_is_not_allowed_makes_an_error_case_saying_how_to_allow_it() {
    let results = tempfile::tempdir().unwrap();
    let case = api_key_case();
    let output = assay_env(
        &["run", case.to_str().unwrap(), "--results", results.path().to_str().unwrap()],
        &[("OPENAI_API_KEY", SECRET)],
    );
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let out = stdout(&output);
    // The case's id is its path from the project's root (the repository's
    // assay.toml).
    let id = case.strip_prefix(crate::util::root()).unwrap_or(&case).with_extension("");
    let expected = format!(
        " ERROR [   0.000s] {}\n         `{}`: the environment variable in ${{OPENAI_API_KEY}} at 19:39 is not allowed in case files (only ASSAY_CASE_* variables and those allowed by name are)\n             \n             Consider allowing it in assay.toml:\n             [cases]\n             allow_env = [\"OPENAI_API_KEY\"]\n             or passing --allow-env OPENAI_API_KEY\n",
        id.display(),
        case.display()
    );
    assert!(out.contains(&expected), "{out}");
    assert_redacted(&[("stdout".into(), out)]);
}

#[test]
fn an_allowed_variable_reaches_the_agent_and_is_redacted_from_every_report() {
    for (how, args, vars) in [
        ("flag", vec!["--allow-env", "OPENAI_API_KEY"], vec![("OPENAI_API_KEY", SECRET)]),
        ("toml", vec!["--config", "CONFIG"], vec![("OPENAI_API_KEY", SECRET)]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("assay.toml");
        std::fs::write(&config, "[cases]\nallow_env = [\"OPENAI_API_KEY\"]\n").unwrap();
        let args: Vec<&str> = args.iter().map(|a| if *a == "CONFIG" { config.to_str().unwrap() } else { a }).collect();
        let results = dir.path().join("results");
        let junit = dir.path().join("junit.xml");
        let case = api_key_case();
        let mut all = vec!["run", case.to_str().unwrap(), "--verbose", "--results", results.to_str().unwrap()];
        all.extend(["--junit", junit.to_str().unwrap()]);
        all.extend(args);
        let output = assay_env(&all, &vars);
        let out = stdout(&output);
        assert_eq!(output.status.code(), Some(0), "{how}: {out}{}", stderr(&output));
        // The check compares what echo returned with the variable itself:
        // it passes only if the agent got the real value.
        assert!(
            out.contains("ok   [direct] sample 0 interaction 1: sly_data.api_keys.openai_api_key value \"[REDACTED]\""),
            "{how}: {out}"
        );
        let mut texts = vec![("stdout".to_owned(), out), ("stderr".to_owned(), stderr(&output))];
        texts.extend(files_in(dir.path()).into_iter().map(|(path, text)| (path.display().to_string(), text)));
        let results_line = &texts.iter().find(|(name, _)| name.ends_with("results.jsonl")).unwrap().1;
        assert!(results_line.contains("\"openai_api_key\":\"[REDACTED]\""), "{results_line}");
        assert_redacted(&texts);
    }
}

#[test]
fn secrets_are_redacted_from_failures_ids_junit_summary_and_assessments() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    // The id (from the file name) holds the secret too, so summary.json has
    // it to hide.
    std::fs::write(
        cases.join(format!("leak-{SECRET}.hocon")),
        "agent = echo\ninteractions = [{ text = ${ASSAY_CASE_TOKEN}, response { text { value = \"nope\" } } }]\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    let junit = dir.path().join("junit.xml");
    let output = assay_env(
        &["run", cases.to_str().unwrap(), "--results", results.to_str().unwrap(), "--junit", junit.to_str().unwrap()],
        &[("ASSAY_CASE_TOKEN", SECRET)],
    );
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(out.contains("  FAIL [") && out.contains("leak-[REDACTED]"), "{out}");
    assert!(out.contains("(actual: [REDACTED])"), "{out}");
    let assess = assay_env(
        &["assess", cases.to_str().unwrap(), "--results", dir.path().join("assess").to_str().unwrap()],
        &[("ASSAY_CASE_TOKEN", SECRET)],
    );
    assert_eq!(assess.status.code(), Some(1));
    let mut texts = vec![
        ("stdout".to_owned(), out),
        ("stderr".to_owned(), stderr(&output)),
        ("assess stdout".to_owned(), stdout(&assess)),
        ("assess stderr".to_owned(), stderr(&assess)),
    ];
    texts.extend(files_in(dir.path()).into_iter().map(|(path, text)| (path.display().to_string(), text)));
    let names: Vec<&str> = texts.iter().map(|(name, _)| name.as_str()).collect();
    for file in ["results.jsonl", "summary.json", "junit.xml", "assess.json"] {
        let text = &texts.iter().find(|(name, _)| name.ends_with(file)).unwrap_or_else(|| panic!("{names:?}")).1;
        assert!(text.contains("[REDACTED]"), "{file}: {text}");
    }
    // Leave out the case file itself: its name is the secret.
    texts.retain(|(name, _)| !name.ends_with(".hocon"));
    assert_redacted(&texts);
}

#[test]
fn a_configured_api_key_is_refused_unless_named_even_with_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("assay.toml");
    std::fs::write(&config, "[judge]\nurl = \"http://127.0.0.1:9\"\napi_key_env = \"ASSAY_CASE_JUDGE_KEY\"\n").unwrap();
    let case = dir.path().join("steal.hocon");
    std::fs::write(
        &case,
        "agent = echo\ninteractions = [{ text = ${ASSAY_CASE_JUDGE_KEY}, response.text.keywords = sk }]\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            case.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ];
        args.extend(extra);
        assay_env(&args, &[("ASSAY_CASE_JUDGE_KEY", SECRET)])
    };
    let refused = run(&[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stdout(&refused).contains(
            "is not allowed in case files (it holds a configured API key, so only allowing it by name makes it visible)"
        ),
        "{}",
        stdout(&refused)
    );
    let allowed = run(&["--allow-env", "ASSAY_CASE_JUDGE_KEY", "--verbose"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stdout(&allowed));
    assert!(stdout(&allowed).contains("(actual: [REDACTED])"), "{}", stdout(&allowed));
    let mut texts = vec![("refused".to_owned(), stdout(&refused)), ("allowed".to_owned(), stdout(&allowed))];
    texts.extend(files_in(&results).into_iter().map(|(path, text)| (path.display().to_string(), text)));
    assert_redacted(&texts);
}

#[test]
fn hostile_files_each_fail_alone_and_quickly_while_the_others_run() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for name in ["conversation", "ratio", "data_shapes"] {
        std::fs::copy(root().join(format!("fixtures/cases/echo/{name}.hocon")), cases.join(format!("{name}.hocon")))
            .unwrap();
    }
    // 483 bytes that would expand 8× per level.
    let mut bomb = String::from("agent = echo\na = \"0123456789012345678901234567890123456789\"\n");
    for (level, previous) in
        ["b", "c", "d", "e", "f", "g", "h", "i", "j"].iter().zip(["a", "b", "c", "d", "e", "f", "g", "h", "i"])
    {
        bomb.push_str(&format!("{level} = {}\n", format!("${{{previous}}}").repeat(8)));
    }
    bomb.push_str("interactions = [{ text = ${j} }]\n");
    std::fs::write(cases.join("bomb.hocon"), &bomb).unwrap();
    std::fs::write(
        cases.join("include.hocon"),
        "agent = echo\ninclude file(\"/etc/passwd\")\ninteractions = [{ text = hi }]\n",
    )
    .unwrap();
    let deep = format!("{}x = 1{}", "a { ".repeat(5000), "}".repeat(5000));
    std::fs::write(cases.join("deep.hocon"), deep).unwrap();
    let dotted = format!("agent = echo\n{} = 1\n", vec!["k"; 20_000].join("."));
    std::fs::write(cases.join("dotted.hocon"), dotted).unwrap();
    let merges: String = (0..20_000).map(|i| format!("a.x{i} = 1\n")).collect();
    std::fs::write(cases.join("merges.hocon"), format!("agent = echo\n{merges}")).unwrap();
    std::fs::write(cases.join("huge.hocon"), " ".repeat(5 << 20)).unwrap();
    let results = dir.path().join("results");
    let started = Instant::now();
    let output = assay_env(&["run", cases.to_str().unwrap(), "--results", results.to_str().unwrap()], &[]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "the run took {took:?}");
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["cases"], 9, "{summary:#}");
    assert_eq!(summary["passed"], 3, "{summary:#}");
    let mut errors: Vec<&str> =
        summary["not_passed"]["error"].as_array().unwrap().iter().map(|id| id.as_str().unwrap()).collect();
    errors.sort();
    assert_eq!(errors, ["bomb", "deep", "dotted", "huge", "include", "merges"], "{summary:#}");
    let out = stdout(&output);
    for message in [
        "refused at 3:5: ${a} refers to `a`, a value of this file",
        "`include` of \"/etc/passwd\": case files may not read other files",
        "a dotted key path with more than 64 segments",
        "the file gives 19999 keys again to be merged",
        "over the cap of 4 MiB for case files",
    ] {
        assert!(out.contains(message), "no {message:?} in\n{out}");
    }
    assert!(out.contains("deep") && out.contains("levels"), "{out}");
}

#[test]
fn agent_text_cannot_spoof_a_line_of_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    // The echo agent answers with this text; the check fails, so the
    // terminal shows it.
    std::fs::write(
        cases.join("spoof.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "x\u001b[2K\r  PASS [   0.001s] cases/fake\nPASS", "response": { "text": { "value": "y" } } } ] }"#,
    )
    .unwrap();
    // A file name is a case id, shown on the terminal too.
    std::fs::write(
        cases.join("name\u{1b}[2K\r.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "a", "response": { "text": { "value": "b" } } } ] }"#,
    )
    .unwrap();
    let results = dir.path().join("results");
    let junit = dir.path().join("junit.xml");
    let output = assay_env(
        &["run", cases.to_str().unwrap(), "--results", results.to_str().unwrap(), "--junit", junit.to_str().unwrap()],
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
    assert!(
        out.contains(r#"spoof.hocon:1: [direct] interaction 1: text value "y": "x\u001b[2K\r  PASS [   0.001s] cases/fake\nPASS" does not equal "y" (actual: x\u001b[2K\r  PASS [   0.001s] cases/fake\nPASS)"#),
        "{out}"
    );
    assert!(out.contains("  FAIL [") && out.contains("s] name\\u001b[2K\\r\n"), "{out}");
    assert!(out.contains("\n  FAILED name\\u001b[2K\\r\n"), "{out}");
    // Every line of the output is assay's: none starts with the agent's text.
    for line in out.lines() {
        assert!(!line.trim_start().starts_with("PASS"), "{line:?} in\n{out}");
    }
    // The JUnit report is valid XML 1.0 that reads back.
    let xml = std::fs::read_to_string(&junit).unwrap();
    let invalid =
        |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}');
    assert!(!xml.chars().any(invalid), "{xml:?}");
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let names: Vec<String> = report.test_suites[0].test_cases.iter().map(|c| c.name.to_string()).collect();
    assert!(names.contains(&"name\\u001b[2K\\r".to_owned()), "{names:?}");
}
