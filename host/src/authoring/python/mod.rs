//! Python metric plugins: [`scaffold_python`] writes a folder whose metric
//! file follows the OpenSearch assistant tests' convention (`evaluate(output,
//! expected)` returning true/false, a number in [0, 1] or a dict with
//! `score`, and a `__main__` block for `python3 FILE.py "output" '{json}'`);
//! [`build`] makes a component of such a folder with the pinned
//! componentize-py, each metric file a key, through the glue module
//! `assay_app.py`.
//!
//! Files: `scaffold.rs` (the folder's files), `build.rs` (the folder read,
//! the virtual environment with componentize-py found, the build staged and
//! run), `requirements.rs` (the plugin's `requirements.txt` checked line by
//! line), `packages.rs` (the packages it names installed with pip into the
//! cache, each checked to be pure Python), and the Python the build and the
//! scaffold write:
//! `assay_app.py` (the glue: the matcher export mapping what `evaluate`
//! returns onto a verdict), `componentize.py` (the componentize-py call),
//! `template_metric.py` and `template_test.py` (a new plugin's metric and its
//! unit tests, `METRIC_KEY` standing for the key), `requirements.txt` (the
//! pinned componentize-py).

mod build;
mod packages;
mod requirements;
mod scaffold;

pub(super) use build::{build, is_python_plugin};
pub use scaffold::scaffold_python;

/// The pin of the componentize-py Python plugins are built with.
const REQUIREMENTS: &str = include_str!("requirements.txt");

/// The componentize-py version [`REQUIREMENTS`] pins.
fn componentize_py_version() -> &'static str {
    REQUIREMENTS
        .lines()
        .find_map(|line| line.trim().strip_prefix("componentize-py=="))
        .expect("requirements.txt pins componentize-py")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pin_is_the_one_the_readability_plugin_is_built_with() {
        let readability = include_str!("../../../../plugins/readability-py/requirements.txt");
        assert!(readability.lines().any(|line| line == format!("componentize-py=={}", componentize_py_version())));
    }
}
