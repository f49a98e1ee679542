//! A sample of a case in a group ([`crate::job::CaseGroup`]): the first
//! member to ask for a sample starts every member's conversations for it, each
//! under its own bound, at once or in turn, then applies the group's
//! rules; every member takes its own share. Nothing here waits for another case to be
//! scheduled, so no slot, filter or shard can leave a member waiting: a
//! member that is not in the run is asked all the same.

use crate::check::{CheckResult, Verdict};
use crate::errors::ErrorKind;
use crate::job::{
    CaseGroup, CompareRule, ConnectionRun, Deciding, InGroup, InTurn, InteractionResult, Job, Order, Publisher, RunError,
    SampleResult, output_of,
};
use crate::plugin::{self, ResponseView};
use crate::run::RunTimeout;
use crate::run::conversation::{Context, Work, converse, millis};
use crate::run::panic_message::panic_payload_message;
use crate::run::timeout::Deadline;
use futures_util::FutureExt;
use std::panic::AssertUnwindSafe;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The bounds a member's sample runs under.
#[derive(Clone, Copy)]
pub(super) struct Bounds {
    /// The run's bound on a sample, if it sets one.
    pub run: Option<RunTimeout>,
    /// The bound when neither the run nor the case sets one.
    pub default: Duration,
    /// The most members of a group run at once (the run's `jobs`).
    pub at_once: usize,
}

/// Sample `index` of the member `place`, run with the others.
pub(super) async fn sample(context: &Context, place: &InGroup, index: u32, bounds: Bounds) -> SampleResult {
    let group = &place.group;
    let run = |publisher: Publisher| {
        let (context, group) = (context.clone(), group.clone());
        async move {
            // A panic in the run (a bug) is caught so that every member it
            // did not decide is reported with its message.
            let members = AssertUnwindSafe(run_members(context, group, index, bounds, &publisher));
            if let Err(panic) = members.catch_unwind().await {
                publisher.panicked(panic_payload_message(panic));
            }
        }
    };
    match group.sample_of(place.member, index, run).await {
        Ok(sample) => sample,
        Err(why) => {
            let why = format!(
                "{} ended without this case's result ({why}); this is a bug in assay, please report it",
                group.name
            );
            let job = group.members[place.member].as_ref().expect("a member that runs has a job");
            unmade(job, index, RunError { kind: ErrorKind::Internal, message: why })
        }
    }
}

/// Every member's sample `index`, run in the group's order, then compared
/// by its rules, each decided through `publisher`: in turn, as each
/// member's ends; at once, when all are compared.
async fn run_members(context: Context, group: Arc<CaseGroup>, index: u32, bounds: Bounds, publisher: &Publisher) {
    let ran = match &group.order {
        Order::AtOnce => at_once(&context, &group, index, bounds).await,
        Order::InTurn(turns) => return in_turn(&context, &group, turns.as_ref(), index, bounds, publisher).await,
    };
    // A member whose job could not be made is reported on its own; the
    // others cannot be compared without it.
    let missing = ran.iter().find_map(|ran| ran.as_ref().err().cloned());
    let mut samples: Vec<Option<SampleResult>> = ran.into_iter().map(Result::ok).collect();
    // The comparison is a step of its own after the members' (each of
    // which had its own bound): it gets the bound of a sample, from now.
    let deadline = Deadline::sample(Instant::now(), bounds.run, None, bounds.default);
    for rule in &group.rules {
        let verdicts = match &missing {
            Some(why) => {
                let message = format!("{}'s outputs cannot be compared: {why}", group.name);
                vec![Verdict::error(ErrorKind::Setup, message); samples.len()]
            }
            None => decide(&context, rule.as_ref(), &samples, deadline).await,
        };
        for ((sample, verdict), member) in samples.iter_mut().zip(verdicts).zip(&group.members) {
            let (Some(sample), Ok(_)) = (sample, member) else { continue };
            add_result(sample, rule.result(verdict));
        }
    }
    for (member, sample) in samples.into_iter().enumerate() {
        publisher.decide(member, sample);
    }
}

/// Every member's sample `index`, at once (at most `bounds.at_once` of
/// them; dropping this future stops them all): each its result, or why its
/// job could not be made.
async fn at_once(
    context: &Context,
    group: &Arc<CaseGroup>,
    index: u32,
    bounds: Bounds,
) -> Vec<Result<SampleResult, String>> {
    let mut running = tokio::task::JoinSet::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(bounds.at_once.max(1)));
    for member in 0..group.members.len() {
        let (context, group, slots) = (context.clone(), group.clone(), slots.clone());
        running.spawn(async move {
            let ran = match group.member_job(member) {
                Ok(job) => {
                    let _slot = slots.acquire().await.expect("the semaphore is never closed");
                    Ok(member_sample(&context, &job, index, bounds).await)
                }
                Err(why) => Err(why),
            };
            (member, ran)
        });
    }
    let mut ran: Vec<Result<SampleResult, String>> = vec![Err(String::new()); group.members.len()];
    while let Some(joined) = running.join_next().await {
        // A panic in a member's run (a bug) goes on up, as a case's would.
        let (member, sample) = joined.unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()));
        ran[member] = sample;
    }
    ran
}

/// Every member's sample `index`, one after another, each decided
/// through `publisher` as soon as it ends: each member's job is made again
/// from the answers the members before it stored (`turns`), then run. A
/// member whose job cannot be made with them has that error; one whose job
/// could not be made when it was read has no result (it is reported
/// broken on its own).
async fn in_turn(
    context: &Context,
    group: &CaseGroup,
    turns: &dyn InTurn,
    index: u32,
    bounds: Bounds,
    publisher: &Publisher,
) {
    let mut stored = Map::new();
    for (member, read) in group.members.iter().enumerate() {
        let Ok(read) = read else {
            publisher.decide(member, None);
            continue;
        };
        let made = turns.job(member, &stored, context.registry.as_ref()).map(Arc::new);
        let sample = match made.and_then(|job| group.as_recorded(member, job)) {
            Ok(job) => member_sample(context, &job, index, bounds).await,
            Err(why) => unmade(read, index, RunError { kind: ErrorKind::BadFile, message: why }),
        };
        if let Some(name) = turns.stores_as(member) {
            let output = output_of(Some(&sample));
            // promptfoo stores an answer only when there is one.
            if !output.is_empty() {
                stored.insert(name.to_owned(), Value::String(output.to_owned()));
            }
        }
        publisher.decide(member, Some(sample));
    }
}

/// The sample of a member that could not run: its first request's
/// `error`.
fn unmade(read: &Job, index: u32, error: RunError) -> SampleResult {
    let interaction = InteractionResult::failed(0, None, error, 0.0);
    let connection = read.connections.first().cloned().unwrap_or(crate::case::Connection::Direct);
    let run = ConnectionRun { connection, passed: false, interactions: vec![interaction] };
    SampleResult { index, passed: false, runs: vec![run], duration_ms: 0.0, answers_left_out: false }
}

/// One member's sample: its connections in turn, as any case's.
async fn member_sample(context: &Context, job: &Arc<Job>, index: u32, bounds: Bounds) -> SampleResult {
    let started = Instant::now();
    let deadline = Deadline::sample(started, bounds.run, job.timeout, bounds.default);
    let mut runs = Vec::new();
    for connection in &job.connections {
        runs.push(converse(context, job, connection, index, deadline, Work::Offloaded, None).await);
    }
    let passed = runs.iter().all(|r| r.passed);
    SampleResult { index, passed, runs, duration_ms: millis(started.elapsed()), answers_left_out: false }
}

/// Each member's verdict by `rule`: at once, or from the check it asks to
/// compute first (a judge's answer), by `deadline`.
async fn decide(
    context: &Context,
    rule: &dyn CompareRule,
    samples: &[Option<SampleResult>],
    deadline: Deadline,
) -> Vec<Verdict> {
    let (check, name) = match rule.first(samples) {
        Deciding::Now(verdicts) => return verdicts,
        Deciding::AfterComputing { check, name } => (check, name),
    };
    let registry = context.registry.clone();
    let until = deadline.at().into_std();
    // The check is computed off the async workers: a judge's plugin waits
    // on the network.
    let asked = tokio::task::spawn_blocking(move || {
        let view = ResponseView {
            text: Some(""),
            text_is_json: false,
            sly_data: None,
            structure: None,
            latency_ms: None,
            cost: None,
            until: Some(until),
            derived: &[],
        };
        plugin::compute(&check, &view, &registry, name).0
    });
    let computed = match tokio::time::timeout_at(deadline.at(), asked).await {
        Ok(joined) => joined.unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic())),
        Err(_) => Err(Verdict::error(ErrorKind::CaseTimeout, format!("{name}: the judge did not answer in time"))),
    };
    rule.decide(computed, samples.len())
}

/// Adds a comparison's `result` to a member's first answer, which passes
/// only if it passes too. A member whose request failed keeps its error.
fn add_result(sample: &mut SampleResult, result: CheckResult) {
    let Some(run) = sample.runs.first_mut() else { return };
    let Some(interaction) = run.interactions.first_mut() else { return };
    if interaction.response.is_none() {
        return;
    }
    let passes = result.lets_pass();
    interaction.checks.push(result);
    interaction.passed &= passes;
    run.passed &= passes;
    sample.passed = sample.runs.iter().all(|r| r.passed);
}
