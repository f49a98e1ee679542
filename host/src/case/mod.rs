//! Test cases' shared vocabulary, which every format reads into: the typed
//! [`TestCase`] model and where its keys are ([`KeyLines`]), the [`CaseEnv`] (the environment as the user allows
//! case files to see it), the [`Trust`] boundary (which files are data,
//! and where files are opened: [`FileAccess`]), and [`discover`]ing the files a run names (a file, a directory searched
//! recursively, or a glob), and watching them change ([`CaseWatch`], `assay
//! run --watch`). The readers of each format are in
//! [`crate::formats`].

mod access;
mod discover;
mod env;
mod key_lines;
mod model;
mod trust;
mod watch;

pub use access::{Entry, FileAccess, LEADS_OUTSIDE, TooLarge};
pub use discover::{CaseFile, CaseFileWalk, CaseFiles, discover_with};
pub(crate) use discover::{PathHasher, glob_files, has_extension};
pub use env::{CASE_ENV_PREFIX, CaseEnv, Lookup, SECRET_NAME_PARTS, looks_secret};
pub use key_lines::{KeyLines, key_path};
pub use model::{ChatFilter, Connection, Interaction, SuccessRatio, TestCase};
pub use trust::{ALLOW_COMMANDS_VAR, FileTrust, Trust, Use, UseKind};
pub use watch::{CaseWatch, Changed};
