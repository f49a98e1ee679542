//! From files to runnable cases: read, plan their checks, select by
//! `--filter`. A file that cannot be read or planned becomes an error entry,
//! so one bad file never stops the others.
//!
//! A run takes its cases from a [`CaseSource`]: either cases already
//! loaded, or [`PendingCase`]s (case files, a suite's spec lines: anything
//! that is a [`CaseReader`]) read and planned on worker threads a bounded
//! distance ahead of the runner, so that the first case runs while the last
//! is still on disk and memory stays flat however many cases there are.

use crate::case::{CaseEnv, CaseFile, read_case_file};
use crate::check::{KeySet, plan_case};
use crate::errors::{CaseError, CaseErrorKind};
use crate::run::job::Job;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;

/// A case ready to run, or the reason it cannot.
#[derive(Debug)]
pub enum LoadedCase {
    /// Read and planned: a job for the scheduler.
    Ready(Box<Job>),
    /// Unreadable or unplannable.
    Broken {
        /// The case's id (from its path).
        id: String,
        /// Why.
        error: CaseError,
    },
}

impl LoadedCase {
    /// The case's id.
    pub fn id(&self) -> &str {
        match self {
            LoadedCase::Ready(job) => &job.id,
            LoadedCase::Broken { id, .. } => id,
        }
    }
}

/// `--filter`: selects a case when its id contains the filter text, or
/// matches it as a regular expression.
#[derive(Clone, Debug)]
pub struct CaseFilter {
    text: String,
    regex: Option<regex::Regex>,
}

impl CaseFilter {
    /// A filter matching ids that contain `text` or match it as a regex.
    /// Text that is not a valid regex is matched as a substring only.
    pub fn new(text: &str) -> CaseFilter {
        CaseFilter { text: text.to_owned(), regex: regex::Regex::new(text).ok() }
    }

    /// The text it was made from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether `id` is selected.
    pub fn matches(&self, id: &str) -> bool {
        id.contains(&self.text) || self.regex.as_ref().is_some_and(|r| r.is_match(id))
    }
}

/// One case known by its id, read and planned when its turn comes: a test
/// case file, or a line of a suite's spec (`crate::suite`). What it holds
/// until then is small, so that a run of many cases stays flat in memory.
pub trait CaseReader: Send + Sync + std::fmt::Debug {
    /// The case's id, unique in a run.
    fn id(&self) -> &str;
    /// The file it comes from (a case file, a suite's spec file), for
    /// messages.
    fn source(&self) -> &std::path::Path;
    /// Reads and plans it.
    fn load(&self, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase;
    /// The test case file it is, when it is one (`assay plan --json` shows
    /// a file's case as written).
    fn case_file(&self) -> Option<&CaseFile> {
        None
    }
}

impl CaseReader for CaseFile {
    fn id(&self) -> &str {
        &self.id
    }

    fn source(&self) -> &std::path::Path {
        &self.path
    }

    fn load(&self, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase {
        load_case(self, keys, env)
    }

    fn case_file(&self) -> Option<&CaseFile> {
        Some(self)
    }
}

/// A case of a run, not read yet: what `Project::discover` finds.
pub type PendingCase = Box<dyn CaseReader>;

/// A case known to be an error before it is read (a suite file that cannot
/// be read, an id another case has): reported as that error.
#[derive(Debug)]
pub struct BrokenCase {
    /// Its id.
    pub id: String,
    /// Why it cannot run.
    pub error: CaseError,
}

impl CaseReader for BrokenCase {
    fn id(&self) -> &str {
        &self.id
    }

    fn source(&self) -> &std::path::Path {
        &self.error.file
    }

    fn load(&self, _keys: &dyn KeySet, _env: &CaseEnv) -> LoadedCase {
        LoadedCase::Broken { id: self.id.clone(), error: self.error.clone() }
    }
}

/// `cases` with every id made unique: a case whose id an earlier one has
/// (`a/x.hocon` and `b/x.hocon` given as `a/ b/`, a suite `qa.suite.toml`
/// beside `qa/a1.hocon`) becomes an error case `ID~N` naming both files,
/// so that every case is reported, and replayed, under an id of its own.
pub fn with_distinct_ids(cases: Vec<PendingCase>) -> Vec<PendingCase> {
    let mut first: HashMap<String, std::path::PathBuf> = HashMap::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<PendingCase> = Vec::with_capacity(cases.len());
    for case in cases {
        let id = case.id().to_owned();
        let Some(earlier) = first.get(&id) else {
            first.insert(id, case.source().to_path_buf());
            out.push(case);
            continue;
        };
        let count = taken.entry(id.clone()).or_insert(1);
        *count += 1;
        let mut renamed = format!("{id}~{count}");
        while first.contains_key(&renamed) {
            *count += 1;
            renamed = format!("{id}~{count}");
        }
        let message = format!(
            "its id `{id}` is the id of the case from `{}` too; reported as `{renamed}` and not run\n\nConsider \
             running the folders separately, or renaming one of the files",
            earlier.display()
        );
        let error = CaseError::new(case.source(), CaseErrorKind::Invalid { path: "id".into(), message });
        first.insert(renamed.clone(), case.source().to_path_buf());
        out.push(Box::new(BrokenCase { id: renamed, error }));
    }
    out
}

impl CaseReader for PendingCase {
    fn id(&self) -> &str {
        self.as_ref().id()
    }

    fn source(&self) -> &std::path::Path {
        self.as_ref().source()
    }

    fn load(&self, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase {
        self.as_ref().load(keys, env)
    }

    fn case_file(&self) -> Option<&CaseFile> {
        self.as_ref().case_file()
    }
}

/// Reads and plans every case, keeping the ones `filter` selects.
pub fn load_cases<C: CaseReader>(
    files: &[C],
    keys: &dyn KeySet,
    env: &CaseEnv,
    filter: Option<&CaseFilter>,
) -> Vec<LoadedCase> {
    files.iter().filter(|file| filter.is_none_or(|f| f.matches(file.id()))).map(|file| file.load(keys, env)).collect()
}

/// Reads and plans one test case file. A suite file (`*.suite.toml`) is
/// not one case: it is an error here, pointing at `Project::discover`,
/// which expands it into its spec lines.
pub fn load_case(file: &CaseFile, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase {
    if file.is_suite() {
        let kind = CaseErrorKind::Invalid {
            path: "(file)".into(),
            message: "it is a suite file, which holds many cases; expand it with assay::Project::discover (or \
                      assay::suite::expand) rather than reading it as one test case"
                .into(),
        };
        return LoadedCase::Broken { id: file.id.clone(), error: CaseError::new(&file.path, kind) };
    }
    let planned = read_case_file(&file.path, &file.id, env).and_then(|case| {
        let plan = plan_case(&case, keys).map_err(|kind| CaseError::new(&file.path, kind))?;
        Ok((case, plan))
    });
    match planned {
        Ok((case, plan)) => LoadedCase::Ready(Box::new(Job::from_case(case, plan))),
        Err(error) => LoadedCase::Broken { id: file.id.clone(), error },
    }
}

/// A change made to every case before it runs (`--connection`,
/// `--samples`).
pub type CaseAdjustment = Arc<dyn Fn(&mut Job) + Send + Sync>;

/// The cases of a run, in the order they become ready.
#[derive(Debug)]
pub struct CaseSource {
    count: usize,
    cases: mpsc::Receiver<LoadedCase>,
}

/// How many cases each reader thread may have ready ahead of the runner.
const READ_AHEAD_PER_THREAD: usize = 16;

impl CaseSource {
    /// Cases already loaded, in order.
    pub fn loaded(cases: Vec<LoadedCase>) -> CaseSource {
        let count = cases.len();
        let (sender, receiver) = mpsc::channel(count.max(1));
        for case in cases {
            sender.try_send(case).expect("the channel holds every case");
        }
        CaseSource { count, cases: receiver }
    }

    /// `files` (case files, or any pending cases) read and planned on one
    /// thread per CPU, each case adjusted by `adjust`, at most a few dozen
    /// ahead of the runner. The threads stop when the source is dropped.
    pub fn read<C: CaseReader + 'static>(
        files: Vec<C>,
        keys: Arc<dyn KeySet + Send + Sync>,
        env: Arc<CaseEnv>,
        adjust: Option<CaseAdjustment>,
    ) -> CaseSource {
        let count = files.len();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count.max(1));
        let (sender, receiver) = mpsc::channel(threads * READ_AHEAD_PER_THREAD);
        let files = Arc::new(files);
        let next = Arc::new(AtomicUsize::new(0));
        for _ in 0..threads {
            let (files, next, sender) = (files.clone(), next.clone(), sender.clone());
            let (keys, env, adjust) = (keys.clone(), env.clone(), adjust.clone());
            let reader = move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { return };
                    let mut case = file.load(keys.as_ref(), &env);
                    if let (LoadedCase::Ready(job), Some(adjust)) = (&mut case, &adjust) {
                        adjust(job);
                    }
                    if sender.blocking_send(case).is_err() {
                        return;
                    }
                }
            };
            std::thread::Builder::new().name("assay-reader".into()).spawn(reader).expect("a reader thread starts");
        }
        CaseSource { count, cases: receiver }
    }

    /// How many cases it yields in all.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it yields none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The next case, once one is ready.
    pub(crate) async fn next(&mut self) -> Option<LoadedCase> {
        self.cases.recv().await
    }
}
