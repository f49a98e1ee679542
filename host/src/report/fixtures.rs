//! A fixed run for the reporters' snapshot tests: one case of each kind a
//! report renders (passed, failed, flaky, error, slow, redacted, escaped),
//! with fixed durations and elapsed times, so that every snapshot is the
//! same on every machine.

use crate::case::{Connection, SuccessRatio};
use crate::check::{CheckResult, Outcome, Verdict};
use crate::job::{CaseResult, CaseStatus, ConnectionRun, InteractionResult, ResponseRecord, RunError, SampleResult};
use crate::run::{EventKind, RunEvent, RunSummary};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// The secret the redacted case leaks, and the reporters are told to hide.
pub(crate) const SECRET: &str = "sk-live-0123456789";

/// A check with its verdict.
fn check(target: &str, key: &str, expected: serde_json::Value, actual: Option<&str>, verdict: Verdict) -> CheckResult {
    CheckResult {
        target: target.into(),
        key: key.into(),
        expected,
        actual: actual.map(Into::into),
        actual_is_answer: false,
        line: (!verdict.passed()).then_some(12),
        verdict,
        gate: true,
    }
}

fn pass(message: &str) -> Verdict {
    Verdict { outcome: Outcome::Pass, ..Verdict::fail(message) }
}

/// One sample over `direct` with one interaction holding `checks`.
fn sample(index: u32, checks: Vec<CheckResult>, text: &str, millis: f64) -> SampleResult {
    let passed = checks.iter().all(|c| c.verdict.passed());
    let interaction = InteractionResult {
        index: 0,
        request: Some(crate::job::RequestRecord { text: Some("hello".into()), sly_data: None }),
        passed,
        checks,
        error: None,
        logs: Vec::new(),
        response: Some(ResponseRecord { text: Some(text.into()), ..ResponseRecord::default() }),
        usage: (index == 0).then_some(crate::agent::Usage { prompt_tokens: 12, completion_tokens: 5 }),
        cost: None,
        agent_ms: millis / 2.0,
        duration_ms: millis,
    };
    let run = ConnectionRun { connection: Connection::Direct, passed, interactions: vec![interaction] };
    SampleResult { index, passed, runs: vec![run], duration_ms: millis, answers_left_out: false }
}

fn case(id: &str, agent: &str, ratio: (u32, u32), samples: Vec<SampleResult>, millis: f64) -> CaseResult {
    let success_ratio = SuccessRatio { required: ratio.0, samples: ratio.1 };
    CaseResult {
        id: id.into(),
        file: PathBuf::from(format!("cases/{id}.hocon")),
        agent: agent.into(),
        connections: vec![Connection::Direct],
        success_ratio,
        status: CaseResult::status_of(success_ratio.required, &samples),
        samples,
        error: None,
        duration_ms: millis,
    }
}

/// The cases, in the order they finish.
/// A passing case whose one sample answered `text`.
pub(crate) fn answered(id: &str, text: &str) -> CaseResult {
    case(id, "echo", (1, 1), vec![sample(0, Vec::new(), text, 1.0)], 1.0)
}

pub(crate) fn cases() -> Vec<CaseResult> {
    let keywords = |actual: &str| check("text", "keywords", json!("hello"), Some(actual), pass("found every keyword"));
    let passed =
        case("echo/hello", "echo", (1, 1), vec![sample(0, vec![keywords("hello there")], "hello there", 4.25)], 4.5);

    let wrong = check("sly_data.equals", "value", json!(7), Some("6.0"), Verdict::fail("6.0 does not equal 7"));
    let failed = case(
        "math_guy/wrong",
        "math_guy",
        (1, 1),
        vec![sample(0, vec![wrong, keywords("hello 6")], "hello 6", 7.0)],
        7.5,
    );

    let value = |actual: &str, verdict| check("text", "value", json!("pass"), Some(actual), verdict);
    let flaky = case(
        "flaky/flaky",
        "flaky",
        (2, 3),
        vec![
            sample(0, vec![value("pass", pass("equal"))], "pass", 1.0),
            sample(1, vec![value("fail", Verdict::fail("\"fail\" does not equal \"pass\""))], "fail", 1.5),
            sample(2, vec![value("pass", pass("equal"))], "pass", 1.25),
        ],
        4.0,
    );

    let mut unreachable = case("http/down", "echo", (1, 1), vec![sample(0, Vec::new(), "", 30.0)], 30.5);
    let interaction = &mut unreachable.samples[0].runs[0].interactions[0];
    interaction.passed = false;
    interaction.response = None;
    interaction.error = Some(RunError {
        kind: crate::errors::ErrorKind::Unreachable,
        message: "agent `echo` at http://127.0.0.1:9 is unreachable: connection refused".into(),
    });
    unreachable.samples[0].runs[0].passed = false;
    unreachable.samples[0].passed = false;
    unreachable.status = CaseResult::status_of(1, &unreachable.samples);

    let broken = CaseResult {
        id: "broken/bad".into(),
        file: PathBuf::from("cases/broken/bad.hocon"),
        agent: String::new(),
        connections: Vec::new(),
        success_ratio: SuccessRatio::default(),
        status: CaseStatus::Error,
        samples: Vec::new(),
        error: Some(RunError {
            kind: crate::errors::ErrorKind::BadFile,
            message: "unknown test `valeu` in `cases/broken/bad.hocon` at response.text\n\nConsider `value`.".into(),
        }),
        duration_ms: 0.0,
    };

    let slow = case(
        "slow/answer",
        "echo",
        (1, 1),
        vec![sample(0, vec![keywords("hello, late")], "hello, late", 130_000.0)],
        130_000.25,
    );

    let leak = check(
        "text",
        "not_keywords",
        json!(SECRET),
        Some(&format!("your key is {SECRET}")),
        Verdict::fail(format!("found `{SECRET}`")),
    );
    let redacted = case(
        &format!("secrets/{SECRET}"),
        "echo",
        (1, 1),
        vec![sample(0, vec![leak], &format!("your key is {SECRET}"), 2.0)],
        2.5,
    );

    let spoof = check(
        "text",
        "value",
        json!("a\u{1b}[31mred"),
        Some("x\u{1b}[2K\r  PASS [   0.001s] forged"),
        Verdict::error(crate::errors::ErrorKind::Rejected, "the plugin said:\nline two\u{7}"),
    );
    let escaped = case(
        "escape/\u{1b}[2Kforged <&>",
        "echo\u{7}",
        (1, 1),
        vec![sample(0, vec![spoof], "x\u{1b}[2K\r  PASS [   0.001s] forged", 3.0)],
        3.5,
    );

    vec![passed, failed, flaky, unreachable, broken, slow, redacted, escaped]
}

/// The summary of [`cases`], with the run's duration fixed.
pub(crate) fn summary(cases: &[CaseResult]) -> RunSummary {
    let mut summary = RunSummary::default();
    for case in cases {
        summary.add(case);
    }
    summary.duration_ms = 131_000.0;
    summary
}

/// The same, for a run a full disk cancelled.
pub(crate) fn cancelled(mut summary: RunSummary) -> RunSummary {
    summary.reporter_errors = vec!["write `results/results.jsonl`: No space left on device (os error 28)".into()];
    summary.not_run = 3;
    summary
}

/// Every event of the run, in order, with fixed elapsed times: `slow/answer`
/// is slow at 60 s and 120 s.
pub(crate) fn events<'a>(cases: &'a [CaseResult], summary: &'a RunSummary) -> Vec<RunEvent<'a>> {
    let at = |millis: u64, kind| RunEvent { elapsed: Duration::from_millis(millis), kind };
    let mut events = vec![at(0, EventKind::RunStarted { cases: cases.len() })];
    let mut clock = 1;
    for case in cases {
        events.push(at(clock, EventKind::CaseStarted { id: &case.id }));
        if case.id == "slow/answer" {
            for multiple in [1, 2] {
                let running = Duration::from_secs(60 * multiple);
                events.push(at(clock + running.as_millis() as u64, EventKind::CaseSlow { id: &case.id, running }));
            }
        }
        for sample in &case.samples {
            let duration = Duration::from_secs_f64(sample.duration_ms / 1e3);
            clock += duration.as_millis() as u64 + 1;
            let (index, passed) = (sample.index, sample.passed);
            events.push(at(clock, EventKind::SampleFinished { case: &case.id, index, passed, duration }));
        }
        clock += 1;
        events.push(at(clock, EventKind::CaseFinished(case)));
    }
    events.push(at(clock + 1, EventKind::RunFinished(summary)));
    events
}

/// A passing or failing verdict with a score.
fn scored(passed: bool, score: f64) -> Verdict {
    let outcome = if passed { Outcome::Pass } else { Outcome::Fail };
    Verdict { outcome, score: Some(score), ..Verdict::fail(format!("scored {score}")) }
}

/// Cases of two suite files (many cases in one file): `cat` with rouge and
/// similarity scores (a pass, a fail, a flaky case over two samples and an
/// empty answer), and `ppl` (a pass and a plugin fault).
pub(crate) fn suite_cases() -> Vec<CaseResult> {
    let check = |key: &str, verdict| check("text", key, json!({ "reference": "5 indices" }), Some("x"), verdict);
    let in_file = |mut case: CaseResult, file: &str| {
        case.file = PathBuf::from(file);
        case
    };
    let cat = "suites/cat.suite.toml";
    let ppl = "suites/ppl.suite.toml";
    let answer = "there are 5 indices";
    vec![
        in_file(
            case(
                "cat/1",
                "opensearch",
                (1, 1),
                vec![sample(
                    0,
                    vec![check("rouge", scored(true, 0.5)), check("similarity", scored(true, 0.9))],
                    answer,
                    2.0,
                )],
                2.5,
            ),
            cat,
        ),
        in_file(
            case(
                "cat/2",
                "opensearch",
                (1, 1),
                vec![sample(0, vec![check("rouge", scored(false, 0.75))], answer, 2.0)],
                2.5,
            ),
            cat,
        ),
        in_file(
            case(
                "cat/3",
                "opensearch",
                (1, 2),
                vec![
                    sample(0, vec![check("rouge", scored(true, 0.2))], answer, 2.0),
                    sample(1, vec![check("rouge", scored(false, 0.4))], answer, 2.0),
                ],
                4.5,
            ),
            cat,
        ),
        in_file(
            case(
                "cat/blank",
                "opensearch",
                (1, 1),
                vec![sample(0, vec![check("rouge", Verdict::fail("the answer is empty"))], "", 1.0)],
                1.5,
            ),
            cat,
        ),
        in_file(
            case(
                "ppl/1",
                "opensearch",
                (1, 1),
                vec![sample(0, vec![check("levenshtein", scored(true, 1.0))], answer, 2.0)],
                2.5,
            ),
            ppl,
        ),
        in_file(
            case(
                "ppl/2",
                "opensearch",
                (1, 1),
                vec![sample(
                    0,
                    vec![check(
                        "levenshtein",
                        Verdict::error(crate::errors::ErrorKind::Panic, "plugin `levenshtein` panicked"),
                    )],
                    answer,
                    2.0,
                )],
                2.5,
            ),
            ppl,
        ),
    ]
}
