//! [`CapabilityError`]: why a judge or embeddings call has no answer, and
//! how each version of `assay:plugin` hears it: 0.3.0 and 0.2.0 as the
//! typed `capability-error`, 0.1.0 as a sentence.

use crate::sandbox::bindings::matcher_0_3::assay::plugin::types as v0_3;
use crate::sandbox::bindings::matcher_types as wit;

/// Why a judge or embeddings call has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CapabilityError {
    /// The guest's grants do not cover the capability. The import policy
    /// refuses such a component before it runs, so a loaded component never
    /// hears this; the store checks its grants again at every call so that
    /// no backend is reached without its grant, whatever got past the
    /// policy.
    NotGranted,
    /// The capability is granted but no backend is configured.
    NotConfigured,
    /// The backend gave no usable answer, or the call's budget of
    /// capability calls is spent: the reason.
    Failed(String),
}

impl From<CapabilityError> for wit::CapabilityError {
    fn from(error: CapabilityError) -> Self {
        match error {
            CapabilityError::NotGranted => wit::CapabilityError::NotGranted,
            CapabilityError::NotConfigured => wit::CapabilityError::NotConfigured,
            CapabilityError::Failed(reason) => wit::CapabilityError::Failed(reason),
        }
    }
}

impl From<CapabilityError> for v0_3::CapabilityError {
    fn from(error: CapabilityError) -> Self {
        match error {
            CapabilityError::NotGranted => v0_3::CapabilityError::NotGranted,
            CapabilityError::NotConfigured => v0_3::CapabilityError::NotConfigured,
            CapabilityError::Failed(reason) => v0_3::CapabilityError::Failed(reason),
        }
    }
}

impl CapabilityError {
    /// The sentence a 0.1.0 guest hears from `capability` (`judge`,
    /// `embeddings`); `missing` says how to configure its backend.
    pub(crate) fn into_sentence(self, capability: &str, missing: &str) -> String {
        match self {
            CapabilityError::NotGranted => format!(
                "the {capability} capability is not granted to this plugin: grant it with grants = [\"{capability}\"] in its [plugins.NAME] entry of assay.toml"
            ),
            CapabilityError::NotConfigured => missing.to_owned(),
            CapabilityError::Failed(reason) => reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_0_1_guest_hears_a_sentence_and_a_0_2_guest_the_kind() {
        let sentence = |error: CapabilityError| error.into_sentence("judge", "no judge here");
        assert_eq!(sentence(CapabilityError::NotConfigured), "no judge here");
        assert_eq!(sentence(CapabilityError::Failed("timeout".into())), "timeout");
        assert_eq!(
            sentence(CapabilityError::NotGranted),
            "the judge capability is not granted to this plugin: grant it with grants = [\"judge\"] in its [plugins.NAME] entry of assay.toml"
        );
        let typed = |error: CapabilityError| wit::CapabilityError::from(error);
        assert!(matches!(typed(CapabilityError::NotGranted), wit::CapabilityError::NotGranted));
        assert!(matches!(typed(CapabilityError::NotConfigured), wit::CapabilityError::NotConfigured));
        assert!(
            matches!(typed(CapabilityError::Failed("timeout".into())), wit::CapabilityError::Failed(r) if r == "timeout")
        );
    }
}
