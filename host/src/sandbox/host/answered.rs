//! [`Answered`]: what a capability backend (the judge, the embeddings
//! backend) gives back, with the time it waited on the network, the only
//! time kept off the asking guest's deadline.

use std::time::Duration;

/// A capability backend's answer, and how long it waited on the network for
/// it.
#[derive(Clone, Debug, PartialEq)]
pub struct Answered<T> {
    /// The answer, or why there is none.
    pub answer: Result<T, String>,
    /// Time spent waiting on the network: zero for an answer from a cache
    /// or a refusal (a spent budget, a bad input).
    pub waited: Duration,
}

impl<T> Answered<T> {
    /// An answer given without waiting on anything.
    pub fn at_once(answer: Result<T, String>) -> Answered<T> {
        Answered { answer, waited: Duration::ZERO }
    }
}
