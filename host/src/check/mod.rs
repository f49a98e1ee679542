//! Checks: what a response block asks, planned before anything runs.
//!
//! The planner ([`plan_case`]) turns each `response` block of a test case
//! into a flat list of [`Check`]s; a check's [`Verdict`] and the
//! [`CheckResult`] reports show are defined here too. Running the checks on
//! an answer is the plugins' part (`crate::plugin::evaluate`).

mod plan;
mod verdict;

pub use plan::{CasePlan, Check, KeySet, Target, check_connections, plan_case, plan_entry, plan_response};
pub use verdict::{ACTUAL_PREVIEW_CHARS, CheckAnswer, CheckResult, Outcome, Verdict, actual_preview, check_score};
