//! The results directory: `results.jsonl`, one line per case, appended and
//! flushed as each case finishes (a killed run keeps every finished case),
//! and `summary.json` at the end, both redacted. Results hold the agent's
//! responses, so they are private: the directory is made 0700 (when assay
//! makes it) and both files are 0600, never written through a symbolic
//! link.

use crate::private_files;
use crate::report::Redactor;
use crate::run::{Reporter, RunEvent};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `results.jsonl` and `summary.json` into a directory.
#[derive(Debug)]
pub struct ResultsDir {
    dir: PathBuf,
    lines: File,
    redactor: Redactor,
}

impl ResultsDir {
    /// Creates the directory (and parents) and an empty `results.jsonl`.
    pub fn create(dir: &Path) -> io::Result<ResultsDir> {
        private_files::create_dir(dir).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create the results directory `{}`: {e}", dir.display()))
        })?;
        let path = dir.join("results.jsonl");
        let lines = private_files::create(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot create `{}`: {e}", path.display())))?;
        Ok(ResultsDir { dir: dir.to_owned(), lines, redactor: Redactor::none() })
    }

    /// The same, hiding `redactor`'s secrets.
    pub fn with_redactor(self, redactor: Redactor) -> ResultsDir {
        ResultsDir { redactor, ..self }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Reporter for ResultsDir {
    fn report(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
        match event {
            RunEvent::Started { .. } => Ok(()),
            RunEvent::CaseFinished(case) => {
                // One write of a whole line: a kill can only lose lines not
                // yet written, never leave half of one.
                let mut line = self.redactor.to_json(case, false)?;
                line.push(b'\n');
                self.lines.write_all(&line)?;
                self.lines.flush()
            }
            RunEvent::Finished(summary) => {
                let path = self.dir.join("summary.json");
                let mut text = self.redactor.to_json(summary, true)?;
                text.push(b'\n');
                private_files::write(&path, &text)
                    .map_err(|e| io::Error::new(e.kind(), format!("cannot write `{}`: {e}", path.display())))
            }
        }
    }
}
