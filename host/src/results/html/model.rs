//! What the HTML report shows, computed in Rust once and embedded in the
//! page as JSON: the run's `summary.json` as written, every case's line of
//! `results.jsonl` as written (the drill-down shows it in full), each
//! case's failure modes as the Assessor groups them ([`assess`]), per
//! metric key the case scores the suite summaries average
//! ([`case_scores`]), per connection the agent's latency, and the tokens
//! answers cost; and when the run was `assay assess`, `eval` or
//! `validate`, the report that command wrote beside `results.jsonl`
//! (`assess.json`, `eval.json`, `validate.json`: the scores and the
//! confusion matrix the terminal printed, computed once). The page's script
//! only draws it.

use crate::errors::HtmlReportError;
use crate::eval::{FailureMode, assess};
use crate::job::CaseResult;
use crate::results::read::{StreamError, stream_results_dir};
use crate::report::case_scores;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// How many bars a histogram has.
const BINS: usize = 20;

/// Everything the page shows but its cases, which [`data`] streams in
/// front of it (`"cases": [...]` first, then these).
#[derive(Debug, Serialize)]
struct Rest {
    /// The results directory, as the title names it.
    title: String,
    /// `summary.json`, as written (absent when the run was killed before
    /// it ended).
    summary: Option<Value>,
    /// Per metric key (as written, `not_` included), in name order.
    metrics: Vec<Distribution>,
    /// Per connection: the agent's latency of every interaction, in
    /// milliseconds.
    latency: Vec<Distribution>,
    /// Per connection: the tokens answers cost, where recorded.
    tokens: Vec<Tokens>,
    /// `assess.json`, when the run was `assay assess`.
    assessment: Option<Value>,
    /// `eval.json`, when the run was `assay eval`.
    eval: Option<Value>,
    /// `validate.json`, when the run was `assay validate`.
    validation: Option<Value>,
}

/// One case: its line and its failure modes.
#[derive(Debug, Serialize)]
struct CaseEntry<'a> {
    /// The line of `results.jsonl`, as written.
    result: &'a serde_json::value::RawValue,
    /// The Assessor's failure modes of its failed samples, most frequent
    /// first.
    modes: Vec<FailureMode>,
}

/// A distribution of values: its mean and a histogram.
#[derive(Debug, PartialEq, Serialize)]
pub(super) struct Distribution {
    /// The metric key or the connection.
    pub name: String,
    /// How many values.
    pub count: usize,
    /// Their mean.
    pub mean: f64,
    /// The median.
    pub p50: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The smallest and largest value.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// Where the first bar starts.
    pub low: f64,
    /// Where the last bar ends.
    pub high: f64,
    /// How many values fall in each of [`BINS`] equal bars from `low` to
    /// `high` (the last one holds `high`).
    pub bins: Vec<usize>,
}

/// The tokens one connection's answers cost.
#[derive(Debug, Default, PartialEq, Serialize)]
pub(super) struct Tokens {
    /// The connection.
    pub connection: String,
    /// How many answers reported their cost.
    pub answers: usize,
    /// Tokens of the prompts.
    pub prompt_tokens: u64,
    /// Tokens of the answers.
    pub completion_tokens: u64,
}

/// What the charts need of every case, gathered a case at a time. Values
/// are kept as `f32`, which a chart's bars and three-digit figures cannot
/// tell from `f64`, in half the memory (a million cases' scores and times
/// are the most a report holds).
#[derive(Default)]
struct Tally {
    scores: BTreeMap<String, Vec<f32>>,
    times: BTreeMap<String, Vec<f32>>,
    tokens: BTreeMap<String, Tokens>,
}

impl Tally {
    fn add(&mut self, case: &CaseResult) {
        for (key, score) in case_scores(case) {
            self.scores.entry(key).or_default().push(score as f32);
        }
        for run in case.samples.iter().flat_map(|s| &s.runs) {
            let answered = run.interactions.iter().filter(|i| i.error.is_none() && i.agent_ms.is_finite());
            self.times.entry(run.connection.to_string()).or_default().extend(answered.map(|i| i.agent_ms as f32));
            for usage in run.interactions.iter().filter_map(|i| i.usage) {
                let tokens = self
                    .tokens
                    .entry(run.connection.to_string())
                    .or_insert_with(|| Tokens { connection: run.connection.to_string(), ..Tokens::default() });
                tokens.answers += 1;
                tokens.prompt_tokens += usage.prompt_tokens;
                tokens.completion_tokens += usage.completion_tokens;
            }
        }
    }

    /// Per metric key, the distribution of the case scores (each case's
    /// mean score of that key's checks, as the suite summaries average
    /// them). Scores are mostly in [0, 1]: that scale is kept, so that
    /// histograms of different keys compare, unless some score lies
    /// outside it.
    fn metrics(&mut self) -> Vec<Distribution> {
        std::mem::take(&mut self.scores)
            .into_iter()
            .map(|(key, values)| distribution(key, values, (0.0, 1.0)))
            .collect()
    }

    /// Per connection, the distribution of `agent_ms` over every
    /// interaction that got an answer.
    fn latency(&mut self) -> Vec<Distribution> {
        std::mem::take(&mut self.times)
            .into_iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(name, t)| distribution(name, t, (0.0, 0.0)))
            .collect()
    }
}

/// The title of the report of the results directory `dir` (itself, or
/// the folder of the `results.jsonl` it names): its name.
pub(super) fn title(dir: &Path) -> String {
    let dir = match dir.file_name() {
        Some(name) if name == crate::job::RESULTS_FILE && dir.is_file() => dir.parent().unwrap_or(dir),
        _ => dir,
    };
    dir.file_name().unwrap_or(dir.as_os_str()).to_string_lossy().into_owned()
}

/// Writes the page's data for the results directory `dir` to `json`:
/// every line of `results.jsonl` is read, assessed and copied into it as
/// written one at a time (through the one reader of results directories),
/// then the run's totals. The page holds what `json` keeps (compressed, on
/// its way to the file), never the lines parsed all at once.
pub(super) fn data(dir: &Path, json: &mut dyn Write) -> Result<(), HtmlReportError> {
    let written =
        |cause: std::io::Error| HtmlReportError::Parse { path: dir.to_owned(), line: None, cause: cause.to_string() };
    json.write_all(b"{\"cases\":[").map_err(written)?;
    let mut tally = Tally::default();
    let mut first = true;
    let lines = dir.join(crate::job::RESULTS_FILE);
    let (dir, summary) = stream_results_dir(dir, |line, text| {
        let parse = |cause: String| HtmlReportError::Parse { path: lines.clone(), line: Some(line), cause };
        let result: CaseResult = serde_json::from_str(text).map_err(|e| parse(e.to_string()))?;
        let raw: &serde_json::value::RawValue = serde_json::from_str(text).map_err(|e| parse(e.to_string()))?;
        tally.add(&result);
        if !first {
            json.write_all(b",").map_err(|e| parse(e.to_string()))?;
        }
        first = false;
        serde_json::to_writer(&mut *json, &CaseEntry { result: raw, modes: assess(&result).modes })
            .map_err(|e| parse(e.to_string()))?;
        Ok(())
    })
    .map_err(|error| match error {
        StreamError::Read(error) => HtmlReportError::from(error),
        StreamError::Visit(error) => error,
    })?;
    let rest = Rest {
        title: title(&dir),
        summary: summary.map(|summary| summary.json),
        metrics: tally.metrics(),
        latency: tally.latency(),
        tokens: std::mem::take(&mut tally.tokens).into_values().collect(),
        assessment: command_report(&dir, "assess.json")?,
        eval: command_report(&dir, "eval.json")?,
        validation: command_report(&dir, "validate.json")?,
    };
    let rest = serde_json::to_vec(&rest).expect("plain data");
    json.write_all(b"],").map_err(written)?;
    json.write_all(&rest[1..]).map_err(written)
}

/// The report `name` an evaluation command wrote in `dir`, if there is one.
fn command_report(dir: &Path, name: &str) -> Result<Option<Value>, HtmlReportError> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(HtmlReportError::Parse { path, line: None, cause: error.to_string() }),
    };
    let value = serde_json::from_str(&text).map_err(|cause| HtmlReportError::Parse {
        path: path.clone(),
        line: None,
        cause: cause.to_string(),
    })?;
    Ok(Some(value))
}

/// The distribution of `values` (finite, at least one), its bars spanning
/// at least `scale` and every value.
fn distribution(name: String, values: Vec<f32>, scale: (f64, f64)) -> Distribution {
    let mut values: Vec<f64> = values.into_iter().map(f64::from).collect();
    values.sort_by(f64::total_cmp);
    let (min, max) = (values[0], values[values.len() - 1]);
    let (low, high) = (scale.0.min(min), scale.1.max(max));
    let width = (high - low) / BINS as f64;
    let mut bins = vec![0; BINS];
    for &value in &values {
        let bin = if width > 0.0 { ((value - low) / width) as usize } else { 0 };
        bins[bin.min(BINS - 1)] += 1;
    }
    let percentile = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize];
    Distribution {
        name,
        count: values.len(),
        mean: values.iter().sum::<f64>() / values.len() as f64,
        p50: percentile(0.5),
        p90: percentile(0.9),
        min,
        max,
        low,
        high,
        bins,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    #[test]
    fn every_fixture_case_reads_back_from_its_line_as_it_was_but_for_plugin_logs() {
        for case in fixtures::cases().into_iter().chain(fixtures::suite_cases()) {
            let line = serde_json::to_string(&case).unwrap();
            let mut expected = case.clone();
            for interaction in expected.samples.iter_mut().flat_map(|s| &mut s.runs).flat_map(|r| &mut r.interactions) {
                interaction.logs.clear();
            }
            let read: CaseResult = serde_json::from_str(&line).unwrap();
            assert_eq!(read, expected, "{line}");
        }
    }

    #[test]
    fn a_distribution_counts_every_value_in_its_bar_and_keeps_the_scale() {
        let scores = distribution("rouge".into(), vec![0.0, 0.5, 1.0, 0.55], (0.0, 1.0));
        assert_eq!((scores.count, scores.low, scores.high, scores.min, scores.max), (4, 0.0, 1.0, 0.0, 1.0));
        // Kept as f32: within its precision of the exact mean.
        assert!((scores.mean - 2.05 / 4.0).abs() < 1e-6, "{}", scores.mean);
        assert_eq!(scores.bins.iter().sum::<usize>(), 4);
        assert_eq!((scores.bins[0], scores.bins[10], scores.bins[11], scores.bins[19]), (1, 1, 1, 1));
        let wide = distribution("odd".into(), vec![-1.0, 3.0], (0.0, 1.0));
        assert_eq!((wide.low, wide.high, wide.bins[0], wide.bins[19]), (-1.0, 3.0, 1, 1));
        let one = distribution("direct".into(), vec![7.0], (0.0, 0.0));
        assert_eq!((one.low, one.high, one.p50, one.p90, one.bins[19]), (0.0, 7.0, 7.0, 7.0, 1));
    }
}
