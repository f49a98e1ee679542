//! `assay merge DIR… --results OUT`: results directories put together
//! into one, as if one run had run every case: the shards of a run
//! (`--shard K/N` on N machines), and reruns of its failed cases
//! (`--rerun-failed DIR`).
//!
//! The rules:
//! - every case once: a case in two directories is an error naming both,
//!   except that a rerun's directory (its `summary.json` has `rerun_of`)
//!   replaces the results of the cases it reran, in the order the
//!   directories are given; a rerun of a case no other directory holds is
//!   an error;
//! - shards of one partition: every directory that is a shard has the
//!   same N, no shard comes twice, and none is missing
//!   ([`MergeOptions::allow_missing`] merges without them, and
//!   `summary.json` names them);
//! - finished runs only: a directory without `summary.json` (a killed run)
//!   is refused unless [`MergeOptions::allow_incomplete`]; its shard is
//!   then told by its cases' ids, when they all hash to one.
//!
//! What is written into OUT: `results.jsonl` (every case's line as its run
//! wrote it, in the order given), `summary.json` (its counts, flags and
//! suites recounted from the merged cases; `duration_ms` the longest of
//! the runs, which ran side by side; `merged_from` each directory with its
//! own), `junit.xml` and `report.html`. Each is redacted again with the
//! merging project's secrets.

use crate::errors::{MergeError, ReadResultsError};
use crate::job::CaseResult;
use crate::results::read::{IdHasher, LineAt, StreamError, each_line_at, line_error, open_results_dir};
use crate::report::{JunitReport, MergedDir, Provenance, Redactor, ResultsDir};
use crate::results::{SummaryOfRun, render_report_to};
use crate::run::{EventKind, Reporter, RunEvent, RunSummary, Shard};
use serde::Deserialize;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How `merge` merges.
#[derive(Clone, Debug, Default)]
pub struct MergeOptions {
    /// Merge even when some shards of the partition are missing.
    pub allow_missing: bool,
    /// Merge directories whose run never finished (no `summary.json`).
    pub allow_incomplete: bool,
    /// What every file written hides.
    pub redactor: Redactor,
}


/// What a merge wrote.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The merged run's totals, as `summary.json` has them: its
    /// [`RunSummary::success`] is the merge's exit status.
    pub summary: RunSummary,
    /// Where the cases came from.
    pub provenance: Provenance,
}

/// One directory being merged: its summary, and where each of its lines
/// is (its cases are read from the file when they are written).
struct RunOfMerge {
    dir: PathBuf,
    lines_path: PathBuf,
    summary: Option<SummaryOfRun>,
    lines: Vec<LineAt>,
}

impl RunOfMerge {
    fn rerun_of(&self) -> Option<PathBuf> {
        self.summary.as_ref().and_then(|s| s.rerun_of.clone())
    }
}

/// A merged case: the run (its index) and line (the index of its
/// [`LineAt`]) whose result it is.
#[derive(Clone, Copy)]
struct Pick {
    run: u32,
    line: u32,
}

/// Merges the results directories `dirs` into `out` (created), telling
/// `reporter` (a terminal) every merged case and the end as a run would.
/// Everything is checked before anything is written: a refused merge
/// writes nothing. The merge streams: a first pass over each
/// `results.jsonl` reads every line (and checks it is a case's result)
/// and keeps where it is and a 128-bit hash of its id; the second copies
/// the picked lines into `out`, one at a time. What it holds is about 60
/// bytes a case, whatever the cases hold.
pub fn merge(
    dirs: &[PathBuf],
    out: &Path,
    options: &MergeOptions,
    reporter: &mut dyn Reporter,
) -> Result<Merged, MergeError> {
    let canonical_out = std::fs::canonicalize(out).ok();
    let mut runs = Vec::new();
    for dir in dirs {
        let (dir, lines_path, summary) = open_results_dir(dir)?;
        if canonical_out.is_some() && std::fs::canonicalize(&dir).ok() == canonical_out {
            return Err(MergeError::IntoInput { dir: out.to_owned() });
        }
        if summary.is_none() && !options.allow_incomplete {
            return Err(MergeError::Incomplete { dir });
        }
        runs.push(RunOfMerge { dir, lines_path, summary, lines: Vec::new() });
    }
    let mut shards: Vec<Option<Shard>> = runs
        .iter()
        .map(|run| run.summary.as_ref().and_then(|s| s.shard).filter(|_| run.rerun_of().is_none()))
        .collect();
    check_shards(&runs, &shards)?;
    let total = shards.iter().flatten().map(|s| s.total).next();
    let Picked { picks, told, replaced } = pick_cases(&mut runs, total)?;
    // A run that never finished is the shard all its cases hash to.
    for (shard, told) in shards.iter_mut().zip(told) {
        if let (None, Some(index), Some(total)) = (*shard, told, total) {
            *shard = Some(Shard { index, total });
        }
    }
    check_shards(&runs, &shards)?;
    let missing = missing_shards(&shards, options.allow_missing)?;

    let mut merged_from: Vec<MergedDir> = runs
        .iter()
        .zip(&shards)
        .map(|(run, shard)| MergedDir {
            dir: run.dir.clone(),
            cases: 0,
            shard: *shard,
            rerun_of: run.rerun_of(),
            replaced: 0,
            duration_ms: run.summary.as_ref().map(|s| s.duration_ms),
            incomplete: run.summary.is_none(),
        })
        .collect();
    for pick in &picks {
        merged_from[pick.run as usize].cases += 1;
    }
    for (merged, replaced) in merged_from.iter_mut().zip(replaced) {
        merged.replaced = replaced;
    }
    let mut summary = RunSummary::default();
    for run in runs.iter().filter_map(|run| run.summary.as_ref()) {
        summary.duration_ms = summary.duration_ms.max(run.duration_ms);
        summary.not_run += run.json["not_run"].as_u64().unwrap_or_default() as usize;
        for (field, list) in
            [("reporter_errors", &mut summary.reporter_errors), ("internal_errors", &mut summary.internal_errors)]
        {
            let carried = run.json[field].as_array().into_iter().flatten().filter_map(|e| e.as_str());
            list.extend(carried.map(str::to_owned));
        }
    }
    let provenance = Provenance { merged_from, missing_shards: missing, ..Provenance::default() };
    write(out, options, &runs, &picks, &mut summary, &provenance, reporter)?;
    // The report reads what was written, holding none of the above.
    drop((runs, picks));
    render_report_to(out, &out.join("report.html"))?;
    Ok(Merged { summary, provenance })
}

/// Shards of different totals, and a shard twice, are errors.
fn check_shards(runs: &[RunOfMerge], shards: &[Option<Shard>]) -> Result<(), MergeError> {
    let mut seen: HashMap<u32, usize> = HashMap::new();
    let mut first_of_total: Option<(usize, Shard)> = None;
    for (i, shard) in shards.iter().enumerate() {
        let Some(shard) = *shard else { continue };
        match first_of_total {
            Some((first, first_shard)) if first_shard.total != shard.total => {
                return Err(MergeError::Totals {
                    first: runs[first].dir.clone(),
                    first_shard: first_shard.to_string(),
                    second: runs[i].dir.clone(),
                    second_shard: shard.to_string(),
                });
            }
            Some(_) => {}
            None => first_of_total = Some((i, shard)),
        }
        if let Some(&first) = seen.get(&shard.index) {
            let (first, second) = (runs[first].dir.clone(), runs[i].dir.clone());
            return Err(MergeError::ShardTwice { shard: shard.to_string(), first, second });
        }
        seen.insert(shard.index, i);
    }
    Ok(())
}

/// The shards of the partition no run is: an error unless `allowed`.
fn missing_shards(shards: &[Option<Shard>], allowed: bool) -> Result<Vec<Shard>, MergeError> {
    let Some(total) = shards.iter().flatten().map(|s| s.total).next() else { return Ok(Vec::new()) };
    let present: BTreeSet<u32> = shards.iter().flatten().map(|s| s.index).collect();
    let missing: Vec<u32> = (1..=total).filter(|k| !present.contains(k)).collect();
    if !missing.is_empty() && !allowed {
        return Err(MergeError::MissingShards { missing, total });
    }
    Ok(missing.into_iter().map(|index| Shard { index, total }).collect())
}

/// What the first pass found.
struct Picked {
    /// The merged cases, in order.
    picks: Vec<Pick>,
    /// For each run that never finished, the one shard all its cases hash
    /// to (when the others are shards and they hash to one).
    told: Vec<Option<u32>>,
    /// For each rerun, how many results of the runs before it it replaced.
    replaced: Vec<usize>,
}

/// The first pass: every line of every run read and checked, and the
/// merged cases picked: the runs that are not reruns, in order, then each
/// rerun replacing the results of the cases it reran (in place). Also, for
/// each run that never finished and when the others are shards of `total`,
/// the one shard all its cases hash to, if they hash to one.
///
/// Each case's id is kept as a 128-bit hash beside its pick, sorted once
/// the runs that are not reruns are read: a case twice is then two equal
/// hashes side by side (the first in merge order is the one reported), and
/// a rerun's case is found by binary search. 24 bytes a case.
fn pick_cases(runs: &mut [RunOfMerge], total: Option<u32>) -> Result<Picked, MergeError> {
    let ids = IdHasher::default();
    let mut picks: Vec<Pick> = Vec::new();
    let mut keys: Vec<([u64; 2], u32)> = Vec::new();
    let mut told = vec![None; runs.len()];
    let mut replaced = vec![0; runs.len()];
    let (reruns, others): (Vec<usize>, Vec<usize>) = (0..runs.len()).partition(|&i| runs[i].rerun_of().is_some());
    for &i in &others {
        let incomplete = runs[i].summary.is_none();
        let mut hashed_to = BTreeSet::new();
        let mut lines = Vec::new();
        read_lines_of(&runs[i].lines_path, |at, case| {
            if incomplete && let Some(total) = total {
                hashed_to.insert(Shard::index_of(&case.id, total));
            }
            keys.push((ids.key(&case.id), picks.len() as u32));
            picks.push(Pick { run: i as u32, line: lines.len() as u32 });
            lines.push(at);
            Ok(())
        })?;
        if let [index] = hashed_to.into_iter().collect::<Vec<_>>()[..] {
            told[i] = Some(index);
        }
        runs[i].lines = lines;
    }
    keys.sort_unstable();
    // A case twice: of the pairs of equal hashes, the one whose second
    // comes first in merge order.
    let twice = keys
        .windows(2)
        .filter(|pair| pair[0].0 == pair[1].0)
        .map(|pair| (pair[0].1, pair[1].1))
        .min_by_key(|&(_, second)| second);
    if let Some((first, second)) = twice {
        let (first, second) = (picks[first as usize], picks[second as usize]);
        let id = id_at(&runs[second.run as usize], second.line)?;
        return Err(if first.run == second.run {
            let run = &runs[first.run as usize];
            let line = |pick: Pick| run.lines[pick.line as usize].number as usize;
            MergeError::Read(ReadResultsError::Duplicate {
                path: run.lines_path.clone(),
                id,
                first: line(first),
                line: line(second),
            })
        } else {
            MergeError::Overlap {
                id,
                first: runs[first.run as usize].dir.clone(),
                second: runs[second.run as usize].dir.clone(),
            }
        });
    }
    for &i in &reruns {
        let mut lines = Vec::new();
        let (path, dir) = (runs[i].lines_path.clone(), runs[i].dir.clone());
        read_lines_of(&path, |at, case| {
            let key = ids.key(&case.id);
            let Ok(found) = keys.binary_search_by(|probe| probe.0.cmp(&key)) else {
                return Err(MergeError::RerunOfNothing { id: case.id, rerun: dir.clone() });
            };
            let pick = &mut picks[keys[found].1 as usize];
            if pick.run == i as u32 {
                let first: &LineAt = &lines[pick.line as usize];
                let (first, line) = (first.number as usize, at.number as usize);
                return Err(MergeError::Read(ReadResultsError::Duplicate {
                    path: path.clone(),
                    id: case.id,
                    first,
                    line,
                }));
            }
            *pick = Pick { run: i as u32, line: lines.len() as u32 };
            replaced[i] += 1;
            lines.push(at);
            Ok(())
        })?;
        runs[i].lines = lines;
    }
    Ok(Picked { picks, told, replaced })
}

/// Reads every line of the results file `path` as a whole result, giving
/// `visit` each with where it is.
fn read_lines_of(
    path: &Path,
    mut visit: impl FnMut(LineAt, CaseResult) -> Result<(), MergeError>,
) -> Result<(), MergeError> {
    match each_line_at(path, |at, text| visit(at, typed(path, at, text)?)) {
        Ok(()) => Ok(()),
        Err(StreamError::Read(error)) => Err(error.into()),
        Err(StreamError::Visit(error)) => Err(error),
    }
}

/// The id of the case on line `line` (an index into its lines) of `run`,
/// read again from its file (for an error's message).
fn id_at(run: &RunOfMerge, line: u32) -> Result<String, MergeError> {
    let at = run.lines[line as usize];
    let mut bytes = Vec::new();
    let read_error = |cause| MergeError::Read(ReadResultsError::Read { path: run.lines_path.clone(), cause });
    LineReader::open(&run.lines_path).map_err(read_error)?.read(at, &mut bytes).map_err(read_error)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(typed(&run.lines_path, at, &text)?.id)
}

/// The line `text` (at `at` of `path`) read as a whole result; what is
/// wrong with one that is not is said without where in the line (it is one
/// line).
fn typed(path: &Path, at: LineAt, text: &str) -> Result<CaseResult, MergeError> {
    serde_json::from_str(text).map_err(|e| MergeError::Line {
        path: path.to_owned(),
        line: at.number as usize,
        cause: line_error(&e),
    })
}

/// Reads the lines of one run's `results.jsonl` at their places: mostly
/// in order, so a buffered reader that seeks only when a line is not the
/// next one.
struct LineReader {
    reader: std::io::BufReader<std::fs::File>,
    position: u64,
}

impl LineReader {
    fn open(path: &Path) -> std::io::Result<LineReader> {
        Ok(LineReader { reader: std::io::BufReader::new(std::fs::File::open(path)?), position: 0 })
    }

    fn read(&mut self, at: LineAt, into: &mut Vec<u8>) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        if at.offset != self.position {
            self.reader.seek(SeekFrom::Start(at.offset))?;
        }
        into.resize(at.len as usize, 0);
        self.reader.read_exact(into)?;
        self.position = at.offset + u64::from(at.len);
        Ok(())
    }
}

/// Writes OUT: the picked cases' lines, JUnit and `summary.json`;
/// `reporter` is told each case and the end. What a reporter
/// fails to do is in the summary, as in a run; what the files fail to do
/// ends the merge.
fn write(
    out: &Path,
    options: &MergeOptions,
    runs: &[RunOfMerge],
    picks: &[Pick],
    summary: &mut RunSummary,
    provenance: &Provenance,
    reporter: &mut dyn Reporter,
) -> Result<(), MergeError> {
    let failed = |e: std::io::Error| MergeError::Write(e.to_string());
    let mut dir = ResultsDir::create(out)
        .map_err(failed)?
        .with_redactor(options.redactor.clone())
        .with_provenance(provenance.clone());
    let mut junit = JunitReport::new(out.join("junit.xml")).with_redactor(options.redactor.clone());
    let elapsed = Duration::from_secs_f64(summary.duration_ms / 1e3);
    fn at(elapsed: Duration, kind: EventKind<'_>) -> RunEvent<'_> {
        RunEvent { elapsed, kind }
    }
    let mut reporter_errors = Vec::new();
    if let Err(error) = reporter.report(&at(elapsed, EventKind::RunStarted { cases: picks.len() })) {
        reporter_errors.push(error.to_string());
    }
    let mut readers: Vec<Option<LineReader>> = runs.iter().map(|_| None).collect();
    let mut bytes = Vec::new();
    for pick in picks {
        let run = &runs[pick.run as usize];
        let line = run.lines[pick.line as usize];
        let read_error =
            |cause| MergeError::Read(crate::errors::ReadResultsError::Read { path: run.lines_path.clone(), cause });
        let reader = match &mut readers[pick.run as usize] {
            Some(reader) => reader,
            slot => slot.insert(LineReader::open(&run.lines_path).map_err(read_error)?),
        };
        reader.read(line, &mut bytes).map_err(read_error)?;
        let text = std::str::from_utf8(&bytes).map_err(|e| MergeError::Line {
            path: run.lines_path.clone(),
            line: line.number as usize,
            cause: e.to_string(),
        })?;
        let recorded: serde_json::Value = serde_json::from_str(text).map_err(|e| MergeError::Line {
            path: run.lines_path.clone(),
            line: line.number as usize,
            cause: e.to_string(),
        })?;
        let case = CaseResult::deserialize(&recorded).map_err(|e| MergeError::Line {
            path: run.lines_path.clone(),
            line: line.number as usize,
            cause: e.to_string(),
        })?;
        summary.add(&case);
        dir.copy_case(&case, &recorded).map_err(failed)?;
        junit.report(&at(elapsed, EventKind::CaseFinished(&case))).map_err(failed)?;
        if let Err(error) = reporter.report(&at(elapsed, EventKind::CaseFinished(&case))) {
            reporter_errors.push(error.to_string());
        }
    }
    junit.report(&at(elapsed, EventKind::RunFinished(summary))).map_err(failed)?;
    summary.reporter_errors.extend(reporter_errors);
    dir.report(&at(elapsed, EventKind::RunFinished(summary))).map_err(failed)?;
    if let Err(error) = reporter.report(&at(elapsed, EventKind::RunFinished(summary))) {
        summary.reporter_errors.push(error.to_string());
    }
    Ok(())
}
