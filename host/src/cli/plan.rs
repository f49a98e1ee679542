//! `assay plan`: a dry run that reads and plans every case and prints the
//! checks each will run. Needs no agent. Its output is redacted and
//! escaped like a run's.

use super::args::PlanArgs;
use crate::case::{Connection, SuccessRatio, TestCase, Use, UseKind};
use crate::check::{CasePlan, Check, plan_case};
use crate::errors::CaseError;
use crate::formats::read_case_file;
use crate::job::{Job, LoadedCase, PendingCase};
use crate::plural;
use crate::report::escape;
use anyhow::Result;
use std::io::Write;

pub fn run(args: PlanArgs) -> Result<u8> {
    let project = super::project::open(&args.project, Some(&args.case_env), None)?;
    // Discovery first: a promptfoo config it reads brings its connections,
    // secrets and assertions plugin into the names and the redactor.
    let files: Vec<PendingCase> = project.discover(&args.paths, None)?.into_iter().collect();
    let names = project.case_names()?;
    let env = project.case_env();
    let redactor = project.redactor();
    let mut out = std::io::stdout().lock();
    let uses = project.trust().uses();
    if !args.json {
        let mut text = Vec::new();
        print_uses(&mut text, &uses)?;
        out.write_all(redactor.redact(&String::from_utf8_lossy(&text)).as_bytes())?;
    }
    let mut bad = 0;
    for pending in &files {
        let Some(file) = pending.case_file() else {
            match pending.load(names.as_ref(), env) {
                LoadedCase::Ready(job) if args.json => {
                    out.write_all(&redactor.to_json(&job_json(&job), false)?)?;
                    writeln!(out)?;
                }
                LoadedCase::Ready(job) => {
                    let mut text = Vec::new();
                    print_job(&mut text, &job)?;
                    out.write_all(redactor.redact(&String::from_utf8_lossy(&text)).as_bytes())?;
                }
                LoadedCase::Broken { error, .. } => {
                    bad += 1;
                    let error = escape::lines(&error.to_string(), "  ").into_owned();
                    eprintln!("error: {}", redactor.redact(&error));
                }
            }
            continue;
        };
        let planned = read_case_file(&file.path, &file.id, env).and_then(|case| {
            let plan = plan_case(&case, names.as_ref()).map_err(|kind| CaseError::new(&file.path, kind))?;
            Ok((case, plan))
        });
        match planned {
            Ok((case, plan)) if args.json => {
                out.write_all(&redactor.to_json(&serde_json::json!({ "case": case, "plan": plan }), false)?)?;
                writeln!(out)?;
            }
            Ok((case, plan)) => {
                let mut text = Vec::new();
                print_case(&mut text, &case, &plan)?;
                out.write_all(redactor.redact(&String::from_utf8_lossy(&text)).as_bytes())?;
            }
            Err(error) => {
                bad += 1;
                let error = escape::lines(&error.to_string(), "  ").into_owned();
                eprintln!("error: {}", redactor.redact(&error));
            }
        }
    }
    if args.json && !uses.is_empty() {
        out.write_all(&redactor.to_json(&uses_json(&uses), false)?)?;
        writeln!(out)?;
    }
    if bad > 0 {
        // Suites' spec lines are cases, not files.
        let noun = if files.iter().all(|file| file.case_file().is_some()) { "test case file" } else { "test case" };
        eprintln!("error: {bad} of {} could not be planned", plural::count(files.len(), noun));
        return Ok(crate::exit_codes::FAILED);
    }
    Ok(crate::exit_codes::OK)
}

/// What the files would run, read and send, before the cases: the
/// programs, the secrets' names and the URLs, each with its file and
/// whether it is allowed (a trusted file) or refused (a data file).
fn print_uses(out: &mut impl Write, uses: &[Use]) -> std::io::Result<()> {
    if uses.is_empty() {
        return Ok(());
    }
    writeln!(out, "The files of this run use (programs, secrets, URLs):")?;
    for used in uses {
        let verdict = match (used.allowed, used.trusted) {
            (false, _) => "refused: the file is data",
            (true, true) => "allowed: the file is trusted",
            (true, false) => "allowed for data",
        };
        writeln!(
            out,
            "  {}  {}  ({verdict})",
            escape::one_line(&used.file.display().to_string()),
            escape::one_line(&used.kind.to_string())
        )?;
    }
    writeln!(out)
}

/// [`print_uses`] as one JSON object: `{"uses": [{file, kind, what,
/// trusted, allowed}]}`.
fn uses_json(uses: &[Use]) -> serde_json::Value {
    let uses: Vec<_> = uses
        .iter()
        .map(|used| {
            let (kind, what) = match &used.kind {
                UseKind::Program(command) => ("program", command.clone()),
                UseKind::Secret(name) => ("secret", name.clone()),
                UseKind::Url(url) => ("url", url.clone()),
                UseKind::OutsideFile(path) => ("file", path.display().to_string()),
            };
            serde_json::json!({
                "file": used.file, "kind": kind, "what": what, "trusted": used.trusted, "allowed": used.allowed
            })
        })
        .collect();
    serde_json::json!({ "uses": uses })
}

fn print_case(out: &mut impl Write, case: &TestCase, plan: &CasePlan) -> std::io::Result<()> {
    let head = Head { id: &case.id, agent: &case.agent, connections: &case.connections, ratio: case.success_ratio };
    let texts = case.interactions.iter().map(|interaction| interaction.text.as_deref().unwrap_or(""));
    print_plan(out, head, texts.zip(plan.interactions.iter().map(Vec::as_slice)))
}

/// A case that is no file of its own (a suite's spec line), as its job.
fn print_job(out: &mut impl Write, job: &Job) -> std::io::Result<()> {
    let head = Head { id: &job.id, agent: &job.agent, connections: &job.connections, ratio: job.success_ratio };
    print_plan(out, head, job.turns.iter().map(|turn| (turn.text.as_str(), turn.checks.as_slice())))
}

/// A job in the shape `--json` shows a case file's case and plan.
fn job_json(job: &Job) -> serde_json::Value {
    let interactions: Vec<_> = job.turns.iter().map(|turn| serde_json::json!({ "text": turn.text })).collect();
    let checks: Vec<_> = job.turns.iter().map(|turn| &turn.checks).collect();
    serde_json::json!({
        "case": {
            "id": job.id,
            "file": job.file,
            "agent": job.agent,
            "connections": job.connections,
            "success_ratio": job.success_ratio,
            "interactions": interactions,
        },
        "plan": { "interactions": checks },
    })
}

/// What the first line of a planned case shows.
struct Head<'a> {
    id: &'a str,
    agent: &'a str,
    connections: &'a [Connection],
    ratio: SuccessRatio,
}

fn print_plan<'a>(
    out: &mut impl Write,
    head: Head<'_>,
    turns: impl Iterator<Item = (&'a str, &'a [Check])> + Clone,
) -> std::io::Result<()> {
    let connections: Vec<&str> = head.connections.iter().map(|c| c.name()).collect();
    let count: usize = turns.clone().map(|(_, checks)| checks.len()).sum();
    writeln!(
        out,
        "{}  agent {}  connections {}  success_ratio {}  ({})",
        escape::one_line(head.id),
        escape::one_line(head.agent),
        connections.join(","),
        head.ratio,
        plural::count(count, "check")
    )?;
    for (i, (text, checks)) in turns.enumerate() {
        let mut said: String = text.chars().take(60).collect::<String>().replace('\n', " ");
        if said.len() < text.len() {
            said.push('…');
        }
        writeln!(out, "  {}. {said:?}", i + 1)?;
        for check in checks {
            let gate = if check.gate { "" } else { "  (not gating)" };
            writeln!(
                out,
                "     {:<28} {:<14} {}{gate}",
                escape::one_line(&check.target.to_string()),
                escape::one_line(&check.display_key()),
                escape::one_line(&check.expected.to_string())
            )?;
        }
    }
    Ok(())
}
