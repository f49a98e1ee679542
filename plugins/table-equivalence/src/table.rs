//! Reading a result table from JSON: a list of rows, each an object (column
//! name → value), a list (values by position) or a single value (a
//! one-column table); a string holding such JSON (optionally in a Markdown
//! code fence); or an OpenSearch SQL/PPL response (`schema` + `datarows`).

use assay_plugin_sdk::Json;
use assay_plugin_sdk::params::describe;

/// A table: labelled columns and rows of cells, plus each row as given (for
/// messages).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Column labels: names for object rows or an OpenSearch schema, `#1`,
    /// `#2`, … for positional rows.
    pub columns: Vec<String>,
    /// Whether the labels are names (as opposed to positions).
    pub named: bool,
    /// `rows[r][c]`: the cell of row `r` in column `c`; a key an object row
    /// lacks reads as `null`.
    pub rows: Vec<Vec<Json>>,
    /// The rows as given.
    pub original: Vec<Json>,
}

impl Table {
    /// How many rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Reads a table; `what` names it in errors (`the actual value`, `rows`).
pub fn parse_table(value: &Json, what: &str) -> Result<Table, String> {
    match value {
        Json::String(text) => {
            let parsed: Json = serde_json::from_str(strip_code_fence(text))
                .map_err(|e| format!("{what} is a string that does not hold JSON ({e})"))?;
            if parsed.is_string() {
                return Err(format!("{what} is a string holding a JSON string, not a table"));
            }
            parse_table(&parsed, what)
        }
        Json::Array(rows) => from_rows(rows, what),
        Json::Object(map) if map.contains_key("datarows") => from_opensearch(map, what),
        other => Err(format!(
            "{what} needs a table: a JSON list of rows (objects or lists), or a string holding one; found {}",
            describe(other)
        )),
    }
}

/// The text inside a Markdown code fence (```` ```json … ``` ````), or the
/// text itself.
fn strip_code_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else { return text };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body)
}

/// The kind of a row, for messages about mixed tables.
fn kind(row: &Json) -> &'static str {
    match row {
        Json::Object(_) => "an object",
        Json::Array(_) => "a list",
        _ => "a single value",
    }
}

/// A table from a list of rows, all of one kind.
fn from_rows(rows: &[Json], what: &str) -> Result<Table, String> {
    let Some(first) = rows.first() else {
        return Ok(Table { columns: Vec::new(), named: false, rows: Vec::new(), original: Vec::new() });
    };
    if let Some((i, row)) = rows.iter().enumerate().find(|(_, row)| kind(row) != kind(first)) {
        return Err(format!("{what} mixes kinds of rows: row 1 is {}, row {} is {}", kind(first), i + 1, kind(row)));
    }
    let original = rows.to_vec();
    match first {
        Json::Object(_) => {
            let mut columns: Vec<String> = Vec::new();
            for row in rows {
                for key in row.as_object().into_iter().flat_map(|o| o.keys()) {
                    if !columns.contains(key) {
                        columns.push(key.clone());
                    }
                }
            }
            let cells = rows
                .iter()
                .map(|row| columns.iter().map(|c| row.get(c).cloned().unwrap_or(Json::Null)).collect())
                .collect();
            Ok(Table { columns, named: true, rows: cells, original })
        }
        Json::Array(first_values) => {
            let width = first_values.len();
            let mut cells = Vec::with_capacity(rows.len());
            for (i, row) in rows.iter().enumerate() {
                let values = row.as_array().map_or(&[][..], Vec::as_slice);
                if values.len() != width {
                    return Err(format!(
                        "{what} has rows of different lengths: row 1 has {width} values, row {} has {}",
                        i + 1,
                        values.len()
                    ));
                }
                cells.push(values.to_vec());
            }
            Ok(Table { columns: positions(width), named: false, rows: cells, original })
        }
        _ => Ok(Table {
            columns: positions(1),
            named: false,
            rows: rows.iter().map(|value| vec![value.clone()]).collect(),
            original,
        }),
    }
}

/// `#1`, `#2`, …
fn positions(width: usize) -> Vec<String> {
    (1..=width).map(|i| format!("#{i}")).collect()
}

/// An OpenSearch SQL/PPL response: `datarows` (lists of values) named by
/// `schema` (each `{"name": …, "alias": …}`; the alias wins) when present.
fn from_opensearch(map: &serde_json::Map<String, Json>, what: &str) -> Result<Table, String> {
    let Some(Json::Array(rows)) = map.get("datarows") else {
        return Err(format!("{what} has `datarows` that is not a list"));
    };
    if let Some((i, row)) = rows.iter().enumerate().find(|(_, row)| !row.is_array()) {
        return Err(format!("{what} has `datarows` whose row {} is {}, not a list", i + 1, kind(row)));
    }
    let mut table = from_rows(rows, what)?;
    if let Some(schema) = map.get("schema") {
        let names: Option<Vec<String>> = schema.as_array().and_then(|fields| {
            fields
                .iter()
                .map(|field| {
                    let label = field.get("alias").filter(|a| a.is_string()).or_else(|| field.get("name"));
                    label.and_then(Json::as_str).map(str::to_owned)
                })
                .collect()
        });
        let Some(names) = names else {
            return Err(format!("{what} has a `schema` that is not a list of {{\"name\": …}} objects"));
        };
        if !table.is_empty() && names.len() != table.columns.len() {
            return Err(format!(
                "{what} has a `schema` of {} columns and `datarows` of {} values",
                names.len(),
                table.columns.len()
            ));
        }
        table.columns = names;
        table.named = true;
    }
    Ok(table)
}
