//! From a response block to verdicts.
//!
//! The main type is the [`Verdict`] of one check.

mod verdict;

pub use verdict::{Outcome, Verdict};
