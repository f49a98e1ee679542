//! `--rerun-failed DIR`: the cases of a run to run again, by id (those
//! that failed or errored in an earlier run, and with `--rerun-flaky` the
//! flaky ones), and which of them the case files no longer hold.
//! [`crate::results::ResultsOfRun::rerun`] makes one from a results
//! directory read back.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The ids of the cases to run again, and the results directory they come
/// from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerun {
    source: PathBuf,
    ids: BTreeSet<String>,
}

/// The cases a [`Rerun`] keeps, and the ids it names that no case has.
#[derive(Debug)]
pub struct RerunSelection<T> {
    /// The cases to run again, in their order.
    pub cases: Vec<T>,
    /// Ids of the earlier run that no case has any more (renamed or
    /// deleted files), in name order.
    pub gone: Vec<String>,
}

impl Rerun {
    /// The cases `ids` of the run in `source`.
    pub fn new(source: impl Into<PathBuf>, ids: impl IntoIterator<Item = String>) -> Rerun {
        Rerun { source: source.into(), ids: ids.into_iter().collect() }
    }

    /// The results directory the cases come from.
    #[cfg(any(test, feature = "internals"))] // for tests
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// How many cases it names.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it names none (nothing failed).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether it names the case `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// The items of `items` (each a case, `id_of` its id) it names, and the
    /// ids it names that none has.
    pub fn select<T, Id: AsRef<str>>(&self, items: Vec<T>, id_of: impl Fn(&T) -> Id) -> RerunSelection<T> {
        let mut found = BTreeSet::new();
        let cases: Vec<T> = items
            .into_iter()
            .filter(|item| {
                let id = id_of(item);
                let named = self.ids.contains(id.as_ref());
                if named {
                    found.insert(id.as_ref().to_owned());
                }
                named
            })
            .collect();
        let gone = self.ids.iter().filter(|id| !found.contains(*id)).cloned().collect();
        RerunSelection { cases, gone }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_the_cases_it_names_in_their_order_and_names_the_ids_no_case_has() {
        let rerun = Rerun::new("results/old", ["c".to_owned(), "a".to_owned(), "gone/x".to_owned()]);
        let selection = rerun.select(vec!["a", "b", "c", "d"], |s| *s);
        assert_eq!(selection.cases, ["a", "c"]);
        assert_eq!(selection.gone, ["gone/x"]);
        assert_eq!(rerun.len(), 3);
        assert!(rerun.contains("a") && !rerun.contains("b"));
    }
}
