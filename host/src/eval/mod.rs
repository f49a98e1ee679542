//! Evaluation workflows on the one scheduler: each compiles its files into
//! jobs ([`crate::job::Job`]) and scores the run with an aggregating
//! reporter of its events, so any other reporter (a terminal, the results
//! directory, an embedder's own) sees the same cases.
//!
//! - the Assessor ([`FailureModes`], [`assess`]): every sample of a case,
//!   and its failures grouped into failure modes (optionally classified by
//!   a judge too);
//! - scenario evaluation ([`Evaluator`], [`ScenarioScores`]): problems sent
//!   to an agent, each answer judged against weighted, categorized
//!   expectations, and gated by the required ones ([`ExpectationScore`]);
//! - judge validation ([`Validator`], [`Agreement`]): mock responses
//!   replayed and judged against expectations, and compared with the
//!   results a trustworthy judge gives.
//!
//! Scores are weighted [`Tally`]s; expectations become ordinary checks, so
//! any matcher key can judge them.

mod assess;
mod expectations;
mod gate;
mod scenario;
mod score;
mod validate;

pub use assess::{Assessment, Example, Failure, FailureMode, FailureModes, assess, classify_with_judge, shape};
pub use gate::ExpectationScore;
pub use scenario::{
    EvalOptions, EvalReport, Evaluator, ExpectationResult, ScenarioResult, ScenarioSample, ScenarioScores, scenario_id,
    scenario_jobs,
};
pub use score::{CategoryTallies, Tally};
pub use validate::{
    Agreement, Confusion, Judgment, MockResult, ValidateReport, ValidationResult, Validator, validation_jobs,
};
