//! What the history page shows: runs in the order given, each with its
//! counts, pass rate and per-key mean score, and between each run and the
//! next the cases whose status changed (the library's own [`diff()`]).

use crate::results::diff::{DiffOptions, StatusChange, diff};
use crate::results::{ResultsOfRun, RunCounts};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The history page's data.
#[derive(Debug, Serialize)]
pub(super) struct HistoryPage {
    pub(super) title: String,
    runs: Vec<HistoryRun>,
    keys: Vec<String>,
    steps: Vec<HistoryStep>,
}

/// One run of the history.
#[derive(Debug, Serialize)]
struct HistoryRun {
    /// Its folder's name.
    name: String,
    /// When it started, when its summary says.
    started_at: Option<String>,
    #[serde(flatten)]
    counts: RunCounts,
    /// Passed and flaky over all cases, in percent.
    pass_rate: f64,
    /// Per check key, the mean of the cases' scores.
    means: BTreeMap<String, f64>,
}

/// What changed from one run to the next.
#[derive(Debug, Serialize)]
struct HistoryStep {
    from: String,
    to: String,
    newly_failing: Vec<StatusChange>,
    newly_passing: Vec<StatusChange>,
    newly_flaky: Vec<StatusChange>,
    added: usize,
    removed: usize,
}

/// The page of `runs`, oldest first.
pub(super) fn history(runs: &[ResultsOfRun]) -> HistoryPage {
    let name = |run: &ResultsOfRun| run.dir.file_name().unwrap_or(run.dir.as_os_str()).to_string_lossy().into_owned();
    let mut means: Vec<BTreeMap<String, f64>> = vec![BTreeMap::new(); runs.len()];
    let mut steps = Vec::new();
    for (at, pair) in runs.windows(2).enumerate() {
        let compared = diff(&pair[0], &pair[1], &DiffOptions::default());
        for scores in &compared.scores {
            if let Some(mean) = scores.old_mean {
                means[at].insert(scores.key.clone(), mean);
            }
            if let Some(mean) = scores.new_mean {
                means[at + 1].insert(scores.key.clone(), mean);
            }
        }
        steps.push(HistoryStep {
            from: name(&pair[0]),
            to: name(&pair[1]),
            newly_failing: compared.newly_failing,
            newly_passing: compared.newly_passing,
            newly_flaky: compared.newly_flaky,
            added: compared.added.len(),
            removed: compared.removed.len(),
        });
    }
    let keys: BTreeSet<String> = means.iter().flat_map(|m| m.keys().cloned()).collect();
    let runs: Vec<HistoryRun> = runs
        .iter()
        .zip(means)
        .map(|(run, means)| {
            let mut counts = RunCounts::default();
            for case in &run.cases {
                counts.add(case.status);
            }
            let passing = counts.passed + counts.flaky;
            let pass_rate = if counts.cases == 0 { 0.0 } else { passing as f64 * 100.0 / counts.cases as f64 };
            let started_at = run
                .summary
                .as_ref()
                .and_then(|s| s.json.pointer("/run/started_at"))
                .and_then(|v| v.as_str())
                .map(str::to_owned);
            HistoryRun { name: name(run), started_at, counts, pass_rate, means }
        })
        .collect();
    let title = format!("{} runs, {} → {}", runs.len(), runs[0].name, runs[runs.len() - 1].name);
    HistoryPage { title, runs, keys: keys.into_iter().collect(), steps }
}
