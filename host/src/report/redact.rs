//! Secrets out of reports: the [`Redactor`] every reporter applies to what
//! it writes.
//!
//! The secrets are the values of the environment variables case files may
//! read whose names look secret, and of the configured API keys (see
//! [`crate::case::CaseEnv::secrets`]). A case may hand such a value to the
//! agent (neuro-san cases pass API keys in `sly_data`), and then it comes
//! back in responses, actual values and messages; every report shows
//! [`REDACTED`] in its place, as written, JSON-escaped and escaped for the
//! terminal, and
//! a preview cut in the middle of one loses the cut-off start too. Values
//! shorter than [`MIN_SECRET_CHARS`] are not redacted: no credential is
//! that short, and cutting such a value out of every text would garble the
//! reports.
//!
//! A redactor may also hide a folder ([`Redactor::hiding_folder`]): `assay
//! serve` shows its clients paths relative to its root, never where the
//! root is on the server.
//!
//! With no secrets, redacting costs one check of an empty list.

use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The shortest value treated as a secret.
pub const MIN_SECRET_CHARS: usize = 6;

/// The shortest start of a secret redacted at the end of a cut preview
/// (`sk-abc…`).
const MIN_PREFIX_CHARS: usize = 4;

/// Replaces secrets in report text and JSON. Its `Debug` shows how many
/// secrets it holds, never them.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Each secret as written and JSON-escaped, longest first (so that a
    /// secret containing another is replaced whole).
    needles: Vec<String>,
    /// A folder's path with its trailing separator, as written and
    /// JSON-escaped, removed wherever it appears.
    folders: Vec<String>,
    /// The same folders without the separator, written `.` where they end
    /// a path (the folder itself named).
    folder_names: Vec<String>,
}

impl Redactor {
    /// A redactor with nothing to redact.
    pub fn none() -> Redactor {
        Redactor::default()
    }

    /// A redactor for `secrets` (values under [`MIN_SECRET_CHARS`]
    /// characters are ignored).
    pub fn new(secrets: impl IntoIterator<Item = impl AsRef<str>>) -> Redactor {
        let mut needles = Vec::new();
        for secret in secrets {
            let secret = secret.as_ref();
            if secret.chars().count() < MIN_SECRET_CHARS {
                continue;
            }
            let escaped = serde_json::to_string(secret).expect("a string serializes");
            let escaped = &escaped[1..escaped.len() - 1];
            // As the terminal prints it, when it holds control characters.
            let printed = crate::report::escape::one_line(secret);
            for needle in [secret, escaped, &printed] {
                if !needles.iter().any(|n: &String| n == needle) {
                    needles.push(needle.to_owned());
                }
            }
        }
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        Redactor { needles, folders: Vec::new(), folder_names: Vec::new() }
    }

    /// The same redactor, also removing `folder/` from every path that
    /// starts with it, so that paths under it read relative to it.
    pub fn hiding_folder(mut self, folder: &std::path::Path) -> Redactor {
        let mut prefix = folder.to_string_lossy().into_owned();
        if !prefix.ends_with(std::path::MAIN_SEPARATOR) {
            prefix.push(std::path::MAIN_SEPARATOR);
        }
        let escaped = serde_json::to_string(&prefix).expect("a string serializes");
        for needle in [prefix.clone(), escaped[1..escaped.len() - 1].to_owned()] {
            if needle.len() > 1 && !self.folders.contains(&needle) {
                self.folder_names.push(needle[..needle.len() - 1].to_owned());
                self.folders.push(needle);
            }
        }
        self.folders.sort_by_key(|n| std::cmp::Reverse(n.len()));
        self.folder_names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        self
    }

    /// Whether it redacts nothing.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty() && self.folders.is_empty()
    }

    /// `text` with every secret replaced, and the start of one cut off by a
    /// preview's `…` too.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for folder in &self.folders {
            if out.contains(folder.as_str()) {
                out = Cow::Owned(out.replace(folder.as_str(), ""));
            }
        }
        for name in &self.folder_names {
            if out.contains(name.as_str()) {
                out = Cow::Owned(replace_whole_path(&out, name));
            }
        }
        for needle in &self.needles {
            if out.contains(needle.as_str()) {
                out = Cow::Owned(out.replace(needle.as_str(), REDACTED));
            }
        }
        if let Some(cut) = out.strip_suffix('…')
            && let Some(start) = self.cut_secret_start(cut)
        {
            out = Cow::Owned(format!("{}{REDACTED}…", &cut[..start]));
        }
        out
    }

    /// Where a secret's start (at least [`MIN_PREFIX_CHARS`] long) ends
    /// `text`, if one does.
    fn cut_secret_start(&self, text: &str) -> Option<usize> {
        self.needles.iter().find_map(|needle| {
            needle
                .char_indices()
                .map(|(i, _)| i)
                .chain([needle.len()])
                .skip(MIN_PREFIX_CHARS)
                .filter(|&end| text.ends_with(&needle[..end]))
                .max()
                .map(|end| text.len() - end)
        })
    }

    /// Redacts every string, key and number of `value` in place.
    pub fn redact_json(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Cow::Owned(redacted) = self.redact(text) {
                    *text = redacted;
                }
            }
            Value::Number(number) => {
                let text = number.to_string();
                if let Cow::Owned(redacted) = self.redact(&text) {
                    *value = Value::String(redacted);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.redact_json(item)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                *map = entries
                    .into_iter()
                    .map(|(key, mut item)| {
                        self.redact_json(&mut item);
                        (self.redact(&key).into_owned(), item)
                    })
                    .collect::<Map<String, Value>>();
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// `value` as JSON, redacted: serialized straight through when there is
    /// nothing to redact, else by way of a [`Value`], so that the JSON stays
    /// valid whatever the secrets hold.
    pub fn to_json(&self, value: &impl Serialize, pretty: bool) -> serde_json::Result<Vec<u8>> {
        fn write(value: &impl Serialize, pretty: bool) -> serde_json::Result<Vec<u8>> {
            if pretty { serde_json::to_vec_pretty(value) } else { serde_json::to_vec(value) }
        }
        if self.is_empty() {
            return write(value, pretty);
        }
        let mut json = serde_json::to_value(value)?;
        self.redact_json(&mut json);
        write(&json, pretty)
    }
}

/// `text` with `path` written `.` wherever it is a whole path: not followed
/// by a character that would make it a longer name (`/srv/cases2`).
fn replace_whole_path(text: &str, path: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let after = &rest[at + path.len()..];
        let longer = after.chars().next().is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_'));
        out.push_str(&rest[..at]);
        out.push_str(if longer { path } else { "." });
        rest = after;
    }
    out.push_str(rest);
    out
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor").field("needles", &self.needles.len()).field("folders", &self.folders.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hidden_folder_leaves_paths_relative_to_it_and_other_paths_alone() {
        let redactor = Redactor::new(["sk-secret-value"]).hiding_folder(std::path::Path::new("/srv/cases"));
        assert_eq!(redactor.redact("read `/srv/cases/a/b.hocon`: sk-secret-value"), "read `a/b.hocon`: [REDACTED]");
        assert_eq!(redactor.redact("/srv/cases2/x and /srv/other"), "/srv/cases2/x and /srv/other");
        assert_eq!(redactor.redact("no file in `/srv/cases`: /srv/cases"), "no file in `.`: .");
        assert_eq!(redactor.redact("/srv/cases.old and /srv/cases-2"), "/srv/cases.old and /srv/cases-2");
        let mut value = json!({"file": "/srv/cases/x.hocon", "results": "/srv/cases/.assay/serve-runs/1"});
        redactor.redact_json(&mut value);
        assert_eq!(value, json!({"file": "x.hocon", "results": ".assay/serve-runs/1"}));
        assert!(!Redactor::none().hiding_folder(std::path::Path::new("/srv/cases")).is_empty());
    }

    #[test]
    fn secrets_are_replaced_as_written_and_json_escaped() {
        let redactor = Redactor::new(["sk-live-1234", "pa\"ss\\word"]);
        assert_eq!(redactor.redact("key sk-live-1234, again sk-live-1234."), "key [REDACTED], again [REDACTED].");
        assert_eq!(redactor.redact(r#"{"p":"pa\"ss\\word"}"#), r#"{"p":"[REDACTED]"}"#);
        assert_eq!(redactor.redact("pa\"ss\\word"), "[REDACTED]");
        assert!(matches!(redactor.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_start_of_a_secret_cut_off_by_a_preview_goes_too() {
        let redactor = Redactor::new(["sk-live-1234"]);
        assert_eq!(redactor.redact("the key is sk-live…"), "the key is [REDACTED]…");
        assert_eq!(redactor.redact("the key is sk-…"), "the key is sk-…");
        assert_eq!(redactor.redact("not cut sk-live"), "not cut sk-live");
    }

    #[test]
    fn short_and_empty_values_are_not_secrets() {
        let redactor = Redactor::new(["", "12345", "on"]);
        assert!(redactor.is_empty());
        assert_eq!(redactor.redact("12345 on"), "12345 on");
    }

    #[test]
    fn json_stays_valid_whatever_the_secret_holds() {
        let redactor = Redactor::new(["1234567", "\",\"b\":\""]);
        let value = json!({"a": "x\",\"b\":\"y", "n": 1234567.5, "1234567": [true, "1234567"]});
        let text = redactor.to_json(&value, false).unwrap();
        let back: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(back, json!({"a": "x[REDACTED]y", "n": "[REDACTED].5", "[REDACTED]": [true, "[REDACTED]"]}));
        assert_eq!(Redactor::none().to_json(&value, false).unwrap(), serde_json::to_vec(&value).unwrap());
    }

    #[test]
    fn debug_does_not_show_secrets() {
        assert_eq!(format!("{:?}", Redactor::new(["sk-live-1234"])), "Redactor { needles: 1, folders: 0 }");
    }
}
