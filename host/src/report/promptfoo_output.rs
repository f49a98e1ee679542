//! promptfoo's output file (`promptfoo eval -o out.json`) written from an
//! assay run, for the dashboards and scripts that read it: `results.results[]`
//! with `success`, `score`, `namedScores`, `gradingResult` (`pass`,
//! `score`, `reason`, `namedScores`, `componentResults[]` with `pass`,
//! `score`, `reason`, `assertion`), `vars`, `prompt`, `provider`,
//! `response.output`, `latencyMs`, `error`, `failureReason`, `testCase`,
//! `results.prompts[]` with each prompt column's `metrics` (test and
//! assertion counts, summed named scores and the config's
//! `derivedMetrics`), and `results.stats` (`successes`, `failures`,
//! `errors`, `tokenUsage`), as promptfoo's `EvaluateSummaryV3` has them. A case's score is
//! promptfoo's: the weighted mean of its assertions' scores (see
//! [`crate::job::weighted_score`]), 1 for a test with no assertions.
//!
//! Each result is written as it comes, as its compact JSON text with the
//! run's secrets hidden, to an unnamed temporary file beside the output
//! (nothing is left of it if the run is killed); memory keeps only where
//! each result is in it (32 bytes a case). When the run finishes, the
//! document is written around the results, copied from there in
//! promptfoo's order.

use crate::check::check_score;
use crate::check::{CheckResult, Outcome};
use crate::formats::promptfoo::derived::{DerivedMetric, derive};
use crate::formats::promptfoo::{Suite, render_prompt};
use crate::job::{CaseResult, CaseStatus, component_results, named_scores, weighted_score};
use crate::report::Redactor;
use crate::run::{EventKind, Reporter, RunEvent};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// A reporter writing promptfoo's output file for the cases of `suites`
/// (other cases are left out).
pub struct PromptfooOutput {
    path: PathBuf,
    suites: Vec<Arc<Suite>>,
    redactor: Redactor,
    /// Each result's place in promptfoo's order (suite, test, prompt
    /// column) and where its text is in `spilled`.
    results: Vec<((usize, usize, usize), Spilled)>,
    /// The results' texts, one after another, made with the first.
    spilled: Option<BufWriter<File>>,
    /// How many bytes `spilled` holds.
    spilled_len: u64,
    /// Whether keeping a result failed: the error was reported then, and
    /// no file is written.
    failed: bool,
    stats: Stats,
    /// Each prompt column's metrics, by (suite, promptIdx).
    columns: BTreeMap<(usize, usize), ColumnMetrics>,
}

/// A prompt column's `metrics`, as promptfoo sums them over its results:
/// named scores (each result's weighted mean times its weight), then the
/// config's `derivedMetrics` over those when written.
#[derive(Default)]
struct ColumnMetrics {
    results: usize,
    score: f64,
    test_pass: u64,
    test_fail: u64,
    test_error: u64,
    assert_pass: u64,
    assert_fail: u64,
    latency_ms: u64,
    named_scores: BTreeMap<String, f64>,
    named_counts: BTreeMap<String, u64>,
}

#[derive(Default)]
struct Stats {
    successes: u64,
    failures: u64,
    errors: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl PromptfooOutput {
    /// Writes to `path` when the run finishes, hiding `redactor`'s secrets.
    pub fn new(path: PathBuf, suites: Vec<Arc<Suite>>, redactor: Redactor) -> PromptfooOutput {
        PromptfooOutput {
            path,
            suites,
            redactor,
            results: Vec::new(),
            spilled: None,
            spilled_len: 0,
            failed: false,
            stats: Stats::default(),
            columns: BTreeMap::new(),
        }
    }

    fn add(&mut self, case: &CaseResult) -> std::io::Result<()> {
        let Some((suite_index, (prompt, provider, test))) =
            self.suites.iter().enumerate().find_map(|(i, suite)| Some((i, suite.case(&case.id)?)))
        else {
            return Ok(());
        };
        let suite = &self.suites[suite_index];
        let config = suite.config();
        let written = &config.tests[test];
        let interaction = case.samples.first().and_then(|s| s.runs.first()).and_then(|run| run.interactions.first());
        let all_checks: &[CheckResult] = interaction.map_or(&[], |i| i.checks.as_slice());
        // With an `assertScoringFunction`, its verdict follows the
        // assertions' and decides the test.
        let (checks, scored) = match written.scoring.is_some() && all_checks.len() > written.asserts.len() {
            true => all_checks.split_at(written.asserts.len()),
            false => (all_checks, &[][..]),
        };
        // `select-best` and `max-score` come last, decided after the
        // others: they leave the test's score alone unless they fail it.
        let own_count = written.asserts.len() - written.comparison_count();
        let (own, compared) = checks.split_at(own_count.min(checks.len()));
        let compared_failure = compared.iter().find(|c| !c.verdict.passed());
        // An assertion that could not be evaluated (promptfoo: one that
        // threw, such as a `file://` function) is the test's error.
        let error = case
            .error
            .as_ref()
            .map(|e| e.message.clone())
            .or_else(|| interaction.and_then(|i| i.error.as_ref()).map(|e| e.message.clone()))
            .or_else(|| {
                all_checks.iter().find(|c| c.verdict.outcome == Outcome::Error).map(|c| c.verdict.message.clone())
            });
        let weights: Vec<f64> =
            written.asserts.iter().map(|a| a.get("weight").and_then(Value::as_f64).unwrap_or(1.0)).collect();
        let metrics = config.metrics(written);
        let components = component_results(checks, &written.asserts.iter().map(|a| &**a).collect::<Vec<_>>());
        let (mut named_scores, named_weights) = named_scores(own, &weights, &metrics);
        for check in compared {
            if let Some(Value::Object(scores)) = check.verdict.extras.as_ref().map(|extras| &extras["named_scores"]) {
                named_scores.extend(scores.clone());
            }
        }
        let graded = interaction.is_some() && error.is_none();
        let scored = scored.first();
        let score = match scored {
            Some(scored) => scored
                .verdict
                .extras
                .as_ref()
                .and_then(|extras| extras.get("promptfoo_score"))
                .and_then(Value::as_f64)
                .unwrap_or_else(|| scored.verdict.score.unwrap_or(0.0)),
            None if compared_failure.is_some() => compared_failure.map_or(0.0, check_score),
            None if written.asserts.is_empty() => 1.0,
            None => weighted_score(own, &weights),
        };
        let success = graded && matches!(case.status, CaseStatus::Passed | CaseStatus::Flaky);
        let reason = match written.threshold {
            _ if compared_failure.is_some() => compared_failure.map(|c| c.verdict.message.clone()).unwrap_or_default(),
            _ if scored.is_some() => scored.map(|s| s.verdict.message.clone()).unwrap_or_default(),
            Some(threshold) if graded => {
                format!(
                    "Aggregate score {score:.2} {} {threshold} threshold",
                    if score >= threshold { "≥" } else { "<" }
                )
            }
            _ => checks
                .iter()
                .rev()
                .find(|c| !c.verdict.passed())
                .map_or_else(|| "All assertions passed".to_owned(), |c| c.verdict.message.clone()),
        };
        let failure_reason = match (success, &error) {
            (true, _) => 0,
            (false, Some(_)) => 2,
            (false, None) => 1,
        };
        match failure_reason {
            0 => self.stats.successes += 1,
            1 => self.stats.failures += 1,
            _ => self.stats.errors += 1,
        }
        if let Some(usage) = interaction.and_then(|i| i.usage) {
            self.stats.prompt_tokens += usage.prompt_tokens;
            self.stats.completion_tokens += usage.completion_tokens;
        }
        let entry = &config.providers[provider];
        let rendered = render_prompt(config, prompt, written).unwrap_or_default();
        let output = interaction.and_then(|i| i.response.as_ref()).and_then(|r| r.text.clone());
        let mut test_case = Map::new();
        if let Some(description) = &written.description {
            test_case.insert("description".into(), json!(description));
        }
        test_case.insert("vars".into(), Value::Object(written.vars.clone()));
        test_case.insert("assert".into(), Value::Array(written.asserts.iter().map(|a| Value::Object(Map::clone(a))).collect()));
        if let Some(threshold) = written.threshold {
            test_case.insert("threshold".into(), json!(threshold));
        }
        if !written.options.is_empty() {
            test_case.insert("options".into(), Value::Object(written.options.clone()));
        }
        let prompt_index = provider * config.prompts.len() + prompt;
        let column = self.columns.entry((suite_index, prompt_index)).or_default();
        column.results += 1;
        column.score += score;
        match failure_reason {
            0 => column.test_pass += 1,
            1 => column.test_fail += 1,
            _ => column.test_error += 1,
        }
        let passed = checks.iter().filter(|c| c.verdict.passed()).count() as u64;
        column.assert_pass += passed;
        column.assert_fail += checks.len() as u64 - passed;
        column.latency_ms += interaction.map_or(0, |i| i.agent_ms.round() as u64);
        for (metric, mean) in &named_scores {
            let weight = named_weights.get(metric).and_then(Value::as_f64).unwrap_or(0.0);
            *column.named_scores.entry(metric.clone()).or_default() += mean.as_f64().unwrap_or(0.0) * weight;
            let count = metrics.iter().filter(|m| m.as_deref() == Some(metric.as_str())).count() as u64;
            *column.named_counts.entry(metric.clone()).or_default() += count;
        }
        let result = json!({
            "id": case.id,
            "description": written.description,
            "promptIdx": prompt_index,
            "testIdx": test,
            "prompt": {"raw": rendered, "label": config.prompts[prompt].label},
            "provider": {"id": entry.id, "label": entry.label},
            "vars": written.vars,
            "response": output.map(|output| json!({"output": output})),
            "error": error,
            "success": success,
            "score": score,
            "namedScores": named_scores,
            "latencyMs": interaction.map_or(0, |i| i.agent_ms.round() as u64),
            "cost": 0,
            "gradingResult": graded.then(|| json!({
                "pass": success,
                "score": score,
                "reason": reason,
                "namedScores": named_scores,
                "componentResults": components,
            })),
            "failureReason": failure_reason,
            "testCase": test_case,
        });
        let Ok(text) = self.redactor.to_json(&result, false) else { return Ok(()) };
        let spilled = self.spill((suite_index, test, prompt_index), &text);
        spilled.map_err(|e| self.named(e, "keep a result for"))
    }

    /// Appends `text`, the result at `order`, to the spilled results.
    fn spill(&mut self, order: (usize, usize, usize), text: &[u8]) -> std::io::Result<()> {
        let spilled = match &mut self.spilled {
            Some(spilled) => spilled,
            None => {
                let dir = self.path.parent().filter(|dir| !dir.as_os_str().is_empty());
                let file = tempfile::tempfile_in(dir.unwrap_or(std::path::Path::new(".")))?;
                self.spilled.insert(BufWriter::new(file))
            }
        };
        spilled.write_all(text)?;
        let len = u32::try_from(text.len()).map_err(std::io::Error::other)?;
        self.results.push((order, Spilled { offset: self.spilled_len, len }));
        self.spilled_len += u64::from(len);
        Ok(())
    }

    /// `error` while doing `what` promptfoo's output file, naming it.
    fn named(&self, error: std::io::Error, what: &str) -> std::io::Error {
        std::io::Error::new(error.kind(), format!("{what} promptfoo's output file `{}`: {error}", self.path.display()))
    }

    fn write(&mut self) -> std::io::Result<()> {
        self.results.sort_by_key(|(order, _)| *order);
        let spilled = self.spilled.take().map(BufWriter::into_inner).transpose();
        let mut prompts = Vec::new();
        for (suite_index, suite) in self.suites.iter().enumerate() {
            let config = suite.config();
            let columns = config.providers.iter().flat_map(|entry| config.prompts.iter().map(move |p| (entry, p)));
            for (prompt_index, (entry, prompt)) in columns.enumerate() {
                let metrics = self.columns.remove(&(suite_index, prompt_index)).unwrap_or_default();
                prompts.push(json!({
                    "raw": prompt.raw, "label": prompt.label, "provider": entry.name(),
                    "metrics": metrics.written(&config.derived_metrics),
                }));
            }
        }
        let timestamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let stats = &self.stats;
        let stats = json!({
            "successes": stats.successes,
            "failures": stats.failures,
            "errors": stats.errors,
            "tokenUsage": {
                "total": stats.prompt_tokens + stats.completion_tokens,
                "prompt": stats.prompt_tokens,
                "completion": stats.completion_tokens,
            },
        });
        let json = |value: &Value| self.redactor.to_json(value, false).map_err(std::io::Error::other);
        let named = |e: std::io::Error| self.named(e, "write");
        let mut spilled = match spilled {
            Ok(spilled) => spilled,
            Err(e) => return Err(named(e.into_error())),
        };
        let file = std::fs::File::create(&self.path).map_err(named)?;
        let mut out = std::io::BufWriter::new(file);
        // The document, written around the results' texts: {"evalId", "results":
        // {"version", "timestamp", "prompts", "results": [...], "stats"},
        // "config", "shareableUrl"}.
        let write = || -> std::io::Result<()> {
            out.write_all(b"{\"evalId\":")?;
            out.write_all(&json(&json!(format!("assay-{timestamp}")))?)?;
            out.write_all(b",\"results\":{\"version\":3,\"timestamp\":")?;
            out.write_all(&json(&json!(timestamp))?)?;
            out.write_all(b",\"prompts\":")?;
            out.write_all(&json(&Value::Array(prompts))?)?;
            out.write_all(b",\"results\":[")?;
            let mut text = Vec::new();
            for (i, (_, at)) in self.results.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",\n")?;
                }
                let spilled = spilled.as_mut().expect("a result was spilled");
                spilled.seek(SeekFrom::Start(at.offset))?;
                text.resize(at.len as usize, 0);
                spilled.read_exact(&mut text)?;
                out.write_all(&text)?;
            }
            out.write_all(b"],\"stats\":")?;
            out.write_all(&json(&stats)?)?;
            out.write_all(b"},\"config\":{\"description\":\"run by assay\"},\"shareableUrl\":null}\n")?;
            out.flush()
        };
        write().map_err(named)?;
        self.results.clear();
        self.spilled_len = 0;
        Ok(())
    }
}

/// Where a result's text is among the spilled results.
#[derive(Clone, Copy)]
struct Spilled {
    offset: u64,
    len: u32,
}

impl ColumnMetrics {
    /// promptfoo's prompt `metrics`, with the derived metrics evaluated
    /// over the named scores.
    fn written(mut self, derived: &[DerivedMetric]) -> Value {
        derive(derived, &mut self.named_scores, self.results);
        json!({
            "score": self.score,
            "testPassCount": self.test_pass,
            "testFailCount": self.test_fail,
            "testErrorCount": self.test_error,
            "assertPassCount": self.assert_pass,
            "assertFailCount": self.assert_fail,
            "totalLatencyMs": self.latency_ms,
            "namedScores": self.named_scores,
            "namedScoresCount": self.named_counts,
        })
    }
}

impl Reporter for PromptfooOutput {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        match event.kind {
            EventKind::CaseFinished(_) | EventKind::RunFinished(_) if self.failed => {}
            EventKind::CaseFinished(case) => {
                let added = self.add(case);
                self.failed = added.is_err();
                added?
            }
            EventKind::RunFinished(_) => self.write()?,
            _ => {}
        }
        Ok(())
    }
}
