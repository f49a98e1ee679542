//! What the scheduler runs: a [`Job`] is ordered turns (each a request and
//! the checks planned on its answer), the connections to run them over, a
//! sample count and a stop rule. Every workflow compiles into jobs: a test
//! case file with its plan ([`Job::from_case`]), a scenario (`assay eval`),
//! a validation's mock response (`assay validate`, replayed: no agent is
//! asked). A job with a [`Recording`] is answered from it, never by an
//! agent (`assay validate`, `assay run --replay`). The runner knows nothing
//! else.

use crate::case::{ChatFilter, Connection, SuccessRatio, TestCase};
use crate::check::{CasePlan, Check, CheckResult, check_score};
use crate::job::Prerequisite;
use crate::job::Recording;
use crate::job::group::InGroup;
use crate::plugin::Registry;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// One unit of work for the scheduler, reported as one case.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// A stable id, unique in a run (a case's path id, a scenario's id).
    pub id: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The agent asked (empty for a replayed job).
    pub agent: String,
    /// The connections each sample runs the turns over, each from a fresh
    /// conversation.
    pub connections: Vec<Connection>,
    /// How many samples run, and how many must pass: the stop rule (a run
    /// in exhaustive mode runs every sample).
    pub success_ratio: SuccessRatio,
    /// The bound on one sample (all its turns).
    pub timeout: Option<Duration>,
    /// Request metadata, sent as HTTP headers on every request.
    pub metadata: Vec<(String, String)>,
    /// The conversation, in order.
    pub turns: Vec<Turn>,
    /// The answers to give instead of asking an agent, per sample ×
    /// connection × turn; what it has no answer for is an error verdict.
    pub recording: Option<Arc<Recording>>,
    /// What must be done once before its first request (a suite's setup of
    /// the job's cluster state), shared with the other jobs that need it;
    /// skipped when the job is answered from a recording.
    pub prerequisite: Option<Arc<Prerequisite>>,
    /// The comparison it is a member of, which decides it with the other
    /// members (promptfoo's `select-best`, `max-score`).
    pub grouped: Option<InGroup>,
}

/// One turn: what is sent, and the checks on the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// The user message.
    pub text: String,
    /// Private data sent with the message.
    pub sly_data: Option<Map<String, Value>>,
    /// How much the server should send back.
    pub chat_filter: ChatFilter,
    /// Whether this turn continues the conversation.
    pub continue_conversation: bool,
    /// The bound on this one request.
    pub timeout: Option<Duration>,
    /// Values computed from the answer before the checks run, in order
    /// (promptfoo's `transform`): each a check whose plugin gives the value
    /// in its extras as `value`, and which may read the ones before it.
    /// Checks read the `N`-th as [`crate::check::Target::Derived`]`(N)`; one that cannot
    /// be computed is the error verdict of every check that reads it.
    pub derived: Vec<Check>,
    /// The checks on the answer.
    pub checks: Vec<Check>,
    /// How the checks' verdicts decide the turn.
    pub pass_rule: PassRule,
}

/// How a turn's check verdicts decide whether it passed.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum PassRule {
    /// Every gating check passes (test case files, suites, scenarios).
    #[default]
    EveryCheck,
    /// promptfoo's test `threshold`: the mean of the checks' scores,
    /// weighted, reaches `threshold`, whatever each check's verdict. A
    /// check's score is [`check_score`]'s (an error's: 0); `weights` has one
    /// weight per check (a weight of 0 leaves the check out), and no weight
    /// at all makes the score 0.
    WeightedScore {
        /// The lowest passing score.
        threshold: f64,
        /// Each check's weight, in check order.
        weights: Vec<f64>,
    },
    /// promptfoo's `assertScoringFunction`: a function of the checks'
    /// results, whose verdict the runner appends to them and which alone
    /// decides the turn.
    ScoredBy(Box<crate::job::ScoredBy>),
}

impl PassRule {
    /// Whether `checks` (the turn's, in order) let the turn pass.
    pub fn passes(&self, checks: &[CheckResult]) -> bool {
        match self {
            PassRule::EveryCheck => checks.iter().all(CheckResult::lets_pass),
            PassRule::WeightedScore { threshold, weights } => weighted_score(checks, weights) >= *threshold,
            PassRule::ScoredBy(_) => checks.last().is_some_and(|scored| scored.verdict.passed()),
        }
    }
}

/// The weighted mean of the checks' scores (see
/// [`PassRule::WeightedScore`]); 0 when the weights sum to 0.
pub fn weighted_score(checks: &[CheckResult], weights: &[f64]) -> f64 {
    let (mut total, mut weight_sum) = (0.0, 0.0);
    for (check, weight) in checks.iter().zip(weights.iter().copied().chain(std::iter::repeat(1.0))) {
        total += check_score(check) * weight;
        weight_sum += weight;
    }
    if weight_sum > 0.0 { total / weight_sum } else { 0.0 }
}

impl Turn {
    /// A turn sending `text` with the defaults of a test case's
    /// interaction, checked by `checks`.
    pub fn new(text: impl Into<String>, checks: Vec<Check>) -> Turn {
        Turn {
            text: text.into(),
            sly_data: None,
            chat_filter: ChatFilter::Minimal,
            continue_conversation: true,
            timeout: None,
            derived: Vec::new(),
            checks,
            pass_rule: PassRule::EveryCheck,
        }
    }
}

impl Job {
    /// A test case and its plan as a job: an interaction becomes a turn
    /// with the checks planned on its response.
    pub fn from_case(case: TestCase, plan: CasePlan) -> Job {
        let turns = case
            .interactions
            .into_iter()
            .zip(plan.interactions)
            .map(|(interaction, checks)| Turn {
                text: interaction.text.unwrap_or_default(),
                sly_data: interaction.sly_data,
                chat_filter: interaction.chat_filter,
                continue_conversation: interaction.continue_conversation,
                timeout: interaction.timeout,
                derived: Vec::new(),
                checks,
                pass_rule: PassRule::EveryCheck,
            })
            .collect();
        Job {
            id: case.id,
            file: case.file,
            agent: case.agent,
            connections: case.connections,
            success_ratio: case.success_ratio,
            timeout: case.timeout,
            metadata: case.metadata,
            turns,
            recording: None,
            prerequisite: None,
            grouped: None,
        }
    }

    /// How many checks in all.
    pub fn check_count(&self) -> usize {
        self.turns.iter().map(|turn| turn.checks.len()).sum()
    }

    /// Whether every answer comes from this process (recorded answers,
    /// in-process agents): then the job's samples are CPU work, run inline
    /// on one blocking thread rather than spread over async tasks.
    pub fn is_in_process(&self) -> bool {
        self.recording.is_some() || self.connections.iter().all(|connection| connection.is_in_process())
    }

    /// Whether any of its checks' plugins may wait on the network (it is
    /// granted a judge or an embeddings backend that is configured).
    pub fn asks_network(&self, registry: &Registry) -> bool {
        let asks = |check: &Check| registry.plugin_for(&check.key).is_some_and(|plugin| plugin.asks_network());
        self.turns.iter().flat_map(|turn| &turn.checks).any(asks)
    }

    /// How many checks of its busiest turn ask the judge (their plugin is
    /// granted a configured judge): they are asked at once, and the job's
    /// time goes into waiting on the network, not the CPU. Zero when none
    /// does.
    pub fn judge_checks(&self, registry: &Registry) -> usize {
        let asks = |check: &&Check| registry.plugin_for(&check.key).is_some_and(|plugin| plugin.judge().is_some());
        self.turns.iter().map(|turn| turn.checks.iter().filter(asks).count()).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Outcome, Verdict};
    use serde_json::json;

    fn check(key: &str, outcome: Outcome, score: Option<f64>, extras: Option<serde_json::Value>) -> CheckResult {
        let verdict = Verdict { outcome, score, extras, ..Verdict::fail("") };
        CheckResult {
            target: "text".into(),
            key: key.into(),
            expected: json!(null),
            actual: None,
            actual_is_answer: false,
            verdict,
            gate: true,
            line: None,
        }
    }

    #[test]
    fn a_weighted_score_counts_each_check_as_promptfoo_does() {
        let scored = check("pf_rouge_n", Outcome::Fail, Some(0.5), None);
        let negated_plainly = check("not_keywords", Outcome::Pass, Some(0.0), None);
        let negated_declared = check("not_pf_rouge_n", Outcome::Pass, Some(0.5), Some(json!({"negated": {}})));
        let errored = check("pf_similar", Outcome::Error, Some(0.9), None);
        assert_eq!(check_score(&scored), 0.5);
        assert_eq!(check_score(&negated_plainly), 1.0);
        assert_eq!(check_score(&negated_declared), 0.5);
        assert_eq!(check_score(&errored), 0.0);
        let checks = [scored, negated_plainly];
        assert_eq!(weighted_score(&checks, &[3.0, 1.0]), 0.625);
        assert_eq!(weighted_score(&checks, &[0.0, 0.0]), 0.0);
        let rule = PassRule::WeightedScore { threshold: 0.625, weights: vec![3.0, 1.0] };
        assert!(rule.passes(&checks));
        assert!(!PassRule::EveryCheck.passes(&checks));
    }
}
