//! The `judge` interface, in both versions: forwards a plugin's prompt to
//! the judge backend the embedder configured, or says why it cannot (0.2.0
//! with a typed `capability-error`, 0.1.0 with a sentence explaining how to
//! configure one). Each prompt takes one call from the guest call's
//! capability budget.

use crate::sandbox::bindings::{matcher_0_1, matcher_0_2, matcher_0_3, matcher_types};
use crate::sandbox::host::answered::Answered;
use crate::sandbox::host::budget::{CapabilitySpend, CapabilityView};

/// A language-model judge backend. Calls block the calling thread (plugins
/// run on blocking threads), so implementations bound them with their own
/// timeout: epochs do not interrupt a guest waiting in a host call.
pub trait Judge: Send + Sync {
    /// Answers one prompt, saying how long it waited on the network for
    /// the answer (zero for a cached answer or a refusal): only that wait
    /// is kept off the asking plugin's deadline.
    /// `spend` is the asking scope's (a run, a served request): a budget
    /// of requests counts there.
    fn complete(&self, prompt: &str, spend: &CapabilitySpend) -> Answered<String>;

    /// How many prompts it answers at once: the host asks it up to this
    /// many at a time (the checks of one response overlap, and the runner
    /// admits enough cases to keep it busy). One unless it says otherwise.
    fn concurrency(&self) -> usize {
        1
    }
}

/// What a 0.1.0 plugin hears when no judge is configured (a 0.2.0 plugin
/// hears `not-configured`).
pub const NO_JUDGE: &str = "no judge is configured: set [judge] in assay.toml or ASSAY_JUDGE_URL";

impl matcher_0_2::assay::plugin::judge::Host for CapabilityView<'_, dyn Judge> {
    fn complete(&mut self, prompt: String) -> Result<String, matcher_types::CapabilityError> {
        self.ask("judge", |judge, spend| judge.complete(&prompt, spend)).map_err(Into::into)
    }
}

impl matcher_0_3::assay::plugin::judge::Host for CapabilityView<'_, dyn Judge> {
    fn complete(
        &mut self,
        prompt: String,
    ) -> Result<String, matcher_0_3::assay::plugin::types::CapabilityError> {
        self.ask("judge", |judge, spend| judge.complete(&prompt, spend)).map_err(Into::into)
    }
}

impl matcher_0_1::assay::plugin::judge::Host for CapabilityView<'_, dyn Judge> {
    fn complete(&mut self, prompt: String) -> Result<String, String> {
        self.ask("judge", |judge, spend| judge.complete(&prompt, spend)).map_err(|e| e.into_sentence("judge", NO_JUDGE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::call_clock::CallClock;
    use crate::sandbox::host::budget::CapabilityBudget;
    use std::time::Duration;

    /// Answers every prompt with a pass.
    struct Passes;

    impl Judge for Passes {
        fn complete(&self, prompt: &str, _: &CapabilitySpend) -> Answered<String> {
            Answered::at_once(Ok(format!("pass: {prompt}")))
        }
    }

    use matcher_0_1::assay::plugin::judge::Host as V0_1;
    use matcher_0_2::assay::plugin::judge::Host as V0_2;
    use matcher_types::CapabilityError;

    #[test]
    fn a_0_1_plugin_gets_the_answer_or_a_sentence() {
        let clock = CallClock::new(Duration::from_secs(1));
        let mut budget = CapabilityBudget::new(clock.clone());
        budget.arm(1, clock, None);
        let mut view = CapabilityView::<dyn Judge>::new(true, Some(&Passes), &mut budget);
        assert_eq!(V0_1::complete(&mut view, "is it?".into()), Ok("pass: is it?".into()));
        let refused = V0_1::complete(&mut view, "again?".into()).unwrap_err();
        assert!(refused.contains("has used every judge call it may make"), "{refused}");
        let mut none = CapabilityView::<dyn Judge>::new(true, None, &mut budget);
        assert_eq!(V0_1::complete(&mut none, "is it?".into()), Err(NO_JUDGE.to_owned()));
    }

    #[test]
    fn a_0_2_plugin_gets_the_answer_or_the_kind_of_failure() {
        let clock = CallClock::new(Duration::from_secs(1));
        let mut budget = CapabilityBudget::new(clock.clone());
        budget.arm(1, clock, None);
        let mut view = CapabilityView::<dyn Judge>::new(true, Some(&Passes), &mut budget);
        assert_eq!(V0_2::complete(&mut view, "is it?".into()).ok(), Some("pass: is it?".into()));
        let refused = V0_2::complete(&mut view, "again?".into()).unwrap_err();
        assert!(
            matches!(&refused, CapabilityError::Failed(r) if r.contains("has used every judge call it may make")),
            "{refused:?}"
        );
        let mut none = CapabilityView::<dyn Judge>::new(true, None, &mut budget);
        assert!(matches!(V0_2::complete(&mut none, "is it?".into()), Err(CapabilityError::NotConfigured)));
        let mut ungranted = CapabilityView::<dyn Judge>::new(false, Some(&Passes), &mut budget);
        assert!(matches!(V0_2::complete(&mut ungranted, "is it?".into()), Err(CapabilityError::NotGranted)));
    }
}
