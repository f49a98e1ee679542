//! From files to runnable cases: read, plan their checks, select by
//! `--filter`. A file that cannot be read or planned becomes an error entry,
//! so one bad file never stops the others.
//!
//! A run takes its cases from a [`CaseSource`]: either cases already
//! loaded, or [`PendingCase`]s (case files, a suite's spec lines: anything
//! that is a [`CaseReader`]) read and planned on worker threads a bounded
//! distance ahead of the runner, so that the first case runs while the last
//! is still on disk and memory stays flat however many cases there are.

use crate::case::{CaseEnv, CaseFile, PathHasher};
use crate::check::KeySet;
use crate::errors::{CaseError, CaseErrorKind};
use crate::job::Job;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
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
        /// The case file's error, located in its file.
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
/// case file, or a line of a suite's spec (`crate::formats::suite`). What it holds
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
#[cfg(any(test, feature = "internals"))] // for tests
pub fn with_distinct_ids(cases: Vec<PendingCase>) -> Vec<PendingCase> {
    let mut distinct = DistinctIds::default();
    cases.into_iter().map(|case| distinct.admit(case)).collect()
}

/// [`with_distinct_ids`] one case at a time, as a stream of cases comes.
/// It holds what it must know of every case seen in 16 bytes (96 bits of
/// a keyed hash of the id, and where the case came from as an index into a
/// list that grows only when that changes shape), so that it stays small
/// however many cases pass.
#[derive(Debug, Default)]
pub struct DistinctIds {
    /// Each id taken, by its key: the index in `origins` of the source of
    /// the case that took it.
    first: HashMap<IdKey, u32>,
    /// The last `N` of `ID~N` given, for each id given one.
    renamed: HashMap<IdKey, u32>,
    origins: Vec<Origin>,
    hasher: PathHasher,
}

/// An id as [`DistinctIds`] keeps it: 96 bits of its hash by a
/// [`PathHasher`] (SipHash with random keys, so no file can be named to
/// collide on purpose; two of a million ids share one with a probability
/// of about 2^-57). Four-byte words, so that a key and its origin index
/// take 16 bytes in the table, not the 32 a `u128` and its alignment
/// would.
type IdKey = [u32; 3];

/// The key `id` is kept under.
fn id_key(hasher: &PathHasher, id: &str) -> IdKey {
    let hash = hasher.hash_bytes(id.as_bytes());
    [hash as u32, (hash >> 32) as u32, (hash >> 64) as u32]
}

/// Where a case came from, for the message naming it when a later case has
/// its id.
#[derive(Debug)]
enum Origin {
    /// Sources `PREFIX ID SUFFIX`: case files named by their ids, as a walk
    /// finds them (`cases/` and `.hocon`).
    Around { prefix: String, suffix: String },
    /// One source (a suite's spec file; a path that is not UTF-8).
    Whole(PathBuf),
}

impl DistinctIds {
    /// `case`, or an error case under an id of its own when an earlier case
    /// has its id.
    pub fn admit(&mut self, case: PendingCase) -> PendingCase {
        match self.rename(case.id(), case.source()) {
            None => case,
            Some((id, error)) => Box::new(BrokenCase { id, error }),
        }
    }

    /// The id the case `id` from `source` is run under: its own, or the one
    /// [`DistinctIds::admit`] would give it.
    pub fn take<'a>(&mut self, id: &'a str, source: &Path) -> std::borrow::Cow<'a, str> {
        match self.rename(id, source) {
            None => id.into(),
            Some((renamed, _)) => renamed.into(),
        }
    }

    /// Takes `id` for the case from `source`, or, when an earlier case has
    /// it, the id of its own the case gets and the error it is reported as.
    fn rename(&mut self, id: &str, source: &Path) -> Option<(String, CaseError)> {
        let key = id_key(&self.hasher, id);
        let Some(&earlier) = self.first.get(&key) else {
            let origin = self.origin(id, source);
            self.first.insert(key, origin);
            return None;
        };
        let earlier = self.source(earlier, id);
        let count = self.renamed.entry(key).or_insert(1);
        let (renamed, renamed_key) = loop {
            *count += 1;
            let renamed = format!("{id}~{count}");
            let key = id_key(&self.hasher, &renamed);
            if !self.first.contains_key(&key) {
                break (renamed, key);
            }
        };
        let message = format!(
            "its id `{id}` is the id of the case from `{}` too; reported as `{renamed}` and not run\n\nConsider \
             running the folders separately, or renaming one of the files",
            earlier.display()
        );
        let error = CaseError::new(source, CaseErrorKind::Invalid { path: "id".into(), message });
        let origin = self.origin(&renamed, source);
        self.first.insert(renamed_key, origin);
        Some((renamed, error))
    }

    /// The index in `origins` of `source`, the source of the case `id`: the
    /// last one when it fits.
    fn origin(&mut self, id: &str, source: &Path) -> u32 {
        let text = source.to_str();
        let fits = match (self.origins.last(), text) {
            (Some(Origin::Around { prefix, suffix }), Some(text)) => {
                text.len() == prefix.len() + id.len() + suffix.len()
                    && text.starts_with(prefix.as_str())
                    && text.ends_with(suffix.as_str())
                    && text[prefix.len()..].starts_with(id)
            }
            (Some(Origin::Whole(path)), _) => path == source,
            (Some(Origin::Around { .. }), None) | (None, _) => false,
        };
        if !fits {
            let around = text.and_then(|text| {
                let at = text.rfind(id).filter(|_| !id.is_empty())?;
                let suffix = &text[at + id.len()..];
                (!suffix.contains(['/', '\\']))
                    .then(|| Origin::Around { prefix: text[..at].to_owned(), suffix: suffix.to_owned() })
            });
            self.origins.push(around.unwrap_or_else(|| Origin::Whole(source.to_path_buf())));
        }
        (self.origins.len() - 1) as u32
    }

    /// The source of the case `id`, from its origin.
    fn source(&self, origin: u32, id: &str) -> PathBuf {
        match &self.origins[origin as usize] {
            Origin::Around { prefix, suffix } => PathBuf::from(format!("{prefix}{id}{suffix}")),
            Origin::Whole(path) => path.clone(),
        }
    }
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

/// A change made to every case before it runs (`--connection`,
/// `--samples`).
pub type CaseAdjustment = Arc<dyn Fn(&mut Job) + Send + Sync>;

/// The cases of a run before they are read: how many there are, and each
/// as it is asked for (a list, or a walk of directories: see
/// `Project::discover`), so that a run need not hold them all.
pub struct PendingCases {
    count: usize,
    cases: Box<dyn Iterator<Item = PendingCase> + Send>,
}

impl std::fmt::Debug for PendingCases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingCases").field("count", &self.count).finish_non_exhaustive()
    }
}

impl PendingCases {
    /// `count` cases, as `cases` yields them. A count that turns out wrong
    /// (the files changed meanwhile) shows in the progress only: the run
    /// holds the cases `cases` yields.
    pub fn new(count: usize, cases: impl Iterator<Item = PendingCase> + Send + 'static) -> PendingCases {
        PendingCases { count, cases: Box::new(cases.fuse()) }
    }

    /// How many cases there are.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl IntoIterator for PendingCases {
    type Item = PendingCase;
    type IntoIter = Box<dyn Iterator<Item = PendingCase> + Send>;

    fn into_iter(self) -> Self::IntoIter {
        self.cases
    }
}

impl<C: CaseReader + 'static> From<Vec<C>> for PendingCases {
    fn from(cases: Vec<C>) -> PendingCases {
        PendingCases::new(cases.len(), cases.into_iter().map(|case| Box::new(case) as PendingCase))
    }
}

/// The cases of a run, in the order they become ready.
#[derive(Debug)]
pub struct CaseSource {
    count: usize,
    /// How many cases the source yields, once it is known (when the last is
    /// taken to be read).
    yielded: Arc<OnceLock<usize>>,
    /// Cases as the readers send them: a few at a time.
    batches: mpsc::Receiver<Vec<LoadedCase>>,
    /// The rest of the batch last received.
    ready: std::vec::IntoIter<LoadedCase>,
}

/// How many cases each reader thread may have ready ahead of the runner.
const READ_AHEAD_PER_THREAD: usize = 16;

/// How many cases a reader sends at once while the runner is busy. Each
/// send may wake the runner, and each reader waiting for room is woken by
/// the runner: sending one case at a time cost two thread switches a case.
/// A reader sends what it has at once when the runner has nothing left to
/// take, so that batching never keeps the runner waiting.
const READ_BATCH: usize = 8;

impl CaseSource {
    /// Cases already loaded, in order.
    pub fn loaded(cases: Vec<LoadedCase>) -> CaseSource {
        let count = cases.len();
        let (_, batches) = mpsc::channel(1);
        CaseSource { count, yielded: Arc::new(OnceLock::from(count)), batches, ready: cases.into_iter() }
    }

    /// `cases` (case files, or any pending cases) read and planned on one
    /// thread per CPU as they come, each case adjusted by `adjust`, at most
    /// a few dozen ahead of the runner. The threads stop when the source is
    /// dropped.
    pub fn read(
        cases: impl Into<PendingCases>,
        keys: Arc<dyn KeySet + Send + Sync>,
        env: Arc<CaseEnv>,
        adjust: Option<CaseAdjustment>,
    ) -> CaseSource {
        let PendingCases { count, cases } = cases.into();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count.max(1));
        let (sender, batches) = mpsc::channel((threads * READ_AHEAD_PER_THREAD / READ_BATCH).max(1));
        let next = Arc::new(Mutex::new(Pending { cases, taken: 0 }));
        let yielded = Arc::new(OnceLock::new());
        for _ in 0..threads {
            let (next, sender, yielded) = (next.clone(), sender.clone(), yielded.clone());
            let (keys, env, adjust) = (keys.clone(), env.clone(), adjust.clone());
            let reader = move || {
                let mut batch = Vec::with_capacity(READ_BATCH);
                loop {
                    let Some(file) = next.lock().expect("no reader panics holding the cases").next(&yielded) else {
                        if !batch.is_empty() {
                            let _ = sender.blocking_send(batch);
                        }
                        return;
                    };
                    let mut case = file.load(keys.as_ref(), &env);
                    if let (LoadedCase::Ready(job), Some(adjust)) = (&mut case, &adjust) {
                        adjust(job);
                    }
                    batch.push(case);
                    let runner_waits = sender.capacity() == sender.max_capacity();
                    if (batch.len() == READ_BATCH || runner_waits)
                        && sender.blocking_send(std::mem::replace(&mut batch, Vec::with_capacity(READ_BATCH))).is_err()
                    {
                        return;
                    }
                }
            };
            std::thread::Builder::new().name("assay-reader".into()).spawn(reader).expect("a reader thread starts");
        }
        CaseSource { count, yielded, batches, ready: Vec::new().into_iter() }
    }

    /// How many cases it yields in all, as counted before the run (see
    /// [`PendingCases::new`]).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it yields none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many cases it yielded in all, once it has yielded its last.
    pub(crate) fn yielded(&self) -> Arc<OnceLock<usize>> {
        self.yielded.clone()
    }

    /// The next case, once one is ready.
    pub(crate) async fn next(&mut self) -> Option<LoadedCase> {
        loop {
            if let Some(case) = self.ready.next() {
                return Some(case);
            }
            self.ready = self.batches.recv().await?.into_iter();
        }
    }
}

/// The cases not yet taken by a reader thread.
struct Pending {
    cases: Box<dyn Iterator<Item = PendingCase> + Send>,
    taken: usize,
}

impl Pending {
    /// The next case, counted; at the end, the count is set in `yielded`.
    fn next(&mut self, yielded: &OnceLock<usize>) -> Option<PendingCase> {
        let case = self.cases.next();
        match case {
            Some(_) => self.taken += 1,
            None => {
                let _ = yielded.set(self.taken);
            }
        }
        case
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, id: &str) -> PendingCase {
        Box::new(CaseFile { path: path.into(), id: id.into() })
    }

    fn spec_line(id: &str, spec: &str) -> PendingCase {
        let error = CaseError::new(Path::new(spec), CaseErrorKind::Io("a spec line".into()));
        Box::new(BrokenCase { id: id.into(), error })
    }

    struct NoKeys;
    impl KeySet for NoKeys {
        fn has_key(&self, _key: &str) -> bool {
            false
        }
        fn suggest(&self, _key: &str) -> Option<String> {
            None
        }
    }

    /// The message of a renamed case.
    fn message(case: &PendingCase) -> String {
        match case.load(&NoKeys, &CaseEnv::default()) {
            LoadedCase::Broken { error, .. } => error.to_string(),
            LoadedCase::Ready(_) => panic!("`{}` is not an error case", case.id()),
        }
    }

    #[test]
    fn a_repeated_id_is_renamed_and_names_the_earlier_file_whatever_its_shape() {
        let cases = vec![
            file("cases/a/x.hocon", "x"),
            file("cases/a/y.hocon", "y"),
            spec_line("qa/s1", "cases/qa/spec.jsonl"),
            file("./b/x.suite.toml", "x"),
            file("cases/b/x.hocon", "x"),
            file("cases/qa/s1.hocon", "qa/s1"),
            file("cases/x~3.hocon", "x~3"),
            file("cases/c/x.hocon", "x"),
            file("/not/\\/x.hocon", "y"),
        ];
        let out = with_distinct_ids(cases);
        let ids: Vec<&str> = out.iter().map(|c| c.id()).collect();
        assert_eq!(ids, ["x", "y", "qa/s1", "x~2", "x~3", "qa/s1~2", "x~3~2", "x~4", "y~2"]);
        assert!(message(&out[3]).contains("is the id of the case from `cases/a/x.hocon` too"), "{}", message(&out[3]));
        assert!(message(&out[4]).contains("from `cases/a/x.hocon` too; reported as `x~3`"), "{}", message(&out[4]));
        assert!(message(&out[5]).contains("from `cases/qa/spec.jsonl` too"), "{}", message(&out[5]));
        assert!(message(&out[6]).contains("from `cases/b/x.hocon` too"), "{}", message(&out[6]));
        assert!(message(&out[8]).contains("from `cases/a/y.hocon` too"), "{}", message(&out[8]));
    }

    #[test]
    fn an_id_takes_16_bytes_in_the_table() {
        // The 100,000-case run's memory target depends on it (the book,
        // "Performance"): a `u128` key would take 32.
        assert_eq!(std::mem::size_of::<(IdKey, u32)>(), 16);
        let hasher = PathHasher::default();
        assert_eq!(id_key(&hasher, "cases/x"), id_key(&hasher, "cases/x"));
        assert_ne!(id_key(&hasher, "cases/x"), id_key(&hasher, "cases/y"));
    }

    #[test]
    fn the_readers_yield_every_case_once_whether_the_runner_keeps_up_or_not() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        for pause_every in [1, 7, usize::MAX] {
            let count = 500;
            let cases = (0..count).map(|i| spec_line(&format!("c{i:03}"), "cases/spec.jsonl"));
            let keys: Arc<dyn KeySet + Send + Sync> = Arc::new(NoKeys);
            let mut source = CaseSource::read(PendingCases::new(count, cases), keys, Arc::default(), None);
            let mut ids = runtime.block_on(async {
                let mut ids = Vec::new();
                while let Some(case) = source.next().await {
                    // A runner slower than the readers now and then.
                    if ids.len() % pause_every == 0 {
                        tokio::time::sleep(std::time::Duration::from_micros(200)).await;
                    }
                    ids.push(case.id().to_owned());
                }
                ids
            });
            ids.sort();
            let expected: Vec<String> = (0..count).map(|i| format!("c{i:03}")).collect();
            assert_eq!(ids, expected, "pausing every {pause_every}");
            assert_eq!(source.yielded().get(), Some(&count));
        }
    }
}
