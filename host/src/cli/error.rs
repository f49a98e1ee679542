//! The errors a command ends with, and the exit code of each (as nextest's
//! `ExpectedError` does): what the user asked for that cannot be is a usage
//! error (exit code 2); what failed while doing it is exit code 1.

use crate::errors::{
    AuthoringError, CommunityError, LockError, MergeError, ProjectError, ReadResultsError, ReplayError,
};
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
    UnknownKey(crate::plugin::UnknownKey),
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
        /// What failed underneath, in the words of the library or tool that failed.
        cause: String,
    },
    /// A plugin crate could not be scaffolded or built.
    #[error(transparent)]
    Authoring(#[from] AuthoringError),
    /// A community plugin could not be added, updated or published.
    #[error(transparent)]
    Community(#[from] CommunityError),
    /// The project's plugins could not be pinned (`assay plugins --lock`).
    #[error(transparent)]
    Lock(#[from] LockError),
    /// `assay run --replay DIR` names no results directory of a run.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// `assay diff OLD NEW` names something that is not a run's results
    /// directory.
    #[error(transparent)]
    ReadResults(#[from] ReadResultsError),
    /// `assay merge` refuses its directories, or cannot write the merged
    /// results.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// `assay agent serve` cannot listen or serve TLS.
    #[error("{0}")]
    Serve(String),
    /// `assay serve` cannot start.
    #[error(transparent)]
    ServeApi(#[from] crate::errors::ServeError),
}

impl CliError {
    /// The exit code this error ends the command with.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Project(error) if !error.is_usage() => crate::exit_codes::FAILED,
            CliError::Authoring(error) if !error.is_usage() => crate::exit_codes::FAILED,
            CliError::Lock(error) if !error.is_usage() => crate::exit_codes::FAILED,
            CliError::Community(error) if !error.is_usage() => crate::exit_codes::FAILED,
            CliError::Merge(MergeError::Write(_) | MergeError::Report(_)) => crate::exit_codes::FAILED,
            CliError::ServeApi(error) if !error.is_usage() => crate::exit_codes::FAILED,
            _ => crate::exit_codes::USAGE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::{ComponentLoadError, ComponentLoadErrorKind, ComponentRole, ManifestErrorKind};
    use crate::exit_codes::{FAILED, USAGE};

    fn io() -> std::io::Error {
        std::io::Error::other("disk on fire")
    }

    #[test]
    fn what_the_user_asked_wrongly_is_a_usage_error_and_what_failed_is_not() {
        let path = PathBuf::from("p");
        let kind = ComponentLoadErrorKind::BadDescription("no keys".into());
        let authoring = [
            (AuthoringError::BadName("X".into()), USAGE),
            (AuthoringError::NotEmpty(path.clone()), USAGE),
            (AuthoringError::Manifest { path: path.clone(), kind: ManifestErrorKind::NoPackageName }, USAGE),
            (AuthoringError::NoWasmToolchain, USAGE),
            (AuthoringError::NoComponentizePy { venv: path.clone(), version: "1".into(), found: "none".into() }, USAGE),
            (AuthoringError::Manifest { path: path.clone(), kind: ManifestErrorKind::NoMetrics }, USAGE),
            (AuthoringError::Componentizer { python: path.clone(), cause: io() }, FAILED),
            (AuthoringError::PythonBuildFailed { name: "x".into() }, FAILED),
            (AuthoringError::Absolute { path: path.clone(), cause: io() }, FAILED),
            (AuthoringError::CreateDir { path: path.clone(), cause: io() }, FAILED),
            (AuthoringError::Write { path: path.clone(), cause: io() }, FAILED),
            (AuthoringError::Cargo(io()), FAILED),
            (AuthoringError::BuildFailed { package: "x".into() }, FAILED),
            (AuthoringError::ReadModule { path: path.clone(), cause: "gone".into() }, FAILED),
            (AuthoringError::Componentize { path: path.clone(), cause: "no".into() }, FAILED),
            (
                AuthoringError::Load(ComponentLoadError { role: ComponentRole::Plugin, component: "p".into(), kind }),
                FAILED,
            ),
        ];
        for (error, code) in authoring {
            let message = error.to_string();
            assert_eq!(CliError::from(error).exit_code(), code, "{message}");
        }
        let lock = [
            (LockError::NoConfig { path: path.clone() }, USAGE),
            (LockError::Invalid { path: path.clone(), message: "bad".into() }, USAGE),
            (LockError::Project(ProjectError::NoCaseFiles), USAGE),
            (LockError::Read { path: path.clone(), cause: io() }, FAILED),
            (LockError::ReadPlugin { path: path.clone(), cause: "gone".into() }, FAILED),
            (LockError::Write { path: path.clone(), cause: io() }, FAILED),
            (LockError::Project(ProjectError::ReadPlugin { path, configured_as: None, cause: "gone".into() }), FAILED),
        ];
        for (error, code) in lock {
            let message = error.to_string();
            assert_eq!(CliError::from(error).exit_code(), code, "{message}");
        }
    }
}
