//! From a response block to verdicts.
//!
//! The planner ([`plan_case`]) turns each `response` block of a test case
//! into a flat list of [`Check`]s; [`evaluate`] runs the checks on one agent
//! response through the plugins, one batched call per plugin, and returns a
//! [`CheckResult`] with a [`Verdict`] for each.

mod dispatch;
mod plan;
mod verdict;

pub use dispatch::{CheckResult, PluginLog, ResponseView, evaluate};
pub use plan::{CasePlan, Check, KeySet, Target, plan_case, plan_entry, plan_response};
pub use verdict::{Outcome, Verdict};
