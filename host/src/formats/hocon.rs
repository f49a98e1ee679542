//! The neuro-san HOCON reader: one `.hocon` file into a [`TestCase`], with
//! every error naming the file and the line or key path.
//!
//! A case file is input, not code: it is read under caps on its size
//! ([`MAX_CASE_FILE_BYTES`], [`MAX_HOCON_BYTES`]), and what it may ask of
//! HOCON (no `include`, substitutions of visible environment variables
//! only, bounded nesting and merging) is checked before anything is
//! resolved; see `guard.rs`. No file can exhaust the memory or the stack,
//! so a bad file is one `error` case and the others run.

use crate::case::{CaseEnv, CaseFile, FileAccess, TooLarge, has_extension};
use crate::case::{ChatFilter, Connection, Interaction, KeyLines, SuccessRatio, TestCase};
use crate::check::{KeySet, plan_case};
use crate::errors::{CaseError, CaseErrorKind};
use crate::formats::Format;
use crate::job::{CaseReader, Job, LoadedCase};
use crate::suggest::nearest;
use serde_json::{Map, Value};
use std::path::Path;
use std::time::Duration;

/// The top-level keys of a test case.
const CASE_KEYS: &[&str] =
    &["agent", "connections", "success_ratio", "use_direct", "metadata", "timeout_in_seconds", "interactions"];

/// The keys of one interaction.
const INTERACTION_KEYS: &[&str] =
    &["text", "sly_data", "timeout_in_seconds", "chat_filter", "continue_conversation", "response"];

/// Reads one test case from HOCON text. `${VAR}` substitutions read the
/// variables `env` makes visible; `id` and `file` name the case in the
/// model and in errors.
pub fn parse_case(text: &str, id: &str, file: &Path, env: &CaseEnv) -> Result<TestCase, CaseError> {
    let fail = |kind| CaseError::new(file, kind);
    let mut key_lines = KeyLines::default();
    let root = parse_document(text, env, Some(&mut key_lines)).map_err(fail)?;
    let mut case = read_case(root, id, file).map_err(fail)?;
    case.key_lines = key_lines;
    Ok(case)
}

/// The largest case or scenario file the readers accept.
pub const MAX_CASE_FILE_BYTES: u64 = 4 << 20;

/// The largest text the full HOCON parser is given: it needs about 350
/// bytes of memory per byte of input on dense input (a list of a million
/// numbers), so this bounds one file at about 100 MB. Files that are JSON
/// with comments take the fast path, which needs a fraction of that, and
/// may be as large as [`MAX_CASE_FILE_BYTES`].
pub const MAX_HOCON_BYTES: usize = 256 << 10;

/// Parses HOCON text into its root object, with `${VAR}` read from `env`:
/// by the fast path when the text is JSON with comments, else by the full
/// HOCON parser, after [`guard::inspect`] has checked what the file asks
/// of it.
pub(crate) fn parse_object(text: &str, env: &CaseEnv) -> Result<Map<String, Value>, CaseErrorKind> {
    parse_document(text, env, None)
}

/// [`parse_object`], with the lines of the `response` keys put in
/// `key_lines` when it is given.
fn parse_document(
    text: &str,
    env: &CaseEnv,
    key_lines: Option<&mut KeyLines>,
) -> Result<Map<String, Value>, CaseErrorKind> {
    if let Some(root) = json_subset::parse(text) {
        if let Some(key_lines) = key_lines {
            *key_lines = key_lines::of_json_subset(text);
        }
        return Ok(root);
    }
    if text.len() > MAX_HOCON_BYTES {
        return Err(CaseErrorKind::TooLarge {
            size: text.len() as u64,
            cap: MAX_HOCON_BYTES as u64,
            what: "files that are not JSON with comments (they take the full HOCON parser)",
        });
    }
    check_key_paths(text)?;
    let ast = {
        let tokens = hocon::tokenize(text).map_err(parse_error)?;
        hocon::parser::parse_tokens(&tokens).map_err(parse_error)?
    };
    if let Some(key_lines) = key_lines {
        *key_lines = key_lines::of_ast(&ast);
    }
    let variables = guard::inspect(&ast, env)?;
    let resolved = hocon::resolver::resolve(ast, &hocon::resolver::InternalResolveOptions::new(variables))
        .map_err(resolve_error)?;
    hocon::from_value(&resolved).map_err(|e| CaseErrorKind::Syntax { line: None, message: e.to_string() })
}

/// Reads a test case from a file.
pub fn read_case_file(path: &Path, id: &str, env: &CaseEnv) -> Result<TestCase, CaseError> {
    read_case_file_from(&FileAccess::anywhere(), path, id, env)
}

/// Reads a test case from a file opened through `access`.
fn read_case_file_from(access: &FileAccess, path: &Path, id: &str, env: &CaseEnv) -> Result<TestCase, CaseError> {
    let text = read_text(access, path).map_err(|kind| CaseError::new(path, kind))?;
    parse_case(&text, id, path, env)
}

/// The text of a case or scenario file: a regular file (not a FIFO or a
/// device, which could block or never end) of at most
/// [`MAX_CASE_FILE_BYTES`], in UTF-8.
pub(crate) fn read_text(access: &FileAccess, path: &Path) -> Result<String, CaseErrorKind> {
    access.read_to_string(path, MAX_CASE_FILE_BYTES).map_err(|e| match TooLarge::of(&e) {
        Some(size) => CaseErrorKind::TooLarge { size, cap: MAX_CASE_FILE_BYTES, what: "case files" },
        None => CaseErrorKind::Io(e.to_string()),
    })
}

/// The most segments a dotted key path (`a.b.c`) may have.
const MAX_KEY_PATH_SEGMENTS: usize = 64;

/// Refuses dotted key paths longer than [`MAX_KEY_PATH_SEGMENTS`] before
/// the parser sees them: hocon-parser caps brace nesting but recurses once
/// per path segment, and a path of a few thousand segments overflows the
/// stack, which aborts the process instead of failing one file. The scan
/// skips strings and comments and counts the dots of each unquoted token.
fn check_key_paths(text: &str) -> Result<(), CaseErrorKind> {
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut dots, mut start_line) = (0, 1, 0, 1);
    while i < chars.len() {
        match chars[i] {
            '\n' => {
                line += 1;
                dots = 0;
            }
            '"' if chars[i..].starts_with(&['"', '"', '"']) => {
                // A triple-quoted string ends at the last quote of the next
                // run of three or more.
                i += 3;
                while i < chars.len() && !chars[i..].starts_with(&['"', '"', '"']) {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
                while i < chars.len() && chars[i] == '"' {
                    i += 1;
                }
                continue;
            }
            '"' => {
                // A quoted string; a key path may continue after it.
                i += 1;
                while i < chars.len() && chars[i] != '"' && chars[i] != '\n' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '.' => {
                if dots == 0 {
                    start_line = line;
                }
                dots += 1;
                if dots >= MAX_KEY_PATH_SEGMENTS {
                    return Err(CaseErrorKind::Syntax {
                        line: Some((start_line, 1)),
                        message: format!(
                            "a dotted key path with more than {MAX_KEY_PATH_SEGMENTS} segments; nest objects instead"
                        ),
                    });
                }
            }
            c if c.is_whitespace() || "{}[],:=".contains(c) => dots = 0,
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

fn parse_error(e: hocon::ParseError) -> CaseErrorKind {
    CaseErrorKind::Syntax { line: Some((e.line, e.col)), message: e.message }
}

fn resolve_error(e: hocon::ResolveError) -> CaseErrorKind {
    CaseErrorKind::Syntax { line: Some((e.line, e.col)), message: e.message }
}

fn read_case(mut root: Map<String, Value>, id: &str, file: &Path) -> Result<TestCase, CaseErrorKind> {
    reject_unknown_keys(&root, CASE_KEYS, "")?;
    let agent = match root.remove("agent") {
        Some(Value::String(agent)) if !agent.trim().is_empty() => agent,
        Some(Value::String(_)) => {
            return Err(CaseErrorKind::Invalid { path: "agent".into(), message: "the agent name is empty".into() });
        }
        Some(other) => return Err(wrong_type("agent", "a string", &other)),
        None => return Err(CaseErrorKind::Missing { path: "agent".into(), what: "the name of the agent to test" }),
    };
    let connections = match root.remove("connections") {
        None => vec![Connection::Direct],
        Some(Value::String(name)) => vec![connection(&name, "connections")?],
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(CaseErrorKind::Invalid { path: "connections".into(), message: "the list is empty".into() });
        }
        Some(Value::Array(items)) => {
            let mut connections = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let path = format!("connections[{i}]");
                let Value::String(name) = item else { return Err(wrong_type(&path, "a string", item)) };
                let connection = connection(name, &path)?;
                if !connections.contains(&connection) {
                    connections.push(connection);
                }
            }
            connections
        }
        Some(other) => return Err(wrong_type("connections", "a string or a list of strings", &other)),
    };
    let success_ratio = match root.remove("success_ratio") {
        None => SuccessRatio::default(),
        Some(Value::String(text)) => SuccessRatio::parse(&text)
            .map_err(|message| CaseErrorKind::Invalid { path: "success_ratio".into(), message })?,
        Some(other) => return Err(wrong_type("success_ratio", "a string such as \"3/5\"", &other)),
    };
    let use_direct = optional_bool(root.remove("use_direct"), "use_direct")?.unwrap_or(false);
    let metadata = match root.remove("metadata") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => {
            let mut metadata = Vec::new();
            for (key, value) in map {
                let value = match value {
                    Value::String(s) => s,
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        return Err(wrong_type(
                            &format!("metadata.{key}"),
                            "a string (sent as an HTTP header)",
                            &other,
                        ));
                    }
                };
                metadata.push((key, value));
            }
            metadata
        }
        Some(other) => return Err(wrong_type("metadata", "a dictionary", &other)),
    };
    let timeout = optional_seconds(root.remove("timeout_in_seconds"), "timeout_in_seconds")?;
    let interactions = match root.remove("interactions") {
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(CaseErrorKind::Invalid {
                path: "interactions".into(),
                message: "the list is empty; a test case needs at least one interaction".into(),
            });
        }
        Some(Value::Array(items)) => {
            items.into_iter().enumerate().map(|(i, item)| read_interaction(item, i)).collect::<Result<_, _>>()?
        }
        Some(other) => return Err(wrong_type("interactions", "a list of dictionaries", &other)),
        None => return Err(CaseErrorKind::Missing { path: "interactions".into(), what: "the list of interactions" }),
    };
    Ok(TestCase {
        id: id.to_owned(),
        file: file.to_path_buf(),
        agent,
        connections,
        success_ratio,
        use_direct,
        metadata,
        timeout,
        interactions,
        key_lines: KeyLines::NONE,
    })
}

fn read_interaction(value: Value, index: usize) -> Result<Interaction, CaseErrorKind> {
    let prefix = format!("interactions[{index}]");
    let Value::Object(mut map) = value else { return Err(wrong_type(&prefix, "a dictionary", &value)) };
    reject_unknown_keys(&map, INTERACTION_KEYS, &prefix)?;
    let at = |key: &str| format!("{prefix}.{key}");
    let text = match map.remove("text") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        Some(other) => return Err(wrong_type(&at("text"), "a string", &other)),
    };
    let sly_data = match map.remove("sly_data") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map),
        Some(other) => return Err(wrong_type(&at("sly_data"), "a dictionary", &other)),
    };
    let timeout = optional_seconds(map.remove("timeout_in_seconds"), &at("timeout_in_seconds"))?;
    let chat_filter = match map.remove("chat_filter") {
        None | Some(Value::Null) => ChatFilter::default(),
        Some(Value::String(name)) => match name.to_ascii_uppercase().as_str() {
            "MINIMAL" => ChatFilter::Minimal,
            "MAXIMAL" => ChatFilter::Maximal,
            _ => {
                return Err(CaseErrorKind::Invalid {
                    path: at("chat_filter"),
                    message: format!("`{name}` is not a chat filter: use MINIMAL or MAXIMAL"),
                });
            }
        },
        Some(other) => return Err(wrong_type(&at("chat_filter"), "\"MINIMAL\" or \"MAXIMAL\"", &other)),
    };
    let continue_conversation =
        optional_bool(map.remove("continue_conversation"), &at("continue_conversation"))?.unwrap_or(true);
    let response = match map.remove("response") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) if map.is_empty() => {
            return Err(CaseErrorKind::Invalid {
                path: at("response"),
                message: "it is empty, so it checks nothing\n\nConsider a test, e.g. response { text { keywords: \"…\" } }, or leaving `response` out for an interaction that checks nothing".into(),
            });
        }
        Some(Value::Object(map)) => map,
        Some(other) => return Err(wrong_type(&at("response"), "a dictionary", &other)),
    };
    Ok(Interaction { text, sly_data, timeout, chat_filter, continue_conversation, response })
}

/// A connection the file names: a built-in one, or a name for one
/// configured in `assay.toml` (the planner checks that one is).
fn connection(name: &str, path: &str) -> Result<Connection, CaseErrorKind> {
    Connection::from_name(name).ok_or_else(|| CaseErrorKind::Invalid {
        path: path.to_owned(),
        message: format!(
            "{name:?} cannot name a connection: use direct, http, https, or the name of a [connections.NAME] of assay.toml (letters, digits, `_`, `-`)"
        ),
    })
}

pub(crate) fn reject_unknown_keys(map: &Map<String, Value>, known: &[&str], prefix: &str) -> Result<(), CaseErrorKind> {
    match map.keys().find(|key| !known.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(CaseErrorKind::UnknownKey {
            path: if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") },
            key: key.clone(),
            what: "key",
            suggestion: nearest(key, known.iter().copied()),
            known: known.join(", "),
        }),
    }
}

fn optional_bool(value: Option<Value>, path: &str) -> Result<Option<bool>, CaseErrorKind> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(other) => Err(wrong_type(path, "true or false", &other)),
    }
}

fn optional_seconds(value: Option<Value>, path: &str) -> Result<Option<Duration>, CaseErrorKind> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(seconds) if seconds > 0.0 && seconds.is_finite() && seconds < 1e9 => {
                Ok(Some(Duration::from_secs_f64(seconds)))
            }
            _ => Err(CaseErrorKind::Invalid {
                path: path.into(),
                message: format!("{n} is not a positive number of seconds"),
            }),
        },
        Some(other) => Err(wrong_type(path, "a number of seconds", &other)),
    }
}

fn wrong_type(path: &str, expected: &str, found: &Value) -> CaseErrorKind {
    CaseErrorKind::wrong_type(path, expected, found)
}

/// A test case file is the case it holds, read and planned when its turn
/// comes (opened where its path says).
impl CaseReader for CaseFile {
    fn id(&self) -> &str {
        &self.id
    }

    fn source(&self) -> &std::path::Path {
        &self.path
    }

    fn load(&self, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase {
        load_case_from(&FileAccess::anywhere(), self, keys, env)
    }

    fn case_file(&self) -> Option<&CaseFile> {
        Some(self)
    }
}

/// A test case file discovery found, opened as its trust says
/// ([`crate::case::Trust::access`]).
#[derive(Debug)]
pub(crate) struct DiscoveredFile {
    pub(crate) file: CaseFile,
    pub(crate) access: FileAccess,
}

impl CaseReader for DiscoveredFile {
    fn id(&self) -> &str {
        &self.file.id
    }

    fn source(&self) -> &std::path::Path {
        &self.file.path
    }

    fn load(&self, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase {
        load_case_from(&self.access, &self.file, keys, env)
    }

    fn case_file(&self) -> Option<&CaseFile> {
        Some(&self.file)
    }
}

/// Reads and plans one test case file. A suite file (`*.suite.toml`) is
/// not one case: it is an error here, pointing at `Project::discover`,
/// which expands it into its spec lines.
#[cfg(any(test, feature = "internals"))] // for tests
pub fn load_case(file: &CaseFile, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase {
    load_case_from(&FileAccess::anywhere(), file, keys, env)
}

/// The extensions of programs, which a named file is refused for rather
/// than read as HOCON.
const CODE_EXTENSIONS: &[&str] = &["js", "cjs", "mjs", "ts", "cts", "mts", "py"];

/// [`load_case`], the file opened through `access`.
fn load_case_from(access: &FileAccess, file: &CaseFile, keys: &dyn KeySet, env: &CaseEnv) -> LoadedCase {
    if Format::of(&file.path, access) == Some(Format::Suite) {
        let kind = CaseErrorKind::Invalid {
            path: "(file)".into(),
            message: "it is a suite file, which holds many cases; expand it with assay::Project::discover (or \
                      assay::formats::suite::expand) rather than reading it as one test case"
                .into(),
        };
        return LoadedCase::Broken { id: file.id.clone(), error: CaseError::new(&file.path, kind) };
    }
    if CODE_EXTENSIONS.iter().any(|extension| has_extension(&file.path, extension)) {
        let kind = CaseErrorKind::Invalid {
            path: "(file)".into(),
            message: "it is a program, not a case file: assay reads cases from HOCON files, suite files and \
                      promptfoo configs (YAML, or JavaScript and TypeScript run sandboxed, expanded with \
                      assay::Project::discover); it runs no other code a file brings\n\nConsider writing the \
                      config as YAML (promptfooconfig.yaml), or a case as HOCON"
                .into(),
        };
        return LoadedCase::Broken { id: file.id.clone(), error: CaseError::new(&file.path, kind) };
    }
    let planned = read_case_file_from(access, &file.path, &file.id, env).and_then(|case| {
        checks_something(&case).map_err(|kind| CaseError::new(&file.path, kind))?;
        let plan = plan_case(&case, keys).map_err(|kind| CaseError::new(&file.path, kind))?;
        Ok((case, plan))
    });
    match planned {
        Ok((case, plan)) => LoadedCase::Ready(Box::new(Job::from_case(case, plan))),
        Err(error) => LoadedCase::Broken { id: file.id.clone(), error },
    }
}

/// A case none of whose interactions has a `response` checks nothing: it
/// would pass whatever the agent answers, so it is an error naming where
/// a check belongs.
fn checks_something(case: &TestCase) -> Result<(), CaseErrorKind> {
    if case.interactions.iter().any(|interaction| !interaction.response.is_empty()) {
        return Ok(());
    }
    let last = case.interactions.len().saturating_sub(1);
    Err(CaseErrorKind::Invalid {
        path: format!("interactions[{last}].response"),
        message: format!(
            "no interaction has a `response`, so the case would check nothing and pass whatever the agent \
             answers\n\nConsider a check under its last interaction, e.g. interactions[{last}].response {{ text \
             {{ keywords: \"…\" }} }}"
        ),
    })
}

mod guard;
mod json_subset;
mod key_lines;

#[cfg(test)]
mod tests;
