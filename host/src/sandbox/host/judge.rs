//! The `judge` interface: forwards a plugin's prompt to the judge backend the
//! embedder configured, or explains how to configure one. Each prompt takes
//! one call from the guest call's capability budget.

use crate::sandbox::bindings::matcher::assay::plugin::judge::Host;
use crate::sandbox::host::answered::Answered;
use crate::sandbox::host::budget::CapabilityView;

/// A language-model judge backend. Calls block the calling thread (plugins
/// run on blocking threads), so implementations bound them with their own
/// timeout: epochs do not interrupt a guest waiting in a host call.
pub trait Judge: Send + Sync {
    /// Answers one prompt, saying how long it waited on the network for
    /// the answer (zero for a cached answer or a refusal): only that wait
    /// is kept off the asking plugin's deadline.
    fn complete(&self, prompt: &str) -> Answered<String>;
}

/// What a plugin hears when no judge is configured.
pub const NO_JUDGE: &str = "no judge is configured: set [judge] in assay.toml or ASSAY_JUDGE_URL";

impl Host for CapabilityView<'_, dyn Judge> {
    fn complete(&mut self, prompt: String) -> Result<String, String> {
        self.ask("judge", NO_JUDGE, |judge| judge.complete(&prompt))
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
        fn complete(&self, prompt: &str) -> Answered<String> {
            Answered::at_once(Ok(format!("pass: {prompt}")))
        }
    }

    #[test]
    fn forwards_the_prompt_or_says_how_to_configure_a_judge() {
        let clock = CallClock::new(Duration::from_secs(1));
        let mut budget = CapabilityBudget::new(clock.clone());
        budget.arm(1, clock);
        let mut view = CapabilityView::<dyn Judge> { backend: Some(&Passes), budget: &mut budget };
        assert_eq!(view.complete("is it?".into()), Ok("pass: is it?".into()));
        let refused = view.complete("again?".into()).unwrap_err();
        assert!(refused.contains("has used every judge call it may make"), "{refused}");
        let mut none = CapabilityView::<dyn Judge> { backend: None, budget: &mut budget };
        assert_eq!(none.complete("is it?".into()), Err(NO_JUDGE.to_owned()));
    }
}
