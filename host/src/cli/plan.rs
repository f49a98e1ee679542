//! `assay plan`: a dry run that reads and plans every case and prints the
//! checks each will run. Needs no agent. Its output is redacted and
//! escaped like a run's.

use super::args::PlanArgs;
use anyhow::Result;
use assay::case::{TestCase, read_case_file};
use assay::check::{CasePlan, plan_case};
use assay::errors::CaseError;
use assay::plural;
use assay::report::escape;
use std::io::Write;

pub fn run(args: PlanArgs) -> Result<u8> {
    let project = super::project::open(&args.project, Some(&args.case_env), None)?;
    let names = project.case_names()?;
    let env = project.case_env();
    let redactor = project.redactor();
    let files = project.discover(&args.paths, None)?;
    let mut out = std::io::stdout().lock();
    let mut bad = 0;
    for file in &files {
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
    if bad > 0 {
        eprintln!("error: {bad} of {} could not be planned", plural::count(files.len(), "test case file"));
        return Ok(assay::exit_codes::FAILED);
    }
    Ok(assay::exit_codes::OK)
}

fn print_case(out: &mut impl Write, case: &TestCase, plan: &CasePlan) -> std::io::Result<()> {
    let connections: Vec<&str> = case.connections.iter().map(|c| c.name()).collect();
    writeln!(
        out,
        "{}  agent {}  connections {}  success_ratio {}  ({})",
        escape::one_line(&case.id),
        escape::one_line(&case.agent),
        connections.join(","),
        case.success_ratio,
        plural::count(plan.check_count(), "check")
    )?;
    for (i, (interaction, checks)) in case.interactions.iter().zip(&plan.interactions).enumerate() {
        let text = interaction.text.as_deref().unwrap_or("");
        let mut said: String = text.chars().take(60).collect::<String>().replace('\n', " ");
        if said.len() < text.len() {
            said.push('…');
        }
        writeln!(out, "  {}. {said:?}", i + 1)?;
        for check in checks {
            writeln!(
                out,
                "     {:<28} {:<14} {}",
                escape::one_line(&check.target.to_string()),
                escape::one_line(&check.display_key()),
                escape::one_line(&check.expected.to_string())
            )?;
        }
    }
    Ok(())
}
