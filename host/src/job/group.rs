//! Cases run together, each still reported as a case of its own: a
//! [`CaseGroup`] holds every member's job and each member's job names its
//! place in it ([`InGroup`]). Whichever member asks for a sample first
//! starts every member's conversation for it, once; each member waits for
//! its own share of that outcome and reports it (the runner drives it:
//! `run/group.rs`). A member left out of the run (a filter, a shard) is
//! still asked, so that the group always sees all of its answers. Two
//! kinds, as promptfoo has them:
//!
//! - compared ([`Order::AtOnce`] with [`CompareRule`]s): promptfoo's
//!   `select-best` and `max-score` (`formats/promptfoo/compare.rs`) decide
//!   the outputs of one test on every prompt × provider against one
//!   another, and pass only the best;
//! - in turn ([`Order::InTurn`]): promptfoo's `storeOutputAs` gives a
//!   case's answer to the cases after it as a var, so each member's job is
//!   made again, when its turn comes, from what the earlier ones stored.
//!
//! This module owns the group and its samples; what a comparison decides
//! is its rule's, and how a group runs is the runner's.

use crate::check::{Check, CheckResult, KeySet, Verdict};
use crate::errors::ErrorKind;
use crate::job::{Job, Recording, SampleResult};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// Cases run together (see the module doc).
pub struct CaseGroup {
    /// What it is, for messages (`tests[2]`).
    pub name: String,
    /// Each member's job as read, with no group of its own, or why it
    /// could not be made (that case is reported broken on its own).
    pub members: Vec<Result<Arc<Job>, String>>,
    /// How the members run.
    pub order: Order,
    /// The rules comparing the members' answers, applied in order
    /// (promptfoo: `select-best` first).
    pub rules: Vec<Box<dyn CompareRule>>,
    /// Each member's recording, when the run replays recorded results.
    recordings: OnceLock<Vec<Option<Arc<Recording>>>>,
    /// The members' samples, by sample index, each decided once.
    outcomes: Mutex<HashMap<u32, Arc<SampleOutcome>>>,
}

/// One sample of every member of a group: started by the first member to
/// ask, run as a task of its own (so that the member that started it is
/// reported when its own result is decided, not when the last member's
/// is), each member's result published as soon as it is decided and taken
/// by that member. The run is stopped when every member waiting on it was
/// stopped before any member took its result (a member that asks later
/// starts it again); once one has, the run goes on to its end, so that no
/// member is reported from one run and another from a second.
#[derive(Default)]
struct SampleOutcome {
    /// Whether a run of the group's sample is under way or has ended.
    running: AtomicBool,
    /// Whether a run of the group's sample has ended (or panicked: its
    /// members then have no result, which is reported as a bug).
    finished: AtomicBool,
    /// Each member's result: not yet decided, decided (`None` for a member
    /// whose job could not be made), or taken by its member.
    slots: Mutex<HashMap<usize, Slot>>,
    /// Ticks whenever a result is decided or a run ends.
    ticks: watch::Sender<u64>,
    /// How many members wait on the run now.
    waiting: AtomicUsize,
    /// The run's task, stopped when its last waiting member is.
    run: Mutex<Option<AbortHandle>>,
    /// Whether the run was stopped that way (not panicked).
    stopped: AtomicBool,
    /// Whether a member took its result from the run.
    served: AtomicBool,
    /// The message of the panic the run ended in, if it did.
    panic: Mutex<Option<String>>,
}

/// A member's result in a [`SampleOutcome`].
enum Slot {
    Decided(Option<SampleResult>),
    Taken,
}

/// What runs a group's sample gives each member's result to: every
/// member waiting on it wakes.
pub(crate) struct Publisher(Arc<SampleOutcome>);

impl Publisher {
    /// Decides member `member`'s result.
    pub(crate) fn decide(&self, member: usize, result: Option<SampleResult>) {
        self.0.slots.lock().expect("never poisoned").entry(member).or_insert(Slot::Decided(result));
        self.0.ticks.send_modify(|tick| *tick += 1);
    }

    /// Says that the run panicked, with the panic's message: the members it
    /// did not decide are reported with it.
    pub(crate) fn panicked(&self, message: String) {
        *self.0.panic.lock().expect("never poisoned") = Some(message);
    }
}

/// Held by the task that runs a group's sample: when that task ends
/// without finishing, because it was stopped (no member waits any more),
/// a member that asks later starts the run again; because it panicked,
/// the run is over and its undecided members have no result.
struct Running(Arc<SampleOutcome>);

impl Drop for Running {
    fn drop(&mut self) {
        let outcome = &self.0;
        if outcome.stopped.swap(false, Ordering::AcqRel) {
            outcome.running.store(false, Ordering::Release);
        } else {
            outcome.finished.store(true, Ordering::Release);
        }
        outcome.ticks.send_modify(|tick| *tick += 1);
    }
}

/// A member waiting on a group's sample: the last one to stop waiting
/// before the run ends and before any member took its result, because its
/// task was stopped, stops the run.
struct Waiting<'a> {
    outcome: &'a SampleOutcome,
}

impl<'a> Waiting<'a> {
    fn new(outcome: &'a SampleOutcome) -> Waiting<'a> {
        outcome.waiting.fetch_add(1, Ordering::AcqRel);
        Waiting { outcome }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let outcome = self.outcome;
        let last = outcome.waiting.fetch_sub(1, Ordering::AcqRel) == 1;
        if !last || outcome.served.load(Ordering::Acquire) || outcome.finished.load(Ordering::Acquire) {
            return;
        }
        if let Some(run) = outcome.run.lock().expect("never poisoned").take() {
            outcome.stopped.store(true, Ordering::Release);
            run.abort();
        }
    }
}

impl fmt::Debug for CaseGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaseGroup").field("name", &self.name).field("members", &self.members.len()).finish()
    }
}

/// How a group's members run.
pub enum Order {
    /// All at once.
    AtOnce,
    /// One after another, in member order, each made again before it
    /// runs from the vars the members before it stored.
    InTurn(Box<dyn InTurn>),
}

/// The members of a group run in turn (promptfoo's `storeOutputAs`).
pub trait InTurn: Send + Sync {
    /// Member `member`'s job with `stored` (var name → an earlier member's
    /// answer) over its own vars, planned with the run's `keys`.
    fn job(&self, member: usize, stored: &Map<String, Value>, keys: &dyn KeySet) -> Result<Job, String>;
    /// The var member `member`'s answer is stored as, if any.
    fn stores_as(&self, member: usize) -> Option<&str>;
}

/// A member's place in a group.
#[derive(Clone, Debug)]
pub struct InGroup {
    /// The group.
    pub group: Arc<CaseGroup>,
    /// Which member the job is.
    pub member: usize,
}

impl PartialEq for InGroup {
    /// The same place in the same group (shared by `Arc`).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.group, &other.group) && self.member == other.member
    }
}

/// A rule comparing a group's members' answers; it gives every member one
/// more check, which the member must pass besides its own. promptfoo's
/// `select-best` and `max-score` are its rules
/// (`formats/promptfoo/compare.rs`); the runner applies them in order,
/// each once every member's sample is decided (`run/group.rs`).
pub trait CompareRule: Send + Sync {
    /// Its first step on the members' samples (`None`: a member with no
    /// sample): every member's verdict, or a check to compute first.
    fn first(&self, samples: &[Option<SampleResult>]) -> Deciding;
    /// Every one of `members`' verdicts from what the check of
    /// [`Deciding::AfterComputing`] computed (a rule that never asks for one
    /// keeps this default).
    fn decide(&self, computed: Result<Value, Verdict>, members: usize) -> Vec<Verdict> {
        let _ = computed;
        vec![Verdict::error(ErrorKind::Internal, "a comparison asked for no check decided from one"); members]
    }
    /// Its result on a member that answered, of `verdict`.
    fn result(&self, verdict: Verdict) -> CheckResult;
}

/// What a [`CompareRule`] needs to decide.
pub enum Deciding {
    /// Nothing more: these are the members' verdicts, in member order.
    Now(Vec<Verdict>),
    /// The value `check` computes, asked of its plugin by the comparison's
    /// deadline (a judge's answer); `name` names the rule in a timeout.
    AfterComputing {
        /// The check to compute.
        check: Check,
        /// The rule, for messages (`select-best`).
        name: &'static str,
    },
}

impl CaseGroup {
    /// A group `name` of `members`, run in `order`, compared by `rules`.
    pub(crate) fn new(
        name: String,
        members: Vec<Result<Arc<Job>, String>>,
        order: Order,
        rules: Vec<Box<dyn CompareRule>>,
    ) -> CaseGroup {
        CaseGroup { name, members, order, rules, recordings: OnceLock::new(), outcomes: Mutex::default() }
    }

    /// Answers every member from `recording_of` its id (a replayed run);
    /// the first call decides.
    pub(crate) fn replay_from(&self, recording_of: impl Fn(&str) -> Option<Arc<Recording>>) {
        self.recordings.get_or_init(|| {
            self.members.iter().map(|member| member.as_ref().ok().and_then(|job| recording_of(&job.id))).collect()
        });
    }

    /// Member `index`'s job as the group runs it: answered from its
    /// recording in a replayed run, or the reason it cannot run.
    pub(crate) fn member_job(&self, index: usize) -> Result<Arc<Job>, String> {
        let job = self.members[index].clone()?;
        self.as_recorded(index, job)
    }

    /// `job`, member `index`'s, answered from its recording in a replayed
    /// run, or the reason it cannot be.
    pub(crate) fn as_recorded(&self, index: usize, job: Arc<Job>) -> Result<Arc<Job>, String> {
        match self.recordings.get() {
            None => Ok(job),
            Some(recordings) => match &recordings[index] {
                Some(recording) => Ok(Arc::new(Job { recording: Some(recording.clone()), ..(*job).clone() })),
                None => Err(format!("the replayed results have no answer for `{}`, which the group needs", job.id)),
            },
        }
    }

    /// Member `member`'s result of sample `sample`: `run` runs the
    /// group's sample and decides every member's result through the
    /// [`Publisher`] it is given. The first member to ask starts it as a
    /// task of its own; every member, that one included, waits only for its
    /// own result, which may come long before the run ends. An error, why,
    /// when a run ended without deciding `member` (a bug: the run panicked,
    /// or its job could not be made).
    pub(crate) async fn sample_of<F>(
        &self,
        member: usize,
        sample: u32,
        run: impl Fn(Publisher) -> F,
    ) -> Result<SampleResult, String>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let outcome = self.outcomes.lock().expect("never poisoned").entry(sample).or_default().clone();
        let mut ticks = outcome.ticks.subscribe();
        let _waiting = Waiting::new(&outcome);
        loop {
            if let Some(slot) = outcome.slots.lock().expect("never poisoned").get_mut(&member)
                && let Slot::Decided(result) = std::mem::replace(slot, Slot::Taken)
            {
                outcome.served.store(true, Ordering::Release);
                return result.ok_or_else(|| "its job could not be made".to_owned());
            }
            if outcome.finished.load(Ordering::Acquire) {
                let panic = outcome.panic.lock().expect("never poisoned").clone();
                return Err(panic.unwrap_or_else(|| "the run ended without deciding it".to_owned()));
            }
            if !outcome.running.swap(true, Ordering::AcqRel) {
                let running = Running(outcome.clone());
                let publisher = Publisher(outcome.clone());
                let task = run(publisher);
                let mut slot = outcome.run.lock().expect("never poisoned");
                *slot = Some(
                    tokio::spawn(async move {
                        task.await;
                        drop(running);
                    })
                    .abort_handle(),
                );
                continue;
            }
            // The sender lives as long as the outcome: this never fails.
            let _ = ticks.changed().await;
        }
    }
}

/// What a member answered, as promptfoo compares it: its first answer's
/// text, or nothing when it has none.
pub(crate) fn output_of(sample: Option<&SampleResult>) -> &str {
    sample
        .and_then(|s| s.runs.first())
        .and_then(|run| run.interactions.first())
        .and_then(|interaction| interaction.response.as_ref())
        .and_then(|response| response.text.as_deref())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;
    use tokio::sync::Notify;

    fn group() -> CaseGroup {
        let members = vec![Err("not needed".to_owned()), Err("not needed".to_owned())];
        CaseGroup::new("group".to_owned(), members, Order::AtOnce, Vec::new())
    }

    fn result(index: u32) -> Option<SampleResult> {
        Some(SampleResult { index, passed: true, runs: Vec::new(), duration_ms: 0.0, answers_left_out: false })
    }

    /// Sets its flag when dropped: whether a run's future was dropped.
    struct Dropped(Arc<AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }

    #[tokio::test]
    async fn the_member_that_starts_a_run_has_its_result_before_the_run_ends() {
        let group = Arc::new(group());
        let second = Arc::new(Notify::new());
        let run = {
            let second = second.clone();
            move |publisher: Publisher| {
                let second = second.clone();
                async move {
                    publisher.decide(0, result(7));
                    second.notified().await;
                    publisher.decide(1, result(8));
                }
            }
        };
        let first = tokio::time::timeout(Duration::from_secs(5), group.sample_of(0, 7, run.clone())).await;
        assert_eq!(first.expect("member 0 waited for the whole run").unwrap().index, 7);
        let waiting = tokio::spawn({
            let group = group.clone();
            async move { group.sample_of(1, 7, run).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "member 1 had a result before it was decided");
        second.notify_one();
        assert_eq!(waiting.await.unwrap().unwrap().index, 8);
    }

    #[tokio::test]
    async fn a_run_whose_every_waiting_member_is_stopped_stops_and_starts_again_when_asked() {
        let group = Arc::new(group());
        let starts = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicBool::new(false));
        let run = {
            let (starts, dropped) = (starts.clone(), dropped.clone());
            move |publisher: Publisher| {
                let started = starts.fetch_add(1, Ordering::AcqRel);
                let dropped = Dropped(dropped.clone());
                async move {
                    let _dropped = dropped;
                    if started == 0 {
                        std::future::pending::<()>().await;
                    }
                    publisher.decide(0, result(3));
                    publisher.decide(1, result(3));
                }
            }
        };
        let stopped = tokio::spawn({
            let (group, run) = (group.clone(), run.clone());
            async move { group.sample_of(0, 3, run).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(starts.load(Ordering::Acquire), 1);
        stopped.abort();
        let _ = stopped.await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(dropped.load(Ordering::Acquire), "the run went on with no member waiting for it");
        let asked_again = tokio::time::timeout(Duration::from_secs(5), group.sample_of(1, 3, run)).await;
        assert_eq!(asked_again.expect("the run was not started again").unwrap().index, 3);
        assert_eq!(starts.load(Ordering::Acquire), 2);
    }

    #[tokio::test]
    async fn once_a_member_took_its_result_a_stopped_member_does_not_stop_the_run() {
        let group = Arc::new(group());
        let starts = Arc::new(AtomicUsize::new(0));
        let second = Arc::new(Notify::new());
        let run = {
            let (starts, second) = (starts.clone(), second.clone());
            move |publisher: Publisher| {
                let started = starts.fetch_add(1, Ordering::AcqRel);
                let second = second.clone();
                async move {
                    publisher.decide(0, result(started as u32));
                    second.notified().await;
                    publisher.decide(1, result(started as u32));
                }
            }
        };
        assert_eq!(group.sample_of(0, 0, run.clone()).await.unwrap().index, 0);
        let stopped = tokio::spawn({
            let (group, run) = (group.clone(), run.clone());
            async move { group.sample_of(1, 0, run).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        stopped.abort();
        let _ = stopped.await;
        second.notify_one();
        // Member 1 asks again: the first run decided it; none was started
        // again (member 0 was reported from run 0, so is member 1).
        let again = tokio::time::timeout(Duration::from_secs(5), group.sample_of(1, 0, run)).await;
        assert_eq!(again.expect("member 1 was never decided").unwrap().index, 0);
        assert_eq!(starts.load(Ordering::Acquire), 1);
    }

    #[tokio::test]
    async fn a_run_that_panics_leaves_its_undecided_members_without_a_result() {
        let group = group();
        // What `run/group.rs` does: the run's panic is caught and told.
        let run = |publisher: Publisher| async move {
            let ran = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(async {
                publisher.decide(1, result(0));
                panic!("a bug in a comparison");
            }))
            .await;
            if ran.is_err() {
                publisher.panicked("it panicked: a bug in a comparison".to_owned());
            }
        };
        let asked = tokio::time::timeout(Duration::from_secs(5), group.sample_of(0, 0, run)).await;
        let why = asked.expect("a panicked run left its member waiting").unwrap_err();
        assert_eq!(why, "it panicked: a bug in a comparison");
        assert_eq!(group.sample_of(1, 0, run).await.unwrap().index, 0);
    }
}
