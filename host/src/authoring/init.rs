//! `assay init`: a new project in a folder — an `assay.toml` whose
//! `[cases] paths` names `cases/`, one case against the `echo` demo agent
//! that passes, and a GitHub Actions workflow that runs the cases and keeps
//! their results. It writes nothing when any of its files exists.

use crate::errors::AuthoringError;
use std::path::{Path, PathBuf};

/// The files of a new project, by path from its folder.
const FILES: &[(&str, &str)] =
    &[("assay.toml", ASSAY_TOML), ("cases/hello.hocon", HELLO_CASE), (".github/workflows/assay.yml", WORKFLOW)];

const ASSAY_TOML: &str = r#"# assay's settings for this project: `assay run` from any folder under
# this one reads them. Every key is in the book, "Configuration: assay.toml".

[cases]
paths = ["cases"]            # what `assay run` with no path runs

# [judge]                    # the model `gist` and the judged assertions ask
# url = "http://localhost:11434/v1"
# model = "llama3"
# api_key_env = "OPENAI_API_KEY"

# [plugins.my-check]         # a matcher plugin: `assay plugin new`, or
# oci = "…"                  # `assay plugin add REF` for a community one
"#;

const HELLO_CASE: &str = r#"# A test case: what to send the agent, and what its answer must hold.
# `echo` is a demo agent built into assay that answers with what it is
# sent; point `agent` at yours (and `connections` at how to reach it).
{
    agent: echo
    interactions: [
        {
            text: "hello, world"
            response: {
                text: { keywords: ["hello", "world"] }
            }
        }
    ]
}
"#;

const WORKFLOW: &str = r#"# assay's cases on every push and pull request: the results (results.jsonl,
# summary.json, JUnit and the HTML report) are kept as an artifact, and
# the job fails when a case failed.
name: assay

on:
  push:
  pull_request:

jobs:
  assay:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install assay
        run: cargo install --locked --git https://github.com/assay-dev/assay assay
      - name: Run the cases
        run: assay run --results results/ci --junit results/ci/junit.xml --html results/ci/report.html
      - name: Keep the results
        if: ${{ !cancelled() }}
        uses: actions/upload-artifact@v4
        with:
          name: assay-results
          path: results/ci
"#;

/// Writes a new project into `dir` (made when missing) and returns the
/// files written; refuses, writing nothing, when one of them exists.
pub fn init_project(dir: &Path) -> Result<Vec<PathBuf>, AuthoringError> {
    if let Some((existing, _)) = FILES.iter().find(|(path, _)| dir.join(path).exists()) {
        return Err(AuthoringError::Exists(dir.join(existing)));
    }
    let mut written = Vec::new();
    for (path, text) in FILES {
        let path = dir.join(path);
        let parent = path.parent().expect("a file in a folder");
        std::fs::create_dir_all(parent)
            .map_err(|cause| AuthoringError::CreateDir { path: parent.to_owned(), cause })?;
        std::fs::write(&path, text).map_err(|cause| AuthoringError::Write { path: path.clone(), cause })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workflow_is_yaml_that_runs_the_cases() {
        let workflow: serde_json::Value = yaml_serde::from_str(WORKFLOW).unwrap();
        let steps = workflow["jobs"]["assay"]["steps"].as_array().unwrap();
        assert!(steps.iter().any(|step| step["run"].as_str().is_some_and(|run| run.starts_with("assay run "))));
    }

    #[test]
    fn an_existing_file_is_never_overwritten() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(temp.path().join("cases")).unwrap();
        std::fs::write(temp.path().join("cases/hello.hocon"), "mine").unwrap();
        let error = init_project(temp.path()).unwrap_err().to_string();
        assert!(error.contains("cases/hello.hocon` exists already"), "{error}");
        assert!(!temp.path().join("assay.toml").exists(), "nothing written");
        assert_eq!(std::fs::read_to_string(temp.path().join("cases/hello.hocon")).unwrap(), "mine");
    }
}
