//! A promptfoo config read and checked: its prompts (strings, `file://`
//! text files split on `---` lines, `{raw, label}` objects), providers
//! (strings, `{id, label, config}` objects, `{ID: {…}}` maps), tests
//! (inline, or `file://` CSV, YAML, JSON and JSONL files) with
//! `defaultTest` merged into each and list-valued `vars` expanded into
//! their combinations, as promptfoo does. What the config cannot mean for
//! assay (a `scenarios` block, JavaScript transforms, extensions) is an
//! error naming the key and why, found here, before any case runs.
//!
//! `file://` paths are relative to the config's folder and must stay in it
//! (no absolute paths, no `..` out of it, no symlink out of it): a config is
//! input, like a case file, and must not read the rest of the disk into a
//! prompt or a report.

use crate::case::{FileAccess, TooLarge};
use crate::errors::{CaseErrorKind, describe_json};
use crate::formats::promptfoo::asserts::AssertTemplates;
use crate::formats::promptfoo::javascript::AssertScripts;
use crate::template::NunjucksTemplate;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The largest file a `file://` reference reads.
pub const MAX_REFERENCED_BYTES: u64 = 64 << 20;

/// The most cases one config may expand into (prompts × providers × tests
/// × var combinations).
pub const MAX_CASES: usize = 250_000;

/// A config, read.
#[derive(Debug)]
pub struct Config {
    /// The prompts, in order.
    pub prompts: Vec<Prompt>,
    /// The providers, in order.
    pub providers: Vec<ProviderEntry>,
    /// The tests, `defaultTest` merged and var combinations expanded, in
    /// order.
    pub tests: Vec<Test>,
    /// The templates of the tests' assertions, parsed once.
    pub assert_templates: AssertTemplates,
    /// The `file://` modules of the tests' `javascript` assertions, read
    /// once.
    pub assert_scripts: AssertScripts,
}

/// One prompt.
#[derive(Debug)]
pub struct Prompt {
    /// The prompt as written.
    pub raw: String,
    /// Its label: `label`, else the raw text (or `FILE: text` for one read
    /// from a file), as promptfoo shows it.
    pub label: String,
    /// The parsed template, or why it cannot be one (an error of every
    /// case that uses it).
    pub template: Result<NunjucksTemplate, String>,
}

/// One `providers` entry, as written.
#[derive(Clone, Debug)]
pub struct ProviderEntry {
    /// `id` (`echo`, `openai:chat:gpt-4o-mini`, `http`, `exec:…`).
    pub id: String,
    /// `label`, if any.
    pub label: Option<String>,
    /// `config`, if any.
    pub config: Map<String, Value>,
}

impl ProviderEntry {
    /// How it is named in ids and reports: its label, else its id.
    pub fn name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.id)
    }
}

/// One test after `defaultTest` and var expansion: one case per prompt and
/// provider.
#[derive(Clone, Debug)]
pub struct Test {
    /// `description`, if any.
    pub description: Option<String>,
    /// Its 0-based place among the tests as written.
    pub index: usize,
    /// Which of the test's var combinations it is, when it has several.
    pub combination: Option<usize>,
    /// The variables.
    pub vars: Map<String, Value>,
    /// The assertions, `defaultTest`'s first.
    pub asserts: Vec<Map<String, Value>>,
    /// The test-level `threshold`.
    pub threshold: Option<f64>,
    /// `options` (promptfoo's `prefix`, `suffix`, `rubricPrompt`, …).
    pub options: Map<String, Value>,
    /// Why the test cannot run, if it cannot (a case error naming it).
    pub error: Option<String>,
}

/// Top-level keys that change what a config means and that assay does not
/// do, with why.
const REFUSED_KEYS: &[(&str, &str)] = &[
    ("scenarios", "scenarios are not supported; write their tests out under `tests`"),
    ("extensions", "extensions are JavaScript or Python hooks, which assay does not run"),
    ("nunjucksFilters", "custom Nunjucks filters are JavaScript, which assay does not run"),
    ("derivedMetrics", "derived metrics are not supported"),
];

fn invalid(path: &str, message: impl Into<String>) -> CaseErrorKind {
    CaseErrorKind::Invalid { path: path.to_owned(), message: message.into() }
}

/// Whether `path` is a promptfoo config: a `.yaml`/`.yml` file whose top
/// level is a mapping with `prompts`, `providers` or `tests`.
pub fn is_config(path: &Path) -> bool {
    use std::io::Read;
    let yaml = path.extension().is_some_and(|x| x == "yaml" || x == "yml");
    if !yaml {
        return false;
    }
    // The top level's keys, from the file's head: a line starting a key at
    // column 0. Cheap whatever the file's size (the reader applies the cap),
    // and a file that is not YAML is left to its reader.
    let mut head = Vec::new();
    let Ok(file) = FileAccess::anywhere().open(path) else { return false };
    if file.take(64 << 10).read_to_end(&mut head).is_err() {
        return false;
    }
    String::from_utf8_lossy(&head)
        .lines()
        .any(|line| ["prompts:", "providers:", "tests:"].iter().any(|key| line.starts_with(key)))
}

/// Reads the config at `path`, and the files it references, through
/// `access`.
pub fn read(access: &FileAccess, path: &Path) -> Result<Config, CaseErrorKind> {
    let text = read_capped(access, path, MAX_CONFIG_BYTES, "promptfoo configs")?;
    let root = parse_yaml(&text)?;
    let Value::Object(root) = root else {
        return Err(invalid("(file)", "its top level is not a mapping of `prompts`, `providers` and `tests`"));
    };
    for (key, why) in REFUSED_KEYS {
        if root.contains_key(*key) {
            return Err(invalid(key, *why));
        }
    }
    let folder = path.parent().unwrap_or(Path::new(""));
    let files = Files { folder, access };
    let prompts = read_prompts(root.get("prompts"), &files)?;
    let providers = read_providers(root.get("providers"))?;
    let default_test = match root.get("defaultTest") {
        None => Map::new(),
        Some(Value::Object(test)) => test.clone(),
        Some(Value::String(reference)) if reference.starts_with("file://") => match files.value(reference)? {
            Value::Object(test) => test,
            other => {
                return Err(invalid(
                    "defaultTest",
                    format!("`{reference}` holds {}, not a test", describe_json(&other)),
                ));
            }
        },
        Some(other) => return Err(invalid("defaultTest", format!("it is {}, not a test", describe_json(other)))),
    };
    let written = read_tests(root.get("tests"), &files)?;
    let mut tests = Vec::new();
    for (index, test) in written.into_iter().enumerate() {
        let test = match test {
            Value::Object(test) => test,
            other => {
                return Err(invalid(
                    &format!("tests[{index}]"),
                    format!("it is {}, not a test", describe_json(&other)),
                ));
            }
        };
        let per_test = prompts.len().saturating_mul(providers.len());
        let room = MAX_CASES.saturating_sub(tests.len().saturating_mul(per_test)) / per_test.max(1);
        expand_test(index, &default_test, test, room, &mut tests).map_err(|_| {
            invalid(
                &format!("tests[{index}]"),
                format!(
                    "the config expands into over {MAX_CASES} cases (prompts × providers × tests × var combinations)"
                ),
            )
        })?;
    }
    if tests.is_empty() {
        // promptfoo runs each prompt once with no vars when there are no tests.
        tests.push(merge(0, &default_test, Map::new()));
    }
    let assert_templates = AssertTemplates::of(tests.iter().flat_map(|test| &test.asserts));
    let assert_scripts = AssertScripts::read(tests.iter().flat_map(|test| &test.asserts), |reference| {
        files.text(reference).map(|(_, text)| text).map_err(|error| match error {
            CaseErrorKind::Invalid { message, .. } => message,
            other => other.to_string(),
        })
    });
    Ok(Config { prompts, providers, tests, assert_templates, assert_scripts })
}

/// A YAML (or JSON) document as JSON; anchors and aliases are expanded by
/// the parser, which refuses documents that expand without bound.
fn parse_yaml(text: &str) -> Result<Value, CaseErrorKind> {
    yaml_serde::from_str::<Value>(text).map_err(|e| CaseErrorKind::YamlSyntax {
        line: e.location().map(|l| (l.line(), l.column())),
        message: e.to_string(),
    })
}

fn read_capped(access: &FileAccess, path: &Path, cap: u64, what: &'static str) -> Result<String, CaseErrorKind> {
    access.read_to_string(path, cap).map_err(|e| match TooLarge::of(&e) {
        Some(size) => CaseErrorKind::TooLarge { size, cap, what },
        None => CaseErrorKind::Io(format!("`{}`: {e}", path.display())),
    })
}

/// `file://` references, resolved in the config's folder.
struct Files<'a> {
    folder: &'a Path,
    access: &'a FileAccess,
}

impl Files<'_> {
    /// The file a `file://` reference names, which must be in the config's
    /// folder.
    fn resolve(&self, reference: &str) -> Result<PathBuf, CaseErrorKind> {
        let relative = reference.trim_start_matches("file://");
        let at = "file://";
        if relative.contains(['*', '?', '[']) {
            return Err(invalid(at, format!("`{reference}` is a glob; name each file (globs are not supported)")));
        }
        let relative_path = Path::new(relative);
        if relative_path.is_absolute() {
            return Err(invalid(
                at,
                format!("`{reference}` is an absolute path; `file://` paths are relative to the config's folder"),
            ));
        }
        let folder = if self.folder.as_os_str().is_empty() { Path::new(".") } else { self.folder };
        let path = folder.join(relative_path);
        let outside = || {
            invalid(
                at,
                format!(
                    "`{reference}` is outside the config's folder `{}`; a config reads only the files beside it",
                    folder.display()
                ),
            )
        };
        let real_folder = std::fs::canonicalize(folder).map_err(|e| CaseErrorKind::Io(e.to_string()))?;
        let real = std::fs::canonicalize(&path)
            .map_err(|e| CaseErrorKind::Io(format!("`{reference}` (`{}`): {e}", path.display())))?;
        if !real.starts_with(&real_folder) {
            return Err(outside());
        }
        Ok(real)
    }

    /// A referenced file's text.
    fn text(&self, reference: &str) -> Result<(PathBuf, String), CaseErrorKind> {
        let path = self.resolve(reference)?;
        let text = read_capped(self.access, &path, MAX_REFERENCED_BYTES, "files a promptfoo config references")?;
        Ok((path, text))
    }

    /// A referenced YAML or JSON file's value.
    fn value(&self, reference: &str) -> Result<Value, CaseErrorKind> {
        let (path, text) = self.text(reference)?;
        parse_yaml(&text).map_err(|e| invalid(reference, format!("`{}`: {e}", path.display())))
    }
}

/// `prompts`: a string, or a list of strings and `{raw|id, label}` objects.
fn read_prompts(prompts: Option<&Value>, files: &Files<'_>) -> Result<Vec<Prompt>, CaseErrorKind> {
    let entries = match prompts {
        None => return Err(invalid("prompts", "the config has no prompts\n\nConsider `prompts: ['{{question}}']`")),
        Some(Value::Array(entries)) => entries.clone(),
        Some(single @ Value::String(_)) => vec![single.clone()],
        Some(other) => {
            return Err(invalid("prompts", format!("it is {}, not a list of prompts", describe_json(other))));
        }
    };
    let mut out = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let at = format!("prompts[{i}]");
        let (text, label) = match entry {
            Value::String(text) => (text, None),
            Value::Object(object) => {
                let text = object.get("raw").or_else(|| object.get("id")).and_then(Value::as_str);
                let Some(text) = text else {
                    return Err(invalid(&at, "a prompt object needs `raw` (the prompt) or `id` (a `file://` path)"));
                };
                let label = object.get("label").and_then(Value::as_str).map(str::to_owned);
                (text.to_owned(), label)
            }
            other => return Err(invalid(&at, format!("it is {}, not a prompt", describe_json(&other)))),
        };
        if let Some(reference) = text.strip_prefix("file://").map(|_| text.as_str()) {
            let extension = Path::new(reference).extension().and_then(|x| x.to_str()).unwrap_or("");
            if ["js", "cjs", "mjs", "ts", "py"].contains(&extension) {
                return Err(invalid(
                    &at,
                    format!("`{reference}` is a prompt function, which assay does not run; write the prompt as text"),
                ));
            }
            let (_, contents) = files.text(reference)?;
            let name = reference.trim_start_matches("file://");
            // promptfoo splits a text file's prompts on lines of `---`.
            for piece in contents.split("\n---\n").map(str::trim).filter(|p| !p.is_empty()) {
                let label = label.clone().unwrap_or_else(|| format!("{name}: {piece}"));
                out.push(prompt(piece.to_owned(), label));
            }
            continue;
        }
        let label = label.unwrap_or_else(|| text.clone());
        out.push(prompt(text, label));
    }
    if out.is_empty() {
        return Err(invalid("prompts", "the list is empty"));
    }
    Ok(out)
}

fn prompt(raw: String, label: String) -> Prompt {
    let template = NunjucksTemplate::parse(&raw);
    Prompt { raw, label, template }
}

/// `providers`: a string, or a list of strings, `{id, label, config}`
/// objects and `{ID: {label, config}}` maps.
fn read_providers(providers: Option<&Value>) -> Result<Vec<ProviderEntry>, CaseErrorKind> {
    let entries = match providers {
        None => {
            return Err(invalid("providers", "the config has no providers\n\nConsider `providers: [echo]`"));
        }
        Some(Value::Array(entries)) => entries.clone(),
        Some(single @ Value::String(_)) => vec![single.clone()],
        Some(other) => {
            return Err(invalid("providers", format!("it is {}, not a list of providers", describe_json(other))));
        }
    };
    let mut out = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let at = format!("providers[{i}]");
        let (id, mut object) = match entry {
            Value::String(id) => (id, Map::new()),
            Value::Object(object) => match object.get("id").and_then(Value::as_str) {
                Some(id) => (id.to_owned(), object),
                None if object.len() == 1 => {
                    let (id, body) = object.into_iter().next().expect("one entry");
                    match body {
                        Value::Object(body) => (id, body),
                        Value::Null => (id, Map::new()),
                        other => {
                            return Err(invalid(
                                &at,
                                format!("`{id}` holds {}, not its settings", describe_json(&other)),
                            ));
                        }
                    }
                }
                None => return Err(invalid(&at, "a provider object needs an `id`")),
            },
            other => return Err(invalid(&at, format!("it is {}, not a provider", describe_json(&other)))),
        };
        if id.starts_with("file://") {
            return Err(invalid(&at, format!("`{id}`: providers from files are not supported; write it out here")));
        }
        let label = object.remove("label").and_then(|l| l.as_str().map(str::to_owned));
        let config = match object.remove("config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(config)) => config,
            Some(other) => {
                return Err(invalid(
                    &format!("{at}.config"),
                    format!("it is {}, not a mapping", describe_json(&other)),
                ));
            }
        };
        for key in ["transform", "delay", "env"] {
            if object.contains_key(key) {
                return Err(invalid(&format!("{at}.{key}"), format!("a provider's `{key}` is not supported")));
            }
        }
        out.push(ProviderEntry { id, label, config });
    }
    if out.is_empty() {
        return Err(invalid("providers", "the list is empty"));
    }
    Ok(out)
}

/// `tests`: a list of tests and `file://` references, or one reference.
fn read_tests(tests: Option<&Value>, files: &Files<'_>) -> Result<Vec<Value>, CaseErrorKind> {
    let entries = match tests {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries.clone(),
        Some(single @ Value::String(_)) => vec![single.clone()],
        Some(other) => return Err(invalid("tests", format!("it is {}, not a list of tests", describe_json(other)))),
    };
    let mut out = Vec::new();
    for entry in entries {
        match entry {
            Value::String(reference) if reference.starts_with("file://") => out.extend(test_file(&reference, files)?),
            Value::String(other) => {
                return Err(invalid("tests", format!("`{other}` is neither a test nor a `file://` reference")));
            }
            test => out.push(test),
        }
    }
    Ok(out)
}

/// The tests of a `file://` test file: CSV (a row per test), JSONL (a
/// test per line), YAML or JSON (a list of tests).
fn test_file(reference: &str, files: &Files<'_>) -> Result<Vec<Value>, CaseErrorKind> {
    let (path, text) = files.text(reference)?;
    let extension = path.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase();
    let located = |message: String| invalid(reference, format!("`{}`: {message}", path.display()));
    match extension.as_str() {
        "csv" => {
            let rows = crate::formats::promptfoo::csv::parse(&text).map_err(located)?;
            Ok(rows.into_iter().map(|row| Value::Object(crate::formats::promptfoo::csv::test_of_row(row))).collect())
        }
        "jsonl" => text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| {
                serde_json::from_str(line).map_err(|e| located(format!("line {}: it is not JSON ({e})", i + 1)))
            })
            .collect(),
        "yaml" | "yml" | "json" => match parse_yaml(&text).map_err(|e| located(e.to_string()))? {
            Value::Array(tests) => Ok(tests),
            test @ Value::Object(_) => Ok(vec![test]),
            other => Err(located(format!("it holds {}, not a list of tests", describe_json(&other)))),
        },
        other => Err(located(format!("`.{other}` test files are not supported; use CSV, JSONL, YAML or JSON"))),
    }
}

/// One written test, `defaultTest` merged, as one test per combination of
/// its list-valued vars (unless `options.disableVarExpansion`).
/// `Err` when it would make more than `room` tests (its combinations are
/// counted before any is made).
fn expand_test(
    index: usize,
    default_test: &Map<String, Value>,
    test: Map<String, Value>,
    room: usize,
    out: &mut Vec<Test>,
) -> Result<(), ()> {
    let merged = merge(index, default_test, test);
    let expand = !merged.options.get("disableVarExpansion").and_then(Value::as_bool).unwrap_or(false);
    let count = if expand { combination_count(&merged.vars) } else { 1 };
    if count > room {
        return Err(());
    }
    let combinations = if expand { combinations(&merged.vars) } else { vec![merged.vars.clone()] };
    if combinations.len() == 1 {
        out.push(Test { vars: combinations.into_iter().next().expect("one"), ..merged });
        return Ok(());
    }
    for (i, vars) in combinations.into_iter().enumerate() {
        out.push(Test { vars, combination: Some(i), ..merged.clone() });
    }
    Ok(())
}

/// How many combinations [`combinations`] makes, saturating.
fn combination_count(vars: &Map<String, Value>) -> usize {
    vars.values()
        .map(|value| match value {
            Value::Array(items) if items.first().is_some_and(Value::is_string) => items.len(),
            _ => 1,
        })
        .fold(1usize, usize::saturating_mul)
}

/// promptfoo's `generateVarCombinations`: a var holding a list of strings
/// takes each in turn (a list of anything else is one value).
fn combinations(vars: &Map<String, Value>) -> Vec<Map<String, Value>> {
    let mut combinations = vec![Map::new()];
    for (key, value) in vars {
        let values: Vec<Value> = match value {
            Value::Array(items) if items.first().is_some_and(Value::is_string) => items.clone(),
            other => vec![other.clone()],
        };
        // An empty list, as promptfoo's loop does, leaves no combination.
        combinations = combinations
            .into_iter()
            .flat_map(|combination| {
                values.iter().map(move |value| {
                    let mut next = combination.clone();
                    next.insert(key.clone(), value.clone());
                    next
                })
            })
            .collect();
    }
    combinations
}

/// A test with `defaultTest` merged in as promptfoo merges it: vars and
/// options of the test win, assertions are the default's then the test's,
/// the threshold is the test's or the default's.
fn merge(index: usize, default_test: &Map<String, Value>, mut test: Map<String, Value>) -> Test {
    let mut error = None;
    let mut object = |test: &mut Map<String, Value>, key: &str, default: bool| -> Map<String, Value> {
        match test.remove(key) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(other) => {
                let whose = if default { "defaultTest" } else { "the test" };
                error.get_or_insert(format!("{whose}'s `{key}` is {}, not a mapping", describe_json(&other)));
                Map::new()
            }
        }
    };
    let mut default_test = default_test.clone();
    let mut vars = object(&mut default_test, "vars", true);
    vars.extend(object(&mut test, "vars", false));
    let mut options = object(&mut default_test, "options", true);
    options.extend(object(&mut test, "options", false));
    let mut asserts = Vec::new();
    for (whose, source) in [("defaultTest", &mut default_test), ("the test", &mut test)] {
        match source.remove("assert") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                for entry in list {
                    match entry {
                        Value::Object(assertion) => asserts.push(assertion),
                        other => {
                            error.get_or_insert(format!(
                                "an `assert` entry of {whose} is {}, not an assertion",
                                describe_json(&other)
                            ));
                        }
                    }
                }
            }
            Some(other) => {
                error.get_or_insert(format!("{whose}'s `assert` is {}, not a list", describe_json(&other)));
            }
        }
    }
    let threshold_of = |test: &Map<String, Value>| test.get("threshold").and_then(Value::as_f64);
    let threshold = threshold_of(&test).or_else(|| threshold_of(&default_test));
    let description = test.get("description").and_then(|d| d.as_str().map(str::to_owned));
    for key in ["provider", "providerOutput", "providers", "prompts"] {
        if test.contains_key(key) {
            error.get_or_insert(format!(
                "a test's `{key}` is not supported; every test runs on every prompt and provider"
            ));
        }
    }
    Test { description, index, combination: None, vars, asserts, threshold, options, error }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_assertion_template_is_parsed_once_for_every_test_and_combination() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("promptfooconfig.yaml");
        let config = "prompts: ['{{topic}}']\nproviders: [echo]\ndefaultTest:\n  assert: [{type: contains, value: '{{topic}}', metric: '{{ topic | upper }} hits'}]\ntests:\n  - vars: {topic: [cats, dogs, owls]}\n    assert: [{type: contains-any, value: ['{{ topic }}', fish, '{{ x']}]\n";
        std::fs::write(&path, config).unwrap();
        let config = read(&FileAccess::anywhere(), &path).unwrap();
        assert_eq!(config.tests.len(), 3);
        // Four templates, whatever the number of cases; `fish` is text.
        let mut sources: Vec<&str> = config.assert_templates.sources().collect();
        sources.sort();
        assert_eq!(sources, ["{{ topic | upper }} hits", "{{ topic }}", "{{ x", "{{topic}}"]);
        let vars = json!({"topic": "owls"});
        let vars = vars.as_object().unwrap();
        assert_eq!(config.assert_templates.render("{{ topic | upper }} hits", vars).unwrap(), "OWLS hits");
        assert!(config.assert_templates.render("{{ x", vars).unwrap_err().starts_with("syntax error"));
        // A string it has not seen is parsed when asked for.
        assert_eq!(config.assert_templates.render("{{ topic }}!", vars).unwrap(), "owls!");
    }
}
