//! `pf_is_sql` and `pf_contains_sql`: promptfoo's `is-sql` and
//! `contains-sql`, run as promptfoo runs them: its own checking code
//! (`sql.js`) over node-sql-parser 5.4.0 (Apache-2.0; its per-database
//! builds vendored in `vendor/node-sql-parser/`, with big-integer 1.6.52,
//! Unlicense, which they require), in this plugin's JavaScript engine. The
//! build is chosen by the value's `databaseType` (MySQL by default); a name
//! node-sql-parser does not know gets the MySQL build, which refuses it as
//! the whole parser does ("… is not supported currently": the check fails).
//!
//! The parser is loaded once per plugin instance and database (about a
//! second), then reused (a few milliseconds a check).
//!
//! The expected value is `{"value": …}`, the assertion's value (its
//! `databaseType`, `allowedTables` and `allowedColumns`). Both forms are
//! decided in one run; the `not-` form's verdict is in the extras as
//! `"negated": {"pass", "score", "reason"}`.

use crate::engine::Loaded;
use assay_plugin_sdk::{Actual, Json, Verdict};
use serde_json::json;
use std::cell::RefCell;

thread_local! {
    /// The last database's parser with promptfoo's code, loaded: loading
    /// one takes about a second, checking with it a few milliseconds. It
    /// runs only the code embedded here, with the output as data.
    static LOADED: RefCell<Option<(&'static str, Loaded)>> = const { RefCell::new(None) };
}

/// The keys, and what each checks.
pub const KEYS: [(&str, &str); 2] = [
    ("pf_is_sql", "promptfoo is-sql: the output is SQL node-sql-parser parses for the database (run sandboxed)"),
    (
        "pf_contains_sql",
        "promptfoo contains-sql: the output holds SQL node-sql-parser parses (its sql code blocks, else the output)",
    ),
];

/// node-sql-parser's builds, by the lowercase name of their database.
const BUILDS: &[(&str, &str)] = &[
    ("athena", include_str!("../vendor/node-sql-parser/athena.js")),
    ("bigquery", include_str!("../vendor/node-sql-parser/bigquery.js")),
    ("db2", include_str!("../vendor/node-sql-parser/db2.js")),
    ("flinksql", include_str!("../vendor/node-sql-parser/flinksql.js")),
    ("hive", include_str!("../vendor/node-sql-parser/hive.js")),
    ("mariadb", include_str!("../vendor/node-sql-parser/mariadb.js")),
    ("mysql", include_str!("../vendor/node-sql-parser/mysql.js")),
    ("noql", include_str!("../vendor/node-sql-parser/noql.js")),
    ("postgresql", include_str!("../vendor/node-sql-parser/postgresql.js")),
    ("redshift", include_str!("../vendor/node-sql-parser/redshift.js")),
    ("snowflake", include_str!("../vendor/node-sql-parser/snowflake.js")),
    ("sqlite", include_str!("../vendor/node-sql-parser/sqlite.js")),
    ("transactsql", include_str!("../vendor/node-sql-parser/transactsql.js")),
    ("trino", include_str!("../vendor/node-sql-parser/trino.js")),
];

/// big-integer, which the builds `require`.
const BIG_INTEGER: &str = include_str!("../vendor/big-integer/BigInteger.min.js");

/// promptfoo's checking code.
const CHECK: &str = include_str!("sql.js");

/// Both forms' verdicts of `key` on `actual`.
pub fn evaluate(key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
    let kind = if key == KEYS[1].0 { "contains-sql" } else { "is-sql" };
    let value = match expected {
        Json::Object(object) => object.get("value").cloned().unwrap_or(Json::Null),
        other => return Err(format!("{key}: the expected value is {other}, not an object with `value`")),
    };
    let database = value.get("databaseType").and_then(Json::as_str).unwrap_or("MySQL").to_lowercase();
    let (database, build) = *BUILDS.iter().find(|(name, _)| *name == database).unwrap_or(&BUILDS[6]);
    let output = match actual.as_str() {
        Some(text) => Json::String(text.to_owned()),
        None => actual.as_json()?.clone(),
    };
    let args = [output, json!({ "kind": kind, "value": value })];
    let decided = LOADED
        .with_borrow_mut(|loaded| {
            if loaded.as_ref().is_none_or(|(name, _)| *name != database) {
                // The old one goes first: two would not fit the memory cap.
                *loaded = None;
                *loaded = Some((database, Loaded::new("is-sql.js", &module(build), "check")?));
            }
            let (_, checker) = loaded.as_mut().expect("loaded above");
            checker.call(&args, kind)
        })?
        .ok_or_else(|| format!("{key}: the check gave no verdict"))?;
    let form = |form: &str| -> (bool, f64, String) {
        let verdict = &decided[form];
        let pass = verdict["pass"].as_bool().unwrap_or(false);
        (pass, f64::from(u8::from(pass)), verdict["reason"].as_str().unwrap_or_default().to_owned())
    };
    let ((pass, score, reason), (negated_pass, negated_score, negated_reason)) = (form("direct"), form("negated"));
    let negated = json!({ "pass": negated_pass, "score": negated_score, "reason": negated_reason });
    Ok(Verdict::new(pass, reason).with_score(score).with_extras(json!({ "negated": negated })))
}

/// The module holding `build` as `Parser`, then promptfoo's checking code.
fn module(build: &str) -> String {
    let build = build.replace("require(\"big-integer\")", "__bigInteger");
    format!(
        "const __bigInteger = (function () {{ const module = {{ exports: {{}} }}; const exports = module.exports;\n\
         {BIG_INTEGER}\n; return module.exports; }})();\n\
         const Parser = (function () {{ const exports = {{}};\n{build}\n; return exports.Parser; }})();\n\
         {CHECK}"
    )
}
