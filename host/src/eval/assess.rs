//! The Assessor (`assay assess`): a case's samples, all of them, and how
//! the failed ones failed.
//!
//! Every failure of every sample — a failed or errored check, a request
//! that failed — is grouped into failure modes deterministically, by where
//! it happened (connection when the case has several, interaction and
//! target), the key, the expected value, and the shape of the message
//! (quoted text and numbers blanked, so "found 3 of 5" and "found 2 of 5"
//! are one mode). Optionally a language-model judge classifies each
//! failure too, told the modes it found so far, as neuro-san's
//! `assess_failure` agent does.
//!
//! Counts stay consistent: a mode counts the samples it occurred in (at
//! most the samples that failed, which are at most the samples run) and,
//! separately, its occurrences.

use crate::case::{Connection, SuccessRatio};
use crate::check::Outcome;
use crate::job::{CaseResult, CaseStatus, RunError};
use crate::sandbox::host::judge::Judge;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The most examples a mode keeps.
const MAX_EXAMPLES: usize = 3;

/// The longest failure-mode description an LLM may give, in characters.
const MAX_LLM_MODE_CHARS: usize = 300;

/// How one case's samples went.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Assessment {
    /// The case's id.
    pub case_id: String,
    /// Its file.
    pub file: PathBuf,
    /// Its agent.
    pub agent: String,
    /// Its success ratio (k/n).
    pub success_ratio: SuccessRatio,
    /// How many samples ran.
    pub samples: u32,
    /// How many passed.
    pub passed: u32,
    /// How many failed.
    pub failed: u32,
    /// What the run would say of the case.
    pub status: CaseStatus,
    /// The failure modes found by grouping, most frequent first.
    pub modes: Vec<FailureMode>,
    /// The failure modes a language-model judge found, most frequent first
    /// (with `--llm-modes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_modes: Option<Vec<FailureMode>>,
    /// Every failure, in sample order.
    pub failures: Vec<Failure>,
    /// Why the case could not run at all (a bad file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
}

/// One way the samples failed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailureMode {
    /// What it is, in words.
    pub description: String,
    /// How many samples it occurred in.
    pub samples: u32,
    /// Those samples as a share of the samples run, in percent.
    pub percent: f64,
    /// How many times it occurred in all.
    pub occurrences: u32,
    /// A few occurrences.
    pub examples: Vec<Example>,
}

/// One occurrence of a mode, as an example.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Example {
    /// The sample.
    pub sample: u32,
    /// What the check (or the request) said.
    pub message: String,
    /// What the check looked at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// One failure of one sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    /// The sample.
    pub sample: u32,
    /// The connection it ran over.
    pub connection: Connection,
    /// Where: `interactions[0].text`, or `interactions[1]` for a request.
    pub path: String,
    /// The key as written (`not_keywords`), or `request` for a failed
    /// request.
    pub key: String,
    /// The expected value (null for a request).
    pub expected: Value,
    /// Fail or error.
    pub outcome: Outcome,
    /// What happened.
    pub message: String,
    /// What the check looked at, cut to a preview.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// Its mode in `modes`.
    pub mode: usize,
    /// Its mode in `llm_modes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_mode: Option<usize>,
    /// Why the judge could not classify it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_error: Option<String>,
}

/// The Assessor as a reporter of the run's events: each case's failure
/// modes as it finishes (an aggregating reporter, as eval's scores are).
#[derive(Debug, Default)]
pub struct FailureModes {
    assessments: Vec<Assessment>,
}

impl FailureModes {
    /// Every case's assessment, by case id.
    pub fn into_assessments(mut self) -> Vec<Assessment> {
        self.assessments.sort_by(|a, b| a.case_id.cmp(&b.case_id));
        self.assessments
    }
}

impl crate::run::Reporter for FailureModes {
    fn report(&mut self, event: &crate::run::RunEvent<'_>) -> std::io::Result<()> {
        if let crate::run::EventKind::CaseFinished(case) = event.kind {
            self.assessments.push(assess(case));
        }
        Ok(())
    }
}

/// Assesses a case from its result (run with every sample: see
/// `RunOptions::exhaustive`).
pub fn assess(case: &CaseResult) -> Assessment {
    let several_connections = case.connections.len() > 1;
    let mut failures = Vec::new();
    for sample in case.samples.iter().filter(|s| !s.passed) {
        let before = failures.len();
        for run in &sample.runs {
            for interaction in &run.interactions {
                let at = format!("interactions[{}]", interaction.index);
                if let Some(error) = &interaction.error {
                    failures.push(failure(
                        sample.index,
                        run.connection.clone(),
                        at.clone(),
                        "request",
                        Value::Null,
                        error,
                    ));
                }
                for check in interaction.checks.iter().filter(|c| !c.verdict.passed()) {
                    failures.push(Failure {
                        sample: sample.index,
                        connection: run.connection.clone(),
                        path: format!("{at}.{}", check.target),
                        key: check.key.clone(),
                        expected: check.expected.clone(),
                        outcome: check.verdict.outcome,
                        message: check.verdict.message.clone(),
                        actual: interaction.actual_of(check).map(|actual| actual.into_owned()),
                        mode: 0,
                        llm_mode: None,
                        llm_error: None,
                    });
                }
            }
        }
        if failures.len() == before {
            // A failed sample always shows up in some mode.
            let error =
                RunError { kind: crate::errors::ErrorKind::Incomplete, message: "the sample did not complete".into() };
            let connection = case.connections.first().cloned().unwrap_or(Connection::Direct);
            failures.push(failure(sample.index, connection, "sample".into(), "run", Value::Null, &error));
        }
    }

    let samples = case.samples.len() as u32;
    let groups: Vec<String> = failures
        .iter()
        .map(|f| {
            let place = if several_connections { format!("[{}] {}", f.connection, f.path) } else { f.path.clone() };
            let expected = if f.expected.is_null() { String::new() } else { format!(" {}", f.expected) };
            format!("{place} {}{expected}: {}", f.key, shape(&f.message))
        })
        .collect();
    let labelled: Vec<(&Failure, &str)> = failures.iter().zip(groups.iter().map(String::as_str)).collect();
    let (modes, assigned) = count_modes(&labelled, samples);
    for (failure, mode) in failures.iter_mut().zip(assigned) {
        failure.mode = mode;
    }
    let passed = case.passed_samples() as u32;
    Assessment {
        case_id: case.id.clone(),
        file: case.file.clone(),
        agent: case.agent.clone(),
        success_ratio: case.success_ratio,
        samples,
        passed,
        failed: samples - passed,
        status: case.status,
        modes,
        llm_modes: None,
        failures,
        error: case.error.clone(),
    }
}

fn failure(sample: u32, connection: Connection, path: String, key: &str, expected: Value, error: &RunError) -> Failure {
    Failure {
        sample,
        connection,
        path,
        key: key.to_owned(),
        expected,
        outcome: Outcome::Error,
        message: format!("{}: {}", error.kind, error.message),
        actual: None,
        mode: 0,
        llm_mode: None,
        llm_error: None,
    }
}

/// Groups failures by their labels: the modes, most frequent first, and
/// each failure's mode index, in the order given.
fn count_modes(labelled: &[(&Failure, &str)], samples: u32) -> (Vec<FailureMode>, Vec<usize>) {
    struct Group {
        description: String,
        samples: BTreeSet<u32>,
        occurrences: u32,
        examples: Vec<Example>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut assigned = Vec::with_capacity(labelled.len());
    for &(failure, label) in labelled {
        let group = *index.entry(label).or_insert_with(|| {
            groups.push(Group {
                description: label.to_owned(),
                samples: BTreeSet::new(),
                occurrences: 0,
                examples: Vec::new(),
            });
            groups.len() - 1
        });
        let entry = &mut groups[group];
        entry.samples.insert(failure.sample);
        entry.occurrences += 1;
        if entry.examples.len() < MAX_EXAMPLES && !entry.examples.iter().any(|e| e.message == failure.message) {
            entry.examples.push(Example {
                sample: failure.sample,
                message: failure.message.clone(),
                actual: failure.actual.clone(),
            });
        }
        assigned.push(group);
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&groups[a], &groups[b]);
        b.samples
            .len()
            .cmp(&a.samples.len())
            .then(b.occurrences.cmp(&a.occurrences))
            .then(a.description.cmp(&b.description))
    });
    let mut rank = vec![0; groups.len()];
    for (position, &group) in order.iter().enumerate() {
        rank[group] = position;
    }
    let mut slots: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
    let modes = order
        .iter()
        .map(|&group| {
            let group = slots[group].take().expect("each group once");
            let count = group.samples.len() as u32;
            FailureMode {
                description: group.description,
                samples: count,
                percent: if samples == 0 { 0.0 } else { f64::from(count) * 100.0 / f64::from(samples) },
                occurrences: group.occurrences,
                examples: group.examples,
            }
        })
        .collect();
    (modes, assigned.into_iter().map(|g| rank[g]).collect())
}

/// A message with its variable parts blanked: quoted text (`"…"`, `` `…` ``)
/// and numbers (`#`).
pub fn shape(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '`' => {
                let mut escaped = false;
                for inner in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if inner == '\\' {
                        escaped = true;
                    } else if inner == c {
                        break;
                    }
                }
                out.push(c);
                out.push('…');
                out.push(c);
            }
            c if c.is_ascii_digit() => {
                while chars.peek().is_some_and(|n| n.is_ascii_digit() || *n == '.' || *n == ',') {
                    chars.next();
                }
                out.push('#');
            }
            c => out.push(c),
        }
    }
    out.trim_end_matches(['.', ' ']).to_owned()
}

/// Asks `judge` to classify every failure, one at a time in sample order,
/// telling it the modes found so far; fills `llm_modes` and each failure's
/// `llm_mode` (or `llm_error`).
pub fn classify_with_judge(assessment: &mut Assessment, judge: &dyn Judge) {
    let mut known: Vec<String> = Vec::new();
    let mut labels: Vec<Option<String>> = Vec::with_capacity(assessment.failures.len());
    // One assessment is one scope of the judge's budget.
    let spend = crate::sandbox::host::CapabilitySpend::default();
    for failure in &mut assessment.failures {
        let prompt = classification_prompt(failure, &known);
        match judge.complete(&prompt, &spend).answer.and_then(|answer| read_mode(&answer, &known)) {
            Ok(mode) => {
                if !known.contains(&mode) {
                    known.push(mode.clone());
                }
                labels.push(Some(mode));
            }
            Err(error) => {
                failure.llm_error = Some(error);
                labels.push(None);
            }
        }
    }
    let labelled: Vec<(&Failure, &str)> = assessment
        .failures
        .iter()
        .zip(&labels)
        .filter_map(|(failure, label)| label.as_deref().map(|label| (failure, label)))
        .collect();
    let (modes, assigned) = count_modes(&labelled, assessment.samples);
    let mut assigned = assigned.into_iter();
    for (failure, label) in assessment.failures.iter_mut().zip(&labels) {
        if label.is_some() {
            failure.llm_mode = assigned.next();
        }
    }
    assessment.llm_modes = Some(modes);
}

/// The prompt asking for one failure's mode.
fn classification_prompt(failure: &Failure, known: &[String]) -> String {
    let test = if failure.key == "request" {
        format!("the request of {} succeeds", failure.path)
    } else {
        format!("{} satisfies `{}` with {}", failure.path, failure.key, failure.expected)
    };
    let known_modes = if known.is_empty() {
        "(none yet)".to_owned()
    } else {
        known.iter().enumerate().map(|(i, m)| format!("{}. {m}", i + 1)).collect::<Vec<_>>().join("\n")
    };
    format!(
        "You classify why an AI agent failed a test.\n\n\
         THE TEST: {test}.\n\
         WHAT THE CHECK FOUND: {}\n\
         THE AGENT'S ANSWER: {}\n\n\
         KNOWN FAILURE MODES:\n{known_modes}\n\n\
         If one known failure mode fits, answer with its number only. Otherwise answer with a new \
         description of the failure mode in at most two sentences, general enough to match similar \
         failures. Never add any other commentary.\n",
        failure.message,
        failure.actual.as_deref().unwrap_or("(none)"),
    )
}

/// Reads the judge's answer: a known mode's number or text, or a new mode.
fn read_mode(answer: &str, known: &[String]) -> Result<String, String> {
    let trimmed = answer.trim().trim_matches('"').trim();
    let number = trimmed.trim_end_matches('.').trim();
    if let Ok(n) = number.parse::<usize>() {
        return known.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
            format!("the judge chose failure mode {n}, but only {} are known: {answer:?}", known.len())
        });
    }
    if let Some(mode) = known.iter().find(|m| m.eq_ignore_ascii_case(trimmed)) {
        return Ok(mode.clone());
    }
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    if words.is_empty() {
        return Err("the judge gave an empty answer".into());
    }
    let mut mode = words.join(" ");
    if let Some((cut, _)) = mode.char_indices().nth(MAX_LLM_MODE_CHARS) {
        mode.truncate(cut);
        mode.push('…');
    }
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_blank_quoted_text_and_numbers() {
        assert_eq!(shape("\"fail\" does not equal \"pass\""), "\"…\" does not equal \"…\"");
        assert_eq!(
            shape("found 3 of 5 keywords in a 42-character string."),
            "found # of # keywords in a #-character string"
        );
        assert_eq!(shape("`x\\`y` is 1.5"), "`…` is #");
        assert_eq!(shape("interaction 2 exceeded 0.25 s"), "interaction # exceeded # s");
    }

    #[test]
    fn reads_a_mode_by_number_text_or_as_new() {
        let known = vec!["Wrong band.".to_owned(), "No answer.".to_owned()];
        assert_eq!(read_mode(" 2. ", &known).unwrap(), "No answer.");
        assert_eq!(read_mode("\"wrong band.\"", &known).unwrap(), "Wrong band.");
        assert_eq!(read_mode("  Answers in   French.\n", &known).unwrap(), "Answers in French.");
        assert!(read_mode("7", &known).unwrap_err().contains("only 2 are known"));
        assert!(read_mode("  ", &known).is_err());
    }
}
