//! The bounds on an exchange's whole time: connecting, the headers and
//! every streamed byte, however slowly the agent drips them (an idle timer
//! alone lets a keep-alive every few seconds hold a case forever). Owns who
//! set each bound (a turn's or the case's `timeout_in_seconds`, the run's
//! `--timeout`, assay.toml's `[cases] timeout_in_seconds`), so that a
//! timeout verdict names the bound that fired and how to raise it.

use crate::errors::ErrorKind;
use crate::job::RunError;
use std::time::Duration;
use tokio::time::Instant;

/// A sample's bound when neither its case nor the run sets one, unless
/// assay.toml's `[cases] timeout_in_seconds` says otherwise.
pub const DEFAULT_CASE_TIMEOUT: Duration = Duration::from_secs(300);

/// A run's bound on every sample, overriding the cases' own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunTimeout {
    /// How long a sample may take.
    pub length: Duration,
    /// Where the run was told it, for the verdict: `--timeout`, say.
    pub set_by: &'static str,
}

/// Who set a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// The turn's `timeout_in_seconds`.
    Interaction,
    /// The case's `timeout_in_seconds`.
    Case,
    /// The run's, overriding the case's.
    Run(&'static str),
    /// assay.toml's `[cases] timeout_in_seconds`, or its default.
    Default,
}

/// When a request must be over, and who said so.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    at: Instant,
    length: Duration,
    limit: Limit,
}

impl Deadline {
    /// The bound of a sample started at `started`: the run's, else the
    /// case's, else the default.
    pub(crate) fn sample(
        started: Instant,
        run: Option<RunTimeout>,
        case: Option<Duration>,
        default: Duration,
    ) -> Deadline {
        let (length, limit) = match (run, case) {
            (Some(run), _) => (run.length, Limit::Run(run.set_by)),
            (None, Some(case)) => (case, Limit::Case),
            (None, None) => (default, Limit::Default),
        };
        Deadline { at: started + length, length, limit }
    }

    /// The bounds of a turn started at `started` with its own
    /// `timeout_in_seconds` (if any) within this sample's bound: the one
    /// that ends the whole exchange (the earlier), and the one an
    /// in-process agent's sandbox gets. The default is not handed to the
    /// sandbox: its own deadline (a few seconds) is already a whole-time
    /// bound, and a lenient default must not lengthen it.
    pub(crate) fn turn(self, started: Instant, interaction: Option<Duration>) -> (Deadline, Option<Deadline>) {
        let interaction =
            interaction.map(|length| Deadline { at: started + length, length, limit: Limit::Interaction });
        let earlier = |a: Deadline, b: Option<Deadline>| match b {
            Some(b) if b.at < a.at => b,
            _ => a,
        };
        let whole = earlier(self, interaction);
        let sandbox = match self.limit {
            Limit::Default => interaction,
            _ => Some(earlier(self, interaction)),
        };
        (whole, sandbox)
    }

    /// When it fires.
    pub(crate) fn at(self) -> Instant {
        self.at
    }

    /// The time left from `now`.
    pub(crate) fn left(self, now: Instant) -> Duration {
        self.at.saturating_duration_since(now)
    }

    /// The verdict of turn `index` cut off by this bound while its request
    /// was out.
    pub(crate) fn error(self, index: usize) -> RunError {
        self.cut_off(index, "the request was cancelled")
    }

    /// The verdict of turn `index` cut off by this bound while its checks
    /// were evaluated (waiting on the judge): the calls they had yet to make
    /// are refused.
    pub(crate) fn checks_error(self, index: usize) -> RunError {
        self.cut_off(index, "its checks were stopped (the judge calls they had yet to make are not made)")
    }

    fn cut_off(self, index: usize, what: &str) -> RunError {
        let seconds = self.length.as_secs_f64();
        let turn = index + 1;
        let (kind, message) = match self.limit {
            Limit::Interaction => (
                ErrorKind::InteractionTimeout,
                format!(
                    "interaction {turn} exceeded its timeout_in_seconds of {seconds} s; {what}\n\n\
                     Consider raising the interaction's `timeout_in_seconds` in the case file"
                ),
            ),
            Limit::Case => (
                ErrorKind::CaseTimeout,
                format!(
                    "the case's timeout_in_seconds of {seconds} s fired during interaction {turn}; {what}\n\n\
                     Consider raising the case's `timeout_in_seconds` in the case file"
                ),
            ),
            Limit::Run(set_by) => (
                ErrorKind::CaseTimeout,
                format!(
                    "the run's {set_by} of {seconds} s fired during interaction {turn}; {what}\n\n\
                     Consider a larger {set_by}"
                ),
            ),
            Limit::Default => (
                ErrorKind::CaseTimeout,
                format!(
                    "the default timeout of {seconds} s (`[cases] timeout_in_seconds` of assay.toml) fired during \
                     interaction {turn}; {what}\n\nConsider `timeout_in_seconds` in the case \
                     file, or raising `[cases] timeout_in_seconds` in assay.toml"
                ),
            ),
        };
        RunError { kind, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn the_run_overrides_the_case_which_overrides_the_default() {
        let now = Instant::now();
        let run = RunTimeout { length: 2 * SECOND, set_by: "--timeout" };
        let of = |run, case| Deadline::sample(now, run, case, 9 * SECOND);
        assert_eq!(of(Some(run), Some(SECOND)).limit, Limit::Run("--timeout"));
        assert_eq!(of(Some(run), Some(SECOND)).at, now + 2 * SECOND);
        assert_eq!(of(None, Some(SECOND)).limit, Limit::Case);
        assert_eq!(of(None, None).limit, Limit::Default);
        assert_eq!(of(None, None).at, now + 9 * SECOND);
    }

    #[test]
    fn a_turn_ends_at_the_earlier_bound_and_the_sandbox_never_gets_the_default() {
        let now = Instant::now();
        let default = Deadline::sample(now, None, None, 9 * SECOND);
        let (whole, sandbox) = default.turn(now, None);
        assert_eq!((whole.limit, sandbox.map(|s| s.limit)), (Limit::Default, None));
        // A turn's bound longer than the default still reaches the sandbox.
        let (whole, sandbox) = default.turn(now, Some(20 * SECOND));
        assert_eq!((whole.limit, sandbox.map(|s| s.limit)), (Limit::Default, Some(Limit::Interaction)));
        let case = Deadline::sample(now, None, Some(3 * SECOND), 9 * SECOND);
        let (whole, sandbox) = case.turn(now, Some(SECOND));
        assert_eq!((whole.limit, sandbox.map(|s| s.limit)), (Limit::Interaction, Some(Limit::Interaction)));
        let (whole, sandbox) = case.turn(now, Some(5 * SECOND));
        assert_eq!((whole.limit, sandbox.map(|s| s.limit)), (Limit::Case, Some(Limit::Case)));
    }

    #[test]
    fn each_verdict_names_its_bound_and_how_to_raise_it() {
        let now = Instant::now();
        let run = RunTimeout { length: SECOND, set_by: "--timeout" };
        let message = |deadline: Deadline| deadline.error(0).message;
        assert!(message(Deadline::sample(now, Some(run), None, SECOND)).ends_with("Consider a larger --timeout"));
        assert!(message(Deadline::sample(now, None, Some(SECOND), SECOND)).contains("the case's timeout_in_seconds"));
        let default = Deadline::sample(now, None, None, SECOND).error(1);
        assert_eq!(default.kind, ErrorKind::CaseTimeout);
        assert!(default.message.starts_with(
            "the default timeout of 1 s (`[cases] timeout_in_seconds` of assay.toml) fired during interaction 2"
        ));
    }
}
