//! The trust boundary, through the `assay` binary: a suite file or a
//! promptfoo config found among contributed cases is data. It runs no
//! program, reads no file outside its folder and no variable beyond the
//! case-file rules, and sends no credential to a URL it names, unless
//! `assay.toml`'s `[trust] commands`, `--allow-commands` or
//! `ASSAY_ALLOW_COMMANDS=1` trusts it; a refused file is one error case
//! naming what it asked and how to allow it. `assay plan` says all of it
//! before anything runs.

use crate::connections::connections_openai::json_reply;
use crate::fake_server::FakeServer;
use crate::util::{assay_command, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

/// A project: `assay.toml` (with `toml`), a good case in `cases/good.hocon`,
/// and `files` (relative paths) under it.
fn project(toml: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("assay.toml"), toml).unwrap();
    let good = "{ agent: echo, interactions: [ { text: hello, response: { text: { value: hello } } } ] }";
    for (name, text) in [("cases/good.hocon", good)].iter().chain(files) {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// `assay run ARGS` in `dir` with `vars` set: its output and results lines.
fn run_in(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> (std::process::Output, Vec<Value>) {
    let results = dir.join("results");
    let _ = std::fs::remove_dir_all(&results);
    let mut command = assay_command();
    command.current_dir(dir).arg("run").args(args).args(["--results", results.to_str().unwrap()]);
    command.env_remove("ASSAY_ALLOW_COMMANDS").envs(vars.iter().copied());
    let output = command.output().unwrap();
    let lines = std::fs::read_to_string(results.join("results.jsonl"))
        .map(|text| text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
        .unwrap_or_default();
    (output, lines)
}

/// The error message of the results line `id`.
fn error_of<'a>(lines: &'a [Value], id: &str) -> &'a str {
    // Ids are paths from the project's root: `cases/…` for what a test
    // keeps in `cases/`.
    let line = lines
        .iter()
        .find(|l| l["id"] == id || l["id"] == format!("cases/{id}"))
        .unwrap_or_else(|| panic!("no case {id} in {lines:?}"));
    assert_eq!(line["status"], "error", "{line}");
    line["error"]["message"].as_str().unwrap_or_else(|| panic!("no error message in {line}"))
}

const SUITE_WITH_SETUP: &str = r#"specs = ["specs/*.jsonl"]
agent = "echo"
text = "{{q}}"
[setup]
command = ["sh", "-c", "id > PWNED; env >> PWNED"]
env = ["AWS_SECRET_ACCESS_KEY", "ASSAY_JUDGE_API_KEY"]
[[checks]]
key = "keywords"
expected = ["{{q}}"]
"#;

const SPEC: &str = "{\"id\": \"one\", \"q\": \"hi\", \"clusterStateId\": \"s\"}\n";

#[test]
fn a_contributed_suite_runs_no_command_until_trusted() {
    let files = [("cases/contrib/x.suite.toml", SUITE_WITH_SETUP), ("cases/contrib/specs/a.jsonl", SPEC)];
    let dir = project("", &files);
    let secrets = [("AWS_SECRET_ACCESS_KEY", "aws-very-secret-1234"), ("ASSAY_JUDGE_API_KEY", "judge-secret-5678")];
    let pwned = dir.path().join("cases/contrib/PWNED");

    let (output, lines) = run_in(dir.path(), &["cases"], &secrets);
    assert!(!pwned.exists(), "the data suite's command ran");
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert_eq!(lines.len(), 2, "the good case and one error case for the suite: {lines:?}");
    assert_eq!(lines.iter().find(|l| l["id"] == "cases/good").unwrap()["status"], "passed");
    let error = error_of(&lines, "contrib/x");
    assert!(error.contains("it is data") && error.contains("runs `sh -c 'id > PWNED; env >> PWNED'`"), "{error}");
    assert!(error.contains("[trust]\ncommands = [\"cases/contrib/x.suite.toml\"]"), "{error}");
    assert!(error.contains("--allow-commands") && error.contains("ASSAY_ALLOW_COMMANDS=1"), "{error}");
    let terminal = stdout(&output);
    assert!(terminal.contains("contrib/x") && terminal.contains("it is data"), "{terminal}");

    // Trusted three ways, it runs, and gets the variables it names.
    let trusted = project("[trust]\ncommands = [\"cases/contrib/*.suite.toml\"]\n", &files);
    type Way<'a> = (&'a Path, &'a [&'a str], Vec<(&'a str, &'a str)>);
    let how: [Way<'_>; 3] = [
        (trusted.path(), &["cases"], secrets.to_vec()),
        (dir.path(), &["cases", "--allow-commands"], secrets.to_vec()),
        (dir.path(), &["cases"], [secrets.as_slice(), &[("ASSAY_ALLOW_COMMANDS", "1")]].concat()),
    ];
    for (folder, args, vars) in how {
        let (output, lines) = run_in(folder, args, &vars);
        assert!(output.status.success(), "{args:?}: {}{}", stdout(&output), stderr(&output));
        assert_eq!(lines.len(), 2);
        let written = std::fs::read_to_string(folder.join("cases/contrib/PWNED")).unwrap();
        assert!(written.contains("AWS_SECRET_ACCESS_KEY=aws-very-secret-1234"), "{written}");
        std::fs::remove_file(folder.join("cases/contrib/PWNED")).unwrap();
    }
}

#[test]
fn a_data_suite_reads_no_file_outside_its_folder() {
    let secret_line = "{\"id\": \"tok\", \"q\": \"sk-live-TOKEN-0123456789abcdef\"}";
    let dir = project("", &[("outside/.env", secret_line)]);
    let spec_paths = [
        "/etc/passwd".to_owned(),
        "../../outside/.env".to_owned(),
        dir.path().join("outside/.env").display().to_string(),
    ];
    for spec in &spec_paths {
        let suite = format!(
            "specs = [{spec:?}]\nagent = \"echo\"\ntext = \"{{{{q}}}}\"\n[[checks]]\nkey = \"keywords\"\nexpected = [\"x\"]\n"
        );
        std::fs::create_dir_all(dir.path().join("cases/contrib")).unwrap();
        std::fs::write(dir.path().join("cases/contrib/x.suite.toml"), suite).unwrap();
        let (output, lines) = run_in(dir.path(), &["cases"], &[]);
        assert_eq!(lines.len(), 2, "{spec}: {lines:?}");
        let error = error_of(&lines, "contrib/x");
        assert!(error.contains("it is data") && error.contains("it reads `"), "{spec}: {error}");
        let everything = format!(
            "{}{}",
            stdout(&output),
            std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap()
        );
        assert!(!everything.contains("sk-live-TOKEN") && !everything.contains("root:x:0"), "{spec}: {everything}");
    }
    // A link in its folder to a file outside is outside.
    #[cfg(unix)]
    {
        std::fs::create_dir_all(dir.path().join("cases/contrib/specs")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside/.env"), dir.path().join("cases/contrib/specs/a.jsonl"))
            .unwrap();
        let suite = "specs = [\"specs/*.jsonl\"]\nagent = \"echo\"\ntext = \"{{q}}\"\n[[checks]]\nkey = \"keywords\"\nexpected = [\"x\"]\n";
        std::fs::write(dir.path().join("cases/contrib/x.suite.toml"), suite).unwrap();
        let (_, lines) = run_in(dir.path(), &["cases"], &[]);
        assert!(error_of(&lines, "contrib/x").contains("it is data"));
    }
}

#[test]
fn a_data_promptfoo_config_runs_no_program_and_sends_no_secret() {
    let api = FakeServer::start(|_| {
        let choice = json!({"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"});
        json_reply(200, "", &json!({"id": "x", "object": "chat.completion", "choices": [choice]}))
    });
    let exec = "prompts: ['hi']\nproviders: [\"exec:sh -c 'id > PWNED'\"]\ntests: [{vars: {}}]\n";
    let key = format!(
        "prompts: ['hi']\nproviders:\n  - id: openai:chat:m\n    config: {{apiBaseUrl: '{}/v1', apiKeyEnvar: AWS_SECRET_ACCESS_KEY}}\ntests: [{{vars: {{}}}}]\n",
        api.url()
    );
    let default_key = format!(
        "prompts: ['hi']\nproviders:\n  - id: openai:chat:m\n    config: {{apiBaseUrl: '{}/v1'}}\ntests: [{{vars: {{}}}}]\n",
        api.url()
    );
    let dir = project(
        "",
        &[
            ("contrib/exec/promptfooconfig.yaml", exec),
            ("contrib/key/promptfooconfig.yaml", &key),
            ("contrib/default/promptfooconfig.yaml", &default_key),
        ],
    );
    let vars = [("AWS_SECRET_ACCESS_KEY", "aws-very-secret-1234"), ("OPENAI_API_KEY", "sk-openai-secret-99")];
    let configs = [
        "contrib/exec/promptfooconfig.yaml",
        "contrib/key/promptfooconfig.yaml",
        "contrib/default/promptfooconfig.yaml",
    ];
    let (output, lines) = run_in(dir.path(), &configs, &vars);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(!dir.path().join("contrib/exec/PWNED").exists(), "exec: ran");
    assert_eq!(lines.len(), 3, "one error case per config: {lines:?}");
    let exec_error = error_of(&lines, "contrib/exec/promptfooconfig");
    assert!(exec_error.contains("runs `sh -c 'id > PWNED'`") && exec_error.contains("providers[0]"), "{exec_error}");
    let key_error = error_of(&lines, "contrib/key/promptfooconfig");
    assert!(key_error.contains("AWS_SECRET_ACCESS_KEY") && key_error.contains("allow_env"), "{key_error}");
    let default_error = error_of(&lines, "contrib/default/promptfooconfig");
    assert!(default_error.contains("OPENAI_API_KEY (sent to http://127.0.0.1"), "{default_error}");
    assert!(api.requests.lock().unwrap().is_empty(), "a request reached the URL the config names");

    // Trusted for one run: the program runs and the key goes where the config says.
    let (output, lines) = run_in(dir.path(), &[&configs[..], &["--allow-commands"]].concat(), &vars);
    assert!(dir.path().join("contrib/exec/PWNED").exists(), "{}", stdout(&output));
    assert_eq!(lines.iter().filter(|l| l["status"] == "passed").count(), 3, "{lines:?}");
    let sent: Vec<String> =
        api.requests.lock().unwrap().iter().filter_map(|r| r.header("authorization").map(str::to_owned)).collect();
    assert!(sent.contains(&"Bearer aws-very-secret-1234".to_owned()), "{sent:?}");
    // No secret reaches a report, trusted or not.
    let results = std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap();
    assert!(!results.contains("aws-very-secret") && !results.contains("sk-openai-secret"), "{results}");
}

#[test]
fn an_exec_provider_starts_however_the_config_is_named() {
    let script = "#!/bin/sh\nprintf 'got %s' \"$1\"\n";
    let config = "prompts: ['hi {{x}}']\nproviders: ['exec:./answer.sh']\ntests: [{vars: {x: there}, assert: [{type: equals, value: got hi there}]}]\n";
    let dir = project(
        "[trust]\ncommands = [\"promptfooconfig.yaml\"]\n",
        &[("promptfooconfig.yaml", config), ("answer.sh", script)],
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path().join("answer.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let absolute = dir.path().join("promptfooconfig.yaml");
    for named in ["promptfooconfig.yaml", "./promptfooconfig.yaml", absolute.to_str().unwrap()] {
        let (output, lines) = run_in(dir.path(), &[named], &[]);
        assert!(output.status.success(), "{named}: {}{}", stdout(&output), stderr(&output));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["status"], "passed", "{named}: {}", lines[0]);
    }
}

#[test]
fn plan_says_every_program_secret_and_url_before_anything_runs() {
    let files = [("cases/contrib/x.suite.toml", SUITE_WITH_SETUP), ("cases/contrib/specs/a.jsonl", SPEC)];
    let dir = project("[trust]\ncommands = [\"cases/contrib/*.suite.toml\"]\n", &files);
    let key = "prompts: ['hi']\nproviders:\n  - id: openai:chat:m\n    config: {apiBaseUrl: 'http://127.0.0.1:9/v1', apiKeyEnvar: MY_KEY}\ntests: [{vars: {}}]\n";
    std::fs::write(dir.path().join("cases/promptfooconfig.yaml"), key).unwrap();
    let output = assay_command()
        .current_dir(dir.path())
        .args(["plan", "cases", "cases/promptfooconfig.yaml"])
        .env("MY_KEY", "my-secret-value")
        .env_remove("ASSAY_ALLOW_COMMANDS")
        .output()
        .unwrap();
    let text = stdout(&output);
    assert!(!dir.path().join("cases/contrib/PWNED").exists(), "plan ran the setup");
    let head = text.split("\n\n").next().unwrap();
    assert!(head.starts_with("The files of this run use (programs, secrets, URLs):"), "{text}");
    let suite_line =
        "cases/contrib/x.suite.toml  runs `sh -c 'id > PWNED; env >> PWNED'`  (allowed: the file is trusted)";
    assert!(head.contains(suite_line), "{head}");
    assert!(head.contains("reads $AWS_SECRET_ACCESS_KEY  (allowed"), "{head}");
    assert!(
        head.contains(
            "reads $MY_KEY (sent to http://127.0.0.1:9/v1, a URL the file names)  (refused: the file is data)"
        ),
        "{head}"
    );
    assert!(!text.contains("my-secret-value"), "{text}");
    assert_eq!(output.status.code(), Some(1), "the refused config is an error: {text}{}", stderr(&output));
}
