//! A job's [`Prerequisite`]: work that must be done once before the jobs
//! that need it ask their agent (a suite's setup of a cluster state: a
//! command, or an OpenSearch index load). It is shared by those jobs, run by
//! the first of them to start, awaited by the others, and never run for a
//! job answered from a recording. Its failure is every such job's error
//! verdict; jobs without it, or with another one, do not wait for it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use tokio::sync::OnceCell;

/// The work of a prerequisite: a future that says why it failed.
pub type PrerequisiteWork = Box<dyn Fn() -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> + Send + Sync>;

/// Something run once, before the first request of any job that holds it.
pub struct Prerequisite {
    name: String,
    work: PrerequisiteWork,
    outcome: OnceCell<Result<(), String>>,
}

impl fmt::Debug for Prerequisite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prerequisite").field("name", &self.name).field("outcome", &self.outcome.get()).finish()
    }
}

impl PartialEq for Prerequisite {
    /// Two prerequisites are the same when they are one (shared by `Arc`);
    /// this compares names, which a suite makes unique per state.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Prerequisite {
    /// A prerequisite named `name` (for messages: e.g. `the setup of
    /// cluster state "alerting" of suite.suite.toml`), doing `work`.
    pub fn new(name: impl Into<String>, work: PrerequisiteWork) -> Prerequisite {
        Prerequisite { name: name.into(), work, outcome: OnceCell::new() }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs the work the first time it is asked, and waits for it: every
    /// caller gets the one outcome. Should the task running it be dropped
    /// midway, the next caller runs it.
    pub async fn ensure(&self) -> Result<(), String> {
        self.outcome.get_or_init(|| (self.work)()).await.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn it_runs_once_for_every_caller_and_each_gets_the_outcome() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let prerequisite = Arc::new(Prerequisite::new(
            "state a",
            Box::new(move || {
                let counted = counted.clone();
                Box::pin(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    counted.fetch_add(1, Ordering::SeqCst);
                    Err("it broke".to_owned())
                })
            }),
        ));
        let waiting: Vec<_> = (0..5)
            .map(|_| {
                let prerequisite = prerequisite.clone();
                tokio::spawn(async move { prerequisite.ensure().await })
            })
            .collect();
        for task in waiting {
            assert_eq!(task.await.unwrap(), Err("it broke".to_owned()));
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
