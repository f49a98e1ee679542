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
//!   `select-best` and `max-score` decide the outputs of one test on every
//!   prompt × provider against one another, and pass only the best;
//! - in turn ([`Order::InTurn`]): promptfoo's `storeOutputAs` gives a
//!   case's answer to the cases after it as a var, so each member's job is
//!   made again, when its turn comes, from what the earlier ones stored.
//!
//! This module owns what the rules decide from the members' results; the
//! select-best judge is asked through its check's plugin.

use crate::check::{Check, CheckResult, KeySet, Outcome, Verdict, check_score};
use crate::errors::ErrorKind;
use crate::job::{Job, Recording, SampleResult};
use crate::template::NunjucksTemplate;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::watch;

/// The key of `select-best`'s results.
pub(crate) const SELECT_BEST_KEY: &str = "pf_select_best";
/// The key of `max-score`'s results.
pub(crate) const MAX_SCORE_KEY: &str = "pf_max_score";

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
    pub rules: Vec<CompareRule>,
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

/// How members are compared; each gives every member one more check,
/// which it must pass besides its own.
#[derive(Clone, Debug)]
pub enum CompareRule {
    /// promptfoo's `select-best`: the judge picks the best output for the
    /// criteria.
    SelectBest(SelectBest),
    /// promptfoo's `max-score`: the output whose other checks score best.
    MaxScore(MaxScore),
}

/// promptfoo's `select-best` (see [`CompareRule::SelectBest`]).
#[derive(Clone, Debug)]
pub struct SelectBest {
    /// What the judge looks for.
    pub criteria: String,
    /// The grading prompt's messages, templates of the test's vars,
    /// `criteria` and `outputs` (each output parsed as JSON when it is).
    pub messages: Vec<NunjucksTemplate>,
    /// The test's vars.
    pub vars: Map<String, Value>,
    /// The check that asks the judge: its key computes the index the
    /// judge chose (see [`SelectBest::verdicts`]) from the rendered prompt
    /// (its `prompt` expected value) and the number of outputs
    /// (`outputs`).
    pub check: Check,
    /// Its line in the case's file.
    pub line: Option<u32>,
}

/// promptfoo's `max-score` (see [`CompareRule::MaxScore`]).
#[derive(Clone, Debug)]
pub struct MaxScore {
    /// Each of a member's own checks' weight, in check order (by its
    /// assertion type, 1 unless the rule says otherwise).
    pub weights: Vec<f64>,
    /// Whether the weighted scores are summed, not averaged.
    pub sum: bool,
    /// The lowest score the best may have to pass.
    pub threshold: Option<f64>,
    /// The expected value its results show (the assertion's `value`).
    pub expected: Value,
    /// Its line in the case's file.
    pub line: Option<u32>,
}

impl CaseGroup {
    /// A group `name` of `members`, run in `order`, compared by `rules`.
    pub(crate) fn new(
        name: String,
        members: Vec<Result<Arc<Job>, String>>,
        order: Order,
        rules: Vec<CompareRule>,
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

impl SelectBest {
    /// The prompt that asks the judge to pick one of `outputs`: the
    /// messages rendered, joined by a blank line.
    pub(crate) fn prompt(&self, outputs: &[&str]) -> Result<String, String> {
        let mut vars = self.vars.clone();
        vars.insert("criteria".into(), Value::String(self.criteria.clone()));
        let parsed = outputs.iter().map(|o| serde_json::from_str(o).unwrap_or_else(|_| Value::String((*o).into())));
        vars.insert("outputs".into(), Value::Array(parsed.collect()));
        let rendered: Result<Vec<String>, String> = self.messages.iter().map(|m| m.render(&vars)).collect();
        Ok(rendered?.join("\n\n"))
    }

    /// The check asking the judge to pick one of `outputs` with `prompt`.
    pub(crate) fn asking(&self, prompt: String, outputs: usize) -> Check {
        let expected = json!({ "prompt": prompt, "outputs": outputs });
        Check { expected_json: expected.to_string(), expected, ..self.check.clone() }
    }

    /// Each member's verdict from what the judge's check computed: `{"chosen":
    /// N}`, the index it chose, or `{"failed": REASON}`, where every member
    /// fails as promptfoo's do; an error verdict (the judge could not be
    /// asked) is every member's.
    pub(crate) fn verdicts(&self, computed: Result<Value, Verdict>, members: usize) -> Vec<Verdict> {
        let value = match computed {
            Ok(value) => value,
            Err(verdict) => return vec![verdict; members],
        };
        let chosen = match (&value["chosen"], &value["failed"]) {
            (Value::Number(n), _) => match n.as_u64().map(|n| n as usize).filter(|&n| n < members) {
                Some(index) => index,
                None => return vec![scored(Verdict::fail(format!("Invalid select-best verdict: {n}")), 0.0); members],
            },
            (_, Value::String(reason)) => return vec![scored(Verdict::fail(reason.clone()), 0.0); members],
            _ => {
                let message = format!("select-best's check gave {value}, not a chosen output");
                return vec![Verdict::error(ErrorKind::BadAnswer, message); members];
            }
        };
        (0..members)
            .map(|index| match index == chosen {
                true => scored(pass(format!("Output selected as the best: {}", self.criteria)), 1.0),
                false => scored(Verdict::fail(format!("Output not selected: {}", self.criteria)), 0.0),
            })
            .collect()
    }

    /// Its result on a member that answered.
    pub(crate) fn result(&self, verdict: Verdict) -> CheckResult {
        compared(SELECT_BEST_KEY, Value::String(self.criteria.clone()), verdict, self.line)
    }
}

impl MaxScore {
    /// Each member's verdict from its own checks' results (`None`: it
    /// has none, its request failed), promptfoo's `selectMaxScore`.
    pub(crate) fn verdicts(&self, members: &[Option<&[CheckResult]>]) -> Vec<Verdict> {
        let mut scores = Vec::with_capacity(members.len());
        for checks in members {
            let own: Vec<(usize, &CheckResult)> = checks
                .unwrap_or_default()
                .iter()
                .enumerate()
                .filter(|(_, check)| ![SELECT_BEST_KEY, MAX_SCORE_KEY].contains(&check.key.as_str()))
                .collect();
            if own.is_empty() {
                let why = "max-score requires at least one other assertion (besides max-score or select-best) to \
                           aggregate scores from";
                return vec![Verdict::error(ErrorKind::BadAnswer, why); members.len()];
            }
            let (mut total, mut weights) = (0.0, 0.0);
            for (index, check) in &own {
                let weight = self.weights.get(*index).copied().unwrap_or(1.0);
                total += check_score(check) * weight;
                weights += weight;
            }
            let score = match self.sum {
                true => total,
                false if weights > 0.0 => total / weights,
                false => 0.0,
            };
            scores.push((score, own.len(), weights));
        }
        let (mut best, mut winner) = (f64::NEG_INFINITY, 0);
        for (index, (score, _, _)) in scores.iter().enumerate() {
            if *score > best {
                (best, winner) = (*score, index);
            }
        }
        let meets = self.threshold.is_none_or(|threshold| best >= threshold);
        scores
            .iter()
            .enumerate()
            .map(|(index, &(score, count, weight))| {
                let verdict = if index == winner && meets {
                    scored(pass(format!("Selected as highest scoring output (score: {score:.3})")), 1.0)
                } else if score == best && !meets {
                    let threshold = self.threshold.unwrap_or_default();
                    scored(Verdict::fail(format!("Not selected - score {score:.3} below threshold {threshold}")), 0.0)
                } else {
                    scored(Verdict::fail(format!("Not selected (score: {score:.3}, max: {best:.3})")), 0.0)
                };
                let named = json!({ "maxScore": score, "assertionCount": count, "totalWeight": weight });
                Verdict { extras: Some(json!({ "named_scores": named })), ..verdict }
            })
            .collect()
    }

    /// Its result on a member that answered.
    pub(crate) fn result(&self, verdict: Verdict) -> CheckResult {
        compared(MAX_SCORE_KEY, self.expected.clone(), verdict, self.line)
    }
}

/// A rule's result on a member: its verdict on the member's answer text.
fn compared(key: &str, expected: Value, verdict: Verdict, line: Option<u32>) -> CheckResult {
    CheckResult {
        target: "text".into(),
        key: key.to_owned(),
        expected,
        actual: None,
        actual_is_answer: true,
        verdict,
        gate: true,
        line,
    }
}

/// A passing verdict decided by the host.
fn pass(message: String) -> Verdict {
    Verdict { outcome: Outcome::Pass, ..Verdict::fail(message) }
}

/// `verdict` with `score`.
fn scored(verdict: Verdict, score: f64) -> Verdict {
    Verdict { score: Some(score), ..verdict }
}
