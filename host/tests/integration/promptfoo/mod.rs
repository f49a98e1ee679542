//! promptfoo configs: the differential test against promptfoo itself, its examples, JavaScript and Python, the bundled suite.

pub mod promptfoo_compare;
pub mod promptfoo_differential;
pub mod promptfoo_examples;
pub mod promptfoo_javascript;
pub mod promptfoo_python;
pub mod promptfoo_sql;
pub mod promptfoo_stored;
pub mod promptfoo_suite;
