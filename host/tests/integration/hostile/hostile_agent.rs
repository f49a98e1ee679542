//! The hostile agent (`fixtures/plugins/wat/hostile-agent.wasm`: it blocks
//! in WASI, prints or exits by the text it is sent) behind `assay agent
//! serve` and in `direct` cases: a request that blocks gets an error within
//! about the agent's deadline instead of a hang, one that prints or exits
//! takes nothing down, and the next request is answered.

use crate::hostile::hostile_support::{DEADLINE_MS, Expect, HOSTILE_AGENT, KILL_AFTER, Project, SLACK, Server, path};
use crate::util::runtime;
use assay::agent::{AgentCatalog, AgentResponse, Agents, ChatRequest, HttpAgents, HttpSettings};
use assay::case::Connection;
use assay::errors::{AgentError, AgentErrorKind};
use assay::sandbox::Limits;
use std::time::{Duration, Instant};

/// The name `assay agent serve FILE` gives the agent: the file's stem.
const SERVED_NAME: &str = "hostile-agent";

/// An HTTP client for `url`.
fn client(url: &str) -> Agents {
    let catalog = AgentCatalog::with_demo_agents(runtime().clone(), Limits::default());
    Agents::new(catalog, HttpAgents::new(HttpSettings { base_url: url.to_owned(), ..HttpSettings::default() }).unwrap())
}

/// Sends `text` to the served agent; `None` when no answer came within
/// [`KILL_AFTER`]. Also how long it took.
async fn ask(agents: &Agents, text: &str) -> (Option<Result<AgentResponse, AgentError>>, Duration) {
    let request = ChatRequest { agent: SERVED_NAME.into(), text: text.into(), ..ChatRequest::default() };
    let started = Instant::now();
    let answer = tokio::time::timeout(KILL_AFTER, agents.chat(&Connection::Http, request, None)).await.ok();
    (answer, started.elapsed())
}

/// The body of an HTTP 500 answer, or a description of what came instead.
fn server_error(answer: &Option<Result<AgentResponse, AgentError>>) -> Result<String, String> {
    match answer {
        Some(Err(AgentError { kind: AgentErrorKind::Status { status: 500, body }, .. })) => Ok(body.clone()),
        Some(other) => Err(format!("{other:?}")),
        None => Err(format!("no answer within {KILL_AFTER:?}")),
    }
}

#[test]
fn agent_serve_answers_a_blocking_printing_or_exiting_agent_and_keeps_serving() {
    let mut server = Server::start(&[&path(HOSTILE_AGENT)]);
    let agents = client(&server.url);
    // The agent's deadline under `agent serve` is the sandbox default.
    let bound = Limits::default().deadline + SLACK;
    let tokio = tokio::runtime::Runtime::new().unwrap();
    tokio.block_on(async {
        let mut problems = Vec::new();
        let (sleep, poll) = tokio::join!(ask(&agents, "sleep"), ask(&agents, "poll"));
        for (text, (answer, took)) in [("sleep", sleep), ("poll", poll)] {
            match server_error(&answer) {
                Ok(body) if body.contains("deadline") && took <= bound => {}
                Ok(body) => problems.push(format!("`{text}` got HTTP 500 after {took:.2?}: {body}")),
                Err(other) => problems.push(format!("`{text}` got, after {took:.2?}: {other}")),
            }
        }
        let (answer, _) = ask(&agents, "exit").await;
        match server_error(&answer) {
            Ok(body) if body.contains("exit") => {}
            Ok(body) => problems.push(format!("`exit` got HTTP 500 without saying it exited: {body}")),
            Err(other) => problems.push(format!("`exit` got {other}")),
        }
        for text in ["print", "after all that"] {
            match ask(&agents, text).await.0 {
                Some(Ok(response)) if response.text.as_deref() == Some(text) => {}
                other => problems.push(format!("`{text}` got {other:?}, not its echo")),
            }
        }
        assert!(problems.is_empty(), "{}\n--- server stderr\n{}", problems.join("\n"), server.stderr());
    });
    assert!(server.alive(), "the server died: {}", server.stderr());
}

/// How each hostile-agent case must be reported over `connection`.
fn expectations(connection: &str) -> Vec<Expect> {
    let timeout = "exceeded its timeout_in_seconds of 0.5 s";
    let mut expected = vec![
        Expect::new("hello", "passed"),
        Expect::new("print", "passed"),
        Expect::error("sleep", "interaction-timeout").message(timeout),
        Expect::error("poll", "interaction-timeout").message(timeout),
    ];
    expected.extend(match connection {
        "direct" => [
            Expect::error("exit", "exit").message("agent `hostile-agent`"),
            Expect::error("fail", "refused").message("the hostile agent was asked to fail"),
        ],
        _ => [
            Expect::error("exit", "http-status").message("exit"),
            Expect::error("fail", "http-status").message("the hostile agent was asked to fail"),
        ],
    });
    expected
}

/// A case per text the hostile agent knows, each checking that the answer
/// echoes it; the waits under an interaction timeout of the tests'
/// deadline.
fn project() -> Project {
    let project = Project::new("");
    let timeout = Some(DEADLINE_MS as f64 / 1000.0);
    for text in ["hello", "print", "exit", "fail"] {
        project.simple_case(text, SERVED_NAME, text, &format!(r#""value": "{text}""#), None);
    }
    for text in ["sleep", "poll"] {
        project.simple_case(text, SERVED_NAME, text, &format!(r#""value": "{text}""#), timeout);
    }
    project
}

#[test]
fn direct_cases_with_a_hostile_agent_are_each_reported() {
    let project = project();
    let agent = format!("{SERVED_NAME}={}", path(HOSTILE_AGENT));
    let run = project.run(&["--agent", &agent]);
    run.finished.assert_within(Duration::from_millis(DEADLINE_MS) + SLACK);
    run.assert_cases(&expectations("direct"), 1);
    assert!(!run.finished.stdout.lines().any(|l| l == "hello"), "{}", run.describe());
}

#[test]
fn http_cases_with_a_hostile_agent_behind_agent_serve_are_each_reported() {
    let mut server = Server::start(&[&path(HOSTILE_AGENT)]);
    let run = project().run(&["--connection", "http", "--agent-url", &server.url]);
    run.finished.assert_within(Duration::from_millis(DEADLINE_MS) + SLACK);
    run.assert_cases(&expectations("http"), 1);
    assert!(server.alive(), "the server died: {}", server.stderr());
}
