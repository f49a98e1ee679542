//! The reports of the evaluation workflows: what `assay assess`, `assay
//! eval` and `assay validate` print, and the JSON file each writes. Like
//! every report they are redacted, and text from files, agents and plugins
//! is printed escaped.

use crate::eval::{Assessment, CategoryTallies, Confusion, EvalReport, ExpectationScore, FailureMode, ValidateReport};
use crate::plural;
use crate::private_files;
use crate::report::{Redactor, escape};
use serde::Serialize;
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `value` as pretty JSON to `dir/name`, creating `dir`, with
/// `redactor`'s secrets hidden: the path. Both are private (0700, 0600), as
/// the results directory is.
pub fn write_json_report(dir: &Path, name: &str, value: &impl Serialize, redactor: &Redactor) -> io::Result<PathBuf> {
    private_files::create_dir(dir).map_err(|e| {
        io::Error::new(e.kind(), format!("cannot create the results directory `{}`: {e}", dir.display()))
    })?;
    let path = dir.join(name);
    let mut text = redactor.to_json(value, true)?;
    text.push(b'\n');
    private_files::write(&path, &text)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write `{}`: {e}", path.display())))?;
    Ok(path)
}

/// The Assessor's summary of one case.
pub fn write_assessment(out: &mut impl Write, assessment: &Assessment, redactor: &Redactor) -> io::Result<()> {
    let mut text = Vec::new();
    write_assessment_to(&mut text, assessment)?;
    out.write_all(redactor.redact(&String::from_utf8_lossy(&text)).as_bytes())
}

fn write_assessment_to(out: &mut impl Write, assessment: &Assessment) -> io::Result<()> {
    let ratio = assessment.success_ratio;
    writeln!(
        out,
        "{} (agent {}): {}/{} {} passed, {} needed: {}",
        name(&assessment.case_id),
        if assessment.agent.is_empty() { "?".into() } else { name(&assessment.agent) },
        assessment.passed,
        assessment.samples,
        plural::noun(assessment.samples as usize, "sample"),
        ratio.required,
        assessment.status.name()
    )?;
    if let Some(error) = &assessment.error {
        writeln!(out, "  error: {}", message(&error.message))?;
        return Ok(());
    }
    if assessment.modes.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "  Failure modes ({} in {}):",
        plural::count(assessment.failures.len(), "failure"),
        plural::count(assessment.failed as usize, "failed sample")
    )?;
    write_modes(out, &assessment.modes, assessment.samples)?;
    if let Some(llm_modes) = &assessment.llm_modes {
        writeln!(out, "  Failure modes as the judge classified them:")?;
        write_modes(out, llm_modes, assessment.samples)?;
        let unclassified: Vec<&str> = assessment.failures.iter().filter_map(|f| f.llm_error.as_deref()).collect();
        if let Some(first) = unclassified.first() {
            let failures = plural::count(unclassified.len(), "failure");
            writeln!(out, "    {failures} could not be classified; the first: {}", message(first))?;
        }
    }
    Ok(())
}

fn write_modes(out: &mut impl Write, modes: &[FailureMode], samples: u32) -> io::Result<()> {
    for mode in modes {
        let times = if mode.occurrences == 1 { "once".to_owned() } else { format!("{} times", mode.occurrences) };
        writeln!(
            out,
            "    {} of {} ({:.0}%), {times}: {}",
            mode.samples,
            plural::count(samples as usize, "sample"),
            mode.percent,
            one_line(&mode.description, usize::MAX)
        )?;
        for example in &mode.examples {
            let actual =
                example.actual.as_deref().map(|a| format!(" (actual: {})", one_line(a, 80))).unwrap_or_default();
            writeln!(out, "        e.g. sample {}: {}{actual}", example.sample, one_line(&example.message, 160))?;
        }
    }
    Ok(())
}

/// What `assay eval` prints.
pub fn write_eval(out: &mut impl Write, report: &EvalReport, redactor: &Redactor) -> io::Result<()> {
    let mut text = Vec::new();
    write_eval_to(&mut text, report)?;
    out.write_all(redactor.redact(&String::from_utf8_lossy(&text)).as_bytes())
}

fn write_eval_to(out: &mut impl Write, report: &EvalReport) -> io::Result<()> {
    for scenario in &report.scenarios {
        let agent =
            if scenario.agent.is_empty() { String::new() } else { format!(" (agent {})", name(&scenario.agent)) };
        let verdict = match scenario.passed {
            Some(true) => ", passed",
            Some(false) => ", FAILED: a required expectation was not met",
            None => "",
        };
        writeln!(out, "{}{agent}: {}{verdict}", name(&scenario.scenario_id), scenario.score.describe())?;
        if let Some(error) = &scenario.error {
            writeln!(out, "  error: {}", message(&error.message))?;
            continue;
        }
        for sample in &scenario.samples {
            let label =
                if scenario.samples.len() > 1 { format!("  sample {}: ", sample.index) } else { "  ".to_owned() };
            if let Some(error) = &sample.error {
                writeln!(out, "{label}no answer: {}", message(&error.message))?;
                continue;
            }
            for expectation in &sample.expectations {
                let mark = match expectation.matched {
                    Some(true) => "MATCH",
                    Some(false) => " MISS",
                    None => "ERROR",
                };
                writeln!(
                    out,
                    "{label}{mark} {} (weight {}, {}): {}",
                    name(&expectation.expectation_id),
                    expectation.weight,
                    name(&expectation.key),
                    one_line(&expectation.message, 160)
                )?;
            }
        }
        write_gate(out, &scenario.expectations)?;
    }
    let gated: Vec<bool> = report.scenarios.iter().filter_map(|s| s.passed).collect();
    if !gated.is_empty() {
        let passed = gated.iter().filter(|p| **p).count();
        writeln!(out, "Passed: {passed} of {} scenarios with required expectations", gated.len())?;
    }
    write_categories(out, &report.categories)?;
    writeln!(out, "Overall: {}", report.overall.describe())
}

/// Each expectation's score over the samples against its threshold, for a
/// scenario that has thresholds or required expectations (Kyma's format).
fn write_gate(out: &mut impl Write, expectations: &[ExpectationScore]) -> io::Result<()> {
    if !expectations.iter().any(|e| e.required || e.threshold.is_some()) {
        return Ok(());
    }
    for expectation in expectations {
        let kind = if expectation.required { "required" } else { "optional" };
        let score = expectation.score.map_or("n/a".to_owned(), |s| format!("{s:.2}"));
        let threshold = expectation
            .threshold
            .map_or("no threshold, every answer must match".to_owned(), |t| format!("threshold {t:.2}"));
        let met = match expectation.met {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "not judged",
        };
        writeln!(out, "  {kind} {}: score {score}, {threshold}: {met}", name(&expectation.expectation_id))?;
    }
    Ok(())
}

/// What `assay validate` prints.
pub fn write_validation(out: &mut impl Write, report: &ValidateReport, redactor: &Redactor) -> io::Result<()> {
    let mut text = Vec::new();
    write_validation_to(&mut text, report)?;
    out.write_all(redactor.redact(&String::from_utf8_lossy(&text)).as_bytes())
}

fn write_validation_to(out: &mut impl Write, report: &ValidateReport) -> io::Result<()> {
    for file in &report.files {
        if let Some(error) = &file.error {
            writeln!(out, "{}: error: {}", name(&file.file.to_string_lossy()), message(&error.message))?;
            continue;
        }
        writeln!(
            out,
            "{} ({}): agreement {}",
            name(&file.scenario_id),
            name(&file.file.to_string_lossy()),
            file.agreement.describe()
        )?;
        for mock in &file.mock_responses {
            writeln!(out, "  {}: {}", name(&mock.mock_response_id), mock.agreement.describe())?;
            for judgment in mock.judgments.iter().filter(|j| j.agrees != Some(true)) {
                let judged = match judgment.actual_result {
                    Some(true) => "match",
                    Some(false) => "no match",
                    None => "an error",
                };
                let wanted = if judgment.wanted_result { "match" } else { "no match" };
                writeln!(
                    out,
                    "    {}: wanted {wanted}, judged {judged} ({}): {}",
                    name(&judgment.expectation_id),
                    name(&judgment.key),
                    one_line(&judgment.message, 160)
                )?;
            }
        }
    }
    write_categories(out, &report.categories)?;
    write_confusion(out, &report.confusion)?;
    writeln!(out, "Agreement: {}", report.agreement.describe())
}

fn write_categories(out: &mut impl Write, categories: &CategoryTallies) -> io::Result<()> {
    if categories.is_empty() {
        return Ok(());
    }
    writeln!(out, "Categories:")?;
    let width = categories.keys().map(|c| name(c).chars().count()).max().unwrap_or(0);
    for (category, tally) in categories {
        writeln!(out, "  {:width$}  {}", name(category), tally.describe())?;
    }
    Ok(())
}

fn write_confusion(out: &mut impl Write, confusion: &Confusion) -> io::Result<()> {
    writeln!(out, "Confusion matrix (counts):")?;
    writeln!(out, "                   judged match  judged no match")?;
    writeln!(out, "  wanted match     {:>12}  {:>15}", confusion.true_positive, confusion.false_negative)?;
    writeln!(out, "  wanted no match  {:>12}  {:>15}", confusion.false_positive, confusion.true_negative)?;
    if confusion.errors > 0 {
        writeln!(out, "  not judged (errors): {}", confusion.errors)?;
    }
    Ok(())
}

/// `text` on one line, cut to `max` characters, control characters
/// escaped.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = escape::one_line(&flat);
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat.into_owned(),
    }
}

/// A name or id from a file, agent or plugin, escaped.
fn name(text: &str) -> Cow<'_, str> {
    escape::one_line(text)
}

/// An error message, escaped, its continuation lines indented.
fn message(text: &str) -> Cow<'_, str> {
    escape::lines(text, "      ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{
        ExpectationResult, Judgment, MockResult, ScenarioResult, ScenarioSample, Tally, ValidationResult, assess,
    };
    use crate::job::RunError;
    use crate::report::fixtures::{self, SECRET};

    fn tally(matched: u64, total: u64, errors: u64) -> Tally {
        Tally { matched, total, errors }
    }

    fn printed(write: impl FnOnce(&mut Vec<u8>, &Redactor) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        write(&mut out, &Redactor::new([SECRET])).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn assessments() {
        let text = printed(|out, redactor| {
            for case in fixtures::cases() {
                let mut assessment = assess(&case);
                if case.id == "flaky/flaky" {
                    // As the judge classified it: one mode, and one failure
                    // it could not classify.
                    let mut judged = assessment.modes.clone();
                    judged[0].description = format!("the agent said \"fail\"\nand leaked {SECRET}");
                    assessment.llm_modes = Some(judged);
                    assessment.failures[0].llm_error = Some("the judge answered \u{1b}[2Knothing".into());
                }
                write_assessment(out, &assessment, redactor)?;
            }
            Ok(())
        });
        insta::assert_snapshot!(text);
    }

    fn expectation(id: &str, key: &str, matched: Option<bool>, weight: u32, message: &str) -> ExpectationResult {
        ExpectationResult {
            expectation_id: id.into(),
            key: key.into(),
            matched,
            score: matched.map(|m| if m { 1.0 } else { 0.0 }),
            message: message.into(),
            weight,
            categories: vec!["problem_finding".into()],
        }
    }

    #[test]
    fn eval_report() {
        let scenario = |id: &str, samples: Vec<ScenarioSample>, score, error: Option<RunError>| ScenarioResult {
            scenario_id: id.into(),
            file: PathBuf::from(format!("scenarios/{id}.yaml")),
            agent: "chef".into(),
            score,
            categories: Default::default(),
            passed: None,
            expectations: Vec::new(),
            samples,
            error,
        };
        let answered = |index, expectations| ScenarioSample {
            index,
            response: Some("Add salt.".into()),
            error: None,
            expectations,
        };
        let report = EvalReport {
            scenarios: vec![
                scenario(
                    "bland_food",
                    vec![answered(
                        0,
                        vec![
                            expectation("missing_spices", "gist", Some(true), 2, "the answer names spices"),
                            expectation("salt", "keywords", Some(false), 1, &format!("no `salt` in {SECRET}")),
                            expectation("tone", "gist", None, 1, "the judge is down:\nconnection refused"),
                        ],
                    )],
                    tally(2, 3, 1),
                    None,
                ),
                scenario(
                    "two_samples",
                    vec![
                        answered(0, vec![expectation("salt", "keywords", Some(true), 1, "found salt")]),
                        ScenarioSample {
                            index: 1,
                            response: None,
                            error: Some(RunError {
                                kind: crate::errors::ErrorKind::Unreachable,
                                message: "agent `chef` is down".into(),
                            }),
                            expectations: Vec::new(),
                        },
                    ],
                    tally(1, 1, 0),
                    None,
                ),
                scenario(
                    "bad\u{1b}[31m",
                    Vec::new(),
                    Tally::default(),
                    Some(RunError {
                        kind: crate::errors::ErrorKind::BadFile,
                        message: "no `problem` in the file\n\nAdd one.".into(),
                    }),
                ),
            ],
            categories: [("problem_finding".to_owned(), tally(3, 4, 1)), ("x".to_owned(), tally(0, 0, 0))].into(),
            overall: tally(3, 4, 1),
        };
        insta::assert_snapshot!(printed(|out, redactor| write_eval(out, &report, redactor)));
    }

    #[test]
    fn eval_report_with_required_expectations() {
        let gate = |id: &str, score, threshold, required, met| ExpectationScore {
            expectation_id: id.into(),
            score,
            threshold,
            required,
            met,
        };
        let query = |id: &str, passed, expectations| ScenarioResult {
            scenario_id: id.into(),
            file: PathBuf::from("scenarios/kyma.yml"),
            agent: "companion".into(),
            score: tally(1, 2, 0),
            categories: Default::default(),
            passed: Some(passed),
            expectations,
            samples: Vec::new(),
            error: None,
        };
        let report = EvalReport {
            scenarios: vec![
                query(
                    "test-pod-1/0",
                    false,
                    vec![
                        gate("pod_error", Some(1.0), Some(0.5), true, Some(true)),
                        gate("no_permissions", Some(0.25), Some(0.5), true, Some(false)),
                        gate("partial_yaml", None, None, false, None),
                    ],
                ),
                query("test-pod-1/1", true, vec![gate("fix", Some(0.75), Some(0.5), true, Some(true))]),
            ],
            categories: Default::default(),
            overall: tally(2, 4, 0),
        };
        insta::assert_snapshot!(printed(|out, redactor| write_eval(out, &report, redactor)));
    }

    #[test]
    fn validate_report() {
        let judgment = |id: &str, wanted, actual: Option<bool>, message: &str| Judgment {
            expectation_id: id.into(),
            key: "gist".into(),
            wanted_result: wanted,
            actual_result: actual,
            agrees: actual.map(|a| a == wanted),
            weight: 1,
            categories: Vec::new(),
            message: message.into(),
        };
        let confusion =
            Confusion { true_positive: 1, false_positive: 1, true_negative: 0, false_negative: 0, errors: 1 };
        let report = ValidateReport {
            files: vec![
                ValidationResult {
                    scenario_id: "bland_food".into(),
                    file: PathBuf::from("validations/bland_food.yaml"),
                    agreement: tally(1, 2, 1),
                    categories: Default::default(),
                    confusion,
                    mock_responses: vec![MockResult {
                        mock_response_id: "simple_response".into(),
                        agreement: tally(1, 2, 1),
                        judgments: vec![
                            judgment("missing_spices", true, Some(true), "names spices"),
                            judgment("salt", false, Some(true), &format!("mentions salt and {SECRET}")),
                            judgment("tone", true, None, "the judge is down"),
                        ],
                    }],
                    error: None,
                },
                ValidationResult {
                    scenario_id: String::new(),
                    file: PathBuf::from("validations/broken.yaml"),
                    agreement: Tally::default(),
                    categories: Default::default(),
                    confusion: Confusion::default(),
                    mock_responses: Vec::new(),
                    error: Some(RunError {
                        kind: crate::errors::ErrorKind::BadFile,
                        message: "no `scenario`\nin the file".into(),
                    }),
                },
            ],
            agreement: tally(1, 2, 1),
            categories: [("solution_finding".to_owned(), tally(1, 2, 0))].into(),
            confusion,
        };
        insta::assert_snapshot!(printed(|out, redactor| write_validation(out, &report, redactor)));
    }
}
