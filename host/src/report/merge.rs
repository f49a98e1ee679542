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

use crate::errors::MergeError;
use crate::job::CaseResult;
use crate::report::{
    CaseOfRun, JunitReport, Provenance, Redactor, ResultsDir, ResultsOfRun, read_results_dir, render_report_to,
};
use crate::run::{EventKind, Reporter, RunEvent, RunSummary, Shard};
use serde::Serialize;
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

/// One directory merged, as `summary.json`'s `merged_from` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MergedDir {
    /// The directory.
    pub dir: PathBuf,
    /// How many of the merged cases are its results.
    pub cases: usize,
    /// Its shard, if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The directory it reran the failed cases of, if it is a rerun.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<PathBuf>,
    /// For a rerun: how many results of the directories before it it
    /// replaced.
    #[serde(skip_serializing_if = "is_zero")]
    pub replaced: usize,
    /// Its run's wall-clock time, in milliseconds (unknown for an
    /// incomplete run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Whether its run never finished (no `summary.json`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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

/// Merges the results directories `dirs` into `out` (created), telling
/// `reporter` (a terminal) every merged case and the end as a run would.
/// Everything is checked before anything is written: a refused merge
/// writes nothing.
pub fn merge(
    dirs: &[PathBuf],
    out: &Path,
    options: &MergeOptions,
    reporter: &mut dyn Reporter,
) -> Result<Merged, MergeError> {
    let canonical_out = std::fs::canonicalize(out).ok();
    let runs = dirs.iter().map(|dir| read_results_dir(dir)).collect::<Result<Vec<_>, _>>()?;
    for run in &runs {
        if canonical_out.is_some() && std::fs::canonicalize(&run.dir).ok() == canonical_out {
            return Err(MergeError::IntoInput { dir: out.to_owned() });
        }
        if run.summary.is_none() && !options.allow_incomplete {
            return Err(MergeError::Incomplete { dir: run.dir.clone() });
        }
    }
    let shards = shards_of(&runs)?;
    let (cases, mut merged_from) = pick_cases(&runs, &shards)?;
    let missing = missing_shards(&shards, options.allow_missing)?;
    let results: Vec<CaseResult> =
        cases.iter().map(|(run, case)| typed(&runs[*run], case)).collect::<Result<_, _>>()?;

    let mut summary = RunSummary::default();
    for ((run, _), case) in cases.iter().zip(&results) {
        summary.add(case);
        merged_from[*run].cases += 1;
    }
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
    write(out, options, &cases, &results, &mut summary, &provenance, reporter)?;
    Ok(Merged { summary, provenance })
}

/// Each run's shard: its summary's, or for a run that never finished the
/// one all its cases hash to in the partition of the others. Shards of
/// different totals, and a shard twice, are errors. A rerun is no shard:
/// it replaces cases, whatever part it ran.
fn shards_of(runs: &[ResultsOfRun]) -> Result<Vec<Option<Shard>>, MergeError> {
    let is_rerun = |run: &ResultsOfRun| run.summary.as_ref().is_some_and(|s| s.rerun_of.is_some());
    let mut shards: Vec<Option<Shard>> =
        runs.iter().map(|run| run.summary.as_ref().and_then(|s| s.shard).filter(|_| !is_rerun(run))).collect();
    let total = shards.iter().flatten().map(|s| s.total).next();
    for (run, shard) in runs.iter().zip(shards.iter_mut()) {
        if let (None, None, Some(total)) = (&run.summary, *shard, total) {
            let indexes: BTreeSet<u32> = run.cases.iter().map(|case| Shard::index_of(&case.id, total)).collect();
            if let [index] = indexes.into_iter().collect::<Vec<_>>()[..] {
                *shard = Some(Shard { index, total });
            }
        }
    }
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
    Ok(shards)
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

/// The merged cases, each with the index of the run its result comes from.
type Picked<'r> = Vec<(usize, &'r CaseOfRun)>;

/// Every case once, each with the index of the run whose result it is:
/// the runs that are not reruns, in order, then each rerun replacing the
/// results of the cases it reran (in place). And each run as
/// `merged_from` lists it (its count of cases still to make).
fn pick_cases<'r>(
    runs: &'r [ResultsOfRun],
    shards: &[Option<Shard>],
) -> Result<(Picked<'r>, Vec<MergedDir>), MergeError> {
    let rerun_of = |run: &ResultsOfRun| run.summary.as_ref().and_then(|s| s.rerun_of.clone());
    let mut merged_from: Vec<MergedDir> = runs
        .iter()
        .zip(shards)
        .map(|(run, shard)| MergedDir {
            dir: run.dir.clone(),
            cases: 0,
            shard: *shard,
            rerun_of: rerun_of(run),
            replaced: 0,
            duration_ms: run.summary.as_ref().map(|s| s.duration_ms),
            incomplete: run.summary.is_none(),
        })
        .collect();
    let mut cases: Picked<'r> = Vec::new();
    let mut place: HashMap<&str, usize> = HashMap::new();
    let (reruns, others): (Vec<usize>, Vec<usize>) = (0..runs.len()).partition(|&i| merged_from[i].rerun_of.is_some());
    for i in others {
        for case in &runs[i].cases {
            if let Some(&at) = place.get(case.id.as_str()) {
                let first = runs[cases[at].0].dir.clone();
                return Err(MergeError::Overlap { id: case.id.clone(), first, second: runs[i].dir.clone() });
            }
            place.insert(&case.id, cases.len());
            cases.push((i, case));
        }
    }
    for i in reruns {
        for case in &runs[i].cases {
            let Some(&at) = place.get(case.id.as_str()) else {
                return Err(MergeError::RerunOfNothing { id: case.id.clone(), rerun: runs[i].dir.clone() });
            };
            cases[at] = (i, case);
            merged_from[i].replaced += 1;
        }
    }
    Ok((cases, merged_from))
}

/// `case`'s line read as a whole result.
fn typed(run: &ResultsOfRun, case: &CaseOfRun) -> Result<CaseResult, MergeError> {
    serde_json::from_value(case.json.clone()).map_err(|e| MergeError::Line {
        path: run.dir.join(crate::job::RESULTS_FILE),
        line: case.line,
        cause: e.to_string(),
    })
}

/// Writes OUT: the cases' lines, JUnit, `summary.json`, the HTML report;
/// `reporter` is told each case and the end. What a reporter fails to do
/// is in the summary, as in a run; what the files fail to do ends the
/// merge.
fn write(
    out: &Path,
    options: &MergeOptions,
    cases: &[(usize, &CaseOfRun)],
    results: &[CaseResult],
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
    if let Err(error) = reporter.report(&at(elapsed, EventKind::RunStarted { cases: results.len() })) {
        reporter_errors.push(error.to_string());
    }
    for ((_, recorded), case) in cases.iter().zip(results) {
        dir.copy_case(case, &recorded.json).map_err(failed)?;
        junit.report(&at(elapsed, EventKind::CaseFinished(case))).map_err(failed)?;
        if let Err(error) = reporter.report(&at(elapsed, EventKind::CaseFinished(case))) {
            reporter_errors.push(error.to_string());
        }
    }
    junit.report(&at(elapsed, EventKind::RunFinished(summary))).map_err(failed)?;
    summary.reporter_errors.extend(reporter_errors);
    dir.report(&at(elapsed, EventKind::RunFinished(summary))).map_err(failed)?;
    if let Err(error) = reporter.report(&at(elapsed, EventKind::RunFinished(summary))) {
        summary.reporter_errors.push(error.to_string());
    }
    render_report_to(out, &out.join("report.html"))?;
    Ok(())
}
