//! promptfoo's `javascript` assertions as checks of the embedded
//! `javascript` plugin (`plugins/javascript/`, key `pf_javascript`), which
//! runs them in a JavaScript engine inside its component: no Node, no file,
//! network, environment or clock.
//!
//! The check's expected value holds what promptfoo's function would get:
//! the code (its vars rendered in, as promptfoo renders it as a Nunjucks
//! template), or for `file://path.js[:function]` the module's text, read
//! through the config's [`FileAccess`](crate::case::FileAccess) when the
//! config is read ([`AssertScripts`]), so that it obeys the same rules as
//! every other file a config names; `threshold`; and `context`: the
//! rendered `prompt`, `vars`, the `test` (`description`, `vars`, `options`,
//! `threshold`: not its `assert` list), the assertion's `config` and the
//! `provider` (`{id, label}`; the plugin makes `id` a function).

use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The key of the `javascript` plugin.
pub const KEY: &str = "pf_javascript";

/// The plugin's key for JavaScript that computes a value (a config or tests
/// module, a test generator, a transform): the value comes back in the
/// verdict's extras as `value`.
pub const VALUE_KEY: &str = "pf_js_value";

/// Runs a key that computes a value (`pf_js_value`, or the Python
/// runner's `pf_py_value`) in the sandbox: the key, its actual and expected
/// values → the value (`None` for `undefined`), or why there is none. The
/// project provides it (the `javascript` and Python built-ins of its own,
/// each compiled once when first used), so that a config can be read
/// before the run's plugins are loaded.
pub type ComputeValue<'a> = &'a (dyn Fn(&str, &Value, &Value) -> Result<Option<Value>, String> + Sync + 'a);

/// Whether `path` is a JavaScript or TypeScript module by its extension.
pub fn is_module(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|x| x.to_str())
        .is_some_and(|x| MODULE_EXTENSIONS.contains(&x.to_ascii_lowercase().as_str()))
}

/// The value of the module `name` (its text `source`) as promptfoo's
/// `importModule` gives it, or its export `function`; called with `args`
/// when it is a function (a test generator), its promise settled.
pub fn import(
    compute: ComputeValue<'_>,
    name: &str,
    source: &str,
    function: Option<&str>,
    args: &[Value],
) -> Result<Option<Value>, String> {
    if name.to_ascii_lowercase().ends_with(&format!(".{TSX_EXTENSION}")) {
        return Err(format!(
            "`{name}` is TSX, which assay's JavaScript engine does not compile; compile it to JavaScript (`tsc`, \
             `esbuild`) and name the `.js` file"
        ));
    }
    let expected = json!({
        "mode": "import",
        "file": { "name": name, "source": source, "function": function },
        "args": args,
    });
    compute(VALUE_KEY, &Value::Null, &expected)
}

/// The expected value of a `pf_js_value` transform: promptfoo's
/// `transform(code, input, context)`, `input` naming its first parameter
/// (`output` or `vars`); a `file://` one with its module's text.
pub fn transform_expected(code: &str, module: Option<(&str, &str)>, input: &str, context: Value) -> Value {
    match (ScriptReference::parse(code), module) {
        (Some(reference), Some((name, source))) => json!({
            "mode": "transform",
            "file": { "name": name, "source": source, "function": reference.function },
            "args": [context],
        }),
        _ => json!({ "mode": "transform", "code": code, "input": input, "args": [context] }),
    }
}

/// The inline transform (a `pf_js_value` body given the answer as
/// `output`) that runs an http provider's JavaScript `transformResponse`
/// `code` as promptfoo's http provider runs it: `json` is the body parsed
/// (`null` when it is not JSON), `text` the body; a function expression
/// (`(json, text) => …`, `function (json) {…}`) is called with them, any
/// other code is an expression of them; a result with `output` (or
/// `error`) is promptfoo's provider response, anything else the output.
/// A throw is promptfoo's `Transform failed: …` error.
pub fn response_transform(code: &str) -> String {
    let code = code.trim();
    let call =
        if is_function_expression(code) { format!("({code})(json, text, undefined)") } else { format!("({code})") };
    format!(
        "const text = typeof output === 'string' ? output : JSON.stringify(output);\n\
         let json = null;\n\
         try {{ json = typeof output === 'string' ? JSON.parse(output) : output; }} catch (e) {{}}\n\
         let result;\n\
         try {{ result = {call}; }} catch (e) {{\n\
           throw new Error('Transform failed: ' + e.message + ' : ' + text + ' : ' + JSON.stringify(json) + ' : undefined');\n\
         }}\n\
         if (typeof result === 'object' && result !== null && !Array.isArray(result) && ('output' in result || 'error' in result)) {{\n\
           if (result.error) throw new Error(String(result.error));\n\
           return result.output;\n\
         }}\n\
         return result;"
    )
}

/// promptfoo's `/^(\(.*?\)\s*=>|function\s*\(.*?\))/`: an arrow function or an
/// anonymous `function (…)`, its parameters on the first line.
fn is_function_expression(code: &str) -> bool {
    let first_line = code.split('\n').next().unwrap_or_default();
    if let Some(rest) = code.strip_prefix("function") {
        let rest = rest.trim_start();
        return rest.starts_with('(') && rest.split('\n').next().is_some_and(|line| line.contains(')'));
    }
    code.starts_with('(') && first_line.match_indices(')').any(|(at, _)| code[at + 1..].trim_start().starts_with("=>"))
}

/// The file extensions promptfoo loads as modules that the engine runs:
/// JavaScript's, and TypeScript's (promptfoo compiles them with `tsx`;
/// the engine runs them as JavaScript, so a file written in the JavaScript
/// subset of TypeScript runs as in promptfoo, and one whose types do not
/// parse is an error saying to compile it).
const MODULE_EXTENSIONS: &[&str] = &["js", "cjs", "mjs", "ts", "cts", "mts"];

/// TSX, which promptfoo compiles and which is not JavaScript at all.
const TSX_EXTENSION: &str = "tsx";

/// A `file://` reference of a `javascript` assertion, parsed as promptfoo
/// parses it: the path, and after the first `:` the function to call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptReference<'a> {
    /// The path, relative to the config's folder.
    pub path: &'a str,
    /// The export to call, if named.
    pub function: Option<&'a str>,
}

impl ScriptReference<'_> {
    /// The reference in `value`, if it is a `file://` one.
    pub fn parse(value: &str) -> Option<ScriptReference<'_>> {
        let reference = value.strip_prefix("file://")?;
        Some(match reference.split_once(':') {
            Some((path, function)) => ScriptReference { path, function: Some(function) },
            None => ScriptReference { path: reference, function: None },
        })
    }

    fn extension(&self) -> String {
        std::path::Path::new(self.path).extension().and_then(|x| x.to_str()).unwrap_or_default().to_ascii_lowercase()
    }
}

/// The modules the config's `javascript` assertions name by `file://`
/// (and its transforms and scoring functions, in JavaScript or Python),
/// read when the config is read (each once, whatever the number of tests
/// that use it), or why one cannot be (an error of the tests that use it).
#[derive(Debug, Default)]
pub struct AssertScripts(HashMap<String, Result<String, String>>);

impl AssertScripts {
    /// Reads the modules of the `javascript` assertions in `asserts` with
    /// `read` (a path relative to the config's folder → its text, or why
    /// not).
    pub fn read<'a>(
        asserts: impl Iterator<Item = &'a Map<String, Value>>,
        read: impl Fn(&str) -> Result<String, String>,
    ) -> AssertScripts {
        let mut scripts = HashMap::new();
        for assertion in asserts {
            let kind = assertion.get("type").and_then(Value::as_str).unwrap_or_default();
            if kind.strip_prefix("not-").unwrap_or(kind) != "javascript" {
                continue;
            }
            let Some(reference) = assertion.get("value").and_then(Value::as_str).and_then(ScriptReference::parse)
            else {
                continue;
            };
            if MODULE_EXTENSIONS.contains(&reference.extension().as_str()) && !scripts.contains_key(reference.path) {
                scripts.insert(reference.path.to_owned(), read(&format!("file://{}", reference.path)));
            }
        }
        AssertScripts(scripts)
    }
}

impl AssertScripts {
    /// The Python file a `file://FILE.py[:FUNCTION]` reference names, read
    /// with the config; `None` when `code` is not such a reference.
    pub(crate) fn python_file<'a>(&'a self, code: &'a str) -> Option<Result<PythonFile<'a>, String>> {
        let reference = ScriptReference::parse(code)?;
        if !super::python::is_python(std::path::Path::new(reference.path)) {
            return None;
        }
        Some(match self.0.get(reference.path) {
            Some(Ok(source)) => Ok(PythonFile { path: reference.path, function: reference.function, source }),
            Some(Err(error)) => Err(error.clone()),
            None => Err(format!("`{code}` was not read with the config")),
        })
    }

    /// Reads also the modules `references` name (`file://` transforms),
    /// each once.
    pub fn read_more<'a>(
        &mut self,
        references: impl Iterator<Item = &'a str>,
        read: impl Fn(&str) -> Result<String, String>,
    ) {
        for reference in references.filter_map(ScriptReference::parse) {
            let path = std::path::Path::new(reference.path);
            if (is_module(path) || super::python::is_python(path)) && !self.0.contains_key(reference.path) {
                self.0.insert(reference.path.to_owned(), read(&format!("file://{}", reference.path)));
            }
        }
    }

    /// The module of a `file://` transform, as [`transform_expected`] takes
    /// it; `Err` when it is not a module or could not be read.
    pub fn transform_module<'a>(&'a self, code: &'a str) -> Result<Option<(&'a str, &'a str)>, String> {
        let Some(reference) = ScriptReference::parse(code) else { return Ok(None) };
        if !is_module(std::path::Path::new(reference.path)) {
            return Err(format!(
                "`{code}` is neither a JavaScript module nor a `.py` file; assay runs JavaScript and Python \
                 transforms (sandboxed)"
            ));
        }
        match self.0.get(reference.path) {
            Some(Ok(source)) => Ok(Some((reference.path, source))),
            Some(Err(error)) => Err(error.clone()),
            None => Err(format!("`{code}` was not read with the config")),
        }
    }
}

/// A `file://FILE.py[:FUNCTION]` function of the config, read.
pub struct PythonFile<'a> {
    /// The path, relative to the config's folder.
    pub path: &'a str,
    /// The function named after the colon, if any.
    pub function: Option<&'a str>,
    /// The file's text.
    pub source: &'a str,
}

/// What a `javascript` assertion's context holds beyond its vars and
/// prompt: the test, the provider, and the modules read.
#[derive(Clone, Copy)]
pub struct ScriptContext<'a> {
    /// The test (after `defaultTest` and var expansion) as promptfoo's
    /// context holds it, made when an assertion asks for it.
    pub test: &'a dyn Fn() -> Value,
    /// The id of the provider the case runs on.
    pub provider_id: &'a str,
    /// Its label, if it has one.
    pub provider_label: Option<&'a str>,
    /// Its `config` (the `functions` an `is-valid-openai-function-call`
    /// assertion checks a call against).
    pub provider_config: &'a Map<String, Value>,
    /// The `file://` modules of the config's assertions.
    pub scripts: &'a AssertScripts,
}

/// The expected value of the check of a `javascript` assertion (`at` names
/// it in errors) whose `value` is `value`, with its code `rendered` (vars
/// filled in; `None` for a `file://` reference, which promptfoo does not
/// render).
pub fn expected(
    assertion: &Map<String, Value>,
    at: &str,
    value: &str,
    rendered: impl FnOnce() -> Result<String, String>,
    threshold: Option<f64>,
    prompt: &str,
    context: &ScriptContext<'_>,
) -> Result<Map<String, Value>, String> {
    let mut expected = Map::new();
    if let Some(reference) = ScriptReference::parse(value) {
        let extension = reference.extension();
        if extension == TSX_EXTENSION {
            return Err(format!(
                "{at}: `{value}` is TSX, which assay's JavaScript engine does not compile\n\n\
                 Consider compiling it to JavaScript (`tsc`, `esbuild`) and naming the `.js` file"
            ));
        }
        if !MODULE_EXTENSIONS.contains(&extension.as_str()) {
            return Err(format!(
                "{at}: `{value}` is not a JavaScript module; a `javascript` assertion's `file://` names a `.js`, \
                 `.cjs`, `.mjs` or `.ts` file"
            ));
        }
        let source = match context.scripts.0.get(reference.path) {
            Some(Ok(source)) => source,
            Some(Err(error)) => return Err(format!("{at}: {error}")),
            None => return Err(format!("{at}: `{value}` was not read with the config")),
        };
        expected.insert("value".into(), Value::String(value.to_owned()));
        expected
            .insert("file".into(), json!({ "name": reference.path, "source": source, "function": reference.function }));
    } else if value.starts_with("package:") {
        return Err(format!(
            "{at}: `{value}` loads an npm package, which assay does not run; copy the function into a `.js` file \
             beside the config and name it with `file://`"
        ));
    } else {
        expected.insert("value".into(), Value::String(rendered()?));
    }
    if let Some(threshold) = threshold {
        expected.insert("threshold".into(), json!(threshold));
    }
    expected.insert("context".into(), context_value(assertion, prompt, context));
    Ok(expected)
}

/// promptfoo's `context`, as far as assay knows it before the answer.
fn context_value(assertion: &Map<String, Value>, prompt: &str, context: &ScriptContext<'_>) -> Value {
    let mut written = (context.test)();
    // Not its `assert` list: it would make every check of the test carry
    // every other one.
    if let Value::Object(test) = &mut written {
        test.remove("assert");
    }
    let vars = written.get("vars").cloned().unwrap_or_else(|| json!({}));
    let mut provider = json!({ "id": context.provider_id });
    if let Some(label) = context.provider_label {
        provider["label"] = json!(label);
    }
    let mut value = json!({
        "prompt": prompt,
        "vars": vars,
        "test": written,
        "provider": provider,
    });
    if let Some(config) = assertion.get("config") {
        value["config"] = config.clone();
    }
    value
}

#[cfg(test)]
mod tests {
    #[test]
    fn function_expressions_are_told_from_expressions_as_promptfoo_tells_them() {
        for code in
            ["(json) => json.a", "(json, text)\n  => text", "function (json) { return json.a; }", "function(j){}"]
        {
            assert!(is_function_expression(code), "{code}");
        }
        for code in ["json.a", "(json.a)", "function named(json) {}", "(json\n) => 1", "json => json.a"] {
            assert!(!is_function_expression(code), "{code}");
        }
        assert!(response_transform("json.a").contains("result = (json.a);"));
        assert!(response_transform(" (j) => j.a ").contains("result = ((j) => j.a)(json, text, undefined);"));
    }

    use super::*;

    #[test]
    fn references_split_the_function_at_the_first_colon() {
        assert_eq!(ScriptReference::parse("file://a/b.js"), Some(ScriptReference { path: "a/b.js", function: None }));
        assert_eq!(
            ScriptReference::parse("file://b.cjs:check:x"),
            Some(ScriptReference { path: "b.cjs", function: Some("check:x") })
        );
        assert_eq!(ScriptReference::parse("output.length > 1"), None);
    }

    #[test]
    fn each_module_is_read_once_and_only_for_javascript_assertions() {
        let asserts: Vec<Map<String, Value>> = [
            json!({"type": "javascript", "value": "file://a.js:one"}),
            json!({"type": "not-javascript", "value": "file://a.js:two"}),
            json!({"type": "javascript", "value": "file://b.ts"}),
            json!({"type": "javascript", "value": "file://d.tsx"}),
            json!({"type": "contains", "value": "file://c.js"}),
            json!({"type": "javascript", "value": "output"}),
        ]
        .into_iter()
        .map(|v| v.as_object().unwrap().clone())
        .collect();
        let reads = std::cell::RefCell::new(Vec::new());
        let scripts = AssertScripts::read(asserts.iter(), |reference| {
            reads.borrow_mut().push(reference.to_owned());
            Ok(String::new())
        });
        assert_eq!(reads.into_inner(), ["file://a.js", "file://b.ts"]);
        assert_eq!(scripts.0.len(), 2);
    }
}
