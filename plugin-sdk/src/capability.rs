//! [`CapabilityError`]: why a [`judge`](crate::judge) or
//! [`embeddings`](crate::embeddings) call has no answer, as the host says it
//! in `assay:plugin@0.2.0`'s typed `capability-error`. Decide by the
//! variant, never by the wording: the sentence [`Display`](std::fmt::Display)
//! gives is for people.

use std::fmt;

/// A capability a plugin asks for by grant, beyond `log`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// The language-model judge (`grants = ["judge"]`).
    Judge,
    /// The embeddings backend (`grants = ["embeddings"]`).
    Embeddings,
}

impl Capability {
    /// Its grant name, as written in `assay.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Capability::Judge => "judge",
            Capability::Embeddings => "embeddings",
        }
    }
}

/// Why a judge or embeddings call has no answer.
///
/// ```
/// use assay_plugin_sdk::{CapabilityError, judge};
///
/// fn ask(prompt: &str) -> Result<String, String> {
///     judge::complete(prompt).map_err(|error| match error {
///         // Say how to set one up, in the plugin's own words.
///         CapabilityError::NotConfigured(_) => "my-plugin needs a judge: set [judge] in assay.toml".to_owned(),
///         other => format!("my-plugin could not ask the judge: {other}"),
///     })
/// }
///
/// judge::set_native(Box::new(|_| Err(CapabilityError::NotConfigured(assay_plugin_sdk::Capability::Judge))));
/// assert_eq!(ask("is it?").unwrap_err(), "my-plugin needs a judge: set [judge] in assay.toml");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CapabilityError {
    /// The plugin's grants do not cover the capability. assay refuses to
    /// load a component whose imports its grants do not cover, so a loaded
    /// plugin does not see this; it is in the contract for hosts that
    /// refuse at call time.
    NotGranted(Capability),
    /// The capability is granted, but the user configured no backend for
    /// it. A plugin that needs it should say how to configure one.
    NotConfigured(Capability),
    /// The backend was asked and gave no usable answer, or the host refused
    /// the call: a timeout, an HTTP error, an unusable answer, the run's
    /// budget of calls spent, or the calls one `evaluate` may make used up.
    /// The reason is the host's sentence.
    Failed(String),
}

impl fmt::Display for CapabilityError {
    /// The host's wording: what a plugin built against
    /// `assay:plugin@0.1.0` hears as its string error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapabilityError::NotGranted(capability) => {
                let name = capability.name();
                write!(
                    f,
                    "the {name} capability is not granted to this plugin: grant it with grants = [\"{name}\"] in its [plugins.NAME] entry of assay.toml"
                )
            }
            CapabilityError::NotConfigured(Capability::Judge) => {
                f.write_str("no judge is configured: set [judge] in assay.toml or ASSAY_JUDGE_URL")
            }
            CapabilityError::NotConfigured(Capability::Embeddings) => {
                f.write_str("no embeddings backend is configured: set [embeddings] in assay.toml")
            }
            CapabilityError::Failed(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for CapabilityError {}

/// A plugin's `evaluate` returns `Result<Verdict, String>`, so that `?` on
/// a capability call gives the check the host's sentence.
impl From<CapabilityError> for String {
    fn from(error: CapabilityError) -> String {
        error.to_string()
    }
}

/// The error the host's typed `capability-error` means, for `capability`.
#[cfg(target_arch = "wasm32")]
pub(crate) fn from_wit(
    capability: Capability,
    error: crate::bindings::matcher::assay::plugin::types::CapabilityError,
) -> CapabilityError {
    use crate::bindings::matcher::assay::plugin::types::CapabilityError as Wit;
    match error {
        Wit::NotGranted => CapabilityError::NotGranted(capability),
        Wit::NotConfigured => CapabilityError::NotConfigured(capability),
        Wit::Failed(reason) => CapabilityError::Failed(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_gives_the_hosts_wording() {
        assert_eq!(
            CapabilityError::NotConfigured(Capability::Judge).to_string(),
            "no judge is configured: set [judge] in assay.toml or ASSAY_JUDGE_URL"
        );
        assert_eq!(
            CapabilityError::NotConfigured(Capability::Embeddings).to_string(),
            "no embeddings backend is configured: set [embeddings] in assay.toml"
        );
        assert_eq!(
            CapabilityError::NotGranted(Capability::Embeddings).to_string(),
            "the embeddings capability is not granted to this plugin: grant it with grants = [\"embeddings\"] in its [plugins.NAME] entry of assay.toml"
        );
        assert_eq!(String::from(CapabilityError::Failed("timeout".into())), "timeout");
    }
}
