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

use crate::case::{FileAccess, KeyLines, TooLarge};
use crate::errors::{CaseErrorKind, describe_json};
use crate::formats::promptfoo::asserts::AssertTemplates;
use crate::formats::promptfoo::derived::DerivedMetric;
use crate::formats::promptfoo::javascript::{self, AssertScripts, ComputeValue, ScriptReference};
use crate::formats::promptfoo::python::{self, PythonFiles};
use crate::formats::yaml_lines;
use crate::template::NunjucksTemplate;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// The `.py` files of the tests' `python` assertions, read once.
    pub python_files: PythonFiles,
    /// The `file://` modules of the tests' `javascript` assertions, read
    /// once.
    pub assert_scripts: AssertScripts,
    /// `derivedMetrics`, in order.
    pub derived_metrics: Vec<DerivedMetric>,
}

impl Config {
    /// The metric each assertion of `test` names (its `metric`, rendered
    /// with the test's vars), in order.
    pub fn metrics(&self, test: &Test) -> Vec<Option<String>> {
        test.asserts
            .iter()
            .map(|assertion| {
                let metric = assertion.get("metric")?.as_str()?;
                Some(self.assert_templates.render(metric, &test.vars).unwrap_or_else(|_| metric.to_owned()))
            })
            .collect()
    }
}

/// One prompt.
#[derive(Debug)]
pub struct Prompt {
    /// The prompt as written.
    pub raw: String,
    /// Its label: `label`, else the raw text (or `FILE: text` for one read
    /// from a file), as promptfoo shows it.
    pub label: String,
    /// Its `id`, when the config gives one beside the text (`{id, raw}`).
    pub id: Option<String>,
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
    /// `prompts`: the labels of the prompts it runs (all when `None`).
    pub prompts: Option<Vec<String>>,
}

impl ProviderEntry {
    /// How it is named in ids and reports: its label, else its id.
    pub fn name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.id)
    }

    /// Whether it runs `prompt`, as promptfoo's `isAllowedPrompt` decides
    /// ([`prompt_allowed`]).
    pub fn runs(&self, prompt: &Prompt) -> bool {
        prompt_allowed(self.prompts.as_deref(), prompt)
    }
}

/// promptfoo's `isAllowedPrompt`: every prompt when `refs` is `None`, none
/// when it is empty, else one that a ref names by label or id, exactly,
/// as the start of `LABEL:` (a file's prompts), or by a prefix ending `*`.
pub fn prompt_allowed(refs: Option<&[String]>, prompt: &Prompt) -> bool {
    let names = [Some(prompt.label.as_str()), prompt.id.as_deref()];
    refs.is_none_or(|refs| refs.iter().any(|reference| names.iter().flatten().any(|name| ref_matches(reference, name))))
}

/// promptfoo's `isProviderAllowed`: every provider when `refs` is `None`,
/// none when it is empty, else one that a ref names by label or id, as
/// [`prompt_allowed`] matches.
pub fn provider_allowed(refs: Option<&[String]>, provider: &ProviderEntry) -> bool {
    let names = [provider.label.as_deref(), Some(provider.id.as_str())];
    refs.is_none_or(|refs| refs.iter().any(|reference| names.iter().flatten().any(|name| ref_matches(reference, name))))
}

/// Whether `reference` names `name`: equal, a prefix ending `*`, or the
/// start of `name` followed by `:`.
fn ref_matches(reference: &str, name: &str) -> bool {
    name == reference
        || reference.strip_suffix('*').is_some_and(|prefix| name.starts_with(prefix))
        || name.strip_prefix(reference).is_some_and(|rest| rest.starts_with(':'))
}

/// Whether an assertion of type `kind` compares a test's outputs with one
/// another (`select-best`, `max-score`: `compare.rs`).
pub fn is_comparison(kind: &str) -> bool {
    matches!(kind.strip_prefix("not-").unwrap_or(kind), "select-best" | "max-score")
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
    /// The assertions, `defaultTest`'s first (shared by every test: 10,000
    /// tests of a config keep one copy of them).
    pub asserts: Vec<Arc<Map<String, Value>>>,
    /// The test-level `threshold`.
    pub threshold: Option<f64>,
    /// `options` (promptfoo's `prefix`, `suffix`, `rubricPrompt`, …).
    pub options: Map<String, Value>,
    /// `prompts`: the prompts it runs on (all when `None`), by label or id
    /// ([`prompt_allowed`]); the test's, else `defaultTest`'s.
    pub prompts: Option<Vec<String>>,
    /// `providers`: the providers it runs on (all when `None`), by label or
    /// id ([`provider_allowed`]); the test's, else `defaultTest`'s.
    pub providers: Option<Vec<String>>,
    /// `assertScoringFunction` (the test's, else `defaultTest`'s): the
    /// `file://` function of the assertions' named scores that decides the
    /// test.
    pub scoring: Option<String>,
    /// Why the test cannot run, if it cannot (a case error naming it).
    pub error: Option<String>,
    /// The config's line of each assertion, when it is written there
    /// (not in a `file://` test file or `defaultTest`).
    pub assert_lines: Vec<Option<u32>>,
}

impl Test {
    /// How many of its assertions are `select-best` or `max-score`, which
    /// come last (see `put_comparisons_last`).
    pub fn comparison_count(&self) -> usize {
        let kinds = self.asserts.iter().filter_map(|a| a.get("type").and_then(Value::as_str));
        kinds.filter(|kind| is_comparison(kind)).count()
    }

    /// Moves its `select-best` and `max-score` assertions (and their
    /// lines) after the others, in order: promptfoo decides them last and
    /// lists their results last.
    fn put_comparisons_last(&mut self) {
        let is_comparison = |a: &Map<String, Value>| a.get("type").and_then(Value::as_str).is_some_and(is_comparison);
        let mut order: Vec<usize> = (0..self.asserts.len()).collect();
        order.sort_by_key(|&i| is_comparison(&self.asserts[i]));
        let asserts = order.iter().map(|&i| self.asserts[i].clone()).collect();
        self.assert_lines = order.iter().map(|&i| self.assert_lines.get(i).copied().flatten()).collect();
        self.asserts = asserts;
    }

    /// Its `options.transform` (or the older `options.postprocess`): what
    /// promptfoo runs on the answer before every assertion.
    pub fn output_transform(&self) -> Option<&Value> {
        self.options.get("transform").or_else(|| self.options.get("postprocess"))
    }

    /// The test as promptfoo's script assertions see it in
    /// `context.test`: its `description`, `vars`, `assert`, `options` and
    /// `threshold`.
    pub fn context_object(&self) -> Value {
        let mut test = Map::new();
        if let Some(description) = &self.description {
            test.insert("description".into(), Value::String(description.clone()));
        }
        test.insert("vars".into(), Value::Object(self.vars.clone()));
        test.insert("assert".into(), Value::Array(self.asserts.iter().map(|a| Value::Object(Map::clone(a))).collect()));
        test.insert("options".into(), Value::Object(self.options.clone()));
        if let Some(threshold) = self.threshold {
            test.insert("threshold".into(), serde_json::json!(threshold));
        }
        Value::Object(test)
    }
}

/// Top-level keys that change what a config means and that assay does not
/// do, with why.
const REFUSED_KEYS: &[(&str, &str)] = &[
    ("scenarios", "scenarios are not supported; write their tests out under `tests`"),
    ("extensions", "extensions are JavaScript or Python hooks, which assay does not run"),
    ("nunjucksFilters", "custom Nunjucks filters are JavaScript, which assay does not run"),
];

/// The top-level keys assay reads; any other is refused, so that nothing a
/// config says is silently ignored. `description`, `sharing`,
/// `outputPath`, `writeLatestResults`, `evaluateOptions`, `env` and
/// `metadata` change no verdict and are accepted as they are.
const KNOWN_KEYS: &[&str] = &[
    "prompts",
    "providers",
    "targets",
    "tests",
    "defaultTest",
    "description",
    "sharing",
    "outputPath",
    "writeLatestResults",
    "evaluateOptions",
    "metadata",
    "tags",
    "$schema",
    "assertionTemplates",
    "derivedMetrics",
];

/// The `evaluateOptions` that change no verdict (assay's `--jobs` decides
/// concurrency); `repeat` and the others are refused.
const EVALUATE_OPTIONS: &[&str] = &["maxConcurrency", "showProgressBar", "cache", "delay"];

/// The keys of a test assay reads; `metadata` changes no verdict and is
/// accepted as it is.
const TEST_KEYS: &[&str] = &[
    "vars",
    "assert",
    "options",
    "description",
    "threshold",
    "metadata",
    "prompts",
    "providers",
    "assertScoringFunction",
];

/// The `options` of a test assay reads, and those it refuses with why.
const TEST_OPTIONS: &[&str] = &[
    "prefix",
    "suffix",
    "rubricPrompt",
    "disableVarExpansion",
    "runSerially",
    "cache",
    "provider",
    "transformVars",
    "transform",
    "postprocess",
    "storeOutputAs",
];

fn invalid(path: &str, message: impl Into<String>) -> CaseErrorKind {
    CaseErrorKind::Invalid { path: path.to_owned(), message: message.into() }
}

/// The top-level keys one of which makes a YAML or JSON file a promptfoo
/// config.
const CONFIG_KEYS: &[&str] = &["prompts", "providers", "targets", "tests"];

/// Whether `path` is a promptfoo config: a JavaScript or TypeScript module
/// (named by path, it can be nothing else), or a `.yaml`, `.yml` or `.json`
/// file whose top level is a mapping with `prompts`, `providers`,
/// `targets` or `tests`, written block-style (`prompts:` at column 0) or
/// flow-style (`{"prompts": …}`, JSON).
pub fn is_config(path: &Path, access: &FileAccess) -> bool {
    use std::io::Read;
    if javascript::is_module(path) {
        // A config written in JavaScript or TypeScript, named by path: its
        // module runs sandboxed when it is read.
        return true;
    }
    let readable = path.extension().is_some_and(|x| x == "yaml" || x == "yml" || x == "json");
    if !readable {
        return false;
    }
    // The top level's keys, from the file's head. Cheap whatever the file's
    // size (the reader applies the cap), and a file that is not YAML is
    // left to its reader.
    let mut head = Vec::new();
    let Ok(file) = access.open(path) else { return false };
    if file.take(64 << 10).read_to_end(&mut head).is_err() {
        return false;
    }
    let head = String::from_utf8_lossy(&head);
    if head.lines().any(|line| CONFIG_KEYS.iter().any(|key| line.strip_prefix(key).is_some_and(|r| r.starts_with(':'))))
    {
        return true;
    }
    flow_keys(&head).any(|key| CONFIG_KEYS.contains(&key))
}

/// The keys of a flow-style (or JSON) mapping at the start of `text`, at
/// its top level only, as far as `text` goes: `{"a": [{"b": 1}], c: 2}`
/// gives `a` and `c`.
fn flow_keys(text: &str) -> impl Iterator<Item = &str> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    let body = body.strip_prefix('{').unwrap_or("");
    let mut keys = Vec::new();
    let (mut depth, mut quote, mut escaped, mut expecting_key) = (0usize, None::<char>, false, true);
    let mut key_start = None;
    for (i, c) in body.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                if depth == 0 && expecting_key {
                    key_start = Some(i + 1);
                }
            }
            '{' | '[' => depth += 1,
            '}' | ']' if depth == 0 => break,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => expecting_key = true,
            ':' if depth == 0 && expecting_key => {
                expecting_key = false;
                let key = match key_start.take() {
                    Some(start) => body[start..i].trim_end().trim_end_matches(['"', '\'']),
                    None => body[..i].rsplit([',', '{']).next().unwrap_or("").trim(),
                };
                keys.push(key);
            }
            _ => {}
        }
    }
    keys.into_iter()
}

/// Reads the config at `path`, and the files it references, through
/// `access`; its JavaScript (a config or tests module, `transformVars`)
/// runs sandboxed through `compute`.
pub fn read(access: &FileAccess, path: &Path, compute: ComputeValue<'_>) -> Result<Config, CaseErrorKind> {
    let text = read_capped(access, path, MAX_CONFIG_BYTES, "promptfoo configs")?;
    let mut root = if javascript::is_module(path) {
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let ran = javascript::import(compute, &name, &text, None, &[])
            .map_err(|e| invalid("(file)", format!("its module, run sandboxed, failed: {e}")))?;
        ran.ok_or_else(|| {
            invalid("(file)", "its module exports nothing; export the config (`module.exports =` or `export default`)")
        })?
    } else if path.extension().is_some_and(|x| x == "json") {
        serde_json::from_str(&text).map_err(|e| invalid("(file)", format!("it is not JSON: {e}")))?
    } else {
        parse_yaml(&text)?
    };
    let key_lines = match javascript::is_module(path) {
        true => KeyLines::NONE,
        false => yaml_lines::key_lines(&text, is_assertion_path),
    };
    resolve_refs(&mut root)?;
    let Value::Object(root) = root else {
        return Err(invalid("(file)", "its top level is not a mapping of `prompts`, `providers` and `tests`"));
    };
    for (key, why) in REFUSED_KEYS {
        if root.contains_key(*key) {
            return Err(invalid(key, *why));
        }
    }
    if let Some(Value::Object(options)) = root.get("evaluateOptions")
        && let Some(key) = options.keys().find(|key| !EVALUATE_OPTIONS.contains(&key.as_str()))
    {
        return Err(invalid(
            &format!("evaluateOptions.{key}"),
            format!(
                "it is not supported; assay reads {} (and its own flags, e.g. --jobs)",
                EVALUATE_OPTIONS.join(", ")
            ),
        ));
    }
    if let Some(key) = root.keys().find(|key| !KNOWN_KEYS.contains(&key.as_str())) {
        // promptfoo warns of a key it does not know and goes on without it
        // (a misspelt `defaultTest` loses every assertion in it): here it
        // is refused, with the key it most likely meant.
        let meant = crate::suggest::nearest(key, KNOWN_KEYS.iter().copied()).or_else(|| {
            KNOWN_KEYS.iter().filter(|known| key.starts_with(**known)).max_by_key(|k| k.len()).map(|k| k.to_string())
        });
        let hint = meant.map(|meant| format!(" (did you mean `{meant}`?)")).unwrap_or_default();
        return Err(invalid(
            key,
            format!("`{key}` is not a promptfoo config key assay reads{hint}; it reads {}", KNOWN_KEYS.join(", ")),
        ));
    }
    let providers = match (root.get("providers"), root.get("targets")) {
        (Some(_), Some(_)) => {
            return Err(invalid("targets", "the config has both `providers` and `targets` (its alias): keep one"));
        }
        (providers, targets) => providers.or(targets),
    };
    let folder = path.parent().unwrap_or(Path::new(""));
    let files = Files { folder, access };
    let prompts = read_prompts(root.get("prompts"), &files)?;
    let providers = read_providers(providers, &files)?;
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
    let written = read_tests(root.get("tests"), &files, compute)?;
    let default_asserts = match default_test.get("assert") {
        Some(Value::Array(list)) => list.iter().filter(|entry| entry.is_object()).count(),
        _ => 0,
    };
    let default_test = DefaultTest::new(default_test);
    let mut tests = Vec::new();
    for (index, (test, written_at)) in written.into_iter().enumerate() {
        let expanded = tests.len();
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
        let transform_vars = |test: &mut Test| transform_vars(test, &files, compute);
        expand_test(index, &default_test, test, room, &transform_vars, &mut tests).map_err(|_| {
            invalid(
                &format!("tests[{index}]"),
                format!(
                    "the config expands into over {MAX_CASES} cases (prompts × providers × tests × var combinations)"
                ),
            )
        })?;
        for test in &mut tests[expanded..] {
            let line = |i: usize| match i.checked_sub(default_asserts) {
                None => key_lines.line_of(&format!("defaultTest.assert[{i}]")),
                Some(own) => written_at.and_then(|at| key_lines.line_of(&format!("tests[{at}].assert[{own}]"))),
            };
            test.assert_lines = (0..test.asserts.len()).map(line).collect();
        }
    }
    if tests.is_empty() {
        // promptfoo runs each prompt once with no vars when there are no tests.
        tests.push(merge(0, &default_test, Map::new()));
    }
    for test in &mut tests {
        test.put_comparisons_last();
    }
    let mut loaded = HashMap::new();
    let var_functions = VarFunctions { files: &files, prompts: &prompts, compute };
    for test in &mut tests {
        if let Err(message) = load_file_vars(&mut test.vars, &files, &mut loaded, &var_functions) {
            test.error.get_or_insert(message);
        }
    }
    for (i, provider) in providers.iter().enumerate() {
        for name in provider.prompts.iter().flatten() {
            let named = |prompt: &Prompt| prompt.label == *name || prompt.label.starts_with(&format!("{name}:"));
            if !prompts.iter().any(named) {
                let labels: Vec<String> = prompts.iter().map(|p| format!("{:?}", p.label)).collect();
                return Err(invalid(
                    &format!("providers[{i}].prompts"),
                    format!("`{name}` names no prompt; the prompts' labels are {}", labels.join(", ")),
                ));
            }
        }
    }
    let assert_templates = AssertTemplates::of(tests.iter().flat_map(|test| test.asserts.iter().map(|a| &**a)));
    let python_files = PythonFiles::read(tests.iter().flat_map(|test| test.asserts.iter().map(|a| &**a)), |reference| {
        files.text(reference).map(|(_, text)| text).map_err(|e| e.to_string())
    });
    let read_script = |reference: &str| {
        files.text(reference).map(|(_, text)| text).map_err(|error| match error {
            CaseErrorKind::Invalid { message, .. } => message,
            other => other.to_string(),
        })
    };
    let mut assert_scripts = AssertScripts::read(tests.iter().flat_map(|test| test.asserts.iter().map(|a| &**a)), read_script);
    let transforms = tests.iter().flat_map(|test| {
        let assertion_transforms = test.asserts.iter().filter_map(|assertion| assertion.get("transform"));
        let transforms = test.output_transform().into_iter().chain(assertion_transforms).filter_map(Value::as_str);
        transforms.chain(test.scoring.as_deref())
    });
    assert_scripts.read_more(transforms, read_script);
    let derived_metrics = read_derived_metrics(root.get("derivedMetrics"))?;
    Ok(Config { prompts, providers, tests, assert_templates, python_files, assert_scripts, derived_metrics })
}

/// `derivedMetrics`: a list of `{name, value}`, each value an expression
/// ([`DerivedMetric::parse`]).
fn read_derived_metrics(value: Option<&Value>) -> Result<Vec<DerivedMetric>, CaseErrorKind> {
    let entries = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries,
        Some(other) => {
            return Err(invalid("derivedMetrics", format!("it is {}, not a list", describe_json(other))));
        }
    };
    let mut metrics = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("derivedMetrics[{i}]");
        let name = entry.get("name").and_then(Value::as_str);
        let Some(name) = name.filter(|name| !name.is_empty()) else {
            return Err(invalid(&at, "a derived metric needs a `name`"));
        };
        let Some(text) = entry.get("value").and_then(Value::as_str) else {
            return Err(invalid(&at, "its `value` must be an expression over the named scores, e.g. `(A + B) / 2`"));
        };
        metrics.push(DerivedMetric::parse(name, text).map_err(|why| invalid(&at, format!("`{text}`: {why}")))?);
    }
    Ok(metrics)
}

/// The most values `$ref`s may copy into one config, counted node by node
/// (a reference may hold others: without a bound, a few lines expand
/// without end).
const MAX_REF_NODES: usize = 1_000_000;

/// Replaces every `{"$ref": "#/a/b"}` of the config with the value that
/// JSON pointer names in it, as promptfoo dereferences a config (its
/// `$ref`s to other files are refused: a config reads files only through
/// `file://`). A reference that names nothing, or that loops, is an error.
fn resolve_refs(root: &mut Value) -> Result<(), CaseErrorKind> {
    fn walk(value: &mut Value, document: &Value, depth: usize, budget: &mut usize) -> Result<(), CaseErrorKind> {
        if let Value::Object(map) = value
            && let Some(Value::String(reference)) = map.get("$ref")
        {
            let reference = reference.clone();
            let Some(pointer) = reference.strip_prefix('#') else {
                return Err(invalid(
                    "$ref",
                    format!("`{reference}` names another file; only references into the config (`#/…`) are read"),
                ));
            };
            if depth > 32 {
                return Err(invalid("$ref", format!("`{reference}`: references nest too deep (a loop?)")));
            }
            let Some(target) = document.pointer(pointer) else {
                return Err(invalid("$ref", format!("`{reference}` names nothing in the config")));
            };
            *budget = budget.checked_sub(nodes(target)).ok_or_else(|| {
                invalid("$ref", format!("the references expand the config past {MAX_REF_NODES} values"))
            })?;
            *value = target.clone();
            return walk(value, document, depth + 1, budget);
        }
        match value {
            Value::Array(items) => items.iter_mut().try_for_each(|item| walk(item, document, depth, budget)),
            Value::Object(map) => map.values_mut().try_for_each(|item| walk(item, document, depth, budget)),
            _ => Ok(()),
        }
    }
    if !contains_ref(root) {
        return Ok(());
    }
    let document = root.clone();
    walk(root, &document, 0, &mut MAX_REF_NODES.clone())
}

/// How many values `value` holds, itself included.
fn nodes(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nodes).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(nodes).sum::<usize>(),
        _ => 1,
    }
}

/// Whether `value` holds a `$ref` anywhere.
fn contains_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(contains_ref),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
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
    /// The references a `file://` glob stands for (`file://tests/*.yaml`),
    /// sorted: the files it matches in the config's folder (no `..`, no
    /// absolute path; listed through the config's access); a glob matching
    /// nothing is an error.
    fn expand_glob(&self, reference: &str) -> Result<Vec<String>, CaseErrorKind> {
        let relative = reference.trim_start_matches("file://");
        let at = "file://";
        let path = Path::new(relative);
        if path.is_absolute() || path.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            return Err(invalid(at, format!("`{reference}`: a glob must stay in the config's folder (no `..`)")));
        }
        let folder = if self.folder.as_os_str().is_empty() { Path::new(".") } else { self.folder };
        let pattern = folder.join(relative);
        let matched = crate::case::glob_files(self.access, &pattern.to_string_lossy())
            .map_err(|e| invalid(at, format!("`{reference}`: {e}")))?;
        if matched.is_empty() {
            return Err(invalid(at, format!("`{reference}` matches no file in the config's folder")));
        }
        Ok(matched
            .iter()
            .filter_map(|path| path.strip_prefix(folder).ok())
            .map(|path| format!("file://{}", path.to_string_lossy()))
            .collect())
    }

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
        if self.access.root().is_some() {
            // Beneath a served root, nothing is looked up here (whether a
            // file out of the folder exists is not for a client to learn):
            // `..` may not leave the folder, and the read itself is confined.
            let mut lexical = folder.to_path_buf();
            for component in relative_path.components() {
                match component {
                    std::path::Component::ParentDir if lexical == folder => return Err(outside()),
                    std::path::Component::ParentDir => {
                        lexical.pop();
                    }
                    std::path::Component::Normal(name) => lexical.push(name),
                    _ => {}
                }
            }
            return Ok(lexical);
        }
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

/// promptfoo's `file://` vars (`renderPrompt`), read now: a var whose
/// value is `file://PATH` becomes the file's text, trimmed; a YAML file's
/// value as JSON text; an image's bytes in base64; a JavaScript or Python
/// file is a var function, run sandboxed ([`VarFunctions`]). A PDF and a
/// glob are refused, naming the var. `loaded` keeps what each file gave,
/// for the tests that share it.
fn load_file_vars(
    vars: &mut Map<String, Value>,
    files: &Files<'_>,
    loaded: &mut HashMap<String, Result<String, String>>,
    functions: &VarFunctions<'_>,
) -> Result<(), String> {
    let names: Vec<String> = vars.keys().cloned().collect();
    for name in names {
        let Some(Value::String(reference)) = vars.get(&name) else { continue };
        if !reference.starts_with("file://") {
            continue;
        }
        let reference = reference.clone();
        let located = |e: String| format!("its var `{name}` (`{reference}`): {e}");
        let value = match VarFunctions::language(&reference) {
            // promptfoo resolves the vars in order: a function sees the
            // ones before it resolved.
            Some(language) => functions.value(&name, &reference, language, vars).map_err(located)?,
            None => {
                let text = loaded.entry(reference.clone()).or_insert_with(|| load_file_var(&reference, files));
                Value::String(text.clone().map_err(located)?)
            }
        };
        vars.insert(name, value);
    }
    Ok(())
}

/// promptfoo's var functions: a var whose value is `file://FILE.js` (the
/// module's function) or `file://FILE.py` (its `get_var`) is what the
/// function gives for `(name, prompt, vars)` — its `output`; an `error` it
/// gives is the test's error — run sandboxed. promptfoo calls it for each
/// prompt with that prompt's text; assay reads a test's vars once for
/// every prompt, so a function that gives different values for the
/// config's prompts is an error naming the var.
struct VarFunctions<'a> {
    files: &'a Files<'a>,
    prompts: &'a [Prompt],
    compute: ComputeValue<'a>,
}

/// The language of a var function.
#[derive(Clone, Copy)]
enum Language {
    JavaScript,
    Python,
}

impl VarFunctions<'_> {
    /// The language of the var function `reference` names, if it names one.
    fn language(reference: &str) -> Option<Language> {
        let path = Path::new(reference.strip_prefix("file://")?);
        match () {
            _ if javascript::is_module(path) => Some(Language::JavaScript),
            _ if python::is_python(path) => Some(Language::Python),
            _ => None,
        }
    }

    /// The value of var `name`, whose function `reference` names, given the
    /// test's `vars`.
    fn value(
        &self,
        name: &str,
        reference: &str,
        language: Language,
        vars: &Map<String, Value>,
    ) -> Result<Value, String> {
        let path = reference.strip_prefix("file://").unwrap_or(reference);
        let (_, source) = self.files.text(reference).map_err(|e| e.to_string())?;
        let mut raws: Vec<&str> = self.prompts.iter().map(|prompt| prompt.raw.as_str()).collect();
        raws.sort_unstable();
        raws.dedup();
        let mut value: Option<Value> = None;
        for raw in raws {
            let vars = Value::Object(vars.clone());
            let given = match language {
                Language::JavaScript => {
                    javascript::import(self.compute, path, &source, None, &[json!(name), json!(raw), vars])?
                }
                Language::Python => {
                    let expected = python::value_expected(path, &source, "get_var", false, json!([raw, vars]));
                    (self.compute)(python::VALUE_KEY, &json!(name), &expected)?
                }
            };
            let output = Self::output(given, language)?;
            match &value {
                Some(earlier) if *earlier != output => {
                    return Err(format!(
                        "it gives different values for the config's prompts ({} and {}), and assay reads a test's vars \
                         once for all of them; make it depend on the vars only",
                        describe_json(earlier),
                        describe_json(&output)
                    ));
                }
                _ => value = Some(output),
            }
        }
        value.ok_or_else(|| "the config has no prompt to call it with".to_owned())
    }

    /// The `output` of what a var function gave, as promptfoo reads it.
    fn output(given: Option<Value>, language: Language) -> Result<Value, String> {
        let given = given.unwrap_or(Value::Null);
        if let Some(error) = given.get("error").filter(|e| !e.is_null()) {
            let error = error.as_str().map_or_else(|| error.to_string(), str::to_owned);
            return Err(format!("it gave the error: {error}"));
        }
        let truthy = |value: &Value| match value {
            Value::Null => false,
            Value::Bool(flag) => *flag,
            Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
            Value::String(text) => !text.is_empty(),
            Value::Array(_) | Value::Object(_) => true,
        };
        match (given.get("output").filter(|o| truthy(o)), language) {
            (Some(Value::String(text)), Language::Python) => Ok(Value::String(text.trim().to_owned())),
            (Some(_), Language::Python) => Err("its `get_var` gave an `output` that is not a string".to_owned()),
            (Some(output), Language::JavaScript) => Ok(output.clone()),
            (None, _) => Err(format!("it gave {}, not {{output: …}}", describe_json(&given))),
        }
    }
}

/// What one `file://` var reference gives (see [`load_file_vars`]).
fn load_file_var(reference: &str, files: &Files<'_>) -> Result<String, String> {
    use base64::Engine;
    let extension = reference.rsplit('.').next().unwrap_or_default().to_ascii_lowercase();
    let extension = extension.split(':').next().unwrap_or_default();
    if extension == "pdf" {
        return Err("PDFs are not read as text by assay; put the text in a .txt file".into());
    }
    if reference.contains(['*', '?', '[']) {
        return Err("globs are not supported in vars; name one file".into());
    }
    let image =
        ["jpg", "jpeg", "png", "gif", "bmp", "webp", "svg", "mp4", "webm", "ogg", "mov", "avi", "wmv", "mkv", "m4v"];
    if image.contains(&extension) {
        let path = files.resolve(reference).map_err(|e| e.to_string())?;
        let bytes = files.access.read(&path, MAX_REFERENCED_BYTES).map_err(|e| format!("`{}`: {e}", path.display()))?;
        return Ok(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    let (path, text) = files.text(reference).map_err(|e| e.to_string())?;
    match extension {
        "yaml" | "yml" => {
            let value = parse_yaml(&text).map_err(|e| format!("`{}`: {e}", path.display()))?;
            Ok(value.to_string())
        }
        _ => Ok(text.trim().to_owned()),
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
        let (text, label, id) = match entry {
            Value::String(text) => (text, None, None),
            Value::Object(object) => {
                let raw = object.get("raw").and_then(Value::as_str);
                let id = object.get("id").and_then(Value::as_str);
                let Some(text) = raw.or(id) else {
                    return Err(invalid(&at, "a prompt object needs `raw` (the prompt) or `id` (a `file://` path)"));
                };
                let label = object.get("label").and_then(Value::as_str).map(str::to_owned);
                (text.to_owned(), label, raw.and(id).map(str::to_owned))
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
            if extension == "csv" {
                out.extend(csv_prompts(&contents, label.as_deref()));
                continue;
            }
            // promptfoo splits a text file's prompts on lines of `---`.
            for piece in contents.split("\n---\n").map(str::trim).filter(|p| !p.is_empty()) {
                let label = label.clone().unwrap_or_else(|| format!("{name}: {piece}"));
                out.push(prompt(piece.to_owned(), label, None));
            }
            continue;
        }
        let label = label.unwrap_or_else(|| text.clone());
        out.push(prompt(text, label, id));
    }
    if out.is_empty() {
        return Err(invalid("prompts", "the list is empty"));
    }
    Ok(out)
}

fn prompt(raw: String, label: String, id: Option<String>) -> Prompt {
    let template = NunjucksTemplate::parse(&raw);
    Prompt { raw, label, id, template }
}

/// The prompts of a CSV file, as promptfoo's `processCsvPrompts` reads
/// them: with a `prompt` column (and a `label` one), a prompt per row that
/// has one; a file without a comma (or one that is not CSV), a prompt per
/// non-empty line, a first line `prompt` being the header. A row without a
/// label is labelled `LABEL: TEXT` (the config's label), else `Prompt N -
/// TEXT`, made unique with ` (row N)`.
fn csv_prompts(contents: &str, base_label: Option<&str>) -> Vec<Prompt> {
    let table = match contents.contains(',') {
        true => super::csv::parse(contents).ok(),
        false => None,
    };
    let rows: Vec<(String, Option<String>)> = match table {
        Some(rows) => rows
            .into_iter()
            .filter_map(|row| {
                let cell = |name: &str| row.iter().find(|(column, _)| column == name).map(|(_, v)| v.trim().to_owned());
                let text = cell("prompt").filter(|text| !text.is_empty())?;
                Some((text, cell("label").filter(|label| !label.is_empty())))
            })
            .collect(),
        None => {
            let lines: Vec<&str> = contents.lines().filter(|line| !line.trim().is_empty()).collect();
            let skip = usize::from(lines.first().is_some_and(|line| line.trim().eq_ignore_ascii_case("prompt")));
            lines[skip..].iter().map(|line| ((*line).to_owned(), None)).collect()
        }
    };
    let many = rows.len() > 1;
    let mut used: std::collections::HashSet<String> = rows.iter().filter_map(|(_, label)| label.clone()).collect();
    let mut prompts = Vec::with_capacity(rows.len());
    for (index, (text, label)) in rows.into_iter().enumerate() {
        let label = label.unwrap_or_else(|| {
            let initial = match base_label {
                Some(base) if many => format!("{base}: {text}"),
                Some(base) => base.to_owned(),
                None => format!("Prompt {} - {text}", index + 1),
            };
            let mut label = initial.clone();
            let mut suffix = 1;
            while used.contains(&label) {
                let extra = if suffix > 1 { format!(".{suffix}") } else { String::new() };
                label = format!("{initial} (row {}{extra})", index + 1);
                suffix += 1;
            }
            used.insert(label.clone());
            label
        });
        prompts.push(prompt(text, label, None));
    }
    prompts
}

/// The provider config keys whose `file://` value is a YAML or JSON file's
/// value, as promptfoo loads them.
const FILE_CONFIG_KEYS: &[&str] = &["functions", "tools", "response_format"];

/// `providers`: a string, or a list of strings, `{id, label, config}`
/// objects and `{ID: {label, config}}` maps; a `file://` YAML or JSON file
/// holds one such object or a list of them, read in the config's folder.
fn read_providers(providers: Option<&Value>, files: &Files<'_>) -> Result<Vec<ProviderEntry>, CaseErrorKind> {
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
    let mut listed = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        let at = format!("providers[{i}]");
        let reference = entry.as_str().or_else(|| entry.get("id").and_then(Value::as_str)).unwrap_or_default();
        let extension = Path::new(reference).extension().and_then(|x| x.to_str()).unwrap_or("");
        if !(reference.starts_with("file://") && ["yaml", "yml", "json"].contains(&extension)) {
            listed.push((at, entry));
            continue;
        }
        match files.value(reference)? {
            Value::Array(inner) => {
                listed.extend(inner.into_iter().enumerate().map(|(k, e)| (format!("{at} ({reference}[{k}])"), e)));
            }
            inner @ Value::Object(_) => listed.push((format!("{at} ({reference})"), inner)),
            other => {
                return Err(invalid(&at, format!("`{reference}` holds {}, not a provider", describe_json(&other))));
            }
        }
    }
    let mut out = Vec::new();
    for (at, entry) in listed {
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
            return Err(invalid(
                &at,
                format!(
                    "`{id}` is a provider written in code (or one file naming another), which assay does not run; \
                     write its settings in a YAML file, or use an `exec:` provider in a trusted config"
                ),
            ));
        }
        let label = object.remove("label").and_then(|l| l.as_str().map(str::to_owned));
        let mut config = match object.remove("config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(config)) => config,
            Some(other) => {
                return Err(invalid(
                    &format!("{at}.config"),
                    format!("it is {}, not a mapping", describe_json(&other)),
                ));
            }
        };
        // promptfoo loads these from a file beside the config when they
        // name one (`maybeLoadFromExternalFile`).
        for key in FILE_CONFIG_KEYS {
            if let Some(Value::String(reference)) = config.get(*key)
                && reference.starts_with("file://")
            {
                let extension = Path::new(reference).extension().and_then(|x| x.to_str()).unwrap_or("");
                if !["yaml", "yml", "json"].contains(&extension) {
                    return Err(invalid(
                        &format!("{at}.config.{key}"),
                        format!("`{reference}` is not a YAML or JSON file; write the {key} out, or in such a file"),
                    ));
                }
                let loaded = files.value(reference).map_err(|e| match e {
                    CaseErrorKind::Invalid { message, .. } => invalid(&format!("{at}.config.{key}"), message),
                    other => other,
                })?;
                config.insert((*key).to_owned(), loaded);
            }
        }
        let prompts = match object.remove("prompts") {
            None | Some(Value::Null) => None,
            Some(Value::String(one)) => Some(vec![one]),
            Some(Value::Array(names)) if names.iter().all(Value::is_string) => {
                Some(names.into_iter().filter_map(|name| name.as_str().map(str::to_owned)).collect())
            }
            Some(other) => {
                return Err(invalid(
                    &format!("{at}.prompts"),
                    format!("it is {}, not a list of prompt labels", describe_json(&other)),
                ));
            }
        };
        if let Some(key) = object.keys().find(|key| key.as_str() != "id") {
            return Err(invalid(
                &format!("{at}.{key}"),
                format!("a provider's `{key}` is not supported; assay reads `id`, `label`, `config` and `prompts`"),
            ));
        }
        out.push(ProviderEntry { id, label, config, prompts });
    }
    if out.is_empty() {
        return Err(invalid("providers", "the list is empty"));
    }
    Ok(out)
}

/// `tests`: a list of tests and `file://` references (a reference may be
/// `{path, config}`: a test generator's `config`), or one reference.
/// The tests `tests` lists, each with its place in that list when it is
/// written there (not in a file).
fn read_tests(
    tests: Option<&Value>,
    files: &Files<'_>,
    compute: ComputeValue<'_>,
) -> Result<Vec<(Value, Option<usize>)>, CaseErrorKind> {
    let entries = match tests {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries.clone(),
        Some(single @ Value::String(_)) => vec![single.clone()],
        Some(Value::Object(entry)) if entry.contains_key("path") => vec![Value::Object(entry.clone())],
        Some(other) => return Err(invalid("tests", format!("it is {}, not a list of tests", describe_json(other)))),
    };
    let mut out = Vec::new();
    let from_file = |tests: Vec<Value>| tests.into_iter().map(|test| (test, None));
    for (at, entry) in entries.into_iter().enumerate() {
        match entry {
            Value::String(reference) if reference.starts_with("file://") && reference.contains(['*', '?', '[']) => {
                for one in files.expand_glob(&reference)? {
                    out.extend(from_file(test_file(&one, None, files, compute)?));
                }
            }
            Value::String(reference) if reference.starts_with("file://") => {
                out.extend(from_file(test_file(&reference, None, files, compute)?));
            }
            Value::String(other) => {
                return Err(invalid("tests", format!("`{other}` is neither a test nor a `file://` reference")));
            }
            Value::Object(entry) if entry.get("path").is_some_and(Value::is_string) => {
                if let Some(key) = entry.keys().find(|key| !["path", "config"].contains(&key.as_str())) {
                    return Err(invalid("tests", format!("a `path` entry has `{key}`; it has `path` and `config`")));
                }
                let reference = entry["path"].as_str().unwrap_or_default();
                out.extend(from_file(test_file(reference, entry.get("config"), files, compute)?));
            }
            test => out.push((test, Some(at))),
        }
    }
    Ok(out)
}

/// The tests of a `file://` test file: CSV (a row per test), JSONL (a
/// test per line), YAML or JSON (a list of tests), a JavaScript or
/// TypeScript module (its value, or the value of the function it names,
/// called with `config`), or a Python file's `generate_tests(config)` (or
/// the function named): run sandboxed. `config` is for code only.
fn test_file(
    reference: &str,
    config: Option<&Value>,
    files: &Files<'_>,
    compute: ComputeValue<'_>,
) -> Result<Vec<Value>, CaseErrorKind> {
    let script = ScriptReference::parse(reference).filter(|script| javascript::is_module(Path::new(script.path)));
    if let Some(script) = script {
        let (path, text) = files.text(&format!("file://{}", script.path))?;
        let located = |message: String| invalid(reference, format!("`{}`: {message}", path.display()));
        let args: Vec<Value> = config.into_iter().cloned().collect();
        let value = javascript::import(compute, script.path, &text, script.function, &args)
            .map_err(|e| located(format!("its module, run sandboxed, failed: {e}")))?;
        return match value {
            Some(Value::Array(tests)) => Ok(tests),
            Some(other) => Err(located(format!("it gave {}, not a list of tests", describe_json(&other)))),
            None => Err(located(match script.function {
                Some(function) => format!("it has no export `{function}`, or it gave nothing"),
                None => {
                    "it exports nothing; export the tests (`export default [...]`) or a function giving them".to_owned()
                }
            })),
        };
    }
    let python = ScriptReference::parse(reference).filter(|script| python::is_python(Path::new(script.path)));
    if let Some(script) = python {
        let (path, text) = files.text(&format!("file://{}", script.path))?;
        let located = |message: String| invalid(reference, format!("`{}`: {message}", path.display()));
        let function = script.function.filter(|f| !f.is_empty()).unwrap_or("generate_tests");
        let args = Value::Array(config.into_iter().cloned().collect());
        let mut expected = python::value_expected(script.path, &text, function, false, args);
        expected["input"] = Value::Bool(false);
        let value = compute(python::VALUE_KEY, &Value::Null, &expected)
            .map_err(|e| located(format!("its `{function}`, run sandboxed, failed: {e}")))?;
        return match value {
            Some(Value::Array(tests)) => Ok(tests),
            other => Err(located(format!(
                "Python test function must return a list of test cases, got {}",
                other.as_ref().map_or_else(|| "nothing".to_owned(), describe_json)
            ))),
        };
    }
    if config.is_some() {
        return Err(invalid(
            reference,
            "`config` is passed to a test generator (a `.js`, `.ts` or `.py` file's function); this file is data",
        ));
    }
    let (path, text) = files.text(reference)?;
    let extension = path.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase();
    let located = |message: String| invalid(reference, format!("`{}`: {message}", path.display()));
    match extension.as_str() {
        "csv" => {
            let rows = crate::formats::promptfoo::csv::parse(&text).map_err(&located)?;
            if let Some(first) = rows.first() {
                let header: Vec<String> = first.iter().map(|(column, _)| column.clone()).collect();
                crate::formats::promptfoo::csv::check_header(&header).map_err(&located)?;
            }
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
        "json" => match serde_json::from_str(&text).map_err(|e| located(format!("it is not JSON ({e})")))? {
            Value::Array(tests) => Ok(tests),
            test @ Value::Object(_) => Ok(vec![test]),
            other => Err(located(format!("it holds {}, not a list of tests", describe_json(&other)))),
        },
        "yaml" | "yml" => match parse_yaml(&text).map_err(|e| located(e.to_string()))? {
            Value::Array(tests) => Ok(tests),
            test @ Value::Object(_) => Ok(vec![test]),
            other => Err(located(format!("it holds {}, not a list of tests", describe_json(&other)))),
        },
        other => Err(located(format!(
            "`.{other}` test files are not supported; use CSV, JSONL, YAML, JSON, or a `.js`/`.ts` module"
        ))),
    }
}

/// promptfoo's `transformVars` (the test's `options`, else
/// `defaultTest`'s): JavaScript given the test's vars (and `context`:
/// `{prompt: {}, uuid}`) whose value is merged into them, before the vars'
/// combinations are made; or a `file://FILE.py[:FUNCTION]` function
/// (default `get_transform`) called with the same; run sandboxed. Its
/// failure is the test's error.
fn transform_vars(test: &mut Test, files: &Files<'_>, compute: ComputeValue<'_>) {
    let Some(transform) = test.options.get("transformVars").cloned() else { return };
    let Some(code) = transform.as_str() else {
        test.error.get_or_insert(format!(
            "its `options.transformVars` is {}, not JavaScript code or a `file://` reference",
            describe_json(&transform)
        ));
        return;
    };
    let context = serde_json::json!({ "prompt": {}, "uuid": uuid_v4() });
    let (key, expected) = match transform_vars_call(code, files, context) {
        Ok(call) => call,
        Err(error) => {
            test.error.get_or_insert(format!("its `options.transformVars`: {error}"));
            return;
        }
    };
    match compute(key, &Value::Object(test.vars.clone()), &expected) {
        Ok(Some(Value::Object(vars))) => test.vars.extend(vars),
        Ok(Some(other)) => {
            test.error.get_or_insert(format!(
                "its `options.transformVars` gave {}, not an object of vars",
                describe_json(&other)
            ));
        }
        Ok(None) => {
            test.error.get_or_insert("its `options.transformVars` gave nothing".to_owned());
        }
        Err(error) => {
            test.error.get_or_insert(format!("its `options.transformVars` failed (run sandboxed): {error}"));
        }
    }
}

/// The key and expected value that run the `transformVars` `code` with
/// `context`: inline JavaScript, a JavaScript module's function, or a
/// Python file's; or why it cannot run.
fn transform_vars_call(code: &str, files: &Files<'_>, context: Value) -> Result<(&'static str, Value), String> {
    let Some(script) = ScriptReference::parse(code) else {
        return Ok((javascript::VALUE_KEY, javascript::transform_expected(code, None, "vars", context)));
    };
    let path = Path::new(script.path);
    if !javascript::is_module(path) && !python::is_python(path) {
        return Err(format!(
            "`{code}` is neither a JavaScript module nor a `.py` file; assay runs JavaScript and Python transforms \
             (sandboxed)"
        ));
    }
    let (_, text) = files.text(&format!("file://{}", script.path)).map_err(|e| e.to_string())?;
    if python::is_python(path) {
        let function = script.function.filter(|f| !f.is_empty()).unwrap_or("get_transform");
        let expected = python::value_expected(script.path, &text, function, true, serde_json::json!([context]));
        return Ok((python::VALUE_KEY, expected));
    }
    Ok((javascript::VALUE_KEY, javascript::transform_expected(code, Some((script.path, &text)), "vars", context)))
}

/// A random version-4 UUID, as `crypto.randomUUID()` gives (the context of
/// `transformVars`).
fn uuid_v4() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        bytes = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos().to_le_bytes())
            .unwrap_or_default();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// One written test, `defaultTest` merged, as one test per combination of
/// its list-valued vars (unless `options.disableVarExpansion`).
/// `Err` when it would make more than `room` tests (its combinations are
/// counted before any is made).
fn expand_test(
    index: usize,
    default_test: &DefaultTest,
    test: Map<String, Value>,
    room: usize,
    transform_vars: &dyn Fn(&mut Test),
    out: &mut Vec<Test>,
) -> Result<(), ()> {
    let mut merged = merge(index, default_test, test);
    if merged.error.is_none() {
        transform_vars(&mut merged);
    }
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

/// `defaultTest` with its assertions read once, for every test to share.
struct DefaultTest {
    /// Everything of it but its `assert`.
    test: Map<String, Value>,
    /// Its assertions.
    asserts: Vec<Arc<Map<String, Value>>>,
    /// What is wrong with its `assert`, which every test reports.
    error: Option<String>,
}

impl DefaultTest {
    fn new(mut test: Map<String, Value>) -> DefaultTest {
        let (asserts, error) = match assertions(&mut test, "defaultTest") {
            Ok(asserts) => (asserts, None),
            Err(why) => (Vec::new(), Some(why)),
        };
        DefaultTest { test, asserts, error }
    }
}

/// The assertions `test` (`whose`, for messages) lists under `assert`,
/// taken out of it.
fn assertions(test: &mut Map<String, Value>, whose: &str) -> Result<Vec<Arc<Map<String, Value>>>, String> {
    match test.remove("assert") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list
            .into_iter()
            .map(|entry| match entry {
                Value::Object(assertion) => Ok(Arc::new(assertion)),
                other => Err(format!("an `assert` entry of {whose} is {}, not an assertion", describe_json(&other))),
            })
            .collect(),
        Some(other) => Err(format!("{whose}'s `assert` is {}, not a list", describe_json(&other))),
    }
}

/// A test with `defaultTest` merged in as promptfoo merges it: vars and
/// options of the test win, assertions are the default's then the test's,
/// the threshold is the test's or the default's.
fn merge(index: usize, default: &DefaultTest, mut test: Map<String, Value>) -> Test {
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
    let mut default_test = default.test.clone();
    let mut vars = object(&mut default_test, "vars", true);
    vars.extend(object(&mut test, "vars", false));
    let mut options = object(&mut default_test, "options", true);
    options.extend(object(&mut test, "options", false));
    let mut asserts = default.asserts.clone();
    if let Some(why) = &default.error {
        error.get_or_insert(why.clone());
    }
    match assertions(&mut test, "the test") {
        Ok(own) => asserts.extend(own),
        Err(why) => {
            error.get_or_insert(why);
        }
    }
    let threshold_of = |test: &Map<String, Value>| test.get("threshold").and_then(Value::as_f64);
    let threshold = threshold_of(&test).or_else(|| threshold_of(&default_test));
    let description = test.get("description").and_then(|d| d.as_str().map(str::to_owned));
    let scoring = match test.get("assertScoringFunction").or_else(|| default_test.get("assertScoringFunction")) {
        None | Some(Value::Null) => None,
        Some(Value::String(reference)) if reference.starts_with("file://") => Some(reference.clone()),
        Some(other) => {
            error.get_or_insert(format!(
                "its `assertScoringFunction` is {}, not a `file://` reference to a JavaScript function",
                describe_json(other)
            ));
            None
        }
    };
    let mut names = |key: &str| -> Option<Vec<String>> {
        let (whose, value) = match (test.get(key), default_test.get(key)) {
            (Some(value), _) => ("the test", value),
            (None, Some(value)) => ("defaultTest", value),
            (None, None) => return None,
        };
        let names = value.as_array().and_then(|list| list.iter().map(|n| n.as_str().map(str::to_owned)).collect());
        if names.is_none() {
            error.get_or_insert(format!("{whose}'s `{key}` is {}, not a list of names", describe_json(value)));
        }
        names
    };
    let (prompts, providers) = (names("prompts"), names("providers"));
    for (whose, source) in [("defaultTest", &default_test), ("the test", &test)] {
        for key in source.keys().filter(|key| !TEST_KEYS.contains(&key.as_str())) {
            let why = match key.as_str() {
                "provider" => "a grading provider goes under `options.provider`",
                "providerOutput" => "a test runs its prompt on its providers; write a provider that answers so",
                "storeOutputAs" => {
                    "promptfoo reads it under `options` only (it ignores it here); write `options.storeOutputAs`"
                }
                _ => "assay reads `vars`, `assert`, `options`, `description`, `threshold` and `metadata`",
            };
            error.get_or_insert(format!("{whose}'s `{key}` is not supported: {why}"));
        }
    }
    if let Some(name) = options.get("storeOutputAs").filter(|name| !name.is_string()) {
        error.get_or_insert(format!("its `options.storeOutputAs` is {}, not the name of a var", describe_json(name)));
    }
    for key in options.keys() {
        if !TEST_OPTIONS.contains(&key.as_str()) {
            error.get_or_insert(format!(
                "its `options.{key}` is not supported; assay reads {}",
                TEST_OPTIONS.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Test {
        description,
        index,
        combination: None,
        vars,
        asserts,
        threshold,
        options,
        prompts,
        providers,
        scoring,
        error,
        assert_lines: Vec::new(),
    }
}

/// Whether `path` is an assertion of the config's own tests or of its
/// `defaultTest` (`tests[2].assert[0]`, `defaultTest.assert[1]`): the
/// paths whose lines a failing check names.
fn is_assertion_path(path: &str) -> bool {
    let rest = match path.strip_prefix("tests[") {
        Some(rest) => rest.split_once(']').map(|(_, rest)| rest),
        None => path.strip_prefix("defaultTest"),
    };
    rest.and_then(|rest| rest.strip_prefix(".assert["))
        .is_some_and(|index| index.ends_with(']') && !index.contains('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A config without JavaScript needs no engine.
    fn no_javascript(_: &str, _: &Value, _: &Value) -> Result<Option<Value>, String> {
        panic!("these configs run no JavaScript")
    }

    #[test]
    fn refs_into_the_config_are_resolved_and_tests_files_globbed_loops_bombs_and_other_files_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("promptfooconfig.yaml");
        let read_config = |text: &str| {
            std::fs::write(&path, text).unwrap();
            read(&FileAccess::anywhere(), &path, &no_javascript)
        };
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/b.yaml"), "- vars: {q: two}\n").unwrap();
        std::fs::write(dir.path().join("tests/a.yaml"), "- vars: {q: one}\n").unwrap();
        let config = read_config(
            "definitions:\n  check: {type: contains, value: o}\nprompts: ['{{q}}']\nproviders: [echo]\n\
             defaultTest:\n  assert: [{$ref: '#/definitions/check'}]\ntests: ['file://tests/*.yaml']\n",
        );
        // `definitions` is not a key assay reads: refused by name.
        assert!(config.unwrap_err().to_string().contains("`definitions` is not a promptfoo config key"));
        let config = read_config(
            "prompts: ['{{q}}']\nproviders: [echo]\ndefaultTest:\n  assert: [{type: contains, value: o}]\n  \
             vars: {x: {$ref: '#/defaultTest/assert/0'}}\ntests: ['file://tests/*.yaml']\n",
        )
        .unwrap();
        let qs: Vec<&Value> = config.tests.iter().map(|t| &t.vars["q"]).collect();
        assert_eq!(qs, ["one", "two"]);
        assert_eq!(config.tests[0].vars["x"], serde_json::json!({"type": "contains", "value": "o"}));
        // promptfoo's `assertionTemplates` hold what `$ref`s name.
        let config = read_config(
            "prompts: ['{{q}}']\nproviders: [echo]\nassertionTemplates:\n  check: {type: icontains, value: O}\n\
             tests:\n  - assert: [{$ref: '#/assertionTemplates/check'}]\n",
        )
        .unwrap();
        assert_eq!(*config.tests[0].asserts[0], *json!({"type": "icontains", "value": "O"}).as_object().unwrap());
        for (text, error) in [
            ("prompts: [{$ref: '#/prompts'}]\nproviders: [echo]\n", "nest too deep"),
            ("prompts: [{$ref: '#/nowhere'}]\nproviders: [echo]\n", "names nothing"),
            ("prompts: [{$ref: 'other.yaml#/a'}]\nproviders: [echo]\n", "names another file"),
            ("prompts: [x]\nproviders: [echo]\ntests: ['file://nothing/*.yaml']\n", "matches no file"),
            ("prompts: [x]\nproviders: [echo]\ntests: ['file://../*.yaml']\n", "must stay in the config's folder"),
        ] {
            let got = read_config(text).unwrap_err().to_string();
            assert!(got.contains(error), "{text}: {got}");
        }
        // References that double at every level stop at the bound.
        let mut bomb = String::from("prompts: [x]\nproviders: [echo]\ndefaultTest:\n  vars:\n    l0: [a, a]\n");
        for level in 1..40 {
            bomb.push_str(&format!(
                "    l{level}: [{{$ref: '#/defaultTest/vars/l{0}'}}, {{$ref: '#/defaultTest/vars/l{0}'}}]\n",
                level - 1
            ));
        }
        assert!(read_config(&bomb).unwrap_err().to_string().contains("expand the config past"));
    }

    #[test]
    fn configs_are_told_by_their_top_level_keys_in_block_flow_or_json_style() {
        let dir = tempfile::tempdir().unwrap();
        let is = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            is_config(&path, &FileAccess::anywhere())
        };
        assert!(is("a.yaml", "description: x\nprompts:\n  - hi\n"));
        assert!(is("b.yml", "targets: [echo]\n"));
        assert!(is("c.json", "{\n  \"description\": \"x, y: {z}\",\n  \"prompts\": [\"hi\"]\n}\n"));
        assert!(is("d.yaml", "{description: 'a: b', tests: [{vars: {prompts: 1}}]}"));
        assert!(is("e.ts", "export default {}"));
        // Keys below the top level, or a scalar's text, are not the top level's.
        assert!(!is("f.json", "{\"scenario\": {\"prompts\": [1]}, \"note\": \"prompts: x\"}"));
        assert!(!is("g.yaml", "name: x\n  prompts: indented\nprompts_extra: 1\n"));
        assert!(!is("h.hocon", "prompts: [x]"));
        assert!(!is("i.json", "[{\"prompts\": 1}]"));
    }

    #[test]
    fn each_assertion_template_is_parsed_once_for_every_test_and_combination() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("promptfooconfig.yaml");
        let config = "prompts: ['{{topic}}']\nproviders: [echo]\ndefaultTest:\n  assert: [{type: contains, value: '{{topic}}', metric: '{{ topic | upper }} hits'}]\ntests:\n  - vars: {topic: [cats, dogs, owls]}\n    assert: [{type: contains-any, value: ['{{ topic }}', fish, '{{ x']}]\n";
        std::fs::write(&path, config).unwrap();
        let config = read(&FileAccess::anywhere(), &path, &no_javascript).unwrap();
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

    /// `text` read as a config of its own folder.
    fn config_of(text: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("promptfooconfig.yaml");
        std::fs::write(&path, text).unwrap();
        read(&FileAccess::anywhere(), &path, &no_javascript).unwrap()
    }

    #[test]
    fn default_test_assertions_are_read_once_and_shared_and_a_bad_one_is_every_tests_error() {
        let read_config = config_of;
        let config = read_config(
            "prompts: ['{{q}}']\nproviders: [echo]\ndefaultTest:\n  assert: [{type: contains, value: o}]\n\
             tests:\n  - vars: {q: one}\n  - vars: {q: two}\n    assert: [{type: icontains, value: T}]\n",
        );
        let (first, second) = (&config.tests[0], &config.tests[1]);
        assert_eq!((first.asserts.len(), second.asserts.len()), (1, 2));
        assert!(Arc::ptr_eq(&first.asserts[0], &second.asserts[0]), "defaultTest's assertion is one copy");
        assert_eq!(*second.asserts[1], *json!({"type": "icontains", "value": "T"}).as_object().unwrap());
        assert_eq!((first.error.as_deref(), second.error.as_deref()), (None, None));
        let config = read_config(
            "prompts: ['{{q}}']\nproviders: [echo]\ndefaultTest:\n  assert: [{type: contains, value: o}, 5]\n\
             tests:\n  - vars: {q: one}\n  - vars: {q: two}\n",
        );
        for test in &config.tests {
            let error = test.error.as_deref().unwrap_or_default();
            assert_eq!(error, "an `assert` entry of defaultTest is the number 5, not an assertion");
        }
        let config = read_config(
            "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: one}\n    assert: {type: contains}\n",
        );
        let error = config.tests[0].error.as_deref().unwrap_or_default();
        assert!(error.starts_with("the test's `assert` is "), "{error}");
        assert!(error.ends_with(", not a list"), "{error}");
    }
}
