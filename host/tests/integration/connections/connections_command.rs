//! `type = "command"` connections: a real Python agent
//! (`fixtures/commands/agent.py`) as long-lived processes, one JSON line each
//! way per turn. Conversations keep their state through it, processes are
//! pooled and reused, every fault ends in a classified error verdict with
//! the end of the process's stderr and the next request gets a fresh
//! process, and the process sees only the variables it is allowed.

use crate::util::{assay_command, fixture, stderr, stdout};
use assay::agent::{ChatRequest, CommandAgents, CommandSettings, MINIMAL_PATH, Transport};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// `[connections.NAME]` running the fixture agent with `extra` arguments and
/// settings.
fn agent_connection(name: &str, arguments: &str, settings: &str) -> String {
    let dir = fixture("commands");
    format!(
        "[connections.{name}]\ntype = \"command\"\ncommand = [\"python3\", \"agent.py\"{arguments}]\ndir = {dir:?}\n{settings}\n",
        dir = dir.to_str().unwrap()
    )
}

/// A project folder: `assay.toml` and one case file per (name, text).
fn project(config: &str, cases: &[(String, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("assay.toml"), config).unwrap();
    for (name, text) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// A one-turn case for `agent` over the connection `connection`.
fn one_turn(agent: &str, connection: &str) -> String {
    format!(
        r#"{{ "agent": "{agent}", "connections": ["{connection}"],
             "interactions": [ {{ "text": "hello", "response": {{ "text": {{ "keywords": "hello" }} }} }} ] }}"#
    )
}

/// Runs `assay run PATH` with the project's assay.toml and results in it:
/// the output and `results.jsonl`'s lines by case file name.
fn run(dir: &Path, path: &Path, extra: &[&str], env: &[(&str, &str)]) -> (Output, Vec<Value>) {
    let results = dir.join("results");
    let config = dir.join("assay.toml");
    let mut command = assay_command();
    command.args(["run", path.to_str().unwrap(), "--config", config.to_str().unwrap()]);
    command.args(["--results", results.to_str().unwrap()]).args(extra);
    command.envs(env.iter().copied());
    let output = command.output().unwrap();
    let text = std::fs::read_to_string(results.join("results.jsonl")).unwrap_or_default();
    let lines = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (output, lines)
}

/// The line of the case in `file`.
fn case<'a>(lines: &'a [Value], file: &str) -> &'a Value {
    let found = lines.iter().find(|l| l["file"].as_str().is_some_and(|f| f.ends_with(file)));
    found.unwrap_or_else(|| panic!("no case from {file} in {lines:#?}"))
}

/// The structures the agent answered in a case line, in order.
fn structures(line: &Value) -> Vec<&Value> {
    let runs = line["samples"].as_array().unwrap().iter().flat_map(|s| s["runs"].as_array().unwrap());
    let interactions = runs.flat_map(|r| r["interactions"].as_array().unwrap());
    interactions.map(|i| &i["response"]["structure"]).collect()
}

/// Whether process `pid` still runs (a zombie does not).
#[cfg(target_os = "linux")]
fn is_alive(pid: u64) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command's name in parentheses.
    stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

#[test]
fn the_echo_conversation_passes_over_a_command_connection() {
    // The demo agents' own multi-turn case: turns count up while the
    // conversation continues (chat_context comes back) and start over.
    let dir = project(&agent_connection("script", "", ""), &[]);
    let conversation = crate::util::root().join("fixtures/cases/echo/conversation.hocon");
    let (output, lines) = run(dir.path(), &conversation, &["--connection", "script"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let line = &lines[0];
    assert_eq!(line["status"], "passed");
    assert_eq!(line["samples"][0]["runs"][0]["connection"], "script");
    let turns: Vec<_> = structures(line).iter().map(|s| s["turn"].as_u64().unwrap()).collect();
    assert_eq!(turns, [1, 2, 1]);
}

#[test]
fn sly_data_is_carried_forward_through_a_command_connection() {
    let case = r#"{ "agent": "echo", "connections": ["script"],
        "interactions": [
            { "text": "one", "sly_data": { "x": 1 }, "response": { "sly_data": { "x": { "value": 1 } } } },
            { "text": "two", "sly_data": { "y": 2 },
              "response": { "text": { "value": "two" }, "sly_data": { "x": { "value": 1 }, "y": { "value": 2 } },
                            "structure": { "turn": { "value": 2 } } } } ] }"#;
    let dir = project(&agent_connection("script", "", ""), &[("carry.hocon".to_owned(), case.to_owned())]);
    let (output, lines) = run(dir.path(), dir.path(), &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(case_status(&lines, "carry.hocon"), "passed");
}

fn case_status<'a>(lines: &'a [Value], file: &str) -> &'a str {
    case(lines, file)["status"].as_str().unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn several_cases_at_once_reuse_a_process_per_worker_and_none_outlives_the_run() {
    // `--linger` keeps a process alive after its stdin closes: only a kill
    // ends it.
    let cases: Vec<_> = (0..12).map(|i| (format!("slow{i:02}.hocon"), one_turn("slow", "script"))).collect();
    let dir = project(&agent_connection("script", ", \"--linger\"", ""), &cases);
    let (output, lines) = run(dir.path(), dir.path(), &["-j", "4"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(lines.len(), 12);
    let pids: BTreeSet<u64> =
        lines.iter().flat_map(structures).map(|s| s["pid"].as_u64().expect("a pid in every answer")).collect();
    assert!((2..=4).contains(&pids.len()), "12 requests, at most 4 at once, ran in {} processes: {pids:?}", pids.len());
    // A kill takes effect when the process is next scheduled: on a busy
    // machine, a moment after `assay` exits.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&pid| is_alive(pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(pids.iter().all(|&pid| !is_alive(pid)), "a process outlived the run: {pids:?}");
}

#[test]
fn every_fault_is_a_classified_error_verdict_with_the_end_of_stderr_and_the_run_goes_on() {
    let config = [
        agent_connection("script", "", "max_response_mb = 1"),
        // Starting Python (through a pyenv shim, on a busy machine) may take
        // a while: silence is measured from the request on.
        agent_connection("quiet", "", "idle_timeout_secs = 2"),
        agent_connection("dead", ", \"--exit-at-start\"", ""),
        "[connections.missing]\ntype = \"command\"\ncommand = [\"no-such-agent-program\"]\n".to_owned(),
        "[connections.relative]\ntype = \"command\"\ncommand = [\"./no-such-agent.sh\"]\n".to_owned(),
    ]
    .concat();
    let mut cases: Vec<_> = ["crash", "malformed", "oversize", "refuse"]
        .into_iter()
        .map(|agent| (format!("{agent}.hocon"), one_turn(agent, "script")))
        .collect();
    cases.push(("silent.hocon".into(), one_turn("silent", "quiet")));
    cases.push(("dead.hocon".into(), one_turn("echo", "dead")));
    cases.push(("missing.hocon".into(), one_turn("echo", "missing")));
    cases.push(("relative.hocon".into(), one_turn("echo", "relative")));
    cases.push(("zz_after.hocon".into(), one_turn("echo", "script")));
    let dir = project(&config, &cases);
    let (output, lines) = run(dir.path(), dir.path(), &["-j", "2"], &[]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(case_status(&lines, "zz_after.hocon"), "passed", "the connection serves on after the faults");

    let error = |file: &str| {
        let line = case(&lines, file);
        assert_eq!(line["status"], "error", "{file}: {line:#}");
        let error = &line["samples"][0]["runs"][0]["interactions"][0]["error"];
        (error["kind"].as_str().unwrap().to_owned(), error["message"].as_str().unwrap().to_owned())
    };
    let script = "agent `crash` at command `python3 agent.py`: ";
    let (kind, message) = error("crash.hocon");
    assert_eq!(kind, "crashed");
    assert_eq!(
        message,
        format!(
            "{script}the process exited with status 3 before answering; its stderr ends with:\n\
             Traceback (most recent call last):\nRuntimeError: agent.py lost its model\n\n\
             Consider running the command by hand and typing a request line such as {{\"agent\": \"a\", \"text\": \"hi\"}}: \
             it must answer each line with one JSON line and keep running"
        )
    );

    let (kind, message) = error("malformed.hocon");
    assert_eq!(kind, "malformed");
    assert!(message.contains("the process answered with a line that is no JSON answer: expected ident at line 1 column 2 in `thinking about hello`"), "{message}");
    assert!(
        message.contains("; its stderr is empty\n\nConsider writing one JSON object per request to stdout"),
        "{message}"
    );

    let (kind, message) = error("oversize.hocon");
    assert_eq!(kind, "too-large");
    assert!(message.contains("the process's answer line exceeded the cap of 1 MiB and was abandoned"), "{message}");
    assert!(message.ends_with("Consider raising `max_response_mb` of the connection"), "{message}");

    let (kind, message) = error("silent.hocon");
    assert_eq!(kind, "stalled");
    assert!(
        message.contains(
            "the process stopped answering: nothing arrived for 2 s; its stderr ends with:\nagent.py: waiting for a model that never comes\n\n"
        ),
        "{message}"
    );
    assert!(message.contains("print(..., flush=True)"), "{message}");

    let (kind, message) = error("refuse.hocon");
    assert_eq!(kind, "refused");
    assert!(message.ends_with("the agent refused the request: agent.py will not answer \"hello\""), "{message}");

    let (kind, message) = error("dead.hocon");
    assert_eq!(kind, "crashed");
    assert!(
        message.starts_with(
            "agent `echo` at command `python3 agent.py --exit-at-start`: the process exited with status 2 before answering; \
             its stderr ends with:\nagent.py: cannot load the model file model.bin\n\n"
        ),
        "{message}"
    );

    let (kind, message) = error("missing.hocon");
    assert_eq!(kind, "spawn");
    assert_eq!(
        message,
        "agent `echo` at command `no-such-agent-program`: cannot start the program: no program `no-such-agent-program` in PATH\n\n\
         Consider the program's name or path in `command`: a bare name is looked up in PATH, a relative path starts \
         from the connection's `dir` (by default the folder of assay.toml)"
    );

    let (kind, message) = error("relative.hocon");
    assert_eq!(kind, "spawn");
    let folder = std::fs::canonicalize(dir.path()).unwrap();
    let expected = format!(
        "cannot start the program: `{}` in `{}`: No such file or directory",
        folder.join("./no-such-agent.sh").display(),
        folder.display()
    );
    assert!(message.contains(&expected), "{message}");
}

#[test]
fn a_bad_command_table_names_the_file_the_connection_and_the_setting() {
    for (table, expected) in [
        ("command = []\n", "`command` is empty\n\nConsider command = [\"python3\", \"agent.py\"]"),
        ("command = [\"python3\"]\ndir = \"nowhere\"\n", "`dir` `"),
        (
            "command = [\"python3\"]\nenv = [\"A=B\"]\n",
            "`env` names \"A=B\", which is not an environment variable name",
        ),
        ("command = [\"python3\"]\nmax_response_mb = 0\n", "`max_response_mb` must be at least 1"),
        (
            "command = [\"python3\"]\nidle_timeout_secs = 0\n",
            "`idle_timeout_secs = 0` is not a positive number of seconds",
        ),
        ("command = \"python3 agent.py\"\n", "invalid type: string \"python3 agent.py\", expected a sequence"),
    ] {
        let config = format!("[connections.bad]\ntype = \"command\"\n{table}");
        let dir = project(&config, &[("one.hocon".to_owned(), one_turn("echo", "bad"))]);
        let (output, lines) = run(dir.path(), dir.path(), &[], &[]);
        assert_eq!(output.status.code(), Some(2), "{table}: {}", stderr(&output));
        assert!(lines.is_empty(), "nothing ran");
        let error = stderr(&output);
        assert!(error.contains("[connections.bad] in `") && error.contains("assay.toml`: "), "{error}");
        assert!(error.contains(expected), "{table}: {error}");
    }
}

#[test]
fn only_the_allowed_variables_reach_the_process() {
    let env_case = |connection: &str| {
        format!(
            r#"{{ "agent": "env", "connections": ["{connection}"],
                 "interactions": [ {{ "text": "which?", "response": {{ "structure": {{
                     "names": {{ "keywords": "ASSAY_TEST_ALLOWED", "not_keywords": ["ASSAY_TEST_SECRET", "HOME"] }} }} }} }} ] }}"#
        )
    };
    let config = [
        agent_connection("script", "", "env = [\"ASSAY_TEST_ALLOWED\", \"ASSAY_TEST_UNSET\"]"),
        agent_connection("with_path", "", "env = [\"ASSAY_TEST_ALLOWED\", \"PATH\"]"),
    ]
    .concat();
    let dir = project(
        &config,
        &[("env.hocon".to_owned(), env_case("script")), ("path.hocon".to_owned(), env_case("with_path"))],
    );
    let secrets = [("ASSAY_TEST_SECRET", "hunter2-secret"), ("ASSAY_TEST_ALLOWED", "yes"), ("HOME", "/home/someone")];
    let (output, lines) = run(dir.path(), dir.path(), &[], &secrets);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let results = std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap();
    assert!(!results.contains("hunter2-secret"));

    let structure = structures(case(&lines, "env.hocon"))[0];
    let names: Vec<&str> = structure["names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(!names.contains(&"ASSAY_TEST_UNSET") && !names.contains(&"USER"), "{names:?}");
    // A launcher (e.g. a pyenv shim) may put its own folders first.
    let path = structure["path"].as_str().unwrap();
    assert!(path.ends_with(MINIMAL_PATH), "{path}");

    let structure = structures(case(&lines, "path.hocon"))[0];
    let path = structure["path"].as_str().unwrap();
    assert!(path.ends_with(&std::env::var("PATH").unwrap()), "listed, PATH is assay's own: {path}");
}

/// A pool of the fixture agent's processes, each answer allowed `idle`.
fn agents(idle: Duration) -> CommandAgents {
    CommandAgents::new(CommandSettings {
        command: vec!["python3".into(), "agent.py".into()],
        env: Vec::new(),
        dir: fixture("commands"),
        idle_timeout: idle,
        max_response_bytes: 1 << 20,
    })
    .unwrap()
}

fn request(agent: &str, text: &str) -> ChatRequest {
    ChatRequest { agent: agent.into(), text: text.into(), ..ChatRequest::default() }
}

/// The pid in an `echo` answer.
async fn pid_of(agents: &CommandAgents, agent: &str) -> u64 {
    let response = agents.chat(&request(agent, "hi")).await.unwrap();
    response.structure.unwrap()["pid"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_in_flight_start_no_more_processes_than_they_are_and_idle_ones_are_reused() {
    let agents = agents(Duration::from_secs(30));
    let four = || futures_util::future::join_all((0..4).map(|_| pid_of(&agents, "slow")));
    let first: BTreeSet<u64> = four().await.into_iter().collect();
    assert_eq!(first.len(), 4, "four requests at once, four processes");
    let second: BTreeSet<u64> = four().await.into_iter().collect();
    assert_eq!(second, first, "the idle processes answered again");
    let one = pid_of(&agents, "echo").await;
    assert!(first.contains(&one));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_kills_its_half_answered_process() {
    let agents = agents(Duration::from_secs(30));
    let first = pid_of(&agents, "echo").await;
    // The idle process gets the request, writes half an answer and waits:
    // the caller's timeout drops the request.
    let cancelled = tokio::time::timeout(Duration::from_millis(500), agents.chat(&request("half", "hi"))).await;
    assert!(cancelled.is_err(), "{cancelled:?}");
    let response = agents.chat(&request("echo", "next")).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("next"), "the rest of the half answer is not read");
    let second = response.structure.unwrap()["pid"].as_u64().unwrap();
    assert_ne!(second, first, "a fresh process answered");
    #[cfg(target_os = "linux")]
    assert!(!is_alive(first), "the half-answered process was killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_process_is_replaced_by_a_fresh_one() {
    let agents = agents(Duration::from_secs(30));
    let first = pid_of(&agents, "echo").await;
    let crashed = agents.chat(&request("crash", "hi")).await.unwrap_err();
    assert_eq!(crashed.kind().name(), "crashed", "{crashed}");
    let second = pid_of(&agents, "echo").await;
    assert_ne!(second, first);
    // A refusal is an answer: the process stays.
    let refused = agents.chat(&request("refuse", "hi")).await.unwrap_err();
    assert_eq!(refused.kind().name(), "refused");
    assert_eq!(pid_of(&agents, "echo").await, second);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg(target_os = "linux")]
async fn a_process_that_exited_while_idle_is_replaced_without_an_error() {
    let agents = agents(Duration::from_secs(30));
    let first = pid_of(&agents, "echo").await;
    // SIGTERM from outside, while the process waits for its next request.
    let killed = std::process::Command::new("kill").arg(first.to_string()).status().unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while is_alive(first) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second = pid_of(&agents, "echo").await;
    assert_ne!(second, first);
}
