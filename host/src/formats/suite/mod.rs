//! Suite files → cases: a `*.suite.toml` names spec files (JSON lines) and
//! maps every spec line onto a request and checks; each line is one case,
//! with the id `SUITE_ID/SPEC_ID` (the suite file's id, as discovery gives
//! it, then the line's `id`).
//!
//! [`expand`] reads the suite file and indexes its spec files when the run
//! is discovered, so that the count of cases, their ids (for `--filter`,
//! `--list`) and duplicate ids are known before anything runs; what it
//! keeps per line is its id, cluster state and place (a few dozen bytes),
//! never the line itself. Each [`PendingCase`] reads its line again when
//! its turn comes, resolves date templates (a suite whose `[setup]` has
//! `indices`, its own or the `opensearch` loader's), fills the templates and plans the checks into a
//! [`Job`]. A line's cluster state, unless skipped, gives the job the
//! state's setup as its prerequisite, run once before the first of that
//! state's cases.
//!
//! Errors are located: a suite file that cannot be read is one error case
//! (its id); a spec line that is not a JSON object, has no `id`, repeats
//! another's id or lacks a field the suite uses is one error case naming
//! the spec file and line (id `SUITE_ID/SPEC_FILE:LINE` when the line has
//! no usable id).

pub mod dates;
mod file;
mod index_group;
pub mod opensearch;
mod setup;
mod specs;

pub use file::{DEFAULT_SETUP_TIMEOUT, STATE_FIELD};
pub use specs::MAX_LINE_BYTES;

use crate::case::{CaseEnv, CaseFile, Trust};
use crate::check::{KeySet, check_connections, plan_entry};
use crate::errors::{CaseError, CaseErrorKind};
use crate::job::{BrokenCase, CaseReader, Job, LoadedCase, PendingCase, Prerequisite, Turn};
use crate::template::FillError;
use dates::DocumentsOfState;
use file::{SuiteFile, read_suite_file};
use serde_json::{Map, Value};
use specs::Indexed;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The cases of a suite file, in spec order (spec files in the order of
/// their patterns, lines in file order); one error case when the suite
/// file, or a spec file, cannot be read.
///
/// The suite file is data unless `trust` trusts it: then a `[setup]
/// command`, or a spec file or index folder outside its folder, makes the
/// whole suite one error case saying how to trust it.
pub fn expand(file: &CaseFile, trust: &Trust) -> Vec<PendingCase> {
    let broken = |error: CaseError, id: String| -> Vec<PendingCase> { vec![Box::new(BrokenCase { id, error })] };
    let suite = match read_suite_file(&file.path, &trust.of(&file.path)) {
        Ok(suite) => suite,
        Err(kind) => return broken(CaseError::new(&file.path, kind), file.id.clone()),
    };
    let suite = Arc::new(Suite::new(file, suite));
    let mut cases: Vec<PendingCase> = Vec::new();
    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    let mut setups: HashMap<String, Arc<Prerequisite>> = HashMap::new();
    for (spec_index, spec) in suite.file.specs.iter().enumerate() {
        let lines = match specs::index(&suite.file.access, spec) {
            Ok(lines) => lines,
            Err(message) => {
                let id = format!("{}/{}", suite.id, suite.spec_name(spec_index));
                return broken(CaseError::new(spec, CaseErrorKind::Io(message)), id);
            }
        };
        for indexed in lines {
            let (spec_id, state, line, offset) = match indexed {
                Indexed::Spec { id, state, line, offset } => (id, state, line, offset),
                Indexed::Bad { line, message } => {
                    cases.push(suite.bad_line(spec_index, line, message));
                    continue;
                }
            };
            if let Some(&(first_spec, first_line)) = seen.get(&spec_id) {
                let first = match first_spec == spec_index {
                    true => format!("line {first_line}"),
                    false => format!("`{}` line {first_line}", suite.file.specs[first_spec].display()),
                };
                let message = format!(
                    "its id {spec_id:?} is also the id of {first}; ids must be unique in a suite, as they name its \
                     cases ({}/ID)",
                    suite.id
                );
                cases.push(suite.bad_line(spec_index, line, message));
                continue;
            }
            seen.insert(spec_id.clone(), (spec_index, line));
            let prerequisite = state.as_deref().and_then(|state| {
                let setup = suite.setup.as_ref().filter(|setup| {
                    !matches!(setup.kind, file::SetupKind::Nothing) && !setup.skip.iter().any(|s| s == state)
                })?;
                let made = setups
                    .entry(state.to_owned())
                    .or_insert_with(|| Arc::new(setup::prerequisite(setup, &suite.path, state)));
                Some(made.clone())
            });
            cases.push(Box::new(SpecCase {
                id: format!("{}/{spec_id}", suite.id),
                suite: suite.clone(),
                spec: spec_index,
                line,
                offset,
                state,
                prerequisite,
            }));
        }
    }
    cases
}

/// A suite file, read: shared by its cases.
struct Suite {
    /// Its id (from discovery).
    id: String,
    /// Where it is.
    path: PathBuf,
    file: SuiteFile,
    /// `[setup]`, shared with the prerequisites made from it.
    setup: Option<Arc<file::Setup>>,
    /// The documents of each cluster state, read once for its date
    /// templates (a suite whose `[setup]` names `indices`).
    documents: Mutex<HashMap<String, Arc<Result<DocumentsOfState, String>>>>,
}

impl std::fmt::Debug for Suite {
    /// Its id and file (the documents of its states need not be `Debug`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Suite").field("id", &self.id).field("path", &self.path).finish_non_exhaustive()
    }
}

impl Suite {
    fn new(case_file: &CaseFile, mut file: SuiteFile) -> Suite {
        let setup = file.setup.take().map(Arc::new);
        Suite { id: case_file.id.clone(), path: case_file.path.clone(), file, setup, documents: Mutex::default() }
    }

    /// A spec file's name as its error cases' ids show it.
    fn spec_name(&self, spec: usize) -> String {
        let path = &self.file.specs[spec];
        let folder = self.path.parent().unwrap_or(Path::new(""));
        path.strip_prefix(folder).unwrap_or(path).to_string_lossy().replace('\\', "/")
    }

    /// The error case of a line that cannot be a case.
    fn bad_line(&self, spec: usize, line: usize, message: String) -> PendingCase {
        Box::new(BrokenCase {
            id: format!("{}/{}:{line}", self.id, self.spec_name(spec)),
            error: CaseError::new(&self.file.specs[spec], CaseErrorKind::SpecLine { line, message }),
        })
    }

    /// The documents of `state`, for its date templates in `time_zone`.
    fn documents(
        &self,
        indices: &Path,
        time_zone: chrono_tz::Tz,
        state: &str,
    ) -> Arc<Result<DocumentsOfState, String>> {
        let mut documents = self.documents.lock().expect("the documents' lock");
        let access = &self.file.access;
        let read = || Arc::new(DocumentsOfState::read(access, indices, state).map(|d| d.with_time_zone(time_zone)));
        documents.entry(state.to_owned()).or_insert_with(read).clone()
    }
}

/// One spec line of a suite, read when its turn comes.
#[derive(Debug)]
struct SpecCase {
    id: String,
    suite: Arc<Suite>,
    spec: usize,
    line: usize,
    offset: u64,
    state: Option<String>,
    prerequisite: Option<Arc<Prerequisite>>,
}

impl CaseReader for SpecCase {
    fn id(&self) -> &str {
        &self.id
    }

    fn source(&self) -> &Path {
        &self.suite.file.specs[self.spec]
    }

    fn load(&self, keys: &dyn KeySet, _env: &CaseEnv) -> LoadedCase {
        match self.job(keys) {
            Ok(job) => LoadedCase::Ready(Box::new(job)),
            Err(error) => LoadedCase::Broken { id: self.id.clone(), error },
        }
    }
}

impl SpecCase {
    fn job(&self, keys: &dyn KeySet) -> Result<Job, CaseError> {
        let suite = &self.suite.file;
        let spec = &suite.specs[self.spec];
        let at_line = |message: String| CaseError::new(spec, CaseErrorKind::SpecLine { line: self.line, message });
        let in_suite = |kind: CaseErrorKind| CaseError::new(&self.suite.path, kind);
        let mut line = specs::read_line(&suite.access, spec, self.offset, self.line).map_err(at_line)?;
        let templates = |e: String| at_line(format!("its date templates: {e}"));
        match (&self.suite.setup, &self.state) {
            (Some(setup), Some(state)) if setup.indices.is_some() && !setup.skip.contains(state) => {
                let indices = setup.indices.as_ref().expect("checked");
                let documents = self.suite.documents(indices, setup.time_zone, state);
                let documents = documents.as_ref().as_ref().map_err(|e| templates(e.clone()))?;
                dates::resolve_line(&mut line, documents).map_err(templates)?;
            }
            // No documents to take dates from (no index groups, a skipped
            // state, a line of no state): a date template in the line is an
            // error naming it, never left as it is.
            (_, state) => {
                let documents = DocumentsOfState::empty(state.as_deref().unwrap_or("(none)"));
                dates::resolve_line(&mut line, &documents).map_err(templates)?;
            }
        }
        let unfilled = |error: FillError, used_in: &str| match error {
            FillError::Missing(field) => at_line(format!(
                "it has no field `{field}`, which the suite's {used_in} uses (`{}`); the line has {}",
                self.suite.path.display(),
                field_names(&line)
            )),
            FillError::Failed(message) => at_line(format!(
                "the suite's {used_in} (`{}`) cannot be filled from it: {message}",
                self.suite.path.display()
            )),
        };
        let text = suite.text.fill(&line).map_err(|error| unfilled(error, "text"))?;
        check_connections(std::slice::from_ref(&suite.connection), keys).map_err(in_suite)?;
        let mut checks = Vec::new();
        for (i, check) in suite.checks.iter().enumerate() {
            let at = format!("checks[{i}]");
            let expected = check.expected.fill(&line).map_err(|error| unfilled(error, &format!("{at}.expected")))?;
            let planned = plan_entry(&check.key, &expected, check.target.clone(), &format!("{at}.key"), keys)
                .map_err(in_suite)?;
            // A failing check is the spec line's: its data is what it checked.
            let line = u32::try_from(self.line).ok();
            checks.extend(planned.into_iter().map(|planned| crate::check::Check { gate: check.gate, line, ..planned }));
        }
        Ok(Job {
            id: self.id.clone(),
            file: spec.clone(),
            agent: suite.agent.clone(),
            connections: vec![suite.connection.clone()],
            success_ratio: suite.success_ratio,
            timeout: suite.timeout,
            metadata: suite.metadata.clone(),
            turns: vec![Turn::new(text, checks)],
            recording: None,
            prerequisite: self.prerequisite.clone(),
            grouped: None,
        })
    }
}

/// A line's field names, for messages: `id, question, clusterStateId`.
fn field_names(line: &Map<String, Value>) -> String {
    let names: Vec<String> = line.keys().map(|key| format!("`{key}`")).collect();
    if names.is_empty() { "no fields".into() } else { names.join(", ") }
}
