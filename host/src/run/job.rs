//! What the scheduler runs: a [`Job`] is ordered turns (each a request and
//! the checks planned on its answer), the connections to run them over, a
//! sample count and a stop rule. Every workflow compiles into jobs: a test
//! case file with its plan ([`Job::from_case`]), a scenario (`assay eval`),
//! a validation's mock response (`assay validate`, replayed: no agent is
//! asked). A job with a [`Recording`] is answered from it, never by an
//! agent (`assay validate`, `assay run --replay`). The runner knows nothing
//! else.

use crate::case::{ChatFilter, Connection, SuccessRatio, TestCase};
use crate::check::{CasePlan, Check};
use crate::plugin::Registry;
use crate::run::prerequisite::Prerequisite;
use crate::run::replay::Recording;
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
    /// The checks on the answer.
    pub checks: Vec<Check>,
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
            checks,
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
                checks,
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

    /// How many checks of its busiest turn ask the judge (their plugin is
    /// granted a configured judge): they are asked at once, and the job's
    /// time goes into waiting on the network, not the CPU. Zero when none
    /// does.
    pub fn judge_checks(&self, registry: &Registry) -> usize {
        let asks = |check: &&Check| registry.plugin_for(&check.key).is_some_and(|plugin| plugin.judge().is_some());
        self.turns.iter().map(|turn| turn.checks.iter().filter(asks).count()).max().unwrap_or(0)
    }
}
