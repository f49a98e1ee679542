//! Cases run together, each still reported as a case of its own: a
//! [`CaseGroup`] holds every member's job and each member's job names its
//! place in it ([`InGroup`]). Whichever member runs a sample first runs
//! every member's conversation for it, once; the others wait for that
//! outcome and report their own share (the runner drives it:
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::watch;

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

/// One sample of every member of a group: run by one member at a time
/// (another takes over if that one's task is dropped), each member's
/// result published as soon as it is decided and taken by that member.
#[derive(Default)]
struct SampleOutcome {
    /// Whether a member is running the group's sample.
    running: AtomicBool,
    /// Whether a run of the group's sample has ended.
    finished: AtomicBool,
    /// Each member's result: not yet decided, decided (`None` for a member
    /// whose job could not be made), or taken by its member.
    slots: Mutex<HashMap<usize, Slot>>,
    /// Ticks whenever a result is decided or a run ends.
    ticks: watch::Sender<u64>,
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
}

/// Ends a member's run of a group's sample: when dropped before the run
/// finished (its task was stopped), another member may take over.
struct Running<'a>(&'a SampleOutcome);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
        self.0.ticks.send_modify(|tick| *tick += 1);
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
    /// [`Publisher`] it is given. The first member to ask runs it; the
    /// others wait for their own result, which may come before the run
    /// ends, or take the run over if the running member's task is dropped.
    /// `None` when a run ended without deciding `member` (a bug).
    pub(crate) async fn sample_of<F>(
        &self,
        member: usize,
        sample: u32,
        run: impl Fn(Publisher) -> F,
    ) -> Option<SampleResult>
    where
        F: Future<Output = ()>,
    {
        let outcome = self.outcomes.lock().expect("never poisoned").entry(sample).or_default().clone();
        let mut ticks = outcome.ticks.subscribe();
        loop {
            if let Some(slot) = outcome.slots.lock().expect("never poisoned").get_mut(&member)
                && let Slot::Decided(result) = std::mem::replace(slot, Slot::Taken)
            {
                return result;
            }
            if outcome.finished.load(Ordering::Acquire) {
                return None;
            }
            if !outcome.running.swap(true, Ordering::AcqRel) {
                let running = Running(&outcome);
                run(Publisher(outcome.clone())).await;
                outcome.finished.store(true, Ordering::Release);
                drop(running);
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
