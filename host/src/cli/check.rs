//! `assay check`: evaluates one check through the plugin that owns its key,
//! exactly as a test case would.

use super::CliError;
use super::args::CheckArgs;
use crate::check::Outcome;
use crate::plugin::evaluate_one;
use anyhow::Result;
use std::io::Write;

pub fn run(args: CheckArgs) -> Result<u8> {
    let registry = super::project::open(&args.project, None, None)?.registry()?;
    let actual: serde_json::Value = serde_json::from_str(&args.actual).map_err(|e| invalid_json("--actual", e))?;
    let expected: serde_json::Value =
        serde_json::from_str(&args.expected).map_err(|e| invalid_json("--expected", e))?;
    let verdict = evaluate_one(&registry, &args.key, &actual, &expected).map_err(CliError::UnknownKey)?;

    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &verdict.answer())?;
        writeln!(out)?;
    } else {
        let label = match verdict.outcome {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::Error => "ERROR",
        };
        writeln!(out, "{label} {}: {}", args.key, verdict.message)?;
        if let Some(score) = verdict.score {
            writeln!(out, "  score {score}")?;
        }
    }
    Ok(if verdict.passed() { crate::exit_codes::OK } else { crate::exit_codes::FAILED })
}

fn invalid_json(flag: &'static str, error: serde_json::Error) -> CliError {
    CliError::Flag { flag, message: format!("is not valid JSON: {error}") }
}
