//! One door for every input format: which files each format claims, and how
//! a file becomes pending cases ([`crate::job::PendingCase`]s, read into
//! jobs when their turn comes), with its located errors. The table:
//!
//! | format | claims | a file is |
//! |---|---|---|
//! | [`Format::Hocon`] (`hocon.rs`) | `*.hocon` (walked) | one neuro-san test case |
//! | [`Format::Suite`] ([`suite`]) | `*.suite.toml` (walked) | one case per spec line |
//! | [`Format::Promptfoo`] ([`promptfoo`]) | a YAML or JSON file with promptfoo's keys, or a JavaScript or TypeScript module (run sandboxed), named by path or glob | one case per prompt × provider × test |
//! | scenarios (`scenario.rs`): the seed's format and Kyma's | `*.yaml`, `*.yml`, `*.hocon`, `*.json` under `assay eval`/`validate` | one scenario (Kyma: one per query), or a validation |
//!
//! Every file found is data unless the user trusted it: a format asks the
//! file's [`crate::case::FileTrust`] before it runs a program, reads a
//! secret or a file outside its folder, or sends a credential where the
//! file says. `crate::Project` is the only caller: its `discover` walks the
//! paths of `assay run`, `plan`, `merge --rerun-failed` and `--replay`, and
//! `assay serve`'s paths (`discover_within`), and its `scenarios` and
//! `validations` the paths of `assay eval`, `assess` and `validate`. No
//! format is tested for by name outside this module.

mod hocon;
pub mod promptfoo;
mod scenario;
pub mod suite;
mod yaml_lines;

#[cfg(any(test, feature = "internals"))]
pub use hocon::load_case;
pub use hocon::{MAX_CASE_FILE_BYTES, MAX_HOCON_BYTES, parse_case, read_case_file};
pub use scenario::{
    DEFAULT_EXPECTATION_KEY, Expectation, MockResponse, Scenario, ScenarioFile, Validation, WantedResult,
    read_scenario_file,
};

use crate::case::{CaseFile, FileAccess, Trust, discover_with, has_extension};
use crate::errors::DiscoverError;
use crate::job::PendingCase;
use std::path::{Path, PathBuf};

/// The formats `assay run` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A neuro-san test case file: one case.
    Hocon,
    /// A suite file: one case per line of its spec files.
    Suite,
    /// A promptfoo config: one case per prompt × provider × test.
    Promptfoo,
}

/// The extension of neuro-san test case files.
const HOCON_EXTENSION: &str = "hocon";

/// The extension of suite files.
const SUITE_EXTENSION: &str = "suite.toml";

/// What a directory walk of `assay run` picks up: test case files and
/// suite files. A promptfoo config is named by path or glob, never walked
/// into (a folder of YAML files is not a suite).
pub const RUN_EXTENSIONS: &[&str] = &[HOCON_EXTENSION, SUITE_EXTENSION];

/// What `assay eval`, `assess` and `validate` read: scenario and
/// validation files.
pub const SCENARIO_EXTENSIONS: &[&str] = &["yaml", "yml", HOCON_EXTENSION, "json"];

impl Format {
    /// The format that claims `path`, if one does: by its name, and a
    /// promptfoo config by its content (its head, read through `access`).
    pub fn of(path: &Path, access: &FileAccess) -> Option<Format> {
        if has_extension(path, SUITE_EXTENSION) {
            Some(Format::Suite)
        } else if has_extension(path, HOCON_EXTENSION) {
            Some(Format::Hocon)
        } else if promptfoo::is_config(path, access) {
            Some(Format::Promptfoo)
        } else {
            None
        }
    }
}

/// The cases of `file`, found by a walk or named by path (a promptfoo
/// config is read up front by `crate::Project`, for its connections and
/// secrets): a suite file's spec lines, else the file as one test case.
pub fn expand(file: CaseFile, trust: &Trust) -> Vec<PendingCase> {
    match Format::of(&file.path, trust.access()) {
        Some(Format::Suite) => suite::expand(&file, trust),
        _ => vec![Box::new(hocon::DiscoveredFile { file, access: trust.access().clone() })],
    }
}

/// The neuro-san test case files `inputs` name (files, directories
/// searched for `*.hocon`, globs), in a stable order.
#[cfg(any(test, feature = "internals"))] // for tests
pub fn discover(inputs: &[PathBuf]) -> Result<Vec<CaseFile>, DiscoverError> {
    discover_with(inputs, &[HOCON_EXTENSION])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_matched_on_the_whole_name() {
        assert!(has_extension(Path::new("a/alerts.suite.toml"), "suite.toml"));
        assert!(!has_extension(Path::new("a/assay.toml"), "suite.toml"));
        assert!(!has_extension(Path::new("a/.suite.toml"), "suite.toml"));
        assert!(!has_extension(Path::new("a/mysuite.toml"), "suite.toml"));
        assert!(has_extension(Path::new("basic.hocon"), "hocon"));
        assert!(!has_extension(Path::new("hocon"), "hocon"));
        assert_eq!(Format::of(Path::new("x/a.suite.toml"), &FileAccess::anywhere()), Some(Format::Suite));
        assert_eq!(Format::of(Path::new("x/a.hocon"), &FileAccess::anywhere()), Some(Format::Hocon));
        assert_eq!(Format::of(Path::new("x/assay.toml"), &FileAccess::anywhere()), None);
    }
}
