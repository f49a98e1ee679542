//! `assay check`: evaluates one check through the plugin that owns its key,
//! exactly as a test case would.

use super::CliError;
use super::args::CheckArgs;
use anyhow::Result;
use assay::check::Outcome;
use assay::plugin::{ActualValue, CheckInput, verdict_of};
use std::io::Write;

pub fn run(args: CheckArgs) -> Result<u8> {
    let registry = super::project::open(&args.project, None, None)?.registry()?;
    let key = args.key.to_ascii_lowercase();
    let (base, negated) = match key.strip_prefix("not_") {
        Some(base) if registry.has_key(base) => (base, true),
        _ => (key.as_str(), false),
    };
    let Some(plugin) = registry.plugin_for(base) else {
        return Err(CliError::UnknownKey { suggestion: registry.suggest(&key), key: args.key }.into());
    };
    let actual: serde_json::Value = serde_json::from_str(&args.actual).map_err(|e| invalid_json("--actual", e))?;
    let expected: serde_json::Value =
        serde_json::from_str(&args.expected).map_err(|e| invalid_json("--expected", e))?;
    let actual_json = actual.to_string();
    let actual_value = match &actual {
        serde_json::Value::String(text) => ActualValue::Text(text),
        _ => ActualValue::Json(&actual_json),
    };
    let expected_json = expected.to_string();
    let check = CheckInput { key: base, actual: 0, expected: &expected_json };
    let mut output = plugin.evaluate(&[actual_value], &[check]);
    let verdict = verdict_of(output.results.remove(0), negated);

    let mut out = std::io::stdout().lock();
    if args.json {
        let json = serde_json::json!({
            "pass": verdict.passed(),
            "outcome": verdict.outcome,
            "score": verdict.score,
            "message": verdict.message,
            "extras": verdict.extras,
            "error_kind": verdict.error_kind,
        });
        serde_json::to_writer(&mut out, &json)?;
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
    Ok(if verdict.passed() { assay::exit_codes::OK } else { assay::exit_codes::FAILED })
}

fn invalid_json(flag: &'static str, error: serde_json::Error) -> CliError {
    CliError::Flag { flag, message: format!("is not valid JSON: {error}") }
}
