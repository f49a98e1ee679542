//! The `embeddings` interface: forwards a plugin's texts to the embeddings
//! backend the embedder configured, or explains how to configure one. Each
//! request takes one call from the guest call's capability budget.

use crate::sandbox::bindings::matcher::assay::plugin::embeddings::Host;
use crate::sandbox::host::answered::Answered;
use crate::sandbox::host::budget::CapabilityView;

/// An embeddings backend. Calls block the calling thread and are bounded by
/// the implementation's own timeout; each says how long it waited on the
/// network (zero when every vector was cached), which alone is kept off the
/// asking plugin's deadline.
pub trait Embeddings: Send + Sync {
    /// One sentence vector per text.
    fn embed(&self, texts: &[String]) -> Answered<Vec<Vec<f32>>>;

    /// One vector per token of each text; an error when the backend only
    /// produces sentence vectors.
    fn embed_tokens(&self, texts: &[String]) -> Answered<Vec<Vec<Vec<f32>>>>;
}

/// What a plugin hears when no embeddings backend is configured.
pub const NO_EMBEDDINGS: &str = "no embeddings backend is configured: set [embeddings] in assay.toml";

impl Host for CapabilityView<'_, dyn Embeddings> {
    fn embed(&mut self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, String> {
        self.ask("embeddings", NO_EMBEDDINGS, |backend| backend.embed(&texts))
    }

    fn embed_tokens(&mut self, texts: Vec<String>) -> Result<Vec<Vec<Vec<f32>>>, String> {
        self.ask("embeddings", NO_EMBEDDINGS, |backend| backend.embed_tokens(&texts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::call_clock::CallClock;
    use crate::sandbox::host::budget::CapabilityBudget;
    use std::time::Duration;

    /// One vector of each text's length; token vectors refused.
    struct Lengths;

    impl Embeddings for Lengths {
        fn embed(&self, texts: &[String]) -> Answered<Vec<Vec<f32>>> {
            Answered::at_once(Ok(texts.iter().map(|t| vec![t.len() as f32]).collect()))
        }

        fn embed_tokens(&self, _: &[String]) -> Answered<Vec<Vec<Vec<f32>>>> {
            Answered::at_once(Err("sentence vectors only".into()))
        }
    }

    #[test]
    fn both_calls_ask_the_backend_and_take_from_the_budget() {
        let clock = CallClock::new(Duration::from_secs(1));
        let mut budget = CapabilityBudget::new(clock.clone());
        budget.arm(2, clock);
        let mut view = CapabilityView::<dyn Embeddings> { backend: Some(&Lengths), budget: &mut budget };
        assert_eq!(view.embed(vec!["abc".into()]), Ok(vec![vec![3.0]]));
        assert_eq!(view.embed_tokens(vec!["abc".into()]), Err("sentence vectors only".into()));
        let refused = view.embed(vec!["abc".into()]).unwrap_err();
        assert!(refused.contains("has used every embeddings call it may make"), "{refused}");
    }

    #[test]
    fn without_a_backend_says_how_to_configure_one() {
        let mut budget = CapabilityBudget::new(CallClock::new(Duration::from_secs(1)));
        let mut view = CapabilityView::<dyn Embeddings> { backend: None, budget: &mut budget };
        assert_eq!(view.embed_tokens(vec!["abc".into()]), Err(NO_EMBEDDINGS.to_owned()));
    }
}
