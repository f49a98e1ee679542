//! promptfoo configs → cases: `assay run promptfooconfig.yaml` runs a
//! promptfoo suite as it is. Every prompt × provider × test (a test with
//! list-valued vars once per combination) is one case, whose one turn
//! sends the prompt rendered with the test's vars over the provider's
//! connection and checks the answer with the test's assertions through the
//! `promptfoo` plugin's `pf_*` keys; a test's `threshold` decides it on
//! the weighted assertion scores ([`PassRule::WeightedScore`]).
//!
//! [`expand`] reads the config (and its `file://` prompts and tests, and
//! the `.py` files its `python` assertions name: `python.rs`, whose checks
//! the embedded Python runner answers) when the run is discovered, maps its
//! providers onto connections (`providers.rs`) and keeps what it read in a
//! [`Suite`] shared by its cases; each [`PromptfooCase`] renders its prompt and plans its checks
//! when its turn comes. The suite also gives the run the connections its
//! providers need ([`Suite::transports`]), the secrets reports hide, and
//! what promptfoo's own output file shows (`crate::report::PromptfooOutput`).
//!
//! Ids: `CONFIG/TEST`, where CONFIG is the config's path without `.yaml`
//! and TEST the test's `description` (else `test N`, 1-based), with ` #K`
//! for the K-th var combination and ` (N)` when a description repeats; with
//! several providers or prompts, `[PROVIDER]` and `[PROMPT]` (labels) come
//! before TEST. A provider with `prompts` runs only the prompts it names
//! (by label, or a file's prompts by the label's start, as promptfoo's
//! `isAllowedPrompt`). A config that cannot be read is one error case with
//! the id CONFIG; a test that cannot run (a template assay does not
//! render, a key it does not read) is an error case of its own, naming the
//! test. `python` and `javascript` assertions run sandboxed, in the
//! embedded Python runner (`python.rs`) and the `javascript` plugin's
//! engine (`javascript.rs`); so does the JavaScript that computes values:
//! a config or tests module and `transformVars` while the config is read
//! ([`ProviderContext::compute`]), `transform`s as the turn's derived values
//! and `assertScoringFunction` as its [`PassRule::ScoredBy`].

mod asserts;
mod compare;
pub mod config;
mod csv;
pub mod derived;
mod grader_spec;
mod graders;
mod javascript;
mod providers;
mod python;
mod render;
mod stored;

pub use config::is_config;
pub use javascript::ComputeValue;

/// Where promptfoo's OpenAI providers and default grader send requests
/// unless `OPENAI_BASE_URL` (or `OPENAI_API_BASE_URL`) says otherwise.
pub const OPENAI_API_BASE: &str = "https://api.openai.com/v1";
/// The model promptfoo 0.123.1 grades with by default
/// (`DEFAULT_OPENAI_GRADING_MODEL`).
pub const DEFAULT_GRADING_MODEL: &str = "gpt-5.6-sol";
/// The model promptfoo 0.123.1 embeds with by default.
pub const DEFAULT_EMBEDDING_MODEL: &str = "text-embedding-3-large";
pub use grader_spec::{GraderEndpoint, GraderSpec};
pub use providers::ProviderContext;

use crate::agent::Transport;
use crate::case::{CaseEnv, CaseFile};
use crate::check::{Check, KeySet, Target};
use crate::errors::{CaseError, CaseErrorKind, describe_json};
use crate::job::{
    BrokenCase, CaseGroup, CaseReader, InGroup, Job, LoadedCase, Order, PassRule, PendingCase, ScoredBy, Turn,
};
use crate::template::NunjucksTemplate;
use config::{Config, Test};
use graders::Graders;
use providers::{MapError, Provider};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// A promptfoo config, read: shared by its cases, and by the run for its
/// connections and output.
#[derive(Debug)]
pub struct Suite {
    /// The config's id (its path without `.yaml`/`.yml`).
    pub id: String,
    /// Where it is.
    pub path: PathBuf,
    config: Config,
    /// Each provider mapped, or why it cannot be (every case over it is
    /// then an error case).
    providers: Vec<Result<Provider, String>>,
    /// The grading providers its tests and assertions name.
    graders: Graders,
    /// Each case's (prompt, provider, test) by id.
    cases: HashMap<String, (usize, usize, usize)>,
    /// Each test's comparison of its cases (`select-best`, `max-score`),
    /// made when the first of them is read.
    /// (each with its members' (prompt, provider) in member order).
    comparisons: Vec<OnceLock<Result<Compared, String>>>,
}

impl Suite {
    /// The connections its providers need that the project does not have,
    /// by name.
    pub fn transports(&self) -> impl Iterator<Item = (String, Arc<dyn Transport>)> + '_ {
        self.providers.iter().flatten().filter_map(|provider| {
            let transport = provider.transport.clone()?;
            Some((provider.connection.name().to_owned(), transport))
        })
    }

    /// The values its providers read that reports must hide (API keys).
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        let providers =
            self.providers.iter().flatten().flat_map(|provider| provider.secrets.iter().map(String::as_str));
        providers.chain(self.graders.secrets())
    }

    /// The config, read.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The (prompt, provider, test) of case `id`, if it is one of the
    /// suite's.
    pub(crate) fn case(&self, id: &str) -> Option<(usize, usize, usize)> {
        self.cases.get(id).copied()
    }

    /// Test `t`'s comparison and the place in it of the case on prompt
    /// `prompt` and provider `provider`: its cases, in promptfoo's column
    /// order (providers, then prompts), each planned without it.
    fn comparison(
        self: &Arc<Self>,
        t: usize,
        (prompt, provider): (usize, usize),
        keys: &dyn KeySet,
    ) -> Result<InGroup, String> {
        // The members' places are found once, with the group: a scan of
        // every case per case would be quadratic in the config's size.
        let made = self.comparisons[t].get_or_init(|| {
            let mut places: Vec<(&String, (usize, usize))> =
                self.cases.iter().filter(|(_, place)| place.2 == t).map(|(id, &(q, p, _))| (id, (q, p))).collect();
            places.sort_by_key(|&(_, (q, p))| (p, q));
            let members = places
                .iter()
                .map(|&(id, (prompt, provider))| {
                    let case =
                        PromptfooCase { id: id.clone(), suite: self.clone(), prompt, provider, test: t, in_turn: None };
                    case.own_job(keys).map(Arc::new)
                })
                .collect::<Vec<_>>();
            let test = &self.config.tests[t];
            let grader = |provider: &Value| self.graders.of(provider).cloned();
            let rules = compare::rules(test, members.len(), &grader, keys)?;
            let group = CaseGroup::new(format!("tests[{}]", test.index), members, Order::AtOnce, rules);
            Ok((Arc::new(group), places.into_iter().map(|(_, place)| place).collect()))
        });
        let (group, places) = made.as_ref().map_err(String::clone)?;
        let member = places.iter().position(|&place| place == (prompt, provider)).expect("the case is a member");
        Ok(InGroup { group: group.clone(), member })
    }
}

/// A test's comparison, and its members' (prompt, provider) in member
/// order.
type Compared = (Arc<CaseGroup>, Vec<(usize, usize)>);

/// The cases of the promptfoo config `file`, and the suite they share
/// (none when the config cannot be read: then one error case).
pub fn expand(file: &CaseFile, context: &ProviderContext<'_>) -> (Vec<PendingCase>, Option<Arc<Suite>>) {
    let id = config_id(&file.id);
    let config = match config::read(context.trust.access(), &file.path, context.compute) {
        Ok(config) => config,
        Err(kind) => {
            let broken: PendingCase = Box::new(BrokenCase { id, error: CaseError::new(&file.path, kind) });
            return (vec![broken], None);
        }
    };
    let mut providers: Vec<Result<Provider, String>> = Vec::with_capacity(config.providers.len());
    for (i, entry) in config.providers.iter().enumerate() {
        match providers::map(entry, &format!("promptfoo:{id}:{i}"), context) {
            Ok(provider) => providers.push(Ok(provider)),
            Err(MapError::Unsupported(message)) => providers.push(Err(message)),
            // A data file asking for a program or a secret is refused whole.
            Err(MapError::Untrusted(kind)) => {
                let kind = match kind {
                    CaseErrorKind::Untrusted { what, how } => {
                        CaseErrorKind::Untrusted { what: format!("{what} (providers[{i}] `{}`)", entry.id), how }
                    }
                    other => other,
                };
                let broken: PendingCase = Box::new(BrokenCase { id, error: CaseError::new(&file.path, kind) });
                return (vec![broken], None);
            }
        }
    }
    let graders = match Graders::read(&config, context) {
        Ok(graders) => graders,
        Err(MapError::Untrusted(kind)) => {
            let broken: PendingCase = Box::new(BrokenCase { id, error: CaseError::new(&file.path, kind) });
            return (vec![broken], None);
        }
        Err(MapError::Unsupported(message)) => unreachable!("Graders::read keeps unsupported graders: {message}"),
    };
    let names = case_names(&id, &config);
    let mut cases = HashMap::with_capacity(names.len());
    let mut order = Vec::with_capacity(names.len());
    for (name, place) in names {
        cases.insert(name.clone(), place);
        order.push(name);
    }
    // A test whose `prompts` or `providers` name none of the config's runs
    // nowhere, in promptfoo too: here it is an error case saying so.
    let nowhere: Vec<PendingCase> = config
        .tests
        .iter()
        .enumerate()
        .filter(|(t, test)| {
            (test.prompts.is_some() || test.providers.is_some()) && !cases.values().any(|&(_, _, of)| of == *t)
        })
        .map(|(t, test)| {
            let message = "its `prompts` and `providers` choose none of the config's prompts and providers, so it \
                           would run nowhere\n\nConsider naming them by label or id, or `*` after a prefix";
            let kind = CaseErrorKind::Invalid { path: format!("tests[{t}]"), message: message.into() };
            let id = format!("{id}/{}", test_name(test));
            Box::new(BrokenCase { id, error: CaseError::new(&file.path, kind) }) as PendingCase
        })
        .collect();
    let comparisons = config.tests.iter().map(|_| OnceLock::new()).collect();
    let suite = Arc::new(Suite { id, path: file.path.clone(), config, providers, graders, cases, comparisons });
    let in_turn: Option<stored::Slot> = stored::uses(&suite).then(Default::default);
    let mut pending: Vec<PendingCase> = order
        .into_iter()
        .map(|id| {
            let (prompt, provider, test) = suite.cases[&id];
            let in_turn = in_turn.clone();
            Box::new(PromptfooCase { id, suite: suite.clone(), prompt, provider, test, in_turn }) as PendingCase
        })
        .collect();
    pending.extend(nowhere);
    (pending, Some(suite))
}

/// A config's id: its file's, without the YAML extension.
fn config_id(file_id: &str) -> String {
    let stem = file_id.strip_suffix(".yaml").or_else(|| file_id.strip_suffix(".yml"));
    stem.unwrap_or(file_id).to_owned()
}

/// Every case's id and (prompt, provider, test), in order: providers, then
/// prompts, then tests (promptfoo's table: a row per test, a column per
/// prompt × provider).
fn case_names(id: &str, config: &Config) -> Vec<(String, (usize, usize, usize))> {
    let mut test_names = Vec::with_capacity(config.tests.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for test in &config.tests {
        let mut name = test_name(test);
        if let Some(count) = seen.get_mut(&name) {
            *count += 1;
            name = format!("{name} ({})", test.index + 1);
        } else {
            seen.insert(name.clone(), 1);
        }
        test_names.push(name);
    }
    let many_providers = config.providers.len() > 1;
    let many_prompts = config.prompts.len() > 1;
    let mut names = Vec::new();
    for (p, provider) in config.providers.iter().enumerate() {
        for (q, prompt) in config.prompts.iter().enumerate().filter(|(_, prompt)| provider.runs(prompt)) {
            let runs_here = |test: &Test| {
                config::prompt_allowed(test.prompts.as_deref(), prompt)
                    && config::provider_allowed(test.providers.as_deref(), provider)
            };
            let mut prefix = String::new();
            if many_providers {
                prefix.push_str(&format!("[{}] ", short(provider.name())));
            }
            if many_prompts {
                prefix.push_str(&format!("[{}] ", short(&prompt.label)));
            }
            for (t, name) in test_names.iter().enumerate().filter(|(t, _)| runs_here(&config.tests[*t])) {
                names.push((format!("{id}/{prefix}{name}"), (q, p, t)));
            }
        }
    }
    names
}

/// A test's name in ids.
fn test_name(test: &Test) -> String {
    let base = match &test.description {
        Some(description) if !description.trim().is_empty() => description.trim().to_owned(),
        _ => format!("test {}", test.index + 1),
    };
    match test.combination {
        Some(k) => format!("{base} #{}", k + 1),
        None => base,
    }
}

/// A label cut to 40 characters on one line.
fn short(label: &str) -> String {
    let line: String = label.chars().map(|c| if c.is_control() { ' ' } else { c }).take(41).collect();
    if line.chars().count() > 40 { format!("{}…", line.chars().take(39).collect::<String>()) } else { line }
}

/// One prompt × provider × test of a config, planned when its turn comes.
#[derive(Debug)]
pub struct PromptfooCase {
    id: String,
    suite: Arc<Suite>,
    prompt: usize,
    provider: usize,
    test: usize,
    /// Its config's group of cases run in turn, when a test stores its
    /// output (`storeOutputAs`).
    in_turn: Option<stored::Slot>,
}

impl CaseReader for PromptfooCase {
    fn id(&self) -> &str {
        &self.id
    }

    fn source(&self) -> &std::path::Path {
        &self.suite.path
    }

    fn load(&self, keys: &dyn KeySet, _env: &CaseEnv) -> LoadedCase {
        match self.job(keys) {
            Ok(job) => LoadedCase::Ready(Box::new(job)),
            Err(message) => {
                let kind = CaseErrorKind::Invalid { path: self.place(), message };
                LoadedCase::Broken { id: self.id.clone(), error: CaseError::new(&self.suite.path, kind) }
            }
        }
    }
}

impl PromptfooCase {
    /// Where in the config the case comes from, for its errors.
    fn place(&self) -> String {
        let test = &self.suite.config.tests[self.test];
        match &test.description {
            Some(description) => format!("tests[{}] ({description:?})", test.index),
            None => format!("tests[{}]", test.index),
        }
    }

    fn job(&self, keys: &dyn KeySet) -> Result<Job, String> {
        let mut job = self.own_job(keys)?;
        let test = &self.suite.config.tests[self.test];
        let compares = test.comparison_count() > 0;
        job.grouped = match &self.in_turn {
            Some(_) if compares => {
                return Err("`select-best` and `max-score` are not supported in a config whose tests store outputs \
                            (`storeOutputAs`): the cases run in turn, not at once; keep one of them"
                    .into());
            }
            Some(slot) => Some(stored::place(self, slot, keys)?),
            None if compares => Some(self.suite.comparison(self.test, (self.prompt, self.provider), keys)?),
            None => None,
        };
        Ok(job)
    }

    /// The case's job as read, run on its own.
    fn own_job(&self, keys: &dyn KeySet) -> Result<Job, String> {
        let job = self.own_job_for(&self.suite.config.tests[self.test], keys)?;
        crate::check::check_connections(&job.connections, keys).map_err(|e| e.to_string())?;
        Ok(job)
    }

    /// The case's job for `test` (its test, perhaps with vars stored by
    /// the cases before it), run on its own; its connection is checked
    /// against the project's when the case is read ([`Self::own_job`]).
    fn own_job_for(&self, test: &Test, keys: &dyn KeySet) -> Result<Job, String> {
        let config = &self.suite.config;
        if let Some(error) = &test.error {
            return Err(error.clone());
        }
        let provider =
            self.suite.providers[self.provider].as_ref().map_err(|e| format!("providers[{}]: {e}", self.provider))?;
        let text = render_prompt(config, self.prompt, test)?;
        let rubric = test.options.get("rubricPrompt").map(rubric_text);
        let test_context = || test.context_object();
        let entry = &config.providers[self.provider];
        let script = javascript::ScriptContext {
            test: &test_context,
            provider_id: &entry.id,
            provider_label: entry.label.as_deref(),
            provider_config: &entry.config,
            scripts: &config.assert_scripts,
        };
        let mut checks = Vec::with_capacity(test.asserts.len());
        let mut weights = Vec::with_capacity(test.asserts.len());
        let python = python::PythonScope { test: &test_context, files: &config.python_files };
        // promptfoo's `transform`s, run on the answer (the test's, before
        // every assertion; an assertion's, before it alone) as derived values.
        let mut derived = Vec::new();
        let vars = Value::Object(test.vars.clone());
        // The provider's `transformResponse`, then the test's `transform`.
        let mut output = Target::Text;
        if let Some(code) = &provider.transform_response {
            let code = Value::String(javascript::response_transform(code));
            let at = format!("providers[{}].config.transformResponse", self.provider);
            derived.push(self.transform_check(&code, output, json!({}), &at, keys)?);
            output = Target::Derived(derived.len() - 1);
        }
        if let Some(code) = test.output_transform() {
            let prompt = &config.prompts[self.prompt];
            let context = json!({ "vars": vars, "prompt": { "raw": prompt.raw, "label": prompt.label } });
            derived.push(self.transform_check(code, output, context, "options.transform", keys)?);
            output = Target::Derived(derived.len() - 1);
        }
        let compared = |a: &serde_json::Map<String, Value>| {
            a.get("type").and_then(Value::as_str).is_some_and(config::is_comparison)
        };
        for (i, assertion) in test.asserts.iter().enumerate().filter(|(_, a)| !compared(a)) {
            let vars = asserts::Vars { values: &test.vars, templates: &config.assert_templates };
            let scripts = asserts::Scripts { python: &python, javascript: &script };
            let mut planned = asserts::plan(assertion, i, &vars, &text, rubric.as_deref(), &scripts, keys)?;
            planned.check.line = test.assert_lines.get(i).copied().flatten();
            if let Some(provider) = assertion.get("provider").or_else(|| test.options.get("provider")) {
                let grader = self.suite.graders.of(provider).map_err(|e| format!("assert[{i}]: {e}"))?;
                planned.check.grader = Some(grader.clone());
            }
            if planned.check.target == Target::Text {
                planned.check.target = output.clone();
                if let Some(code) = assertion.get("transform") {
                    let context = json!({ "vars": test.vars, "prompt": { "label": text } });
                    let at = format!("assert[{i}].transform");
                    derived.push(self.transform_check(code, output.clone(), context, &at, keys)?);
                    planned.check.target = Target::Derived(derived.len() - 1);
                }
            }
            checks.push(planned.check);
            weights.push(planned.weight);
        }
        let pass_rule = match (&test.scoring, test.threshold) {
            (Some(reference), _) => PassRule::ScoredBy(Box::new(self.scored_by(reference, weights, keys)?)),
            (None, Some(threshold)) => PassRule::WeightedScore { threshold, weights },
            (None, None) => PassRule::EveryCheck,
        };
        Ok(Job {
            id: self.id.clone(),
            file: self.suite.path.clone(),
            agent: provider.agent.clone(),
            connections: vec![provider.connection.clone()],
            success_ratio: Default::default(),
            timeout: None,
            metadata: Vec::new(),
            turns: vec![Turn { pass_rule, derived, ..Turn::new(text, checks) }],
            recording: None,
            prerequisite: None,
            grouped: None,
        })
    }
}

impl PromptfooCase {
    /// promptfoo's `assertScoringFunction` `reference` over the test's
    /// assertions (weighted by `weights`): its function, their metrics and
    /// the threshold.
    fn scored_by(&self, reference: &str, weights: Vec<f64>, keys: &dyn KeySet) -> Result<ScoredBy, String> {
        let config = &self.suite.config;
        let test = &config.tests[self.test];
        let at = "assertScoringFunction";
        let check = self.transform_check(&Value::String(reference.to_owned()), Target::Text, json!({}), at, keys)?;
        let metrics = config.metrics(test);
        Ok(ScoredBy {
            check,
            label: reference.to_owned(),
            metrics,
            weights,
            threshold: test.threshold,
            assertions: test.asserts.iter().map(|a| Value::Object(serde_json::Map::clone(a))).collect(),
        })
    }

    /// The derivation of a promptfoo `transform` (`code`, at `at` in the
    /// test) of `input`: the `javascript` plugin's `pf_js_value`, or for a
    /// `file://FILE.py[:FUNCTION]` the Python runner's `pf_py_value`, given
    /// the transform's `context` (an `assertScoringFunction` is one too:
    /// its function defaults to `func`, a transform's to `get_transform`).
    fn transform_check(
        &self,
        code: &Value,
        input: Target,
        context: Value,
        at: &str,
        keys: &dyn KeySet,
    ) -> Result<Check, String> {
        let Some(code) = code.as_str() else {
            return Err(format!("{at} is {}, not JavaScript code or a `file://` reference", describe_json(code)));
        };
        if let Some(file) = self.suite.config.assert_scripts.python_file(code) {
            let javascript::PythonFile { path, function, source } = file.map_err(|e| format!("{at}: {e}"))?;
            if !keys.has_key(python::VALUE_KEY) {
                return Err(format!("{at}: no loaded plugin provides `{}`, which runs Python", python::VALUE_KEY));
            }
            let scoring = at == "assertScoringFunction";
            let function = function.filter(|f| !f.is_empty()).unwrap_or(if scoring { "func" } else { "get_transform" });
            let expected = python::value_expected(path, source, function, !scoring, json!([context]));
            return Ok(Check::new(python::VALUE_KEY, input, expected));
        }
        if !keys.has_key(javascript::VALUE_KEY) {
            return Err(format!("{at}: no loaded plugin provides `{}`, which runs transforms", javascript::VALUE_KEY));
        }
        let module = self.suite.config.assert_scripts.transform_module(code).map_err(|e| format!("{at}: {e}"))?;
        let expected = javascript::transform_expected(code, module, "output", context);
        Ok(Check::new(javascript::VALUE_KEY, input, expected))
    }
}

/// A `rubricPrompt` as the plugin takes it: text as it is, chat messages
/// as their JSON.
fn rubric_text(rubric: &Value) -> String {
    match rubric {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The prompt of a case, as promptfoo's `renderPrompt` makes it: the
/// test's `options.prefix` and `options.suffix` around the prompt's text;
/// the vars with one trailing newline dropped and `{{name}}` in them
/// filled from the other vars (`resolveVariables`); then a prompt that is
/// JSON (chat messages) has each string in it rendered and is written out
/// again (two-space indents), any other is rendered, and what that gives
/// rendered once more (so a var holding `{{topic}}` is filled too).
pub(crate) fn render_prompt(config: &Config, prompt: usize, test: &Test) -> Result<String, String> {
    let prompt = &config.prompts[prompt];
    let failed = |e: String| format!("the prompt {:?}: {e}", short(&prompt.label));
    let option = |key: &str| test.options.get(key).and_then(Value::as_str).unwrap_or_default();
    let (prefix, suffix) = (option("prefix"), option("suffix"));
    let vars = render::prepared_vars(&test.vars);
    let raw = format!("{prefix}{}{suffix}", prompt.raw);
    if let Ok(json) = serde_json::from_str::<Value>(&raw)
        && (json.is_object() || json.is_array())
    {
        let rendered = render::strings_in(json, &vars).map_err(failed)?;
        return serde_json::to_string_pretty(&rendered).map_err(|e| failed(e.to_string()));
    }
    let first = match (prefix.is_empty() && suffix.is_empty(), &prompt.template) {
        (true, Ok(template)) => template.render(&vars),
        (true, Err(error)) => Err(error.clone()),
        (false, _) => NunjucksTemplate::parse(&raw).and_then(|template| template.render(&vars)),
    }
    .map_err(failed)?;
    render::again(first, &vars).map_err(failed)
}
