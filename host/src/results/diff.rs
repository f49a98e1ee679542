//! Two runs compared ([`diff`]): how each case present in both changed
//! status, which cases were added or removed, how each check key's scores
//! moved, and whether the new run regressed beyond what the
//! [`Allowances`] allow. `assay diff` prints the [`RunDiff`]
//! ([`crate::results::write_diff`]) or writes it as JSON, and exits 1 on a
//! regression.
//!
//! A case that meets its success ratio (passed or flaky) is *passing*, one
//! that does not (failed or error) is *failing*. Every case of both runs is
//! in exactly one of the lists or counts of a [`RunDiff`].

use crate::job::CaseStatus;
use crate::results::{CaseOfRun, ResultsOfRun, RunCounts};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// How many cases whose score moved most a key lists in each direction,
/// unless told otherwise.
pub const DEFAULT_TOP: usize = 5;

/// A mean score change smaller than this is float noise, not a drop.
const SCORE_NOISE: f64 = 1e-9;

/// How much may get worse before the new run counts as regressed; each
/// defaults to nothing. Set from `--allow NAME=VALUE` ([`Allowances::set`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Allowances {
    /// How many cases may go from passing to failing (`newly-failing=N`).
    pub newly_failing: usize,
    /// How many cases may go from passed to flaky (`newly-flaky=N`).
    pub newly_flaky: usize,
    /// How far any key's mean score may drop (`score-drop=X`).
    pub score_drop: f64,
    /// How far one key's mean score may drop, instead of `score_drop`
    /// (`score-drop:KEY=X`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub score_drop_by_key: BTreeMap<String, f64>,
}

impl Allowances {
    /// The allowed drop of `key`'s mean score.
    pub fn score_drop_of(&self, key: &str) -> f64 {
        self.score_drop_by_key.get(key).copied().unwrap_or(self.score_drop)
    }

    /// Sets one allowance from `NAME=VALUE`: `newly-failing=N`,
    /// `newly-flaky=N`, `score-drop=X` or `score-drop:KEY=X` (X a score
    /// difference, 0 to 1). The error says what is wrong, after the flag.
    pub fn set(&mut self, text: &str) -> Result<(), String> {
        let Some((name, value)) = text.split_once('=') else {
            return Err(format!("`{text}` is not NAME=VALUE (e.g. newly-failing=2 or score-drop=0.05)"));
        };
        let count =
            || value.parse::<usize>().map_err(|_| format!("`{text}`: {name} takes a count of cases, e.g. {name}=2"));
        let drop = || match value.parse::<f64>() {
            Ok(drop) if (0.0..=1.0).contains(&drop) => Ok(drop),
            _ => Err(format!("`{text}`: {name} takes a score difference from 0 to 1, e.g. {name}=0.05")),
        };
        match name {
            "newly-failing" => self.newly_failing = count()?,
            "newly-flaky" => self.newly_flaky = count()?,
            "score-drop" => self.score_drop = drop()?,
            _ => match name.strip_prefix("score-drop:") {
                Some(key) if !key.is_empty() => {
                    let drop = drop()?;
                    self.score_drop_by_key.insert(key.to_owned(), drop);
                }
                _ => {
                    return Err(format!(
                        "`{text}`: unknown allowance `{name}`\n\nConsider newly-failing=N, newly-flaky=N, score-drop=X or score-drop:KEY=X"
                    ));
                }
            },
        }
        Ok(())
    }
}

/// How [`diff`] compares.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffOptions {
    /// What may get worse.
    pub allow: Allowances,
    /// How many cases each key lists per direction.
    pub top: usize,
}

impl Default for DiffOptions {
    fn default() -> DiffOptions {
        DiffOptions { allow: Allowances::default(), top: DEFAULT_TOP }
    }
}

/// One run, as the diff names and counts it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSide {
    /// Its results directory.
    pub dir: PathBuf,
    /// Its cases by status, counted from `results.jsonl`.
    #[serde(flatten)]
    pub counts: RunCounts,
}

/// A case in both runs whose status is compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatusChange {
    /// The case's id.
    pub id: String,
    /// How it ended in the old run.
    pub old: CaseStatus,
    /// How it ended in the new run.
    pub new: CaseStatus,
}

/// A case in one run only.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseInOneRun {
    /// The case's id.
    pub id: String,
    /// How it ended in the run that has it.
    pub status: CaseStatus,
}

/// One case's score for a key, in both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScoreMove {
    /// The case's id.
    pub id: String,
    /// Its score in the old run.
    pub old: f64,
    /// Its score in the new run.
    pub new: f64,
    /// `new - old`.
    pub change: f64,
}

/// How one check key's scores moved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyScores {
    /// The key, as written (`not_` included).
    pub key: String,
    /// The mean of the old run's case scores for the key, if it had any.
    pub old_mean: Option<f64>,
    /// The same of the new run.
    pub new_mean: Option<f64>,
    /// How many cases both runs scored with the key.
    pub paired: usize,
    /// The mean change of those cases' scores (none if no case is paired):
    /// added and removed cases move the run means, not this.
    pub change: Option<f64>,
    /// The paired cases whose score dropped most, largest drop first.
    pub dropped: Vec<ScoreMove>,
    /// The paired cases whose score rose most, largest rise first.
    pub rose: Vec<ScoreMove>,
}

/// What got worse beyond its allowance.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "what", rename_all = "kebab-case")]
pub enum Regression {
    /// More cases went from passing to failing than allowed.
    NewlyFailing {
        /// How many did.
        found: usize,
        /// How many may.
        allowed: usize,
    },
    /// More cases went from passed to flaky than allowed.
    NewlyFlaky {
        /// How many did.
        found: usize,
        /// How many may.
        allowed: usize,
    },
    /// A key's mean score (over the paired cases) dropped further than
    /// allowed.
    ScoreDrop {
        /// The key.
        key: String,
        /// How far it dropped (positive).
        drop: f64,
        /// How far it may.
        allowed: f64,
    },
}

impl Regression {
    /// What got worse, for a person: `2 newly failing (allowed 0)`.
    pub fn describe(&self) -> String {
        match self {
            Regression::NewlyFailing { found, allowed } => format!("{found} newly failing (allowed {allowed})"),
            Regression::NewlyFlaky { found, allowed } => format!("{found} newly flaky (allowed {allowed})"),
            Regression::ScoreDrop { key, drop, allowed } => {
                format!("mean {key} dropped {drop:.3} (allowed {allowed})")
            }
        }
    }
}

/// Whether the new run regressed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// Whether anything got worse beyond its allowance.
    pub regressed: bool,
    /// What got worse beyond its allowance.
    pub regressions: Vec<Regression>,
    /// The allowances judged by.
    pub allowed: Allowances,
}

/// Two runs compared. Each list is in id (or key) order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunDiff {
    /// The earlier run.
    pub old: RunSide,
    /// The later run.
    pub new: RunSide,
    /// Passing (passed or flaky) before, failing (failed or error) now.
    pub newly_failing: Vec<StatusChange>,
    /// Failing before, passing now.
    pub newly_passing: Vec<StatusChange>,
    /// Passed before, flaky now.
    pub newly_flaky: Vec<StatusChange>,
    /// Flaky before, passed now.
    pub no_longer_flaky: Vec<StatusChange>,
    /// Failing in both (failed or error, either way).
    pub still_failing: Vec<StatusChange>,
    /// How many cases ended the same, passed or flaky, in both.
    pub unchanged: usize,
    /// Only in the new run.
    pub added: Vec<CaseInOneRun>,
    /// Only in the old run.
    pub removed: Vec<CaseInOneRun>,
    /// Per check key either run scored, in key order.
    pub scores: Vec<KeyScores>,
    /// Whether it regressed.
    pub verdict: Verdict,
}

/// Whether `status` meets the case's success ratio.
fn passing(status: CaseStatus) -> bool {
    matches!(status, CaseStatus::Passed | CaseStatus::Flaky)
}

/// Compares the run `old` with the later run `new`.
pub fn diff(old: &ResultsOfRun, new: &ResultsOfRun, options: &DiffOptions) -> RunDiff {
    let old_by_id: HashMap<&str, &CaseOfRun> = old.cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let new_ids: HashMap<&str, &CaseOfRun> = new.cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut diff = RunDiff {
        old: RunSide { dir: old.dir.clone(), counts: old.counts() },
        new: RunSide { dir: new.dir.clone(), counts: new.counts() },
        newly_failing: Vec::new(),
        newly_passing: Vec::new(),
        newly_flaky: Vec::new(),
        no_longer_flaky: Vec::new(),
        still_failing: Vec::new(),
        unchanged: 0,
        added: Vec::new(),
        removed: Vec::new(),
        scores: Vec::new(),
        verdict: Verdict { regressed: false, regressions: Vec::new(), allowed: options.allow.clone() },
    };
    let mut pairs: Vec<(&CaseOfRun, &CaseOfRun)> = Vec::new();
    for case in &new.cases {
        match old_by_id.get(case.id.as_str()) {
            Some(before) => pairs.push((before, case)),
            None => diff.added.push(CaseInOneRun { id: case.id.clone(), status: case.status }),
        }
    }
    for case in old.cases.iter().filter(|c| !new_ids.contains_key(c.id.as_str())) {
        diff.removed.push(CaseInOneRun { id: case.id.clone(), status: case.status });
    }
    for &(before, after) in &pairs {
        let change = StatusChange { id: after.id.clone(), old: before.status, new: after.status };
        let list = match (before.status, after.status) {
            (was, now) if passing(was) && !passing(now) => &mut diff.newly_failing,
            (was, now) if !passing(was) && passing(now) => &mut diff.newly_passing,
            (was, now) if !passing(was) && !passing(now) => &mut diff.still_failing,
            (CaseStatus::Passed, CaseStatus::Flaky) => &mut diff.newly_flaky,
            (CaseStatus::Flaky, CaseStatus::Passed) => &mut diff.no_longer_flaky,
            _ => {
                diff.unchanged += 1;
                continue;
            }
        };
        list.push(change);
    }
    for list in [
        &mut diff.newly_failing,
        &mut diff.newly_passing,
        &mut diff.newly_flaky,
        &mut diff.no_longer_flaky,
        &mut diff.still_failing,
    ] {
        list.sort_by(|a, b| a.id.cmp(&b.id));
    }
    diff.added.sort_by(|a, b| a.id.cmp(&b.id));
    diff.removed.sort_by(|a, b| a.id.cmp(&b.id));
    diff.scores = key_scores(old, new, &pairs, options.top);
    diff.verdict.regressions = regressions(&diff, &options.allow);
    diff.verdict.regressed = !diff.verdict.regressions.is_empty();
    diff
}

/// The mean of `scores`, if there are any.
fn mean(scores: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, count) = scores.fold((0.0, 0usize), |(sum, count), score| (sum + score, count + 1));
    (count > 0).then(|| sum / count as f64)
}

/// Per key either run scored: the run means, the paired change, the
/// paired cases that moved most each way.
fn key_scores(
    old: &ResultsOfRun,
    new: &ResultsOfRun,
    pairs: &[(&CaseOfRun, &CaseOfRun)],
    top: usize,
) -> Vec<KeyScores> {
    let mut keys: Vec<&str> =
        old.cases.iter().chain(&new.cases).flat_map(|c| c.scores.keys()).map(String::as_str).collect();
    keys.sort_unstable();
    keys.dedup();
    let run_mean = |run: &ResultsOfRun, key: &str| mean(run.cases.iter().filter_map(|c| c.scores.get(key).copied()));
    keys.into_iter()
        .map(|key| {
            let mut moves: Vec<ScoreMove> = pairs
                .iter()
                .filter_map(|(before, after)| {
                    let (old, new) = (*before.scores.get(key)?, *after.scores.get(key)?);
                    Some(ScoreMove { id: after.id.clone(), old, new, change: new - old })
                })
                .collect();
            let paired = moves.len();
            // Float noise is no change: JSON and terminal show 0, not -5e-17.
            let change = mean(moves.iter().map(|m| m.change)).map(|c| if c.abs() > SCORE_NOISE { c } else { 0.0 });
            // Largest drop first; ties by id, so that the order is stable.
            moves.sort_by(|a, b| a.change.total_cmp(&b.change).then_with(|| a.id.cmp(&b.id)));
            let dropped: Vec<ScoreMove> = moves.iter().filter(|m| m.change < 0.0).take(top).cloned().collect();
            let rose: Vec<ScoreMove> = moves.iter().rev().filter(|m| m.change > 0.0).take(top).cloned().collect();
            KeyScores {
                key: key.to_owned(),
                old_mean: run_mean(old, key),
                new_mean: run_mean(new, key),
                paired,
                change,
                dropped,
                rose,
            }
        })
        .collect()
}

/// What got worse beyond `allow`.
fn regressions(diff: &RunDiff, allow: &Allowances) -> Vec<Regression> {
    let mut found = Vec::new();
    if diff.newly_failing.len() > allow.newly_failing {
        found.push(Regression::NewlyFailing { found: diff.newly_failing.len(), allowed: allow.newly_failing });
    }
    if diff.newly_flaky.len() > allow.newly_flaky {
        found.push(Regression::NewlyFlaky { found: diff.newly_flaky.len(), allowed: allow.newly_flaky });
    }
    for scores in &diff.scores {
        let Some(change) = scores.change else { continue };
        let allowed = allow.score_drop_of(&scores.key);
        if -change > allowed + SCORE_NOISE {
            found.push(Regression::ScoreDrop { key: scores.key.clone(), drop: -change, allowed });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::run_of as run;

    fn ids(changes: &[StatusChange]) -> Vec<&str> {
        changes.iter().map(|c| c.id.as_str()).collect()
    }

    use CaseStatus::{Error, Failed, Flaky, Passed};

    #[test]
    fn every_case_lands_in_exactly_one_place() {
        let old = run(
            "a",
            &[
                ("p-f", Passed, None),
                ("fl-e", Flaky, None),
                ("f-p", Failed, None),
                ("e-fl", Error, None),
                ("p-fl", Passed, None),
                ("fl-p", Flaky, None),
                ("f-e", Failed, None),
                ("p-p", Passed, None),
                ("fl-fl", Flaky, None),
                ("gone", Failed, None),
            ],
        );
        let new = run(
            "b",
            &[
                ("new", Passed, None),
                ("fl-fl", Flaky, None),
                ("p-p", Passed, None),
                ("f-e", Error, None),
                ("fl-p", Passed, None),
                ("p-fl", Flaky, None),
                ("e-fl", Flaky, None),
                ("f-p", Passed, None),
                ("fl-e", Error, None),
                ("p-f", Failed, None),
            ],
        );
        let diff = diff(&old, &new, &DiffOptions::default());
        assert_eq!(ids(&diff.newly_failing), ["fl-e", "p-f"]);
        assert_eq!(ids(&diff.newly_passing), ["e-fl", "f-p"]);
        assert_eq!(ids(&diff.newly_flaky), ["p-fl"]);
        assert_eq!(ids(&diff.no_longer_flaky), ["fl-p"]);
        assert_eq!(ids(&diff.still_failing), ["f-e"]);
        assert_eq!(diff.unchanged, 2);
        assert_eq!(diff.added, [CaseInOneRun { id: "new".into(), status: Passed }]);
        assert_eq!(diff.removed, [CaseInOneRun { id: "gone".into(), status: Failed }]);
        assert_eq!(diff.old.counts, RunCounts { cases: 10, passed: 3, flaky: 3, failed: 3, errors: 1 });
        assert_eq!(
            diff.verdict.regressions,
            [Regression::NewlyFailing { found: 2, allowed: 0 }, Regression::NewlyFlaky { found: 1, allowed: 0 }]
        );
        let allow = Allowances { newly_failing: 2, newly_flaky: 1, ..Allowances::default() };
        let allowed = super::diff(&old, &new, &DiffOptions { allow, top: 5 });
        assert!(!allowed.verdict.regressed, "{:?}", allowed.verdict);
    }

    #[test]
    fn scores_move_by_their_paired_cases_and_the_biggest_moves_are_listed() {
        let old = run(
            "a",
            &[("a", Passed, Some(0.9)), ("b", Passed, Some(0.5)), ("c", Passed, Some(0.4)), ("d", Passed, Some(0.0))],
        );
        let new = run(
            "b",
            &[("a", Passed, Some(0.1)), ("b", Passed, Some(0.6)), ("c", Passed, Some(0.3)), ("e", Passed, Some(1.0))],
        );
        let diff = diff(&old, &new, &DiffOptions { top: 1, ..DiffOptions::default() });
        let [rouge] = diff.scores.as_slice() else { panic!("{:?}", diff.scores) };
        assert_eq!(rouge.paired, 3);
        assert!((rouge.old_mean.unwrap() - 0.45).abs() < 1e-12);
        assert!((rouge.new_mean.unwrap() - 0.5).abs() < 1e-12);
        // (-0.8 + 0.1 - 0.1) / 3: the run means rose, the paired cases fell.
        assert!((rouge.change.unwrap() + 0.8 / 3.0).abs() < 1e-12);
        assert_eq!(rouge.dropped.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["a"]);
        assert_eq!(rouge.rose.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["b"]);
        let Regression::ScoreDrop { key, drop, allowed } = &diff.verdict.regressions[0] else { panic!() };
        assert_eq!((key.as_str(), *allowed), ("rouge", 0.0));
        assert!((drop - 0.8 / 3.0).abs() < 1e-12);
        let mut allow = Allowances::default();
        allow.set("score-drop:rouge=0.3").unwrap();
        allow.set("score-drop=0.01").unwrap();
        assert!(!super::diff(&old, &new, &DiffOptions { allow, top: 1 }).verdict.regressed);
    }

    #[test]
    fn allowances_parse_and_say_what_is_wrong() {
        let mut allow = Allowances::default();
        allow.set("newly-failing=2").unwrap();
        allow.set("newly-flaky=3").unwrap();
        allow.set("score-drop=0.05").unwrap();
        assert_eq!((allow.newly_failing, allow.newly_flaky, allow.score_drop), (2, 3, 0.05));
        assert_eq!(allow.score_drop_of("bleu"), 0.05);
        let error = |text| Allowances::default().set(text).unwrap_err();
        assert_eq!(
            error("newly-failing"),
            "`newly-failing` is not NAME=VALUE (e.g. newly-failing=2 or score-drop=0.05)"
        );
        assert_eq!(
            error("newly-failing=-1"),
            "`newly-failing=-1`: newly-failing takes a count of cases, e.g. newly-failing=2"
        );
        assert_eq!(
            error("score-drop=2"),
            "`score-drop=2`: score-drop takes a score difference from 0 to 1, e.g. score-drop=0.05"
        );
        assert!(error("newly-broken=1").contains("unknown allowance `newly-broken`\n\nConsider newly-failing=N"));
        assert!(error("score-drop:=1").contains("unknown allowance `score-drop:`"));
    }
}
