//! Write [assay] matcher plugins, and in-process agents, as WebAssembly
//! components.
//!
//! A matcher is a plain Rust type implementing [`Matcher`]: its logic is an
//! ordinary function you unit-test natively with `cargo test`. One line,
//! [`export_matcher!`], turns it into the component export when the crate is
//! built for `wasm32-unknown-unknown`; on other targets that line expands to
//! nothing, so the crate still builds and tests natively.
//!
//! ```
//! use assay_plugin_sdk::{export_matcher, Actual, Json, Matcher, PluginInfo, Verdict};
//!
//! /// `starts_with: "The"` holds when the text starts with the expected prefix.
//! pub struct StartsWith;
//!
//! impl Matcher for StartsWith {
//!     fn describe() -> PluginInfo {
//!         PluginInfo::new("starts-with", "0.1.0")
//!             .matcher("starts_with", "the text starts with the expected prefix")
//!     }
//!
//!     fn evaluate(_key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
//!         let text = actual.as_str().ok_or_else(|| format!("needs a string, found {}", actual.describe()))?;
//!         let prefix = expected.as_str().ok_or("the expected prefix must be a string")?;
//!         let pass = text.starts_with(prefix);
//!         let found = if pass { "starts" } else { "does not start" };
//!         Ok(Verdict::new(pass, format!("the text {found} with {prefix:?}")))
//!     }
//! }
//!
//! export_matcher!(StartsWith);
//!
//! let verdict = StartsWith::evaluate("starts_with", &Actual::text("The Beatles"), &"The".into()).unwrap();
//! assert!(verdict.pass);
//! ```
//!
//! The plugin tutorial in this crate's `README.md` goes from an empty folder
//! to a matcher loaded by `assay`.
//!
//! # Capabilities
//!
//! A plugin can only compute unless the user grants it more. [`log`] is
//! granted by default; [`judge`] and [`embeddings`] need a grant in the
//! user's `assay.toml`. A component imports only the capabilities its code
//! calls, and the host refuses to load one whose imports its grants do not
//! cover. A judge or embeddings call that has no answer fails with a
//! [`CapabilityError`] saying why (no backend configured, or the backend
//! failed), so that a plugin decides by the kind of failure and never by
//! the host's wording.
//!
//! Plugins built with this SDK implement `assay:plugin@0.3.0`
//! (`wit/plugin-0.3/plugin.wit`, shipped in this crate): a check's expected
//! value and a verdict's extras cross as typed values, so neither side
//! prints or parses JSON text for them.
//!
//! [assay]: https://github.com/assay-dev/assay

#![warn(missing_docs)]

// The generated bindings name the SDK by its crate name, also inside it.
extern crate self as assay_plugin_sdk;

pub mod agent;
mod capability;
pub mod embeddings;
pub mod judge;
pub mod log;
mod matcher;
pub mod params;

pub use capability::{Capability, CapabilityError};
pub use matcher::{Actual, Check, Json, Matcher, PluginInfo, Verdict, evaluate_batch, evaluate_one};

/// The tutorial of this crate's `README.md`: its Rust blocks compile as
/// doctests, so the tutorial cannot drift from the SDK.
#[doc = include_str!("../README.md")]
pub mod tutorial {}

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod bindings;

#[doc(hidden)]
pub mod export;
