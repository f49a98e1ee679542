//! The built-in plugins: components committed under `plugins/` (built by
//! `cargo xtask build`) and embedded in the binary, so that assay works with
//! a plain stable toolchain and no wasm target. Each comes with what its
//! `describe()` answers, committed here, so that the registry knows its keys
//! without compiling it (a test compiles each and compares); it is loaded
//! the first time one of its checks runs ([`crate::plugin::LazyPlugin`]):
//! from the native code embedded beside it (`sandbox/precompiled.rs`; all
//! but the JavaScript and Python runners), else compiled.

use crate::plugin::matcher::MatcherKey;
use crate::sandbox::Grants;
use std::time::Duration;

/// One built-in matcher component.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinPlugin {
    /// Its name (also its label for `[keys]`).
    pub name: &'static str,
    /// The component.
    pub bytes: &'static [u8],
    /// What the built-in policy grants it.
    pub grants: Grants,
    /// The version its `describe()` gives.
    pub version: &'static str,
    /// The keys its `describe()` gives, with their summaries, in its order.
    pub keys: &'static [(&'static str, &'static str)],
    /// Whether every call gets a fresh instance
    /// ([`crate::sandbox::ComponentOptions::fresh_instances`]): a plugin
    /// running code from test files, which could leave state behind.
    pub fresh_instances: bool,
    /// The judge or embeddings calls one check may make
    /// ([`crate::sandbox::Limits::capability_calls_per_check`]).
    pub capability_calls_per_check: u32,
    /// The largest extras kept ([`crate::sandbox::Limits::max_extras_bytes`]),
    /// when not the default: a plugin that computes values in them.
    pub max_extras_bytes: Option<usize>,
    /// The wall-clock bound of one call ([`crate::sandbox::Limits::deadline`]),
    /// when not the default: a plugin that interprets code.
    pub deadline: Option<Duration>,
}

/// The judge calls a check may make, for a built-in that asks once per
/// check.
const ONE_ASK: u32 = 4;

/// The judge calls a promptfoo assertion may make: `g-eval` asks twice per
/// criterion, `conversation-relevance` once per window and once to sum up.
/// Still a bound: a conversation longer than this is an error saying so.
const MANY_ASKS: u32 = 64;

impl BuiltinPlugin {
    /// Its keys as `describe()` gives them.
    pub fn described_keys(&self) -> Vec<MatcherKey> {
        self.keys
            .iter()
            .map(|(key, summary)| MatcherKey { key: (*key).to_owned(), summary: (*summary).to_owned() })
            .collect()
    }
}

/// Every built-in matcher component.
pub const BUILTIN_MATCHERS: &[BuiltinPlugin] = &[
    BuiltinPlugin {
        name: "stock",
        bytes: include_bytes!("../../../plugins/stock/stock.wasm"),
        grants: Grants { log: true, judge: false, embeddings: false },
        version: "0.1.0",
        keys: &[
            ("value", "the value equals the expected JSON value (5 == 5.0, no coercion)"),
            ("less", "the value is less than the expected number or string"),
            ("greater", "the value is greater than the expected number or string"),
            ("keywords", "the keyword occurs in the string, is an element of the list or a key of the object"),
        ],
        fresh_instances: false,
        capability_calls_per_check: ONE_ASK,
        max_extras_bytes: None,
    deadline: None,
    },
    BuiltinPlugin {
        name: "gist",
        bytes: include_bytes!("../../../plugins/gist/gist.wasm"),
        grants: Grants { log: true, judge: true, embeddings: false },
        version: "0.1.0",
        keys: &[("gist", "a language-model judge decides whether the text meets the acceptance criteria")],
        fresh_instances: false,
        capability_calls_per_check: ONE_ASK,
        max_extras_bytes: None,
    deadline: None,
    },
];

/// The promptfoo assertions plugin (`plugins/promptfoo/`, the `pf_*`
/// keys): embedded, and registered for a run that holds promptfoo configs
/// and loads no plugin of its own for them (`Project::registry`), so that
/// `assay run promptfooconfig.yaml` needs no configuration. Like every
/// built-in it is loaded only when one of its checks runs, from its
/// embedded native code (compiling it would take ~0.8 s).
pub const PROMPTFOO_PLUGIN: BuiltinPlugin = BuiltinPlugin {
    name: "promptfoo",
    bytes: include_bytes!("../../../plugins/promptfoo/promptfoo.wasm"),
    grants: Grants { log: true, judge: true, embeddings: true },
    version: "0.1.0",
    keys: &[
        ("pf_equals", "promptfoo equals: the output is the value (or, for a JSON value, deep-equals it)"),
        ("pf_contains", "promptfoo contains: the output contains the value"),
        ("pf_icontains", "promptfoo icontains: the output contains the value, ignoring case"),
        ("pf_contains_any", "promptfoo contains-any: the output contains one of the values"),
        ("pf_contains_all", "promptfoo contains-all: the output contains every value"),
        ("pf_icontains_any", "promptfoo icontains-any: contains-any ignoring case"),
        ("pf_icontains_all", "promptfoo icontains-all: contains-all ignoring case"),
        ("pf_starts_with", "promptfoo starts-with: the output starts with the value"),
        ("pf_regex", "promptfoo regex: the output matches the JavaScript regular expression"),
        ("pf_is_json", "promptfoo is-json: the output is JSON (conforming to the schema in value, if any)"),
        ("pf_contains_json", "promptfoo contains-json: the output contains a JSON object (conforming to the schema)"),
        (
            "pf_is_valid_openai_tools_call",
            "promptfoo is-valid-openai-tools-call: the output is OpenAI tool calls (shape only)",
        ),
        (
            "pf_is_valid_openai_function_call",
            "promptfoo is-valid-openai-function-call: the output is a function call conforming to the provider's functions",
        ),
        ("pf_levenshtein", "promptfoo levenshtein: edit distance to the value at most the threshold (default 5)"),
        ("pf_rouge_n", "promptfoo rouge-n: ROUGE-1 F-score against the value at least the threshold (default 0.75)"),
        ("pf_bleu", "promptfoo bleu: BLEU-4 against the value(s) at least the threshold (default 0.5)"),
        ("pf_similar", "promptfoo similar: embedding cosine similarity at least the threshold (default 0.75)"),
        (
            "pf_select_best",
            "promptfoo select-best: the index of the output the judge picks (the host compares a test's outputs with it)",
        ),
        ("pf_llm_rubric", "promptfoo llm-rubric: the judge grades the output against the rubric"),
        (
            "pf_model_graded_closedqa",
            "promptfoo model-graded-closedqa: the judge decides whether the output meets the criterion",
        ),
        ("pf_factuality", "promptfoo factuality: the judge compares the output's facts with the reference answer"),
        (
            "pf_g_eval",
            "promptfoo g-eval: the judge writes evaluation steps for each criterion, then scores the output 0-10",
        ),
        (
            "pf_conversation_relevance",
            "promptfoo conversation-relevance: the judge decides whether each window's last answer is relevant",
        ),
        (
            "pf_answer_relevance",
            "promptfoo answer-relevance: questions the judge derives from the output are close to the query (embeddings)",
        ),
        (
            "pf_context_recall",
            "promptfoo context-recall: the judge attributes the expected answer's sentences to the context",
        ),
        (
            "pf_context_relevance",
            "promptfoo context-relevance: the share of the context the judge finds the query needs",
        ),
        (
            "pf_context_faithfulness",
            "promptfoo context-faithfulness: the context supports the statements the judge finds in the output",
        ),
        ("pf_latency", "promptfoo latency: the response took at most threshold milliseconds"),
        ("pf_cost", "promptfoo cost: the response cost at most threshold"),
    ],
    fresh_instances: false,
    capability_calls_per_check: MANY_ASKS,
    max_extras_bytes: None,
    deadline: None,
};

/// The `javascript` plugin (`plugins/javascript/`, the key
/// `pf_javascript`): promptfoo's `javascript` assertions, run by a
/// JavaScript engine (Boa) inside the component. Embedded and registered
/// like [`PROMPTFOO_PLUGIN`], for runs that hold promptfoo configs; it
/// needs nothing but the log. At 11.8 MB (the engine, oxc's TypeScript
/// transform and node-sql-parser's builds) it is the largest built-in but
/// Python: compiling it takes seconds the first time one of its checks
/// runs (announced), then the compile cache has it.
pub const JAVASCRIPT_PLUGIN: BuiltinPlugin = BuiltinPlugin {
    name: "javascript",
    bytes: include_bytes!("../../../plugins/javascript/javascript.wasm"),
    grants: Grants { log: true, judge: false, embeddings: false },
    version: "0.1.0",
    keys: &[
        (
            "pf_javascript",
            "promptfoo javascript: the assertion's JavaScript function passes (run sandboxed, without Node)",
        ),
        (
            "pf_js_value",
            "promptfoo JavaScript that computes a value (a JS config or tests file, a test generator, a transform), run \
             sandboxed; the value is in the extras",
        ),
        ("pf_is_sql", "promptfoo is-sql: the output is SQL node-sql-parser parses for the database (run sandboxed)"),
        (
            "pf_contains_sql",
            "promptfoo contains-sql: the output holds SQL node-sql-parser parses (its sql code blocks, else the output)",
        ),
    ],
    // Each assertion gets an engine context of its own inside the
    // component: nothing one sets is seen by the next.
    fresh_instances: false,
    capability_calls_per_check: ONE_ASK,
    // `pf_js_value` returns a config, tests or a transformed answer in its
    // extras: as large as a config may be.
    max_extras_bytes: Some(JS_VALUE_BYTES),
    // An is-sql check evaluates node-sql-parser's grammar for its database
    // in the engine: the fixture's slowest took 1.0-1.7 s on a 2-core
    // machine under load and once over 2 s (the default) in CI's tests,
    // which run in parallel. An endless loop is still stopped.
    deadline: Some(INTERPRETER_DEADLINE),
};

/// The deadline of one call of the JavaScript runner.
const INTERPRETER_DEADLINE: Duration = Duration::from_secs(10);

/// The largest value `pf_js_value` returns: a promptfoo config's cap.
const JS_VALUE_BYTES: usize = 8 << 20;

/// The promptfoo Python runner (`plugins/python/`, the key `pf_python`):
/// promptfoo's `python` assertions, run in CPython inside the sandbox (its
/// standard library only; no files, network, environment or
/// subprocesses). Embedded and registered like [`PROMPTFOO_PLUGIN`]. It is
/// CPython, so it is big: 20.8 MB, which the binary carries as it is
/// (deflated it would be 6.6 MB, but inflating it took ~0.4 s, twice what
/// loading it from the compile cache takes, on every first use), and its
/// first compile takes ~16 s of CPU (25-45 s on a busy 2-core machine) and
/// leaves a 37 MB artifact in the compile cache, from which every later run
/// loads it in ~0.2 s.
pub const PROMPTFOO_PYTHON_PLUGIN: BuiltinPlugin = BuiltinPlugin {
    name: "promptfoo-python",
    bytes: include_bytes!("../../../plugins/python/python.wasm"),
    grants: Grants { log: true, judge: false, embeddings: false },
    version: "0.1.0",
    keys: &[
        (
            "pf_python",
            "promptfoo python: the assertion's Python code (inline, or a file's get_assert) passes the output",
        ),
        (
            "pf_py_value",
            "promptfoo Python that computes a value (a transform, transformVars, a var function, an \
             assertScoringFunction), run sandboxed; the value is in the extras",
        ),
    ],
    // An assertion may replace the interpreter's builtins (`len`), which
    // would change the verdicts of the cases after it: each call (one
    // case's assertions) runs in an interpreter of its own, as promptfoo
    // runs each in a process of its own.
    fresh_instances: true,
    capability_calls_per_check: ONE_ASK,
    // `pf_py_value` returns a transformed answer or vars in its extras.
    max_extras_bytes: Some(JS_VALUE_BYTES),
    deadline: None,
};

/// The built-ins a run of promptfoo configs registers, each unless a plugin
/// of the project provides its keys already.
pub const PROMPTFOO_BUILTINS: &[BuiltinPlugin] = &[PROMPTFOO_PLUGIN, PROMPTFOO_PYTHON_PLUGIN, JAVASCRIPT_PLUGIN];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::first_party_for;
    use crate::plugin::matcher::MatcherPlugin;
    use crate::sandbox::{ComponentOptions, ComponentSource, Runtime};

    /// The tables cannot drift from the components: each built-in is
    /// compiled and its own `describe()` compared with its table.
    #[test]
    fn every_builtin_describes_itself_as_its_table_says() {
        let runtime = Runtime::default();
        for builtin in BUILTIN_MATCHERS.iter().chain([&PROMPTFOO_PLUGIN, &JAVASCRIPT_PLUGIN]) {
            let options = ComponentOptions { grants: builtin.grants, ..ComponentOptions::default() };
            let plugin = MatcherPlugin::load(&runtime, ComponentSource::Builtin(builtin.name), builtin.bytes, options)
                .unwrap_or_else(|e| panic!("{}: {e}", builtin.name));
            assert_eq!(
                (plugin.name(), plugin.version(), plugin.keys()),
                (builtin.name, builtin.version, builtin.described_keys().as_slice()),
                "the table of the built-in `{}` (plugin/builtin.rs) differs from its describe()",
                builtin.name
            );
        }
    }

    /// The JavaScript engine runs code from configs: its component must
    /// reach nothing but the log (no WASI: no files, network, environment
    /// or clock), whatever the policy would grant.
    #[test]
    fn the_javascript_plugin_imports_nothing_but_the_log() {
        let engine = wasmtime::Engine::default();
        let component = wasmtime::component::Component::new(&engine, JAVASCRIPT_PLUGIN.bytes).unwrap();
        let mut imports: Vec<String> =
            component.component_type().imports(&engine).map(|(name, _)| name.to_owned()).collect();
        imports.sort();
        assert_eq!(imports, ["assay:plugin/log@0.3.0", "assay:plugin/types@0.3.0"]);
    }

    #[test]
    fn the_promptfoo_plugin_has_the_keys_first_party_lists_for_it() {
        for (key, _) in PROMPTFOO_PLUGIN.keys {
            assert_eq!(first_party_for(key).map(|p| p.label), Some("promptfoo"), "{key}");
        }
        let listed = first_party_for("pf_equals").unwrap().keys;
        assert_eq!(listed.len(), PROMPTFOO_PLUGIN.keys.len());
    }
}
