//! What the reports say about a case and about a suite beyond pass or fail:
//! the seed's per-case flags ([`CaseFlags`]: the agent's request failed,
//! its answer was empty, a check could not be evaluated), how many cases
//! had each ([`FlagCounts`]), and for every file that holds more than one
//! case (a suite) its pass rate and the mean score of each check key
//! ([`SuiteTally`], [`SuiteSummary`]).
//!
//! A file holding one case (a HOCON case file) is no suite: its case is
//! counted in the run's summary only, so that such runs report as they
//! always did.

use crate::check::Outcome;
use crate::job::{CaseResult, CaseStatus, InteractionResult};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The flags of one case, as the OpenSearch assistant framework's results
/// carry them; each is true when it happened in any sample, over any
/// connection, in any turn. A case that could not run at all (its `error`)
/// has none set: its error says why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CaseFlags {
    /// An interaction's request to the agent failed (unreachable, refused,
    /// timed out, ...).
    pub api_error: bool,
    /// An answer came back with no text, or only whitespace.
    pub empty_output: bool,
    /// A check could not be evaluated (a plugin fault, a rejected value, a
    /// key no plugin provides, ...).
    pub evaluation_error: bool,
}

impl CaseFlags {
    /// The flags of `case`.
    pub fn of(case: &CaseResult) -> CaseFlags {
        let mut flags = CaseFlags::default();
        for interaction in interactions(case) {
            flags.api_error |= interaction.error.is_some();
            let text = interaction.response.as_ref().map(|r| r.text.as_deref().unwrap_or_default());
            flags.empty_output |= text.is_some_and(|t| t.trim().is_empty());
            flags.evaluation_error |= interaction.checks.iter().any(|c| c.verdict.outcome == Outcome::Error);
        }
        flags
    }

    /// The names of the flags that are set, as `results.jsonl` spells them.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        let all = [
            ("api_error", self.api_error),
            ("empty_output", self.empty_output),
            ("evaluation_error", self.evaluation_error),
        ];
        all.into_iter().filter(|(_, set)| *set).map(|(name, _)| name)
    }
}

/// Every interaction of `case`, over every sample and connection.
fn interactions(case: &CaseResult) -> impl Iterator<Item = &InteractionResult> {
    case.samples.iter().flat_map(|s| &s.runs).flat_map(|r| &r.interactions)
}

/// How many cases had each flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlagCounts {
    /// Cases with `api_error`.
    pub api_error: usize,
    /// Cases with `empty_output`.
    pub empty_output: usize,
    /// Cases with `evaluation_error`.
    pub evaluation_error: usize,
}

impl FlagCounts {
    /// Counts one case's flags.
    pub fn add(&mut self, flags: CaseFlags) {
        self.api_error += usize::from(flags.api_error);
        self.empty_output += usize::from(flags.empty_output);
        self.evaluation_error += usize::from(flags.evaluation_error);
    }
}

/// The totals of one suite: a file that held more than one case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SuiteSummary {
    /// The file.
    pub file: PathBuf,
    /// How many of its cases ran (or failed to load).
    pub cases: usize,
    /// How many met their success ratio (passed or flaky).
    pub passed: usize,
    /// Per check key (as written, `not_` included): the mean over the
    /// cases whose checks with that key gave a score of each case's score,
    /// itself the mean of those checks' scores (over samples, connections
    /// and turns). Keys in name order.
    pub mean_scores: BTreeMap<String, f64>,
}

impl SuiteSummary {
    /// The share of cases that passed, in [0, 1].
    pub fn pass_rate(&self) -> f64 {
        if self.cases == 0 { 0.0 } else { self.passed as f64 / self.cases as f64 }
    }
}

/// Collects [`SuiteSummary`]s from finished cases, in any order.
#[derive(Clone, Debug, Default)]
pub struct SuiteTally {
    files: BTreeMap<PathBuf, FileTally>,
}

/// One file's running totals.
#[derive(Clone, Debug, Default)]
struct FileTally {
    cases: usize,
    passed: usize,
    /// Per key: the sum of the case scores, and how many cases gave one.
    scores: BTreeMap<String, (f64, usize)>,
}

impl SuiteTally {
    /// Counts one finished case under its file. A test case file named by
    /// the case's id (`ID.hocon`) holds that case alone (ids are distinct
    /// in a run), so it is no suite and is not kept: a run of many case
    /// files stays flat in memory.
    pub fn add(&mut self, case: &CaseResult) {
        if case.file.ends_with(format!("{}.hocon", case.id)) {
            return;
        }
        let file = self.files.entry(case.file.clone()).or_default();
        file.cases += 1;
        file.passed += usize::from(matches!(case.status, CaseStatus::Passed | CaseStatus::Flaky));
        for (key, score) in case_scores(case) {
            let (sum, count) = file.scores.entry(key).or_default();
            *sum += score;
            *count += 1;
        }
    }

    /// The files that held more than one case, by path.
    pub fn suites(&self) -> Vec<SuiteSummary> {
        let suites = self.files.iter().filter(|(_, tally)| tally.cases > 1);
        suites
            .map(|(file, tally)| SuiteSummary {
                file: file.clone(),
                cases: tally.cases,
                passed: tally.passed,
                mean_scores: tally
                    .scores
                    .iter()
                    .map(|(key, (sum, count))| (key.clone(), sum / *count as f64))
                    .collect(),
            })
            .collect()
    }
}

/// `case`'s score per key: the mean of the finite scores its checks with
/// that key gave; keys whose checks gave none are left out.
pub(crate) fn case_scores(case: &CaseResult) -> BTreeMap<String, f64> {
    mean_per_key(interactions(case).flat_map(|i| &i.checks).map(|c| (c.key.as_str(), c.verdict.score)))
}

/// Per key, the mean of the finite scores among `scores` (each a check's
/// key and score); keys with none are left out. A case's score per key,
/// for the tally here and for a results directory read back
/// (`crate::results::read_results_dir`).
pub(crate) fn mean_per_key<'a>(scores: impl IntoIterator<Item = (&'a str, Option<f64>)>) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for (key, score) in scores {
        // A plugin's NaN or infinity would make the mean meaningless.
        if let Some(score) = score.filter(|s| s.is_finite()) {
            let (sum, count) = sums.entry(key).or_default();
            *sum += score;
            *count += 1;
        }
    }
    sums.into_iter().map(|(key, (sum, count))| (key.to_owned(), sum / count as f64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    fn flags(id: &str) -> CaseFlags {
        let cases = fixtures::cases().into_iter().chain(fixtures::suite_cases());
        let case = cases.into_iter().find(|c| c.id == id).unwrap();
        CaseFlags::of(&case)
    }

    #[test]
    fn each_flag_names_what_happened_and_a_case_that_never_ran_has_none() {
        assert_eq!(flags("echo/hello"), CaseFlags::default());
        assert_eq!(flags("http/down"), CaseFlags { api_error: true, ..CaseFlags::default() });
        assert_eq!(flags("escape/\u{1b}[2Kforged <&>"), CaseFlags { evaluation_error: true, ..CaseFlags::default() });
        assert_eq!(flags("broken/bad"), CaseFlags::default());
        assert_eq!(flags("cat/blank"), CaseFlags { empty_output: true, ..CaseFlags::default() });
    }

    #[test]
    fn only_files_with_more_than_one_case_are_suites_and_scores_average_per_case() {
        let mut tally = SuiteTally::default();
        for case in fixtures::cases().iter().chain(&fixtures::suite_cases()) {
            tally.add(case);
        }
        let suites = tally.suites();
        let files: Vec<&str> = suites.iter().map(|s| s.file.to_str().unwrap()).collect();
        assert_eq!(files, ["suites/cat.suite.toml", "suites/ppl.suite.toml"]);
        let cat = &suites[0];
        assert_eq!((cat.cases, cat.passed), (4, 2));
        // rouge: 0.5 and 0.75 for the first two cases, the mean of 0.2 and
        // 0.4 for the third (two samples); the fourth gave no score.
        let keys: Vec<&str> = cat.mean_scores.keys().map(String::as_str).collect();
        assert_eq!(keys, ["rouge", "similarity"]);
        assert!((cat.mean_scores["rouge"] - (0.5 + 0.75 + 0.3) / 3.0).abs() < 1e-12, "{cat:?}");
        assert_eq!(cat.mean_scores["similarity"], 0.9);
        assert_eq!(cat.pass_rate(), 0.5);
        let ppl = &suites[1];
        assert_eq!((ppl.cases, ppl.passed), (2, 1));
        assert_eq!(ppl.mean_scores, BTreeMap::from([("levenshtein".to_owned(), 1.0)]));
    }

    #[test]
    fn a_case_file_named_by_its_case_id_is_not_kept() {
        let mut case = fixtures::cases().remove(0);
        case.file = PathBuf::from(format!("cases/{}.hocon", case.id));
        let mut tally = SuiteTally::default();
        tally.add(&case);
        assert!(tally.files.is_empty(), "{tally:?}");
        case.file = PathBuf::from("cases/other.hocon");
        tally.add(&case);
        assert_eq!(tally.files.len(), 1);
    }
}
