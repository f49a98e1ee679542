//! A new Python metric plugin: `pyproject.toml` (its name, its metric
//! files, its component), the metric `KEY.py` and its unit tests
//! `test_KEY.py`.

use super::super::scaffold::{checked_name_and_dir, write_files};
use crate::authoring::Scaffold;
use crate::errors::AuthoringError;
use std::path::PathBuf;

/// The metric a new plugin starts with, `METRIC_KEY` standing for its key.
const METRIC: &str = include_str!("template_metric.py");
/// Its unit tests.
const METRIC_TEST: &str = include_str!("template_test.py");

/// Writes a Python metric plugin named `name` in `dir` (default `NAME`):
/// `pyproject.toml`, `KEY.py` (a metric in the seed's convention, the
/// share of the expected answer's words the output mentions, runnable as
/// `python3 KEY.py "output" '{"expected": "..."}'`), `test_KEY.py` (its
/// unit tests, `python3 -m unittest`) and `.gitignore`. The key is the name
/// with `-` as `_`. It refuses what [`crate::authoring::scaffold`] refuses.
pub fn scaffold_python(name: &str, dir: Option<PathBuf>) -> Result<Scaffold, AuthoringError> {
    let (name, dir) = checked_name_and_dir(name, dir)?;
    let key = name.replace('-', "_");
    let contents = [
        ("pyproject.toml".to_owned(), pyproject_toml(name, &key)),
        (format!("{key}.py"), METRIC.replace("METRIC_KEY", &key)),
        (format!("test_{key}.py"), METRIC_TEST.replace("METRIC_KEY", &key)),
        (".gitignore".to_owned(), "__pycache__/\n".to_owned()),
    ];
    let files = write_files(&dir, &contents)?;
    Ok(Scaffold { name: name.to_owned(), key, dir, files })
}

/// `pyproject.toml` of the plugin `name` whose one metric is `KEY.py`.
fn pyproject_toml(name: &str, key: &str) -> String {
    format!(
        r#"[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.10"

# `assay plugin build` builds the metrics into one component with
# componentize-py {version}: each file's `evaluate(output, expected)` is the
# key named after the file. Every `.py` file of this folder goes into the
# component (standard library only: no packages are installed into it).
[tool.assay]
metrics = ["{key}.py"]
component = "{name}.wasm"
"#,
        version = super::componentize_py_version()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_scaffold_names_its_metric_file_after_the_key() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("plugin");
        let made = scaffold_python(" word-check ", Some(dir.clone())).unwrap();
        assert_eq!((made.name.as_str(), made.key.as_str()), ("word-check", "word_check"));
        let names = ["pyproject.toml", "word_check.py", "test_word_check.py", ".gitignore"];
        assert_eq!(made.files, names.map(|name| dir.join(name)));
        let project = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap();
        assert!(project.starts_with("[project]\nname = \"word-check\"\n"), "{project}");
        assert!(project.contains("\n[tool.assay]\nmetrics = [\"word_check.py\"]\ncomponent = \"word-check.wasm\"\n"));
        assert!(project.contains("componentize-py 0.25.1:"), "{project}");
        let metric = std::fs::read_to_string(dir.join("word_check.py")).unwrap();
        assert!(!metric.contains("METRIC_KEY") && metric.contains("python3 word_check.py \"the output\""));
        let test = std::fs::read_to_string(dir.join("test_word_check.py")).unwrap();
        assert!(test.contains("\nimport word_check\n"), "{test}");
    }

    #[test]
    fn a_python_scaffold_refuses_what_a_crate_scaffold_refuses() {
        let temp = tempfile::tempdir().unwrap();
        let error = scaffold_python("not_this", Some(temp.path().join("x"))).unwrap_err();
        assert!(matches!(error, AuthoringError::BadName(_)));
        std::fs::write(temp.path().join("taken"), "x").unwrap();
        let error = scaffold_python("fine", Some(temp.path().to_owned())).unwrap_err();
        assert!(matches!(error, AuthoringError::NotEmpty(_)));
        assert!(!temp.path().join("x").exists() && !temp.path().join("pyproject.toml").exists());
    }
}
