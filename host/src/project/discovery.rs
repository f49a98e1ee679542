//! What the paths of a run hold: [`Discovered`], the cases
//! `Project::discover` finds, as a stream. Each case file becomes its case,
//! each suite file its spec lines, each promptfoo config its table's cells;
//! ids are made distinct ([`DistinctIds`]) and the filter and selections
//! (`--shard`) applied as the cases come, so that a run of many files
//! starts while the tree is still being walked and never holds every path.
//!
//! Counting the cases walks the tree once more (listings and ids: no case
//! file is read), so that the run can say up front how many it holds.

use crate::case::{CaseFile, CaseFiles, Trust};
use crate::errors::{CaseError, CaseErrorKind, DiscoverError};
use crate::job::{BrokenCase, CaseFilter, DistinctIds, PendingCase, PendingCases};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Which case ids a run keeps (`--shard`, a rerun's selection).
pub type CaseSelection = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The cases under a run's paths, found as they are asked for (see the
/// module's documentation). Iterate it for the cases, in order; collect it
/// when a list is needed.
pub struct Discovered {
    files: CaseFiles,
    /// The promptfoo configs among the files, read when they were found
    /// (their suites are the project's), by path.
    promptfoo: Arc<HashMap<PathBuf, Expanded>>,
    /// Which files are trusted; what they use is recorded there.
    trust: Arc<Trust>,
    filter: Option<CaseFilter>,
    selections: Vec<CaseSelection>,
    count: OnceLock<usize>,
}

impl std::fmt::Debug for Discovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Discovered").field("files", &self.files).finish_non_exhaustive()
    }
}

/// A promptfoo config's cases: their ids and sources (to count them), and
/// the cases themselves until a walk takes them.
pub(super) struct Expanded {
    ids: Vec<(String, PathBuf)>,
    cases: Mutex<Option<Vec<PendingCase>>>,
}

impl Expanded {
    pub(super) fn new(cases: Vec<PendingCase>) -> Expanded {
        let ids = cases.iter().map(|case| (case.id().to_owned(), case.source().to_path_buf())).collect();
        Expanded { ids, cases: Mutex::new(Some(cases)) }
    }
}

impl Discovered {
    pub(super) fn new(
        files: CaseFiles,
        promptfoo: HashMap<PathBuf, Expanded>,
        trust: Arc<Trust>,
        filter: Option<CaseFilter>,
    ) -> Discovered {
        let promptfoo = Arc::new(promptfoo);
        Discovered { files, promptfoo, trust, filter, selections: Vec::new(), count: OnceLock::new() }
    }

    /// Keeps only the cases `filter` selects.
    pub fn filtered(mut self, filter: CaseFilter) -> Discovered {
        self.filter = Some(filter);
        self.count = OnceLock::new();
        self
    }

    /// Keeps only the cases whose ids `keep` selects (after the filter).
    pub fn select(mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) -> Discovered {
        self.selections.push(Arc::new(keep));
        self.count = OnceLock::new();
        self
    }

    /// How many cases it holds: the tree is walked to count them, once.
    pub fn len(&self) -> usize {
        *self.count.get_or_init(|| {
            let mut count = 0;
            self.visit(|_| {
                count += 1;
                true
            });
            count
        })
    }

    /// Whether it holds no case: walks until it finds one.
    pub fn is_empty(&self) -> bool {
        if let Some(count) = self.count.get() {
            return *count == 0;
        }
        let mut found = false;
        self.visit(|_| {
            found = true;
            false
        });
        !found
    }

    /// Calls `found` with the id of each case it holds, in order, while
    /// `found` returns true, reading no case file (suite files and their
    /// spec files are read, for their lines).
    fn visit(&self, mut found: impl FnMut(&str) -> bool) {
        let mut distinct = DistinctIds::default();
        let mut take = |id: &str, source: &Path| {
            let id = distinct.take(id, source);
            !self.keeps(&id) || found(&id)
        };
        for file in self.files.clone() {
            let go_on = match file {
                Err(error) => {
                    let broken = walk_error(error);
                    take(broken.id(), broken.source())
                }
                Ok(file) => match self.promptfoo.get(&file.path) {
                    Some(expanded) => expanded.ids.iter().all(|(id, source)| take(id, source)),
                    None => crate::formats::expand(file, &self.trust).iter().all(|case| take(case.id(), case.source())),
                },
            };
            if !go_on {
                return;
            }
        }
    }

    /// Whether the filter and the selections keep the case `id`.
    fn keeps(&self, id: &str) -> bool {
        self.filter.as_ref().is_none_or(|filter| filter.matches(id)) && self.selections.iter().all(|keep| keep(id))
    }
}

/// A directory that could not be listed while walking: an error case, so
/// that the run reports it.
fn walk_error(error: DiscoverError) -> PendingCase {
    let path = match &error {
        DiscoverError::Io { path, .. } | DiscoverError::NotFound { path } => path.clone(),
        DiscoverError::NoMatch { pattern } | DiscoverError::BadGlob { pattern, .. } => PathBuf::from(pattern),
    };
    let error = CaseError::new(&path, CaseErrorKind::Io(error.to_string()));
    Box::new(BrokenCase { id: path.to_string_lossy().into_owned(), error })
}

impl IntoIterator for Discovered {
    type Item = PendingCase;
    type IntoIter = DiscoveredCases;

    fn into_iter(self) -> DiscoveredCases {
        DiscoveredCases {
            files: self.files.clone().into_iter(),
            discovered: self,
            waiting: VecDeque::new(),
            distinct: DistinctIds::default(),
        }
    }
}

impl From<Discovered> for PendingCases {
    fn from(discovered: Discovered) -> PendingCases {
        PendingCases::new(discovered.len(), discovered.into_iter())
    }
}

/// The cases of a [`Discovered`], in order, found as they are asked for.
pub struct DiscoveredCases {
    discovered: Discovered,
    files: crate::case::CaseFileWalk,
    /// The cases of the last file (a suite's lines), not yet yielded.
    waiting: VecDeque<PendingCase>,
    distinct: DistinctIds,
}

impl std::fmt::Debug for DiscoveredCases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscoveredCases").field("discovered", &self.discovered).finish_non_exhaustive()
    }
}

impl Iterator for DiscoveredCases {
    type Item = PendingCase;

    fn next(&mut self) -> Option<PendingCase> {
        loop {
            if let Some(case) = self.waiting.pop_front() {
                let case = self.distinct.admit(case);
                if self.discovered.keeps(case.id()) {
                    return Some(case);
                }
                continue;
            }
            match self.files.next()? {
                Err(error) => self.waiting.push_back(walk_error(error)),
                Ok(file) => self.waiting.extend(self.expand(file)),
            }
        }
    }
}

impl DiscoveredCases {
    /// The cases of `file`.
    fn expand(&self, file: CaseFile) -> Vec<PendingCase> {
        if let Some(expanded) = self.discovered.promptfoo.get(&file.path) {
            // Taken once: a config named twice is one file, found once.
            return expanded.cases.lock().expect("no walk panics holding a config's cases").take().unwrap_or_default();
        }
        crate::formats::expand(file, &self.discovered.trust)
    }
}
