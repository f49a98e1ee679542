//! Every error type of the library, in one place. Messages are lowercase
//! fragments that read after "failed to"; where a common mistake is known,
//! they end with a "Consider …" suggestion.

use crate::plugin::{Denied, Fault};
use thiserror::Error;

/// A plugin could not be loaded.
#[derive(Debug, Error)]
#[error("failed to load plugin {plugin}: {kind}")]
pub struct PluginLoadError {
    /// Which plugin: its source (file path or built-in name).
    pub plugin: String,
    /// What went wrong.
    #[source]
    pub kind: PluginLoadErrorKind,
}

/// Why a plugin could not be loaded.
#[derive(Debug, Error)]
pub enum PluginLoadErrorKind {
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    /// The pinned sha256 does not match.
    #[error("its sha256 is {actual}, but assay.toml pins {pinned}; refusing to load it")]
    Sha256Mismatch {
        /// The pinned hash.
        pinned: String,
        /// The file's hash.
        actual: String,
    },
    /// Not a valid component.
    #[error("it is not a valid WebAssembly component: {0}")]
    NotAComponent(String),
    /// An import its grants do not cover.
    #[error("{0}")]
    Denied(Denied),
    /// Linking failed (an import the host cannot satisfy).
    #[error("its imports cannot be satisfied: {0}")]
    Link(String),
    /// The exports are not the matcher interface.
    #[error("it does not export assay:plugin/matcher@0.1.0: {0}")]
    Exports(String),
    /// Instantiating faulted.
    #[error("instantiating it {0}")]
    Instantiate(Fault),
    /// `describe()` faulted.
    #[error("its describe() {0}")]
    Describe(Fault),
    /// `describe()` returned something invalid.
    #[error("its describe() is invalid: {0}")]
    BadDescription(String),
}

/// The registry could not be built.
#[derive(Debug, Error)]
pub enum RegistryError {
    /// A plugin failed to load.
    #[error(transparent)]
    Load(PluginLoadError),
    /// Two plugins claim one key.
    #[error(
        "two plugins claim the key `{key}`: {first} and {second}\n\nConsider choosing one in assay.toml: [keys] {key} = \"PLUGIN-NAME\""
    )]
    KeyConflict {
        /// The key.
        key: String,
        /// The plugin loaded first.
        first: String,
        /// The plugin loaded second.
        second: String,
    },
}
