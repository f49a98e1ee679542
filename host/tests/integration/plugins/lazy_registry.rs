//! The registry compiles only what a run uses: built-in plugins are known by
//! their committed descriptions and compiled when one of their checks first
//! runs (so a run of stock checks compiles neither `gist` nor the promptfoo
//! plugin); a built-in that fails to load then fails each of its checks
//! with that error, once per check, and the run goes on; and the promptfoo
//! plugin is there for promptfoo configs whenever they are discovered.

use crate::util::{Collect, run_dir, runtime};
use assay::agent::HttpSettings;
use assay::errors::ErrorKind;
use assay::job::CaseResult;
use assay::plugin::{
    BUILTIN_MATCHERS, BuiltinPlugin, JAVASCRIPT_PLUGIN, PROMPTFOO_PLUGIN, PROMPTFOO_PYTHON_PLUGIN, Registry,
};
use assay::run::RunOptions;
use assay::sandbox::{Capabilities, Grants};
use assay::{Project, ProjectOptions};
use std::path::Path;
use std::sync::Arc;

/// A project in `dir` (an empty assay.toml there), compiling through the
/// cache in `cache`, with an empty environment.
fn project(dir: &Path, cache: &Path) -> Project {
    std::fs::write(dir.join("assay.toml"), "").unwrap();
    Project::open(ProjectOptions {
        config: Some(dir.join("assay.toml")),
        cache_dir: Some(cache.to_path_buf()),
        environment: Some(Default::default()),
        ..ProjectOptions::default()
    })
    .unwrap()
}

fn run_project(project: &Project, paths: &[std::path::PathBuf]) -> Vec<CaseResult> {
    let files = project.discover(paths, None).unwrap();
    let runner = project.runner(RunOptions::default()).unwrap();
    let mut collect = Collect::default();
    runner.run_blocking(project.cases(files, None).unwrap(), &mut collect);
    collect.0
}

fn cwasm_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries.filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "cwasm")).count()
    })
}

#[test]
fn a_run_of_stock_checks_loads_stock_and_its_agent_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::write(
        dir.path().join("one.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "The Beatles", "response": { "text": { "keywords": "Beatles" } } } ] }"#,
    )
    .unwrap();
    let project = project(dir.path(), &cache);
    let registry = project.registry().unwrap();
    assert!(registry.plugins().iter().all(|p| !p.is_loaded()), "nothing is loaded before a check runs");
    assert!(registry.has_key("gist") && registry.has_key("keywords"), "the built-ins' keys are known uncompiled");

    let results = run_project(&project, &[dir.path().join("one.hocon")]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].status.name(), "passed", "{:?}", results[0]);
    let registry = project.registry().unwrap();
    assert!(registry.plugin_for("keywords").unwrap().is_loaded());
    assert!(!registry.plugin_for("gist").unwrap().is_loaded(), "gist is never compiled without a gist check");
    assert!(!registry.has_key("pf_equals"), "no promptfoo config, no promptfoo plugin");
    // stock and the echo agent come precompiled in the binary: nothing was
    // compiled, so nothing was cached.
    assert_eq!(cwasm_files(&cache), 0);
}

/// A built-in whose component is no component at all.
const BROKEN: BuiltinPlugin = BuiltinPlugin {
    name: "broken",
    bytes: b"\0asm this is not a component",
    grants: Grants { log: true, judge: false, embeddings: false },
    version: "0.1.0",
    keys: &[("shiny", "never answers")],
    fresh_instances: false,
    capability_calls_per_check: 4,
    max_extras_bytes: None,
    deadline: None,
};

/// The stock component with a table that does not match its describe().
const MISDESCRIBED: BuiltinPlugin = BuiltinPlugin { name: "stock", version: "9.9.9", ..BUILTIN_MATCHERS[0] };

fn run_with(registry: Registry, hocon: &[(&str, &str)]) -> Vec<CaseResult> {
    let dir = tempfile::tempdir().unwrap();
    for (name, checks) in hocon {
        let text = format!(
            r#"{{ "agent": "echo", "interactions": [ {{ "text": "The Beatles", "response": {{ "text": {checks} }} }} ] }}"#
        );
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let (results, summary) = run_dir(Arc::new(registry), dir.path(), HttpSettings::default(), RunOptions::default());
    assert_eq!(summary.internal_errors, Vec::<String>::new());
    assert_eq!(summary.cases, hocon.len());
    results
}

/// The checks of the first interaction of `case`, as (key, outcome, error
/// kind, message).
fn checks(case: &CaseResult) -> Vec<(String, String, Option<ErrorKind>, String)> {
    let interaction = &case.samples[0].runs[0].interactions[0];
    interaction
        .checks
        .iter()
        .map(|c| {
            (
                c.key.clone(),
                format!("{:?}", c.verdict.outcome).to_lowercase(),
                c.verdict.error_kind,
                c.verdict.message.clone(),
            )
        })
        .collect()
}

#[test]
fn a_builtin_that_cannot_be_loaded_fails_each_of_its_checks_once_and_the_run_goes_on() {
    let mut registry = Registry::new();
    registry.add_builtins(runtime(), &Capabilities::default()).unwrap();
    registry.add_builtin(runtime(), &BROKEN, &Capabilities::default()).unwrap();
    let results = run_with(
        registry,
        &[
            ("a.hocon", r#"{ "shiny": 1, "not_shiny": 2, "keywords": "Beatles" }"#),
            ("b.hocon", r#"{ "shiny": 3 }"#),
            ("c.hocon", r#"{ "keywords": "Beatles" }"#),
        ],
    );
    let case = |id: &str| results.iter().find(|r| r.id == id).unwrap();
    let a = checks(case("a"));
    assert_eq!(a.len(), 3, "{a:?}");
    for (key, outcome, kind, message) in &a[..2] {
        assert_eq!((outcome.as_str(), *kind), ("error", Some(ErrorKind::Load)), "{key}: {message}");
        assert!(
            message.starts_with("plugin `broken` could not be loaded: failed to load plugin built-in `broken`"),
            "{message}"
        );
    }
    assert_eq!(a[2].1, "pass", "the stock check of the same response is answered");
    assert_eq!(case("a").status.name(), "error");
    assert_eq!(checks(case("b"))[0].2, Some(ErrorKind::Load), "the next case gets the same error");
    assert_eq!(case("c").status.name(), "passed");
}

#[test]
fn a_builtin_whose_table_differs_from_its_describe_is_refused_when_first_used() {
    let mut registry = Registry::new();
    registry.add_builtin(runtime(), &MISDESCRIBED, &Capabilities::default()).unwrap();
    let results = run_with(registry, &[("a.hocon", r#"{ "keywords": "Beatles" }"#)]);
    let [(_, outcome, kind, message)] = checks(&results[0]).try_into().unwrap();
    assert_eq!((outcome.as_str(), kind), ("error", Some(ErrorKind::Load)));
    assert!(message.contains("describes itself as `stock 0.1.0`"), "{message}");
    assert!(message.contains("(`stock 9.9.9`"), "{message}");
    assert!(message.contains("this is a bug in assay"), "{message}");
}

#[test]
fn promptfoo_configs_discovered_after_the_registry_was_built_get_the_promptfoo_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let config = dir.path().join("promptfooconfig.yaml");
    std::fs::write(
        &config,
        "prompts: [\"The capital of France is Paris.\"]\nproviders: [echo]\ntests:\n  - assert: [{type: contains, value: Paris}]\n",
    )
    .unwrap();
    let project = project(dir.path(), &cache);
    // Built first, as `assay serve` builds it when it starts.
    let before = project.registry().unwrap();
    assert!(!before.has_key("pf_contains"));
    let results = run_project(&project, std::slice::from_ref(&config));
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].status.name(), "passed", "{:?}", results[0]);
    let after = project.registry().unwrap();
    assert!(after.plugin_for("pf_contains").unwrap().is_loaded());
    assert!(!after.plugin_for("gist").unwrap().is_loaded());
    assert!(
        Arc::ptr_eq(before.plugin_for("keywords").unwrap(), after.plugin_for("keywords").unwrap()),
        "the plugins of the first registry are kept"
    );
}

#[test]
fn the_javascript_runner_gets_a_longer_deadline_and_the_others_the_default() {
    let capabilities = Capabilities::default();
    let deadline = |builtin: &BuiltinPlugin| {
        assay::plugin::LazyPlugin::builtin(runtime(), builtin, &capabilities).options().limits.deadline
    };
    assert_eq!(deadline(&JAVASCRIPT_PLUGIN), std::time::Duration::from_secs(10));
    let default = assay::sandbox::Limits::default().deadline;
    for builtin in BUILTIN_MATCHERS.iter().chain([&PROMPTFOO_PLUGIN, &PROMPTFOO_PYTHON_PLUGIN]) {
        assert_eq!(deadline(builtin), default, "{}", builtin.name);
    }
}
