//! Test cases: the typed model and its readers.
//!
//! The main type is [`TestCase`], read from neuro-san HOCON files by
//! [`read_case_file`]; [`discover`] finds the files a run names (a file, a
//! directory searched recursively for `*.hocon`, or a glob).

mod discover;
mod hocon;
mod model;

pub use discover::{CaseFile, discover};
pub use hocon::{parse_case, read_case_file};
pub use model::{ChatFilter, Connection, Interaction, SuccessRatio, TestCase};
