//! Test cases: the typed models and their readers.
//!
//! The main type is [`TestCase`], read from neuro-san HOCON files by
//! [`read_case_file`]; [`discover`] finds the files a run names (a file, a
//! directory searched recursively for `*.hocon`, or a glob). Scenario and
//! validation files (the seed's prompt-engineering workflow) are read by
//! [`read_scenario_file`] into a [`Scenario`] or a [`Validation`].

mod discover;
mod hocon;
mod model;
mod scenario;

pub use discover::{CaseFile, SCENARIO_EXTENSIONS, discover, discover_with};
pub use hocon::{parse_case, read_case_file};
pub use model::{ChatFilter, Connection, Interaction, SuccessRatio, TestCase};
pub use scenario::{
    DEFAULT_EXPECTATION_KEY, Expectation, MockResponse, Scenario, ScenarioFile, Validation, WantedResult,
    read_scenario_file,
};
