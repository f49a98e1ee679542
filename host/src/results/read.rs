//! A results directory read back: `results.jsonl` (every line, whole, and
//! typed as far as comparing runs needs: id, status, flags, per check key
//! the case's score) and `summary.json` when the run got to write it (a
//! killed run did not). What [`crate::results::diff`] compares, and what a
//! report of a finished run starts from.
//!
//! Lines are read leniently: what an older assay did not write (the flags)
//! reads as unset, and fields this reader does not type are kept in each
//! line's JSON. Every error names the file, and the line for a line's.

use crate::errors::ReadResultsError;
use crate::job::{CaseStatus, json_error};
use crate::report::CaseFlags;
use crate::report::mean_per_key;
use crate::run::Shard;
use crate::results::Rerun;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// How many of the runs found in a folder that is not one's own are
/// suggested.
const RUNS_SUGGESTED: usize = 3;

/// One run's results, as its results directory holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultsOfRun {
    /// The directory.
    pub dir: PathBuf,
    /// `summary.json`, when the run finished and wrote it.
    pub summary: Option<SummaryOfRun>,
    /// Every case, in the order of `results.jsonl` (the order they
    /// finished in).
    pub cases: Vec<CaseOfRun>,
}

/// `summary.json`: its counts typed, and the whole of it.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryOfRun {
    /// The counts it gives.
    pub counts: RunCounts,
    /// Wall-clock time of the run, in milliseconds.
    pub duration_ms: f64,
    /// The shard the run was (`--shard K/N`), if it was one.
    pub shard: Option<Shard>,
    /// The results directory whose failed cases the run ran again
    /// (`--rerun-failed DIR`), if it did.
    pub rerun_of: Option<PathBuf>,
    /// The file's JSON, whole.
    pub json: Value,
}

/// How many cases ended each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCounts {
    /// Every case.
    pub cases: usize,
    /// Passed.
    pub passed: usize,
    /// Passed, with some failed samples.
    pub flaky: usize,
    /// Failed a check.
    pub failed: usize,
    /// Errored.
    pub errors: usize,
}

impl RunCounts {
    /// Counts one case that ended as `status`.
    pub fn add(&mut self, status: CaseStatus) {
        self.cases += 1;
        match status {
            CaseStatus::Passed => self.passed += 1,
            CaseStatus::Flaky => self.flaky += 1,
            CaseStatus::Failed => self.failed += 1,
            CaseStatus::Error => self.errors += 1,
        }
    }
}

/// One line of `results.jsonl`.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseOfRun {
    /// The case's id.
    pub id: String,
    /// Its file.
    pub file: PathBuf,
    /// The agent it talked to (empty when its file could not be read).
    pub agent: String,
    /// How it ended.
    pub status: CaseStatus,
    /// Its seed-style flags (unset in results written before there were
    /// any).
    pub flags: CaseFlags,
    /// Per check key (as written, `not_` included), the mean of the scores
    /// its checks with that key gave, over samples, connections and turns,
    /// as the suite summaries count them; keys that gave none are left
    /// out.
    pub scores: BTreeMap<String, f64>,
    /// Its line in `results.jsonl`, 1-based.
    pub line: usize,
    /// The line's JSON, whole.
    pub json: Value,
}

impl ResultsOfRun {
    /// How many cases ended each way, counted from `results.jsonl`.
    pub fn counts(&self) -> RunCounts {
        let mut counts = RunCounts::default();
        for case in &self.cases {
            counts.add(case.status);
        }
        counts
    }

    /// Its cases to run again (`assay run --rerun-failed DIR`): those that
    /// failed or errored, and the flaky ones when `flaky` is set.
    pub fn rerun(&self, flaky: bool) -> Rerun {
        let again = |status| match status {
            CaseStatus::Failed | CaseStatus::Error => true,
            CaseStatus::Flaky => flaky,
            CaseStatus::Passed => false,
        };
        Rerun::new(&self.dir, self.cases.iter().filter(|c| again(c.status)).map(|c| c.id.clone()))
    }
}

/// Reads the results directory `dir` (or, given its `results.jsonl`, the
/// directory holding it). A folder holding no `results.jsonl` is an error
/// that names the runs in it, newest first, when it holds some (as
/// `results/` does).
pub fn read_results_dir(dir: &Path) -> Result<ResultsOfRun, ReadResultsError> {
    let (dir, lines_path) = results_file(dir)?;
    let cases = read_lines(&lines_path)?;
    let summary = read_summary(&dir.join(crate::report::SUMMARY_FILE))?;
    Ok(ResultsOfRun { dir: dir.to_owned(), summary, cases })
}

/// [`read_results_dir`] a line at a time, for readers that must not hold
/// the whole run (the HTML report of a large one): `visit` gets each line
/// of `results.jsonl` (its 1-based number and text; blank lines skipped,
/// ids checked unique as they come) and the summary is returned with the
/// directory's path. The same errors as [`read_results_dir`].
pub fn stream_results_dir<E>(
    dir: &Path,
    visit: impl FnMut(usize, &str) -> Result<(), E>,
) -> Result<(PathBuf, Option<SummaryOfRun>), StreamError<E>> {
    let (dir, lines_path) = results_file(dir).map_err(StreamError::Read)?;
    each_line(&lines_path, visit)?;
    let summary = read_summary(&dir.join(crate::report::SUMMARY_FILE)).map_err(StreamError::Read)?;
    Ok((dir.to_owned(), summary))
}

/// Where one line of a results file is: its number (from 1), and the
/// bytes it takes from `offset` (its newline left out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineAt {
    pub number: u32,
    pub offset: u64,
    pub len: u32,
}

/// A results directory opened to be read a line at a time: the directory,
/// its `results.jsonl` and its summary (the errors of
/// [`read_results_dir`]).
pub(crate) fn open_results_dir(dir: &Path) -> Result<(PathBuf, PathBuf, Option<SummaryOfRun>), ReadResultsError> {
    let (dir, lines_path) = results_file(dir)?;
    let summary = read_summary(&dir.join(crate::report::SUMMARY_FILE))?;
    Ok((dir.to_owned(), lines_path, summary))
}

/// Each non-blank line of the results file `path`, where it is and its
/// text, holding one line at a time: the reading of a merge, which must
/// not hold a million cases.
pub(crate) fn each_line_at<E>(
    path: &Path,
    mut visit: impl FnMut(LineAt, &str) -> Result<(), E>,
) -> Result<(), StreamError<E>> {
    use std::io::BufRead;
    let read_error = |cause| StreamError::Read(ReadResultsError::Read { path: path.to_owned(), cause });
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(read_error)?);
    let (mut offset, mut number, mut bytes) = (0u64, 0u32, Vec::new());
    loop {
        bytes.clear();
        let read = reader.read_until(b'\n', &mut bytes).map_err(read_error)?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        let bad_line = |cause: String| {
            StreamError::Read(ReadResultsError::Line { path: path.to_owned(), line: number as usize, cause })
        };
        let text = std::str::from_utf8(&bytes).map_err(|e| bad_line(e.to_string()))?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        if !text.trim().is_empty() {
            let len = u32::try_from(text.len()).map_err(|_| bad_line("it is longer than 4 GiB".into()))?;
            visit(LineAt { number, offset, len }, text).map_err(StreamError::Visit)?;
        }
        offset += read as u64;
    }
}

/// The results directory `dir` names (itself, or the folder of the
/// `results.jsonl` it names) and its `results.jsonl`; a folder without one
/// is an error naming the runs in it.
fn results_file(dir: &Path) -> Result<(&Path, PathBuf), ReadResultsError> {
    let dir = match dir.file_name() {
        Some(name) if name == crate::job::RESULTS_FILE && dir.is_file() => dir.parent().unwrap_or(Path::new(".")),
        _ => dir,
    };
    let lines_path = dir.join(crate::job::RESULTS_FILE);
    if !lines_path.is_file() {
        if !dir.is_dir() {
            let cause = std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory");
            return Err(ReadResultsError::Read { path: dir.to_owned(), cause });
        }
        return Err(ReadResultsError::NotAResultsDir { dir: dir.to_owned(), runs: runs_in(dir) });
    }
    Ok((dir, lines_path))
}

/// Why [`stream_results_dir`] stopped: the directory could not be read,
/// or the visitor said so.
#[derive(Debug)]
pub enum StreamError<E> {
    /// The directory or a line of it could not be read.
    Read(ReadResultsError),
    /// The visitor's error.
    Visit(E),
}

/// The results directories directly in `dir`, newest first (their
/// timestamped names sort by time), at most [`RUNS_SUGGESTED`].
fn runs_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut runs: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join(crate::job::RESULTS_FILE).is_file())
        .collect();
    runs.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    runs.truncate(RUNS_SUGGESTED);
    runs
}

/// The fields of a line this reader types.
#[derive(Deserialize)]
#[serde(expecting = "a JSON object with the case's `id` and `status`")]
struct CaseLine {
    id: String,
    #[serde(default)]
    file: PathBuf,
    #[serde(default)]
    agent: String,
    status: CaseStatus,
    #[serde(default)]
    api_error: bool,
    #[serde(default)]
    empty_output: bool,
    #[serde(default)]
    evaluation_error: bool,
    #[serde(default)]
    samples: Vec<SampleLine>,
}

#[derive(Deserialize)]
struct SampleLine {
    #[serde(default)]
    runs: Vec<RunLine>,
}

#[derive(Deserialize)]
struct RunLine {
    #[serde(default)]
    interactions: Vec<InteractionLine>,
}

#[derive(Deserialize)]
struct InteractionLine {
    #[serde(default)]
    checks: Vec<CheckLine>,
}

#[derive(Deserialize)]
struct CheckLine {
    key: String,
    #[serde(default)]
    score: Option<f64>,
}

/// Each line of `results.jsonl` at `path`, to `visit` with its 1-based
/// number: blank lines skipped, a line that is no JSON object with an `id`
/// and a `status` an error naming it, and so is an id a line before had.
fn each_line<E>(path: &Path, mut visit: impl FnMut(usize, &str) -> Result<(), E>) -> Result<(), StreamError<E>> {
    /// What a line must hold, read without keeping the rest.
    #[derive(Deserialize)]
    #[serde(expecting = "a JSON object with the case's `id` and `status`")]
    struct Identified {
        id: String,
        #[allow(dead_code)]
        status: CaseStatus,
    }
    let read_error = |cause| StreamError::Read(ReadResultsError::Read { path: path.to_owned(), cause });
    let reader = std::io::BufReader::new(std::fs::File::open(path).map_err(read_error)?);
    // Each id seen, as a 128-bit hash (16 bytes a case, whatever its id):
    // the line of the first of two is looked for again only when there are
    // two.
    let ids = IdHasher::default();
    let mut seen: HashSet<[u64; 2]> = HashSet::new();
    for (index, text) in reader.lines().enumerate() {
        let line = index + 1;
        let text = text.map_err(read_error)?;
        if text.trim().is_empty() {
            continue;
        }
        let bad_line = |cause: String| StreamError::Read(ReadResultsError::Line { path: path.to_owned(), line, cause });
        let identified: Identified = serde_json::from_str(&text).map_err(|e| bad_line(line_error(&e)))?;
        if !seen.insert(ids.key(&identified.id)) {
            let first = first_line_of(path, &identified.id).map_err(read_error)?.unwrap_or(line);
            let id = identified.id;
            return Err(StreamError::Read(ReadResultsError::Duplicate { path: path.to_owned(), id, first, line }));
        }
        visit(line, &text).map_err(StreamError::Visit)?;
    }
    Ok(())
}

/// What is wrong with a line of a results file that is not a case's
/// result: for a value of the wrong shape, without where (it is one line).
pub(crate) fn line_error(error: &serde_json::Error) -> String {
    match error.classify() {
        serde_json::error::Category::Data => {
            let message = error.to_string();
            let at = message.rfind(" at line ").unwrap_or(message.len());
            message[..at].to_owned()
        }
        _ => json_error(error),
    }
}

/// Hashes case ids to 128 bits (two independent keyed hashes), so that a
/// reader checking ids unique, or a merge, keeps 16 bytes a case whatever
/// its id: two ids among a million collide with odds of about one in 2^88.
#[derive(Default)]
pub(crate) struct IdHasher(RandomState, RandomState);

impl IdHasher {
    pub(crate) fn key(&self, id: &str) -> [u64; 2] {
        [self.0.hash_one(id), self.1.hash_one(id)]
    }
}

/// The number of the first line of the results file `path` holding the
/// case `id`, if one does.
fn first_line_of(path: &Path, id: &str) -> std::io::Result<Option<usize>> {
    #[derive(Deserialize)]
    struct Id {
        id: String,
    }
    let reader = std::io::BufReader::new(std::fs::File::open(path)?);
    for (index, text) in reader.lines().enumerate() {
        if serde_json::from_str::<Id>(&text?).is_ok_and(|line| line.id == id) {
            return Ok(Some(index + 1));
        }
    }
    Ok(None)
}

/// Every line of `results.jsonl` at `path`; blank lines are skipped.
fn read_lines(path: &Path) -> Result<Vec<CaseOfRun>, ReadResultsError> {
    let mut cases = Vec::new();
    each_line(path, |line, text| {
        let bad_line = |cause: String| ReadResultsError::Line { path: path.to_owned(), line, cause };
        let json: Value = serde_json::from_str(text).map_err(|e| bad_line(json_error(&e)))?;
        let typed = CaseLine::deserialize(&json).map_err(|e| bad_line(e.to_string()))?;
        let checks = typed.samples.iter().flat_map(|s| &s.runs).flat_map(|r| &r.interactions).flat_map(|i| &i.checks);
        let scores = mean_per_key(checks.map(|c| (c.key.as_str(), c.score)));
        let flags = CaseFlags {
            api_error: typed.api_error,
            empty_output: typed.empty_output,
            evaluation_error: typed.evaluation_error,
        };
        cases.push(CaseOfRun {
            id: typed.id,
            file: typed.file,
            agent: typed.agent,
            status: typed.status,
            flags,
            scores,
            line,
            json,
        });
        Ok(())
    })
    .map_err(|error| match error {
        StreamError::Read(error) | StreamError::Visit(error) => error,
    })?;
    Ok(cases)
}

/// `summary.json` at `path`, if the run wrote one.
fn read_summary(path: &Path) -> Result<Option<SummaryOfRun>, ReadResultsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(cause) => return Err(ReadResultsError::Read { path: path.to_owned(), cause }),
    };
    let bad = |cause: String| ReadResultsError::Summary { path: path.to_owned(), cause };
    let json: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let counts = RunCounts::deserialize(&json).map_err(|e| bad(e.to_string()))?;
    let duration_ms = json["duration_ms"].as_f64().unwrap_or_default();
    // A shard written by hand as 0/3 is no shard: merging by it would
    // count shards that cannot be.
    let shard = json
        .get("shard")
        .map(|shard| {
            let Shard { index, total } = Shard::deserialize(shard).map_err(|e| e.to_string())?;
            Shard::new(index, total).map_err(|e| e.to_string())
        })
        .transpose()
        .map_err(|e| bad(format!("its `shard`: {e}")))?;
    let rerun_of = json["rerun_of"].as_str().map(PathBuf::from);
    Ok(Some(SummaryOfRun { counts, duration_ms, shard, rerun_of, json }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ResultsDir;
    use crate::report::fixtures;
    use crate::run::Reporter;

    /// A results directory of the fixed run (and its suites' cases).
    fn written() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let cases: Vec<_> = fixtures::cases().into_iter().chain(fixtures::suite_cases()).collect();
        let summary = fixtures::summary(&cases);
        let mut results = ResultsDir::create(dir.path()).unwrap();
        for event in fixtures::events(&cases, &summary) {
            results.report(&event).unwrap();
        }
        dir
    }

    #[test]
    fn what_the_results_dir_wrote_reads_back_with_statuses_flags_scores_and_counts() {
        let dir = written();
        let run = read_results_dir(dir.path()).unwrap();
        let summary = run.summary.as_ref().unwrap();
        assert_eq!(run.counts(), summary.counts);
        assert_eq!(summary.json["cases"], run.cases.len());
        let case = |id: &str| run.cases.iter().find(|c| c.id == id).unwrap();
        assert_eq!(case("math_guy/wrong").status, CaseStatus::Failed);
        assert_eq!(case("flaky/flaky").status, CaseStatus::Flaky);
        assert!(case("http/down").flags.api_error);
        assert_eq!(case("echo/hello").line, 1);
        assert_eq!(case("echo/hello").json["samples"][0]["index"], 0);
        // The same per-case scores the suite summaries average.
        let suites = summary.json["suites"].as_array().unwrap();
        let cat: Vec<&CaseOfRun> = run.cases.iter().filter(|c| c.file.ends_with("cat.suite.toml")).collect();
        let rouge: Vec<f64> = cat.iter().filter_map(|c| c.scores.get("rouge").copied()).collect();
        let mean = rouge.iter().sum::<f64>() / rouge.len() as f64;
        assert!((suites[0]["mean_scores"]["rouge"].as_f64().unwrap() - mean).abs() < 1e-12);
    }

    #[test]
    fn its_results_jsonl_names_the_directory_and_a_killed_run_has_no_summary() {
        let dir = written();
        std::fs::remove_file(dir.path().join(crate::report::SUMMARY_FILE)).unwrap();
        let run = read_results_dir(&dir.path().join(crate::job::RESULTS_FILE)).unwrap();
        assert_eq!(run.dir, dir.path());
        assert_eq!(run.summary, None);
        assert!(!run.cases.is_empty());
    }

    #[test]
    fn a_bad_line_a_repeated_case_and_a_bad_summary_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let lines = dir.path().join(crate::job::RESULTS_FILE);
        let line = r#"{"id":"a","status":"passed"}"#;
        std::fs::write(&lines, format!("{line}\n\n{{\"id\":\"b\",\"status\":\"lost\"}}\n")).unwrap();
        let error = read_results_dir(dir.path()).unwrap_err().to_string();
        assert!(error.contains("results.jsonl`: line 3 is not a case's result: unknown variant `lost`"), "{error}");
        std::fs::write(&lines, format!("{line}\n{line}\n")).unwrap();
        let error = read_results_dir(dir.path()).unwrap_err().to_string();
        assert!(error.ends_with("line 2 holds case `a` again (first on line 1)"), "{error}");
        std::fs::write(&lines, format!("{line}\nnot json\n")).unwrap();
        let error = read_results_dir(dir.path()).unwrap_err().to_string();
        assert!(error.contains("line 2 is not a case's result: expected ident (column 2)"), "{error}");
        std::fs::write(&lines, format!("{line}\n")).unwrap();
        std::fs::write(dir.path().join(crate::report::SUMMARY_FILE), "[1]").unwrap();
        let error = read_results_dir(dir.path()).unwrap_err().to_string();
        assert!(error.contains("summary.json`: it is not a run's summary"), "{error}");
        let summary =
            r#"{"cases": 1, "passed": 1, "flaky": 0, "failed": 0, "errors": 0, "shard": {"index": 0, "total": 3}}"#;
        std::fs::write(dir.path().join(crate::report::SUMMARY_FILE), summary).unwrap();
        let error = read_results_dir(dir.path()).unwrap_err().to_string();
        assert!(error.contains("its `shard`: `0/3` is not a shard: K counts from 1 to N"), "{error}");
        std::fs::write(dir.path().join(crate::report::SUMMARY_FILE), summary.replace("\"index\": 0", "\"index\": 2"))
            .unwrap();
        let read = read_results_dir(dir.path()).unwrap().summary.unwrap();
        assert_eq!(read.shard, Some(Shard { index: 2, total: 3 }));
    }

    #[test]
    fn a_folder_of_runs_suggests_its_newest_and_a_folder_of_none_says_where_runs_go() {
        let dir = tempfile::tempdir().unwrap();
        for stamp in ["2024-01-01T00-00-00Z", "2024-03-01T00-00-00Z", "2024-02-01T00-00-00Z", "2023-12-01T00-00-00Z"] {
            let run = dir.path().join(stamp);
            std::fs::create_dir(&run).unwrap();
            std::fs::write(run.join(crate::job::RESULTS_FILE), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("9-not-a-run")).unwrap();
        let error = read_results_dir(dir.path()).unwrap_err();
        let ReadResultsError::NotAResultsDir { runs, .. } = &error else { panic!("{error}") };
        let names: Vec<_> = runs.iter().map(|r| r.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["2024-03-01T00-00-00Z", "2024-02-01T00-00-00Z", "2024-01-01T00-00-00Z"]);
        let message = error.to_string();
        assert!(message.contains("it is not the results directory of a run (it holds no results.jsonl)"), "{message}");
        assert!(message.contains("Consider one of the runs in it (newest first): `"), "{message}");
        let empty = tempfile::tempdir().unwrap();
        let message = read_results_dir(empty.path()).unwrap_err().to_string();
        assert!(message.ends_with("Consider a folder `assay run` wrote: results/<timestamp> (or its --results DIR)"));
        let message = read_results_dir(&empty.path().join("gone")).unwrap_err().to_string();
        assert!(message.ends_with("gone`: no such directory"), "{message}");
    }
}
