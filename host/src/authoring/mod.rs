//! Writing a matcher plugin: [`scaffold`] makes a plugin crate around a
//! working matcher and its native unit test; [`build`] makes a component of
//! such a crate with whichever toolchain can build `wasm32-unknown-unknown`
//! here, and loads it as assay would to check it. The `assay plugin new`
//! and `assay plugin build` commands are these two functions and printing.
//! [`scaffold_python`] makes a Python metric plugin instead, which
//! [`build`] builds with componentize-py (`python/`). [`init_project`]
//! makes a new project (`assay init`).
//!
//! Files: `scaffold.rs` (the name, the folder, the files written),
//! `template.rs` (the crate's `Cargo.toml` and `src/lib.rs`), `sdk.rs` (the
//! SDK and WIT the binary carries, vendored into a new crate), `build.rs`
//! (cargo, componentizing, the load check), `toolchain.rs` (finding a
//! toolchain with the wasm target), `python/` (Python metric plugins).

mod build;
mod built;
mod init;
mod python;
mod scaffold;
mod sdk;
mod template;
mod toolchain;

pub use build::build;
pub use built::{BuildOptions, BuildStep, BuiltPlugin};
pub use init::init_project;
pub use python::scaffold_python;
pub use scaffold::{Scaffold, ScaffoldOptions, SdkDependency, scaffold};
