//! The `judge` interface: forwards a plugin's prompt to the judge backend the
//! embedder configured, or explains how to configure one.

use crate::plugin::bindings::matcher::assay::plugin::judge::Host;
use crate::plugin::host::Answered;
use crate::plugin::sandbox::SandboxState;

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

impl Host for SandboxState {
    fn complete(&mut self, prompt: String) -> Result<String, String> {
        let Some(judge) = self.capabilities.judge.clone() else { return Err(NO_JUDGE.to_owned()) };
        self.take_capability_call("judge")?;
        let answered = judge.complete(&prompt);
        self.clock.waited(answered.waited);
        answered.answer
    }
}
