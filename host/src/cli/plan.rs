//! `assay plan`: a dry run that reads and plans every case and prints the
//! checks each will run. Needs no agent.

use super::UsageError;
use super::args::PlanArgs;
use anyhow::Result;
use assay::case::{TestCase, discover, read_case_file};
use assay::check::{CasePlan, plan_case};
use assay::errors::CaseError;
use assay::plural;
use std::collections::HashMap;
use std::io::Write;

pub fn run(args: PlanArgs) -> Result<u8> {
    let registry = super::project::Project::open(&args.project)?.registry()?;
    let files = discover(&args.paths).map_err(|e| UsageError(e.to_string()))?;
    if files.is_empty() {
        return Err(UsageError("no test case files (*.hocon) found".into()).into());
    }
    let env: HashMap<String, String> = std::env::vars().collect();
    let mut out = std::io::stdout().lock();
    let mut bad = 0;
    for file in &files {
        let planned = read_case_file(&file.path, &file.id, &env).and_then(|case| {
            let plan = plan_case(&case, &registry).map_err(|kind| CaseError::new(&file.path, kind))?;
            Ok((case, plan))
        });
        match planned {
            Ok((case, plan)) if args.json => {
                serde_json::to_writer(&mut out, &serde_json::json!({ "case": case, "plan": plan }))?;
                writeln!(out)?;
            }
            Ok((case, plan)) => print_case(&mut out, &case, &plan)?,
            Err(error) => {
                bad += 1;
                eprintln!("error: {error}");
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
        case.id,
        case.agent,
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
            writeln!(out, "     {:<28} {:<14} {}", check.target.to_string(), check.display_key(), check.expected)?;
        }
    }
    Ok(())
}
