//! Plugins for their authors and adopters: Rust and Python plugins from the binary, community plugins by reference, the release archive, the CI templates.

pub mod authoring_python;
pub mod authoring_python_packages;
pub mod ci_templates;
pub mod community_plugins;
#[cfg(unix)]
pub mod release;
pub mod rust_plugins;
