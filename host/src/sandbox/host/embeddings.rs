//! The `embeddings` interface, in both versions: forwards a plugin's texts
//! to the embeddings backend the embedder configured, or says why it cannot
//! (0.2.0 with a typed `capability-error`, 0.1.0 with a sentence explaining
//! how to configure one). Each request takes one call from the guest call's
//! capability budget.

use crate::sandbox::bindings::{matcher_0_1, matcher_0_2, matcher_0_3, matcher_types};
use crate::sandbox::host::answered::Answered;
use crate::sandbox::host::budget::{CapabilitySpend, CapabilityView};
use crate::sandbox::host::capability_error::CapabilityError;

/// An embeddings backend. Calls block the calling thread and are bounded by
/// the implementation's own timeout; each says how long it waited on the
/// network (zero when every vector was cached), which alone is kept off the
/// asking plugin's deadline.
pub trait Embeddings: Send + Sync {
    /// One sentence vector per text.
    /// `spend` is the asking scope's (a run, a served request): a budget
    /// of requests counts there.
    fn embed(&self, texts: &[String], spend: &CapabilitySpend) -> Answered<Vec<Vec<f32>>>;

    /// One vector per token of each text; an error when the backend only
    /// produces sentence vectors.
    fn embed_tokens(&self, texts: &[String], spend: &CapabilitySpend) -> Answered<Vec<Vec<Vec<f32>>>>;
}

/// What a 0.1.0 plugin hears when no embeddings backend is configured (a
/// 0.2.0 plugin hears `not-configured`).
pub const NO_EMBEDDINGS: &str = "no embeddings backend is configured: set [embeddings] in assay.toml";

impl matcher_0_2::assay::plugin::embeddings::Host for CapabilityView<'_, dyn Embeddings> {
    fn embed(&mut self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, matcher_types::CapabilityError> {
        self.ask("embeddings", |backend, spend| backend.embed(&texts, spend)).map_err(Into::into)
    }

    fn embed_tokens(&mut self, texts: Vec<String>) -> Result<Vec<Vec<Vec<f32>>>, matcher_types::CapabilityError> {
        self.ask("embeddings", |backend, spend| backend.embed_tokens(&texts, spend)).map_err(Into::into)
    }
}

impl matcher_0_3::assay::plugin::embeddings::Host for CapabilityView<'_, dyn Embeddings> {
    fn embed(&mut self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, matcher_0_3::assay::plugin::types::CapabilityError> {
        self.ask("embeddings", |backend, spend| backend.embed(&texts, spend)).map_err(Into::into)
    }

    fn embed_tokens(
        &mut self,
        texts: Vec<String>,
    ) -> Result<Vec<Vec<Vec<f32>>>, matcher_0_3::assay::plugin::types::CapabilityError> {
        self.ask("embeddings", |backend, spend| backend.embed_tokens(&texts, spend)).map_err(Into::into)
    }
}

impl matcher_0_1::assay::plugin::embeddings::Host for CapabilityView<'_, dyn Embeddings> {
    fn embed(&mut self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, String> {
        let sentence = |e: CapabilityError| e.into_sentence("embeddings", NO_EMBEDDINGS);
        self.ask("embeddings", |backend, spend| backend.embed(&texts, spend)).map_err(sentence)
    }

    fn embed_tokens(&mut self, texts: Vec<String>) -> Result<Vec<Vec<Vec<f32>>>, String> {
        let sentence = |e: CapabilityError| e.into_sentence("embeddings", NO_EMBEDDINGS);
        self.ask("embeddings", |backend, spend| backend.embed_tokens(&texts, spend)).map_err(sentence)
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
        fn embed(&self, texts: &[String], _: &CapabilitySpend) -> Answered<Vec<Vec<f32>>> {
            Answered::at_once(Ok(texts.iter().map(|t| vec![t.len() as f32]).collect()))
        }

        fn embed_tokens(&self, _: &[String], _: &CapabilitySpend) -> Answered<Vec<Vec<Vec<f32>>>> {
            Answered::at_once(Err("sentence vectors only".into()))
        }
    }

    use matcher_0_1::assay::plugin::embeddings::Host as V0_1;
    use matcher_0_2::assay::plugin::embeddings::Host as V0_2;

    #[test]
    fn both_calls_ask_the_backend_and_take_from_the_budget() {
        let clock = CallClock::new(Duration::from_secs(1));
        let mut budget = CapabilityBudget::new(clock.clone());
        budget.arm(3, clock, None);
        let mut view = CapabilityView::<dyn Embeddings>::new(true, Some(&Lengths), &mut budget);
        assert_eq!(V0_1::embed(&mut view, vec!["abc".into()]), Ok(vec![vec![3.0]]));
        assert_eq!(V0_1::embed_tokens(&mut view, vec!["abc".into()]), Err("sentence vectors only".into()));
        let failed = V0_2::embed_tokens(&mut view, vec!["abc".into()]);
        assert!(matches!(&failed, Err(matcher_types::CapabilityError::Failed(r)) if r == "sentence vectors only"));
        let refused = V0_1::embed(&mut view, vec!["abc".into()]).unwrap_err();
        assert!(refused.contains("has used every embeddings call it may make"), "{refused}");
    }

    #[test]
    fn without_a_backend_a_0_1_plugin_hears_how_to_configure_one_and_a_0_2_plugin_the_kind() {
        let mut budget = CapabilityBudget::new(CallClock::new(Duration::from_secs(1)));
        let mut view = CapabilityView::<dyn Embeddings>::new(true, None, &mut budget);
        assert_eq!(V0_1::embed_tokens(&mut view, vec!["abc".into()]), Err(NO_EMBEDDINGS.to_owned()));
        let typed = V0_2::embed(&mut view, vec!["abc".into()]);
        assert!(matches!(typed, Err(matcher_types::CapabilityError::NotConfigured)));
    }
}
