//! Test cases: the typed models and their readers.
//!
//! The main type is [`TestCase`], read from neuro-san HOCON files by
//! [`read_case_file`]; [`discover`] finds the files a run names (a file, a
//! directory searched recursively for `*.hocon`, or a glob). Scenario and
//! validation files (the seed's prompt-engineering workflow, or Kyma's
//! current scenario format) are read by [`read_scenario_file`] into
//! [`Scenario`]s or a [`Validation`]. Both
//! read `${VAR}` only from a [`CaseEnv`]: the environment as the user
//! allows case files to see it.

mod discover;
mod env;
mod hocon;
mod model;
mod scenario;
mod trust;

pub(crate) use discover::PathHasher;
pub use discover::{
    CaseFile, CaseFileWalk, CaseFiles, RUN_EXTENSIONS, SCENARIO_EXTENSIONS, SUITE_EXTENSION, discover, discover_with,
};
pub use env::{CASE_ENV_PREFIX, CaseEnv, Lookup, SECRET_NAME_PARTS, looks_secret};
pub use hocon::{MAX_CASE_FILE_BYTES, MAX_HOCON_BYTES, parse_case, read_case_file};
pub use model::{ChatFilter, Connection, Interaction, SuccessRatio, TestCase};
pub use scenario::{
    DEFAULT_EXPECTATION_KEY, Expectation, MockResponse, Scenario, ScenarioFile, Validation, WantedResult,
    read_scenario_file,
};
pub use trust::{ALLOW_COMMANDS_VAR, FileTrust, Trust, Use, UseKind};
