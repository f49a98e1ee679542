//! Date templates, as the seed defines them: `<ID.FIELD,date>` and
//! `<ID.FIELD,dateAndTime>` in any string of a spec line become the time
//! in FIELD of the document whose `id` field (or `_id`) is ID, among the
//! documents of the line's cluster state (every `documents.ndjson` of its
//! index group). `date` writes `Dec 06`, `dateAndTime` writes
//! `Dec 06 13:40` (English month, zero-padded day, 24-hour clock), in the
//! time zone of [`DocumentsOfState::with_time_zone`], UTC unless set.
//!
//! FIELD holds epoch milliseconds (a number, or a string of digits) or an
//! ISO 8601 time (`2023-12-06T13:40:00Z`, `2023-12-06T13:40:00.123+01:00`;
//! one without an offset is UTC, as OpenSearch reads it; a date alone is
//! its midnight). FIELD may be a dotted path into nested objects. ID is
//! everything before the first dot.
//!
//! Text that merely looks like a template is kept as it is: `<b>`,
//! `a < b`, `<a.b>`, `<1.5,2>`. A template whose format is a near miss
//! (`<x.start_time,datetime>`) is an error, not text.

use super::index_group::{self, DocumentLine};
use crate::case::FileAccess;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use regex::{Captures, Regex};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

/// `<ID.FIELD,FORMAT>`: no spaces, no brackets, ID without a dot or comma.
static TEMPLATE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<([^<>\s.,]+)\.([^<>\s,]+),([A-Za-z]+)>").expect("a valid pattern"));

/// The formats a template may ask for, with what each writes.
const FORMATS: [(&str, &str); 2] = [("date", "%b %d"), ("dateAndTime", "%b %d %H:%M")];

/// The documents of one cluster state that date templates may name, by
/// id, and the time zone templates are written in.
#[derive(Debug, Clone)]
pub struct DocumentsOfState {
    state: String,
    /// The folder the documents were read from (none: no documents).
    folder: Option<PathBuf>,
    by_id: HashMap<String, Vec<Arc<FoundDocument>>>,
    time_zone: Tz,
}

/// A document that has an id, and where it was read.
#[derive(Debug)]
struct FoundDocument {
    file: PathBuf,
    line: usize,
    fields: Map<String, Value>,
}

impl DocumentsOfState {
    /// Reads every `documents.ndjson` of `indices_dir/<state>/` (one folder
    /// per index), keeping the documents that have an `id` field or an
    /// `_id`. The time zone is UTC. The error names the state and, for a
    /// bad line, its `file:line`.
    pub fn read(access: &FileAccess, indices_dir: &Path, state: &str) -> Result<Self, String> {
        let context = |e: String| format!("read the documents of cluster state `{state}`: {e}");
        let mut documents = DocumentsOfState::empty(state);
        documents.folder = Some(indices_dir.join(state));
        for folder in index_group::index_folders(access, indices_dir, state).map_err(context)? {
            let file = folder.documents_file();
            for line in index_group::read_documents(access, &file).map_err(context)? {
                documents.add(&file, line);
            }
        }
        Ok(documents)
    }

    /// No documents: for a cluster state that has no index group. A
    /// template in its lines is an error that says so.
    pub fn empty(state: &str) -> Self {
        DocumentsOfState { state: state.to_owned(), folder: None, by_id: HashMap::new(), time_zone: Tz::UTC }
    }

    /// The same documents, with templates written in `time_zone` (a suite's
    /// `[setup] time_zone`, read with [`parse_time_zone`]).
    pub fn with_time_zone(mut self, time_zone: Tz) -> Self {
        self.time_zone = time_zone;
        self
    }

    /// The time zone templates are written in.
    #[cfg(any(test, feature = "internals"))] // for tests
    pub fn time_zone(&self) -> Tz {
        self.time_zone
    }

    /// The cluster state these are the documents of.
    #[cfg(any(test, feature = "internals"))] // for tests
    pub fn state(&self) -> &str {
        &self.state
    }

    fn add(&mut self, file: &Path, line: DocumentLine) {
        let ids = line.template_ids();
        if ids.is_empty() {
            return;
        }
        let found = Arc::new(FoundDocument { file: file.to_owned(), line: line.line, fields: line.fields });
        for id in ids {
            self.by_id.entry(id).or_default().push(found.clone());
        }
    }

    /// The one document with `id`.
    fn find(&self, id: &str) -> Result<&FoundDocument, String> {
        match self.by_id.get(id).map(Vec::as_slice) {
            Some([document]) => Ok(document),
            Some(several) => Err(format!(
                "the id `{id}` belongs to {} documents ({}); give each document of cluster state `{}` its own id",
                several.len(),
                several.iter().map(|d| format!("`{}:{}`", d.file.display(), d.line)).collect::<Vec<_>>().join(", "),
                self.state
            )),
            None => Err(self.unknown(id)),
        }
    }

    fn unknown(&self, id: &str) -> String {
        let Some(folder) = &self.folder else {
            return format!(
                "no document has the id `{id}`: cluster state `{}` has no index group to take documents from; \
                 give it one (`[setup] opensearch`), or write the date out",
                self.state
            );
        };
        let hint = match crate::suggest::nearest(id, self.by_id.keys().map(String::as_str)) {
            Some(near) => format!("did you mean `{near}`? "),
            None => String::new(),
        };
        format!(
            "no document of cluster state `{}` has the id `{id}` (its documents are under `{}`); {hint}use the `id` \
             or `_id` of one of them",
            self.state,
            folder.display()
        )
    }
}

/// The IANA time zone `name` (`UTC`, `Europe/Berlin`; any case); the error
/// suggests the nearest name.
pub(crate) fn parse_time_zone(name: &str) -> Result<Tz, String> {
    if let Ok(zone) = name.parse::<Tz>() {
        return Ok(zone);
    }
    let lower = name.to_ascii_lowercase();
    let names: Vec<String> = chrono_tz::TZ_VARIANTS.iter().map(|zone| zone.name().to_ascii_lowercase()).collect();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        return Ok(chrono_tz::TZ_VARIANTS[i]);
    }
    let hint = match crate::suggest::nearest(&lower, names.iter().map(String::as_str)) {
        Some(near) => {
            let i = names.iter().position(|n| *n == near).expect("a name of the list");
            format!("did you mean `{}`? ", chrono_tz::TZ_VARIANTS[i].name())
        }
        None => String::new(),
    };
    Err(format!(
        "read the time zone `{name}`: it is not an IANA time zone name; {hint}use e.g. \"UTC\" or \"Europe/Berlin\""
    ))
}

/// Resolves every date template in every string of `line`, nested ones
/// too, from `documents`. The error names the field, the template, the
/// document id and FIELD, and says what to fix.
pub fn resolve_line(line: &mut Map<String, Value>, documents: &DocumentsOfState) -> Result<(), String> {
    for (key, value) in line.iter_mut() {
        resolve_value(value, key, documents)?;
    }
    Ok(())
}

fn resolve_value(value: &mut Value, path: &str, documents: &DocumentsOfState) -> Result<(), String> {
    match value {
        Value::String(text) => {
            if let Some(resolved) = resolve_text(text, documents).map_err(|e| format!("{e} (in `{path}`)"))? {
                *text = resolved;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                resolve_value(item, &format!("{path}[{i}]"), documents)?;
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields.iter_mut() {
                resolve_value(item, &format!("{path}.{key}"), documents)?;
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
    Ok(())
}

/// `text` with its templates resolved, or `None` when it has none.
fn resolve_text(text: &str, documents: &DocumentsOfState) -> Result<Option<String>, String> {
    let mut failure = None;
    let mut changed = false;
    let resolved = TEMPLATE.replace_all(text, |captures: &Captures| {
        let whole = &captures[0];
        if failure.is_some() {
            return whole.to_owned();
        }
        match resolve_template(&captures[1], &captures[2], &captures[3], documents) {
            Ok(Some(date)) => {
                changed = true;
                date
            }
            Ok(None) => whole.to_owned(),
            Err(e) => {
                failure = Some(format!("resolve the date template `{whole}`: {e}"));
                whole.to_owned()
            }
        }
    });
    match failure {
        Some(failure) => Err(failure),
        None => Ok(changed.then(|| resolved.into_owned())),
    }
}

/// One template's text; `None` for text that only looks like one.
fn resolve_template(
    id: &str,
    field: &str,
    format: &str,
    documents: &DocumentsOfState,
) -> Result<Option<String>, String> {
    let Some((_, pattern)) = FORMATS.iter().find(|(name, _)| *name == format) else {
        // A format that speaks of a date or a time was meant as a template.
        let lower = format.to_ascii_lowercase();
        return if lower.contains("date") || lower.contains("time") || strsim::damerau_levenshtein(&lower, "date") <= 1 {
            Err(format!("`{format}` is not a date format; use `date` (Dec 06) or `dateAndTime` (Dec 06 13:40)"))
        } else {
            Ok(None)
        };
    };
    let document = documents.find(id)?;
    let at = || format!("document `{id}` (`{}:{}`)", document.file.display(), document.line);
    let value = field_value(&document.fields, field).ok_or_else(|| {
        let fields: Vec<&str> = document.fields.keys().map(String::as_str).collect();
        format!("{} has no field `{field}` (it has {}); name one of its time fields", at(), fields.join(", "))
    })?;
    let time = match value {
        Value::Null => return Err(format!("{} has an empty `{field}` (null); name a field that holds a time", at())),
        Value::String(text) if text.trim().is_empty() => {
            return Err(format!("{} has an empty `{field}`; name a field that holds a time", at()));
        }
        value => parse_time(value).ok_or_else(|| {
            format!(
                "`{field}` of {} is {value}, neither epoch milliseconds nor an ISO 8601 time (e.g. \
                 \"2023-12-06T13:40:00Z\"); fix the document or name another field",
                at()
            )
        })?,
    };
    Ok(Some(time.with_timezone(&documents.time_zone).format(pattern).to_string()))
}

/// `field` of `fields`: the key itself, else a dotted path into objects.
fn field_value<'a>(fields: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    if let Some(value) = fields.get(field) {
        return Some(value);
    }
    let mut parts = field.split('.');
    let mut value = fields.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    Some(value)
}

/// A time: epoch milliseconds (a number, or a string of digits) or an ISO
/// 8601 time (UTC when it has no offset).
fn parse_time(value: &Value) -> Option<DateTime<Utc>> {
    match value {
        Value::Number(number) => {
            let millis =
                number.as_i64().or_else(|| number.as_f64().filter(|f| f.is_finite()).map(|f| f.round() as i64))?;
            DateTime::from_timestamp_millis(millis)
        }
        Value::String(text) => {
            let text = text.trim();
            let digits = text.strip_prefix('-').unwrap_or(text);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                return DateTime::from_timestamp_millis(text.parse().ok()?);
            }
            parse_iso(text)
        }
        _ => None,
    }
}

fn parse_iso(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.to_utc());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%z"] {
        if let Ok(time) = DateTime::parse_from_str(text, format) {
            return Some(time.to_utc());
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(time) = NaiveDateTime::parse_from_str(text, format) {
            return Some(time.and_utc());
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok().map(|date| date.and_hms_opt(0, 0, 0).expect("midnight").and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 2023-12-06T13:40:05Z.
    const DEC_06: i64 = 1_701_870_005_000;

    fn state(lines: &[(&str, &str)]) -> (tempfile::TempDir, DocumentsOfState) {
        let root = tempfile::tempdir().unwrap();
        for (index, text) in lines {
            let dir = root.path().join("alerting").join(index);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("mappings.json"), "{}").unwrap();
            std::fs::write(dir.join("documents.ndjson"), text).unwrap();
        }
        let documents = DocumentsOfState::read(&FileAccess::anywhere(), root.path(), "alerting").unwrap();
        (root, documents)
    }

    fn alerts() -> (tempfile::TempDir, DocumentsOfState) {
        let alerts = format!(
            "{{\"id\":\"uzg0gosB6jqYe1T0y9Aa\",\"start_time\":{DEC_06},\"end_time\":null,\"state\":\"ACTIVE\"}}\n\
             {{\"id\":\"GThUkYsB6jqYe1T0UOF3\",\"acknowledged_time\":\"2023-12-08T09:00:00Z\",\"last\":\"\",\"late\":\"2023-12-31T23:30:00\"}}\n\
             {{\"no_id\":true}}\n"
        );
        state(&[
            (".opendistro-alerting-alerts", &alerts),
            (
                "other",
                "{\"_id\":\"c1dc6e4b-1f71\",\"at\":{\"start\":\"2023-01-02\"},\"n\":1701870005000.4,\"s\":\"1701870005000\",\"bad\":\"soon\"}\n",
            ),
        ])
    }

    fn resolve(text: &str, documents: &DocumentsOfState) -> Result<String, String> {
        let mut line = Map::new();
        line.insert("question".into(), json!(text));
        resolve_line(&mut line, documents)?;
        Ok(line["question"].as_str().unwrap().to_owned())
    }

    #[test]
    fn date_and_date_and_time_write_the_seeds_formats_in_utc() {
        let (_root, documents) = alerts();
        assert_eq!(
            resolve("How many alerts were triggered on <uzg0gosB6jqYe1T0y9Aa.start_time,date>?", &documents).unwrap(),
            "How many alerts were triggered on Dec 06?"
        );
        assert_eq!(
            resolve("acknowledged on <GThUkYsB6jqYe1T0UOF3.acknowledged_time,dateAndTime>.", &documents).unwrap(),
            "acknowledged on Dec 08 09:00."
        );
        assert_eq!(resolve("<uzg0gosB6jqYe1T0y9Aa.start_time,dateAndTime>", &documents).unwrap(), "Dec 06 13:40");
        // `_id`, a nested field, a date alone, fractional and string millis, a time without offset.
        assert_eq!(resolve("<c1dc6e4b-1f71.at.start,dateAndTime>", &documents).unwrap(), "Jan 02 00:00");
        assert_eq!(
            resolve("<c1dc6e4b-1f71.n,dateAndTime>|<c1dc6e4b-1f71.s,date>", &documents).unwrap(),
            "Dec 06 13:40|Dec 06"
        );
        assert_eq!(resolve("<GThUkYsB6jqYe1T0UOF3.late,dateAndTime>", &documents).unwrap(), "Dec 31 23:30");
    }

    #[test]
    fn the_time_zone_moves_the_hour_and_the_day() {
        let (_root, documents) = alerts();
        let berlin = documents.clone().with_time_zone(parse_time_zone("Europe/Berlin").unwrap());
        assert_eq!(resolve("<uzg0gosB6jqYe1T0y9Aa.start_time,dateAndTime>", &berlin).unwrap(), "Dec 06 14:40");
        assert_eq!(resolve("<GThUkYsB6jqYe1T0UOF3.late,dateAndTime>", &berlin).unwrap(), "Jan 01 00:30");
        let tokyo = documents.with_time_zone(parse_time_zone("asia/tokyo").unwrap());
        assert_eq!(tokyo.time_zone(), Tz::Asia__Tokyo);
        assert_eq!(resolve("<uzg0gosB6jqYe1T0y9Aa.start_time,date> x", &tokyo).unwrap(), "Dec 06 x");
        assert_eq!(resolve("<GThUkYsB6jqYe1T0UOF3.late,date>", &tokyo).unwrap(), "Jan 01");
        assert_eq!(parse_time_zone("UTC").unwrap(), Tz::UTC);
        assert_eq!(
            parse_time_zone("Europe/Berln").unwrap_err(),
            "read the time zone `Europe/Berln`: it is not an IANA time zone name; did you mean `Europe/Berlin`? use \
             e.g. \"UTC\" or \"Europe/Berlin\""
        );
    }

    #[test]
    fn every_string_of_a_line_resolves_nested_ones_too_and_others_stay() {
        let (_root, documents) = alerts();
        let mut line = json!({
            "id": "q1", "clusterStateId": "alerting", "n": 3,
            "question": "on <uzg0gosB6jqYe1T0y9Aa.start_time,date>?",
            "expectedAnswer": "Yes, <GThUkYsB6jqYe1T0UOF3.acknowledged_time,date> and <uzg0gosB6jqYe1T0y9Aa.start_time,date>.",
            "extra": {"notes": ["plain", "at <GThUkYsB6jqYe1T0UOF3.acknowledged_time,dateAndTime>"]}
        });
        resolve_line(line.as_object_mut().unwrap(), &documents).unwrap();
        assert_eq!(
            line,
            json!({
                "id": "q1", "clusterStateId": "alerting", "n": 3,
                "question": "on Dec 06?",
                "expectedAnswer": "Yes, Dec 08 and Dec 06.",
                "extra": {"notes": ["plain", "at Dec 08 09:00"]}
            })
        );
    }

    #[test]
    fn text_that_only_looks_like_a_template_is_kept() {
        let documents = DocumentsOfState::empty("none");
        for kept in [
            "<b>bold</b>",
            "a < b and c > d",
            "<a.b>",
            "<1.5,2>",
            "<a.b, date>",
            "< a.b,date>",
            "<x.y,banana>",
            "<<>>",
            "",
        ] {
            assert_eq!(resolve(kept, &documents).unwrap(), kept);
        }
    }

    #[test]
    fn an_unknown_id_names_it_the_state_and_the_nearest_id() {
        let (root, documents) = alerts();
        let folder = root.path().join("alerting");
        assert_eq!(
            resolve("on <uzg0gosB6jqYe1T0y9Ab.start_time,date>", &documents).unwrap_err(),
            format!(
                "resolve the date template `<uzg0gosB6jqYe1T0y9Ab.start_time,date>`: no document of cluster state \
                 `alerting` has the id `uzg0gosB6jqYe1T0y9Ab` (its documents are under `{}`); did you mean \
                 `uzg0gosB6jqYe1T0y9Aa`? use the `id` or `_id` of one of them (in `question`)",
                folder.display()
            )
        );
        assert_eq!(
            resolve("<x.start_time,date>", &DocumentsOfState::empty("none")).unwrap_err(),
            "resolve the date template `<x.start_time,date>`: no document has the id `x`: cluster state `none` has \
             no index group to take documents from; give it one (`[setup] opensearch`), or write the date out (in \
             `question`)"
        );
    }

    #[test]
    fn a_missing_empty_or_unparsable_field_names_the_id_and_the_field() {
        let (root, documents) = alerts();
        let alerts = root.path().join("alerting/.opendistro-alerting-alerts/documents.ndjson");
        let other = root.path().join("alerting/other/documents.ndjson");
        let error = |text: &str| resolve(text, &documents).unwrap_err();
        assert_eq!(
            error("<uzg0gosB6jqYe1T0y9Aa.ack,date>"),
            format!(
                "resolve the date template `<uzg0gosB6jqYe1T0y9Aa.ack,date>`: document `uzg0gosB6jqYe1T0y9Aa` \
                 (`{}:1`) has no field `ack` (it has id, start_time, end_time, state); name one of its time fields \
                 (in `question`)",
                alerts.display()
            )
        );
        assert_eq!(
            error("<uzg0gosB6jqYe1T0y9Aa.end_time,date>"),
            format!(
                "resolve the date template `<uzg0gosB6jqYe1T0y9Aa.end_time,date>`: document `uzg0gosB6jqYe1T0y9Aa` \
                 (`{}:1`) has an empty `end_time` (null); name a field that holds a time (in `question`)",
                alerts.display()
            )
        );
        assert!(error("<GThUkYsB6jqYe1T0UOF3.last,date>").contains("has an empty `last`;"));
        assert_eq!(
            error("<c1dc6e4b-1f71.bad,dateAndTime>"),
            format!(
                "resolve the date template `<c1dc6e4b-1f71.bad,dateAndTime>`: `bad` of document `c1dc6e4b-1f71` \
                 (`{}:1`) is \"soon\", neither epoch milliseconds nor an ISO 8601 time (e.g. \
                 \"2023-12-06T13:40:00Z\"); fix the document or name another field (in `question`)",
                other.display()
            )
        );
    }

    #[test]
    fn a_near_miss_format_and_a_shared_id_are_errors() {
        let (_root, documents) = alerts();
        assert_eq!(
            resolve("<uzg0gosB6jqYe1T0y9Aa.start_time,datetime>", &documents).unwrap_err(),
            "resolve the date template `<uzg0gosB6jqYe1T0y9Aa.start_time,datetime>`: `datetime` is not a date \
             format; use `date` (Dec 06) or `dateAndTime` (Dec 06 13:40) (in `question`)"
        );
        let (root, twice) = state(&[("a", "{\"id\":\"x\",\"t\":0}\n"), ("b", "{\"_id\":\"x\",\"t\":0}\n")]);
        let error = resolve("<x.t,date>", &twice).unwrap_err();
        assert!(
            error.contains(&format!(
                "the id `x` belongs to 2 documents (`{}:1`, `{}:1`)",
                root.path().join("alerting/a/documents.ndjson").display(),
                root.path().join("alerting/b/documents.ndjson").display()
            )),
            "{error}"
        );
    }

    #[test]
    fn reading_a_bad_line_is_located_and_names_the_state() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("alerting/alerts");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("documents.ndjson"), "{\"id\":\"a\"}\n{\"id\":\n").unwrap();
        let error = DocumentsOfState::read(&FileAccess::anywhere(), root.path(), "alerting").unwrap_err();
        assert!(
            error.starts_with(&format!(
                "read the documents of cluster state `alerting`: read `{}:2`: it is not JSON (",
                dir.join("documents.ndjson").display()
            )),
            "{error}"
        );
        let error = DocumentsOfState::read(&FileAccess::anywhere(), root.path(), "spider").unwrap_err();
        assert!(
            error.starts_with("read the documents of cluster state `spider`: there is no folder `spider`"),
            "{error}"
        );
    }
}
