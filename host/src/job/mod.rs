//! What the scheduler runs and what it gives back, the floor between the
//! formats that read cases and the runner that runs them:
//!
//! - [`Job`] (`compiled.rs`): a case compiled to ordered turns, connections, a
//!   sample count and a stop rule; every format and workflow compiles into
//!   jobs;
//! - pending cases (`pending.rs`): a [`CaseReader`] reads and plans one case
//!   when its turn comes, a [`CaseSource`] feeds them to the runner a
//!   bounded distance ahead, [`DistinctIds`] keeps their ids unique;
//! - [`Prerequisite`] (`prerequisite.rs`): work done once before the jobs
//!   that need it (a suite's setup of a cluster state);
//! - [`Recording`] and [`Replay`] (`recording.rs`): answers recorded once and
//!   given again without asking an agent;
//! - [`CaseGroup`] (`group.rs`): cases run together, compared (promptfoo's
//!   `select-best`, `max-score`) or in turn (`storeOutputAs`);
//! - [`ScoredBy`] (`scoring.rs`): a turn decided by a function of its
//!   checks' results (promptfoo's `assertScoringFunction`);
//! - outcomes (`outcome.rs`): the [`CaseResult`] of each case, the lines of
//!   `results.jsonl`.
//!
//! It knows nothing of the scheduler ([`crate::run`]), which imports it.

mod compiled;
mod group;
mod outcome;
mod pending;
mod prerequisite;
mod recording;
mod scoring;

pub use compiled::{Job, PassRule, Turn, weighted_score};
pub use group::{CaseGroup, CompareRule, Deciding, InGroup, InTurn, Order};
pub(crate) use group::{Publisher, output_of};
pub use outcome::{
    CaseResult, CaseStatus, ConnectionRun, InteractionResult, MAX_KEPT_ANSWER_BYTES, MAX_RESULT_LINE_BYTES,
    RESULTS_FILE, RequestRecord, ResponseRecord, RunError, SampleResult,
};
pub use pending::{
    BrokenCase, CaseAdjustment, CaseFilter, CaseReader, CaseSource, DistinctIds, LoadedCase, PendingCase, PendingCases,
    load_cases,
};
#[cfg(any(test, feature = "internals"))]
pub use pending::with_distinct_ids;
pub use prerequisite::{Prerequisite, PrerequisiteWork};
pub(crate) use recording::json_error;
pub use recording::{RecordedAnswer, Recording, Replay};
pub use scoring::{ScoredBy, component_results, named_scores};
