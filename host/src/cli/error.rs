//! The errors a command ends with, and the exit code of each (as nextest's
//! `ExpectedError` does): what the user asked for that cannot be is a usage
//! error (exit code 2); what failed while doing it is exit code 1.

use assay::errors::ProjectError;
use std::path::PathBuf;

/// Why a command ended early.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The project could not be opened or set up.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// A flag's value cannot be used.
    #[error("{flag} {message}")]
    Flag {
        /// The flag, e.g. `--timeout`.
        flag: &'static str,
        /// What is wrong with its value.
        message: String,
    },
    /// `assay check --key` names no loaded plugin's key.
    #[error(transparent)]
    UnknownKey(assay::plugin::UnknownKey),
    /// A command needs the judge and none is configured.
    #[error("{what} needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL")]
    NoJudge {
        /// What needs it, e.g. `--llm-modes`.
        what: &'static str,
    },
    /// The results directory could not be made (the cause names the file).
    #[error("{cause}")]
    Results {
        /// The directory.
        path: PathBuf,
        /// Why.
        cause: String,
    },
    /// A file the command must read or write is not what it should be (a
    /// plugin crate's manifest, assay.toml for `--lock`).
    #[error("`{}`: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// `assay plugin new` was given a name no plugin can have.
    #[error(
        "`{0}` cannot name a plugin: use lowercase letters, digits, `_` and `-`, starting with a letter (and not `not_`)"
    )]
    PluginName(String),
    /// `assay plugin new` would write into a folder that has files.
    #[error("`{}` already exists and is not empty", .0.display())]
    NotEmpty(PathBuf),
    /// No toolchain here builds `wasm32-unknown-unknown`.
    #[error(
        "no Rust toolchain here can build wasm32-unknown-unknown\n\nConsider one of:\n  rustup target add wasm32-unknown-unknown\nor, on Debian/Ubuntu without rustup's wasm target:\n  apt-get update && apt-get install -y rustc-web cargo-web rust-web-src lld-22"
    )]
    NoWasmToolchain,
    /// `assay agent serve` cannot listen or serve TLS.
    #[error("{0}")]
    Serve(String),
}

impl CliError {
    /// The exit code this error ends the command with.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Project(error) if !error.is_usage() => assay::exit_codes::FAILED,
            _ => assay::exit_codes::USAGE,
        }
    }
}
