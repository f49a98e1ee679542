//! One conversation: a job's turns in order over one connection, from a
//! fresh start, each answered by the agent or, when the job has a
//! recording, from it. Owns the conversation state (chat_context, sly_data
//! carry-forward) and the deadlines that cancel requests.

use crate::agent::{AgentResponse, Agents, ChatRequest, SAMPLE_METADATA};
use crate::case::Connection;
use crate::check::Target;
use crate::errors::Fault;
use crate::errors::{AgentError, AgentErrorKind};
use crate::job::{ConnectionRun, InteractionResult, RequestRecord, ResponseRecord, RunError};
use crate::job::{Job, PassRule};
use crate::plugin::{self, Registry, ResponseView};
use crate::run::cpu_threads::CpuThreads;
use crate::run::timeout::Deadline;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// What a conversation needs, shared by every sample of a run.
#[derive(Clone)]
pub struct Context {
    /// Where agents are.
    pub agents: Agents,
    /// The matchers.
    pub registry: Arc<Registry>,
    /// The run's CPU threads.
    pub cpu: Arc<CpuThreads>,
}

/// How a conversation's CPU work (in-process agents, checks) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Each piece off the async workers, which stay free for network I/O:
    /// the checks on the run's CPU threads.
    OnCpuThreads,
    /// Each piece on a blocking thread of its own: the checks may wait on
    /// the network (the judge, an embeddings backend), which must not hold
    /// a CPU thread.
    Offloaded,
    /// On the calling thread, which must be a blocking thread: a
    /// conversation with an in-process agent is all CPU work, and handing
    /// each piece to another thread would cost more than the piece.
    Inline,
}

/// Runs every turn of `job` over `connection` for sample `sample`.
/// `sample_deadline` is when the sample's bound fires; every request ends
/// by then (or by its turn's own `timeout_in_seconds`, if earlier). With
/// `slots`, each turn takes a slot for its agent call and gives it back
/// before its checks (which wait on the judge) run. Each turn is asked
/// ([`ask`]), then checked ([`check`]), where `work` says.
pub async fn converse(
    context: &Context,
    job: &Arc<Job>,
    connection: &Connection,
    sample: u32,
    sample_deadline: Deadline,
    work: Work,
    slots: Option<&tokio::sync::Semaphore>,
) -> ConnectionRun {
    let mut interactions = Vec::new();
    let mut chat_context: Option<Value> = None;
    let mut carried_sly_data: Map<String, Value> = Map::new();
    let mut metadata = job.metadata.clone();
    metadata.push((SAMPLE_METADATA.to_owned(), sample.to_string()));

    for (index, interaction) in job.turns.iter().enumerate() {
        let slot = match slots {
            Some(slots) => Some(slots.acquire().await.expect("the semaphore is never closed")),
            None => None,
        };
        let started = Instant::now();
        if !interaction.continue_conversation {
            chat_context = None;
            carried_sly_data.clear();
        }
        let mut sly_data = carried_sly_data.clone();
        if let Some(sent) = &interaction.sly_data {
            sly_data.extend(sent.clone());
        }
        let text = (!interaction.text.is_empty()).then(|| interaction.text.clone());
        let sent = RequestRecord { text, sly_data: (!sly_data.is_empty()).then(|| sly_data.clone()) };
        let request = ChatRequest {
            agent: job.agent.clone(),
            text: interaction.text.clone(),
            sly_data: (!sly_data.is_empty()).then(|| sly_data.clone()),
            chat_context: chat_context.clone(),
            chat_filter: interaction.chat_filter,
            metadata: metadata.clone(),
        };

        let (deadline, sandbox) = sample_deadline.turn(started, interaction.timeout);
        let bounds = TurnBounds { deadline, sandbox, sandbox_left: sandbox.map(|d| d.left(started)) };
        let asked = Instant::now();
        let answer = ask(context, job, connection, (sample, index), request, bounds, work).await;
        let agent_ms = millis(asked.elapsed());
        drop(slot);
        let response = match answer {
            Ok(response) => response,
            Err(error) => {
                interactions.push(failed(index, sent, error, started));
                break;
            }
        };
        if continues(job, index) {
            if let Some(returned) = &response.chat_context {
                chat_context = Some(returned.clone());
            }
            carried_sly_data = sly_data;
            if let Some(returned) = &response.sly_data {
                carried_sly_data.extend(returned.clone());
            }
        }
        let Some((checks, logs, response)) = check(context, job, index, response, agent_ms, deadline, work).await
        else {
            interactions.push(failed(index, sent, deadline.checks_error(index), started));
            break;
        };
        let passed = interaction.pass_rule.passes(&checks);
        let (usage, cost) = (response.usage, response.cost);
        let mut result = InteractionResult {
            index,
            request: Some(sent),
            passed,
            checks,
            error: None,
            logs,
            response: Some(ResponseRecord::of(response, interaction.chat_filter)),
            usage,
            cost,
            agent_ms,
            duration_ms: millis(started.elapsed()),
        };
        result.share_answer();
        interactions.push(result);
    }
    let passed = interactions.len() == job.turns.len() && interactions.iter().all(|i| i.passed);
    ConnectionRun { connection: connection.clone(), passed, interactions }
}

/// A turn's bounds: its request's deadline and, inside a direct call, the
/// sandbox's own (which says which limit stopped the call) with the time
/// it leaves.
#[derive(Clone, Copy)]
struct TurnBounds {
    deadline: Deadline,
    sandbox: Option<Deadline>,
    sandbox_left: Option<Duration>,
}

/// Asks turn `index` (of sample `sample`) with `request`: from the job's
/// recording, or from the agent over `connection` within `bounds`.
async fn ask(
    context: &Context,
    job: &Job,
    connection: &Connection,
    (sample, index): (u32, usize),
    request: ChatRequest,
    bounds: TurnBounds,
    work: Work,
) -> Result<AgentResponse, RunError> {
    let TurnBounds { deadline, sandbox, sandbox_left: sandbox_deadline } = bounds;
    if let Some(recording) = &job.recording {
        recording.answer(&job.id, sample, connection, index)
    } else if work == Work::Inline && connection == &Connection::Direct {
        // The sandbox's deadline stops the call; say which limit it was.
        match (context.agents.chat_direct_blocking(&request, sandbox_deadline), sandbox) {
            (Err(e), Some(sandbox)) if matches!(e.kind, AgentErrorKind::Fault(Fault::Deadline(_))) => {
                Err(sandbox.error(index))
            }
            (answer, _) => answer.map_err(agent_failed),
        }
    } else {
        let call = context.agents.chat(connection, request, sandbox_deadline);
        match tokio::time::timeout_at(deadline.at(), call).await {
            Ok(answer) => answer.map_err(agent_failed),
            Err(_) => Err(deadline.error(index)),
        }
    }
}

/// Runs turn `index`'s checks on `response` (its derived values, its
/// checks, then a scoring function) where `work` says, by `deadline`: the
/// checks' results and logs, and the response back; `None` when the
/// deadline fired first.
async fn check(
    context: &Context,
    job: &Arc<Job>,
    index: usize,
    response: AgentResponse,
    agent_ms: f64,
    deadline: Deadline,
    work: Work,
) -> Option<(Vec<crate::check::CheckResult>, Vec<plugin::PluginLog>, AgentResponse)> {
    // The checks' judge calls end with the turn's time too: a call asked
    // for later is refused, and the verdict does not wait past it.
    let until = deadline.at().into_std();
    let latency = serde_json::Number::from_f64(agent_ms).map(Value::Number);
    let cost = response.cost.and_then(serde_json::Number::from_f64).map(Value::Number);
    let evaluate = move |job: &Job, registry: &Registry, response: AgentResponse| {
        let view = ResponseView {
            text: response.text.as_deref(),
            text_is_json: response.text_is_json,
            sly_data: response.sly_data.as_ref(),
            structure: response.structure.as_ref(),
            latency_ms: latency.as_ref(),
            cost: cost.as_ref(),
            until: Some(until),
            derived: &[],
        };
        let turn = &job.turns[index];
        let (derived, mut logs) = plugin::derive(&turn.derived, &view, registry);
        let view = ResponseView { derived: &derived, ..view };
        let (mut results, mut more) = plugin::evaluate(&turn.checks, &view, registry);
        logs.append(&mut more);
        if let PassRule::ScoredBy(scored) = &turn.pass_rule {
            // The function reads the named scores as a derived value.
            let (mut check, named) = scored.call(&results);
            check.target = Target::Derived(0);
            let given = [Ok(named)];
            let view = ResponseView { derived: &given, ..view };
            let (value, mut more) = plugin::compute(&check, &view, registry, "the scoring function");
            logs.append(&mut more);
            results.push(scored.verdict(value));
        }
        (results, logs, response)
    };
    let evaluated = match work {
        Work::Inline => Ok(evaluate(job, &context.registry, response)),
        Work::OnCpuThreads => {
            let (job, registry) = (job.clone(), context.registry.clone());
            // A panic goes on up, as below.
            let computed = context.cpu.compute(move || evaluate(&job, &registry, response));
            tokio::time::timeout_at(deadline.at(), computed).await
        }
        Work::Offloaded => {
            let (job, registry) = (job.clone(), context.registry.clone());
            // A panic here (a bug, or an embedder's capability with one)
            // goes on up: the runner reports the case as an internal
            // error.
            let computed = async {
                tokio::task::spawn_blocking(move || evaluate(&job, &registry, response))
                    .await
                    .unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()))
            };
            tokio::time::timeout_at(deadline.at(), computed).await
        }
    };
    evaluated.ok()
}

/// Whether the state after turn `index` is worth keeping: the next one
/// continues the conversation.
fn continues(job: &Job, index: usize) -> bool {
    job.turns.get(index + 1).is_some_and(|next| next.continue_conversation)
}

/// The error verdict of a request that failed.
fn agent_failed(error: AgentError) -> RunError {
    RunError { kind: error.kind.kind(), message: error.to_string() }
}

fn failed(index: usize, sent: RequestRecord, error: RunError, started: Instant) -> InteractionResult {
    InteractionResult::failed(index, Some(sent), error, millis(started.elapsed()))
}

/// A duration in milliseconds, for results.
pub fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}
