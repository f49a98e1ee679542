//! promptfoo's `python` assertions as checks of the `pf_python` key, which
//! the embedded Python runner (`plugins/python/`, CPython in the sandbox)
//! answers: this module owns what the runner is sent and the `.py` files
//! such assertions name.
//!
//! An inline assertion's `value` is code (rendered with the test's vars,
//! as promptfoo renders it); `file://FILE.py` and `file://FILE.py:FUNCTION`
//! name a function (default `get_assert`) of a file in the config's folder,
//! which [`PythonFiles::read`] reads with the config (the component reads
//! no file: it gets the text). Either way the runner also gets promptfoo's
//! context object (`prompt`, `vars`, `test`, the assertion's `config`), the
//! assertion's `threshold`, and `inverse` for `not-python`.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::Path;

/// The Python runner's key that computes a value: a `file://FILE.py`
/// function called with an input and `args` (a transform, `transformVars`,
/// an `assertScoringFunction`), its result in the verdict's extras.
pub const VALUE_KEY: &str = "pf_py_value";

/// Whether `path` names a Python file.
pub fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("py"))
}

/// The `pf_py_value` expected value calling the function `function` of
/// the file `path` (its text `source`) with the check's actual value and
/// then `args`; `transform` says that it must return something, as
/// promptfoo's transforms must.
pub fn value_expected(path: &str, source: &str, function: &str, transform: bool, args: Value) -> Value {
    let mut expected = json!({
        "file": { "name": path, "function": function, "source": source },
        "args": args,
    });
    if transform {
        expected["mode"] = json!("transform");
    }
    expected
}

/// The `.py` files the tests' `python` assertions name, read when the
/// config is read: each file's text, or why it cannot be read (an error of
/// the tests that use it, not of the config), by its path as written.
#[derive(Debug, Default)]
pub struct PythonFiles(HashMap<String, Result<String, String>>);

impl PythonFiles {
    /// The files `asserts` (the tests' assertions) name, each read once
    /// with `read` (given the `file://` reference without a function).
    pub fn read<'a>(
        asserts: impl Iterator<Item = &'a Map<String, Value>>,
        mut read: impl FnMut(&str) -> Result<String, String>,
    ) -> PythonFiles {
        let mut files = HashMap::new();
        for assertion in asserts {
            if let Some(reference) = file_reference(assertion)
                && reference.path.ends_with(".py")
                && !files.contains_key(reference.path)
            {
                files.insert(reference.path.to_owned(), read(&format!("file://{}", reference.path)));
            }
        }
        PythonFiles(files)
    }
}

/// A `file://PATH[:FUNCTION]` value.
struct FileReference<'a> {
    path: &'a str,
    function: Option<&'a str>,
}

/// The file a `python` assertion names, if its value is a `file://`
/// reference (split on the first `:` after the scheme, as promptfoo splits
/// it).
fn file_reference(assertion: &Map<String, Value>) -> Option<FileReference<'_>> {
    let kind = assertion.get("type")?.as_str()?;
    if kind.strip_prefix("not-").unwrap_or(kind) != "python" {
        return None;
    }
    let reference = assertion.get("value")?.as_str()?.strip_prefix("file://")?;
    Some(match reference.split_once(':') {
        Some((path, function)) => FileReference { path, function: Some(function) },
        None => FileReference { path: reference, function: None },
    })
}

/// What a test gives its `python` assertions: itself (promptfoo's
/// `context.test`, made when a `python` assertion asks for it) and the
/// files they name.
pub struct PythonScope<'a> {
    /// The test as promptfoo's context holds it (`description`, `vars`,
    /// `assert`, `options`, `threshold`).
    pub test: &'a dyn Fn() -> Value,
    /// The config's `.py` files.
    pub files: &'a PythonFiles,
}

/// The `pf_python` check's expected value for the `python` assertion
/// `assertion` (`at` names it in errors) on the answer to `prompt`;
/// `fill` fills the test's vars into inline code.
pub fn expected(
    assertion: &Map<String, Value>,
    at: &str,
    negated: bool,
    fill: &dyn Fn(&Value) -> Result<Value, String>,
    prompt: &str,
    scope: &PythonScope<'_>,
) -> Result<Map<String, Value>, String> {
    let kind = if negated { "not-python" } else { "python" };
    let mut expected = Map::new();
    match (file_reference(assertion), assertion.get("value")) {
        (Some(reference), _) => {
            if !reference.path.ends_with(".py") {
                return Err(format!(
                    "{at} (`{kind}`) names `file://{}`, which is not a `.py` file; write `file://FILE.py` (its \
                     `get_assert`) or `file://FILE.py:FUNCTION`",
                    reference.path
                ));
            }
            let source = match scope.files.0.get(reference.path) {
                Some(Ok(source)) => source.clone(),
                Some(Err(error)) => return Err(format!("{at} (`{kind}`): {error}")),
                None => return Err(format!("{at} (`{kind}`): `file://{}` was not read", reference.path)),
            };
            let function = reference.function.filter(|f| !f.is_empty()).unwrap_or("get_assert");
            expected.insert("file".into(), Value::String(reference.path.to_owned()));
            expected.insert("function".into(), Value::String(function.to_owned()));
            expected.insert("source".into(), Value::String(source));
        }
        (None, Some(value @ Value::String(_))) => {
            let code = fill(value).map_err(|e| format!("{at}.value: {e}"))?;
            expected.insert("code".into(), code);
        }
        (None, None) => {
            return Err(format!(
                "{at} (`{kind}`) has no `value`: write Python code, or `file://FILE.py` for a file's `get_assert`"
            ));
        }
        (None, Some(other)) => {
            return Err(format!("{at} (`{kind}`): its `value` is {other}, not Python code (a string)"));
        }
    }
    if let Some(Value::String(value)) = assertion.get("value") {
        // promptfoo appends the value to a failure's reason.
        expected.insert("value".into(), Value::String(value.clone()));
    }
    expected.insert("context".into(), context(assertion, prompt, (scope.test)()));
    if negated {
        expected.insert("inverse".into(), Value::Bool(true));
    }
    Ok(expected)
}

/// promptfoo's context object for a script assertion: the prompt sent, the
/// test's vars, the test, and the assertion's `config` when it has one
/// (promptfoo's `logProbs`, `provider` and `providerResponse` have no
/// counterpart here).
fn context(assertion: &Map<String, Value>, prompt: &str, test: Value) -> Value {
    let vars = test.get("vars").cloned().unwrap_or_else(|| json!({}));
    let mut context = json!({"prompt": prompt, "vars": vars, "test": test});
    if let Some(config) = assertion.get("config").filter(|c| !c.is_null()) {
        context["config"] = config.clone();
    }
    context
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assertion(value: Value) -> Map<String, Value> {
        json!({"type": "not-python", "value": value}).as_object().unwrap().clone()
    }

    #[test]
    fn each_py_file_is_read_once_and_a_function_is_split_off() {
        let asserts = [
            assertion(json!("file://checks.py:length")),
            assertion(json!("file://checks.py")),
            assertion(json!("file://notes.txt")),
            assertion(json!("len(output) > 1")),
        ];
        let mut asked = Vec::new();
        let files = PythonFiles::read(asserts.iter(), |reference| {
            asked.push(reference.to_owned());
            Ok("def length(output, context):\n    return True\n".into())
        });
        assert_eq!(asked, ["file://checks.py"]);
        assert!(files.0["checks.py"].is_ok());
        let reference = file_reference(&asserts[0]).unwrap();
        assert_eq!((reference.path, reference.function), ("checks.py", Some("length")));
    }
}
