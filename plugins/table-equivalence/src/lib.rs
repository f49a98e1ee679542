//! `table_equivalence`: whether the result table a text-to-query agent
//! produced is the expected one (the idea of OpenSearch's `os_query_eval`:
//! run both queries, compare the results, not the query text).
//!
//! Both tables are JSON lists of rows, a row being an object (column →
//! value) or a list (values by position); the actual value may also be a
//! string holding that JSON, or an OpenSearch SQL/PPL response (`schema` +
//! `datarows`). The comparison allows:
//! - rows in any order (unless `ordered`), duplicates counted: the score is
//!   the fraction of expected rows in a maximum matching with actual rows;
//! - columns in any order and under other names: columns are matched by
//!   their values, names (ignoring ASCII case) and then positions breaking
//!   ties, so that actual `{"cnt": 3}` matches expected `{"count": 3}`;
//! - numbers within `tolerance` (absolute, default 1e-6), optionally after
//!   rounding to `decimals`; numeric strings equal numbers only with
//!   `coerce`.
//!
//! The check passes when the tables are equivalent (every expected row
//! matched, no other actual rows, no missing or extra columns), or, with a
//! `threshold`, when the score reaches it. See this crate's `README.md`.

mod compare;
mod table;

use assay_plugin_sdk::params::{Params, describe, show_score};
use assay_plugin_sdk::{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher};
use serde_json::{Map, json};

pub use compare::{Comparison, Options, compare_tables};
pub use table::{Table, parse_table};

/// The parameters the object form of the expected value accepts.
const PARAMETERS: &[&str] =
    &["rows", "ordered", "tolerance", "decimals", "coerce", "allow_extra_columns", "threshold", "min"];

/// How many unmatched rows of each side the extras list.
const SHOWN_ROWS: usize = 5;

/// The most characters of a row a message shows.
const ROW_CHARS: usize = 200;

/// The table_equivalence matcher.
pub struct TableEquivalence;

impl Matcher for TableEquivalence {
    fn describe() -> PluginInfo {
        PluginInfo::new("table-equivalence", env!("CARGO_PKG_VERSION")).matcher(
            "table_equivalence",
            "the result table equals the expected one up to row and column order, column names and float rounding",
        )
    }

    fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        if key != "table_equivalence" {
            return Err(format!("the table-equivalence plugin has no matcher `{key}`"));
        }
        if let Json::Array(_) = expected {
            return Err(format!(
                "table_equivalence needs the expected table as {{\"rows\": [...]}} or as a string holding JSON \
                 (assay splits a list given directly into one check per element), found {}",
                describe(expected)
            ));
        }
        let params = Params::parse("table_equivalence", expected, "rows", PARAMETERS)?;
        let rows = params.get("rows").ok_or("table_equivalence needs the parameter `rows` (the expected table)")?;
        let expected_table = parse_table(rows, "the expected table")?;
        let options = options(&params)?;
        let threshold = params.threshold()?;
        let actual_table = match actual.as_str() {
            Some(text) => parse_table(&Json::String(text.to_owned()), "the actual value")?,
            None => parse_table(actual.as_json()?, "the actual value")?,
        };
        let comparison = compare_tables(&actual_table, &expected_table, &options);
        Ok(verdict(&comparison, &actual_table, &expected_table, &options, threshold))
    }
}

export_matcher!(TableEquivalence);

/// The comparison options from the parameters.
fn options(params: &Params) -> Result<Options, String> {
    let defaults = Options::default();
    let tolerance = match params.get("tolerance") {
        None => defaults.tolerance,
        Some(value) => match value.as_f64() {
            Some(t) if t >= 0.0 && t.is_finite() => t,
            _ => {
                return Err(format!(
                    "table_equivalence needs `tolerance` to be a non-negative number, found {}",
                    describe(value)
                ));
            }
        },
    };
    let decimals = match params.count("decimals")? {
        Some(d) if d > 15 => return Err(format!("table_equivalence needs `decimals` between 0 and 15, found {d}")),
        other => other.map(|d| d as u32),
    };
    Ok(Options {
        ordered: params.bool("ordered")?.unwrap_or(defaults.ordered),
        tolerance,
        decimals,
        coerce: params.bool("coerce")?.unwrap_or(defaults.coerce),
        allow_extra_columns: params.bool("allow_extra_columns")?.unwrap_or(defaults.allow_extra_columns),
    })
}

/// A row as compact JSON, cut to a readable length.
fn show_row(row: &Json) -> String {
    let text = row.to_string();
    if text.chars().count() <= ROW_CHARS {
        return text;
    }
    format!("{}…", text.chars().take(ROW_CHARS).collect::<String>())
}

/// `1 row`, `2 rows`.
fn rows(n: usize) -> String {
    if n == 1 { "1 row".to_owned() } else { format!("{n} rows") }
}

/// The verdict for a comparison.
fn verdict(
    comparison: &Comparison,
    actual: &Table,
    expected: &Table,
    options: &Options,
    threshold: Option<f64>,
) -> Verdict {
    let unmatched_expected: Vec<usize> = (0..expected.len()).filter(|&r| comparison.matches[r].is_none()).collect();
    let unmatched_actual = comparison.unmatched_actual(actual.len());
    let missing_columns: Vec<&str> =
        comparison.missing_columns().into_iter().map(|c| expected.columns[c].as_str()).collect();
    let extra_columns: Vec<&str> = comparison.extra_columns.iter().map(|&c| actual.columns[c].as_str()).collect();
    let renamed: Vec<String> = comparison
        .mapping
        .iter()
        .enumerate()
        .filter_map(|(e, a)| a.map(|a| (e, a)))
        .filter(|&(e, a)| expected.columns[e] != actual.columns[a])
        .map(|(e, a)| format!("{}→{}", expected.columns[e], actual.columns[a]))
        .collect();

    let mut parts = Vec::new();
    let in_order = if options.ordered { " in order" } else { "" };
    let head = if comparison.equivalent { "the tables are equivalent: " } else { "" };
    let mut first = format!("{head}{} of {} expected rows matched{in_order}", comparison.matched, expected.len());
    if !comparison.equivalent {
        first.push_str(&format!(" (score {})", show_score(comparison.score, threshold)));
    }
    first.push_str(&match unmatched_actual.len() {
        0 => format!(", the actual table has {}", rows(actual.len())),
        n => format!(", {n} of the actual {} unmatched", rows(actual.len())),
    });
    parts.push(first);
    if !renamed.is_empty() {
        parts.push(format!("columns matched by value: {}", renamed.join(", ")));
    }
    if !missing_columns.is_empty() && !actual.is_empty() {
        parts.push(format!("no actual column for expected {}", missing_columns.join(", ")));
    }
    if !extra_columns.is_empty() && !expected.is_empty() {
        let allowed = if options.allow_extra_columns { " (allowed)" } else { "" };
        parts.push(format!("extra actual columns: {}{allowed}", extra_columns.join(", ")));
    }
    if let Some(&r) = unmatched_expected.first() {
        parts.push(format!("first unmatched expected row {}", show_row(&expected.original[r])));
    }
    if let Some(&r) = unmatched_actual.first() {
        parts.push(format!("first unmatched actual row {}", show_row(&actual.original[r])));
    }
    if let Some(t) = threshold {
        parts.push(format!("threshold {t}"));
    }
    let message = parts.join("; ");

    let mut mapping = Map::new();
    for (e, a) in comparison.mapping.iter().enumerate() {
        mapping.insert(expected.columns[e].clone(), a.map_or(Json::Null, |a| json!(actual.columns[a])));
    }
    let shown = |table: &Table, rows: &[usize]| -> Vec<Json> {
        rows.iter().take(SHOWN_ROWS).map(|&r| table.original[r].clone()).collect()
    };
    let extras = json!({
        "equivalent": comparison.equivalent,
        "column_mapping": mapping,
        "missing_columns": missing_columns,
        "extra_columns": extra_columns,
        "expected_rows": expected.len(),
        "actual_rows": actual.len(),
        "matched_rows": comparison.matched,
        "missing_rows": unmatched_expected.len(),
        "extra_rows": unmatched_actual.len(),
        "unmatched_expected": shown(expected, &unmatched_expected),
        "unmatched_actual": shown(actual, &unmatched_actual),
        "ordered": options.ordered,
        "threshold": threshold,
    });
    let pass = match threshold {
        Some(t) => comparison.score >= t,
        None => comparison.equivalent,
    };
    Verdict::new(pass, message).with_score(comparison.score).with_extras(extras)
}

#[cfg(test)]
mod tests;
