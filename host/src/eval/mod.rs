//! Evaluation workflows on top of runs and checks:
//!
//! - the Assessor ([`assess`]): every sample of a case, and its failures
//!   grouped into failure modes (optionally classified by a judge too);
//! - scenario evaluation ([`Evaluator`]): problems sent to an agent, each
//!   answer judged against weighted, categorized expectations;
//! - judge validation ([`Validator`]): mock responses judged against
//!   expectations and compared with the results a trustworthy judge gives.
//!
//! Scores are weighted [`Tally`]s; expectations become ordinary checks, so
//! any matcher key can judge them.

mod assess;
mod expectations;
mod scenario;
mod score;
mod validate;

pub use assess::{Assessment, Example, Failure, FailureMode, assess, classify_with_judge, shape};
pub use scenario::{EvalOptions, EvalReport, Evaluator, ExpectationResult, ScenarioResult, ScenarioSample};
pub use score::{CategoryTallies, Tally};
pub use validate::{Confusion, Judgment, MockResult, ValidateReport, ValidationResult, Validator};
