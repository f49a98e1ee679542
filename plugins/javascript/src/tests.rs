//! The plugin natively: promptfoo's calling convention, its return values,
//! and the sandbox's refusals, each through `JavaScript::evaluate` as the
//! component runs it.

use super::*;
use serde_json::json;

/// The verdict of `code` (inline) on `output`.
fn check(code: &str, output: &str) -> Verdict {
    check_with(json!({ "value": code }), output)
}

fn check_with(expected: Json, output: &str) -> Verdict {
    JavaScript::evaluate("pf_javascript", &Actual::text(output), &expected).unwrap()
}

/// The `not-` form's pass, score and reason from a verdict's extras.
fn negated(verdict: &Verdict) -> (bool, f64, String) {
    let negated = &verdict.extras.as_ref().unwrap()["negated"];
    (negated["pass"].as_bool().unwrap(), negated["score"].as_f64().unwrap(), negated["reason"].as_str().unwrap().into())
}

#[test]
fn one_line_expressions_and_declarations_are_returned() {
    assert!(check("output.length > 3", "hello").pass);
    assert!(!check("output.length > 30", "hello").pass);
    assert!(check("const n = output.length; n === 5;", "hello").pass);
    assert!(check("output.includes('a;b')", "x a;b").pass);
    let failed = check("output.startsWith('Hi')", "hello");
    assert_eq!((failed.pass, failed.score), (false, Some(0.0)));
    assert_eq!(failed.message, "Custom function returned false\noutput.startsWith('Hi')");
    assert_eq!(negated(&failed), (true, 1.0, "Assertion passed".into()));
}

#[test]
fn several_lines_are_a_function_body_with_output_and_context() {
    let code = "const words = output.split(' ');\nif (words.length < 2) return false;\nreturn context.vars.topic === 'cats' && context.prompt.startsWith('Tell');\n";
    let context = json!({"prompt": "Tell me", "vars": {"topic": "cats"}, "test": {}});
    assert!(check_with(json!({"value": code, "context": context}), "two words").pass);
    assert!(!check_with(json!({"value": code, "context": context}), "one").pass);
    // The context's provider id is a function, as on promptfoo's providers.
    let context = json!({"provider": {"id": "echo", "label": "mine"}});
    assert!(check_with(json!({"value": "context.provider.id() === 'echo'", "context": context}), "x").pass);
}

#[test]
fn numbers_are_scores_judged_by_the_threshold() {
    let verdict = check_with(json!({"value": "output.length / 10"}), "hello");
    assert_eq!((verdict.pass, verdict.score), (true, Some(0.5)));
    let verdict = check_with(json!({"value": "output.length / 10", "threshold": 0.6}), "hello");
    assert_eq!((verdict.pass, verdict.score), (false, Some(0.5)));
    // A score over 1 is clamped; promptfoo's number is kept.
    let verdict = check("output.length", "hello");
    assert_eq!((verdict.pass, verdict.score), (true, Some(1.0)));
    assert_eq!(verdict.extras.as_ref().unwrap()["promptfoo_score"], 5.0);
    assert!(!check("0", "x").pass);
}

#[test]
fn grading_results_and_promises_are_taken_as_promptfoo_takes_them() {
    let code = "return { pass: output.length > 3, score: 0.75, reason: 'long enough' };\n// two lines";
    let verdict = check(code, "hello");
    assert_eq!((verdict.pass, verdict.score, verdict.message.as_str()), (true, Some(0.75), "long enough"));
    assert_eq!(negated(&verdict), (false, 0.75, "Custom function returned true".into()));
    // An async body, a promise chain and a timer all settle.
    assert!(check("const same = async () => output === 'hi';\nreturn same();", "hi").pass);
    assert!(check("Promise.resolve(7).then(n => n > 5)", "x").pass);
    let timer =
        "const later = (resolve) => setTimeout(() => resolve(Date.now() === 1500), 1500);\nreturn new Promise(later);";
    assert!(check(timer, "x").pass);
    let verdict = check("new Promise(() => {})", "x");
    assert!(verdict.message.contains("the promise the function returned never settled"), "{}", verdict.message);
    // What is not a result fails, as promptfoo's validation throws.
    let verdict = check("'yes'", "x");
    assert!(!verdict.pass);
    assert!(
        verdict.message.starts_with(
            "Custom function threw error: Custom function must return a boolean, number, or GradingResult object. \
             Got type string: \"yes\""
        ),
        "{}",
        verdict.message
    );
}

#[test]
fn a_throw_fails_both_forms_with_the_error_and_its_stack() {
    let verdict = check("JSON.parse(output).ok", "not json");
    assert!(!verdict.pass);
    assert!(!negated(&verdict).0);
    assert!(verdict.message.starts_with("Custom function threw error: "), "{}", verdict.message);
    assert!(verdict.message.contains("Stack Trace: SyntaxError"), "{}", verdict.message);
    assert!(verdict.message.ends_with("\nJSON.parse(output).ok"), "{}", verdict.message);
    let verdict = check("const why = 'nope';\nthrow new TypeError(why);", "x");
    assert!(
        verdict.message.starts_with("Custom function threw error: nope\nStack Trace: TypeError: nope"),
        "{}",
        verdict.message
    );
}

#[test]
fn files_are_commonjs_or_es_modules_with_named_functions() {
    let file = |source: &str, function: Option<&str>| json!({"value": "file://check.js", "file": {"name": "check.js", "source": source, "function": function}});
    let commonjs = "module.exports = (output, context) => output === context.vars.want;";
    let context = json!({"vars": {"want": "hi"}});
    let mut expected = file(commonjs, None);
    expected["context"] = context.clone();
    assert!(check_with(expected.clone(), "hi").pass);
    assert!(!check_with(expected, "ho").pass);
    let named = "exports.short = (output) => output.length < 3;\nexports.long = (output) => ({pass: output.length > 3, score: 1, reason: 'long'});";
    assert!(check_with(file(named, Some("short")), "hi").pass);
    assert_eq!(check_with(file(named, Some("long")), "hello").message, "long");
    // What promptfoo makes the test's error is an error verdict.
    let error = |expected: Json| JavaScript::evaluate("pf_javascript", &Actual::text("hi"), &expected).unwrap_err();
    let missing = error(file(named, Some("medium")));
    assert!(missing.starts_with("file://check.js:medium threw Error: Assertion malformed: check.js has no function `medium` (it exports `short`, `long`)"), "{missing}");
    let throws = error(file("module.exports = (output) => { throw new RangeError(`no ${output}`); };", None));
    assert!(throws.starts_with("file://check.js threw RangeError: no hi"), "{throws}");
    let rejects = error(file("module.exports = async () => Promise.reject(new Error('later'));", None));
    assert!(rejects.starts_with("file://check.js threw Error: later"), "{rejects}");
    // A result promptfoo refuses is the assertion's failure, as inline.
    let refused = check_with(file("module.exports = () => 'yes';", None), "hi");
    assert!(
        refused.message.starts_with("Custom function threw error: Custom function must return"),
        "{}",
        refused.message
    );
    let esm = "export function exact(output) { return output === 'hi'; }\nexport const count = async (output) => output.length;";
    assert!(check_with(file(esm, Some("exact")), "hi").pass);
    assert_eq!(check_with(file(esm, Some("count")), "hi").score, Some(1.0));
    // As in promptfoo, a default export is what the module is: its named
    // exports are out of reach.
    let esm =
        "export default function (output) { return output.length; }\nexport const exact = (output) => output === 'hi';";
    assert_eq!(check_with(file(esm, None), "hi").score, Some(1.0));
    let hidden = error(file(esm, Some("exact")));
    assert!(
        hidden
            .contains("check.js has no function `exact` (its default export hides its named exports, as in promptfoo)"),
        "{hidden}"
    );
    let nothing = error(file("const x = 1;", None));
    assert!(nothing.contains("must export a function or have a default export as a function"), "{nothing}");
}

#[test]
fn typescript_files_have_their_types_stripped_and_a_broken_one_says_where() {
    let file = |source: &str| json!({"value": "file://check.ts", "file": {"name": "check.ts", "source": source, "function": null}});
    // promptfoo's own example `customAssertion.ts` is JavaScript as it is.
    let plain = "export default function (output, context) {\n  return output.toLowerCase().includes('ahoy');\n}\n";
    assert!(check_with(file(plain), "Ahoy there").pass);
    assert!(!check_with(file(plain), "hello").pass);
    let typed = "interface Seen { length: number }\nexport default function (output: string): boolean {\n  const seen: Seen = output;\n  return seen.length > 3;\n}";
    assert!(check_with(file(typed), "long enough").pass);
    assert!(!check_with(file(typed), "no").pass);
    let broken = "export default function (output: string): boolean {\n  return output.length >;\n}";
    let error = JavaScript::evaluate("pf_javascript", &Actual::text("x"), &file(broken)).unwrap_err();
    assert!(error.contains("check.ts:2: "), "{error}");
    assert!(error.contains("compile it and name the `.js` file"), "{error}");
}

/// Each thing a sandbox cannot give is an error the assertion fails with,
/// naming it.
#[test]
fn what_the_sandbox_cannot_give_throws_a_clear_error() {
    let cases = [
        ("require('fs').readFileSync('/etc/passwd')", "require('fs') is not available: assertions run sandboxed"),
        (
            "process.mainModule.require('child_process')",
            "require('child_process') is not available: assertions run sandboxed",
        ),
        (
            "process.env.OPENAI_API_KEY",
            "process.env is not available: assertions run sandboxed (no environment variables)",
        ),
        ("fetch('http://127.0.0.1/')", "fetch is not available: assertions run sandboxed (no network)"),
        ("import('os').then(os => os.hostname())", "import('os') is not available: assertions run sandboxed"),
        ("new XMLHttpRequest()", "XMLHttpRequest is not defined"),
    ];
    for (code, error) in cases {
        let verdict = check(code, "x");
        assert!(!verdict.pass && !negated(&verdict).0, "{code}");
        assert!(
            verdict.message.starts_with(&format!("Custom function threw error: {error}")),
            "{code}: {}",
            verdict.message
        );
    }
    // An ES module's static import is refused alike.
    let module = json!({"value": "file://m.js", "file": {"name": "m.js", "source": "import fs from 'fs';\nexport default () => true;"}});
    let error = JavaScript::evaluate("pf_javascript", &Actual::text("x"), &module).unwrap_err();
    assert!(error.contains("import('fs') is not available: assertions run sandboxed"), "{error}");
}

#[test]
fn time_and_chance_are_fixed() {
    assert!(check("Date.now() === 0 && new Date().getUTCFullYear() === 1970", "x").pass);
    let first = check("Math.random()", "x").extras.unwrap()["promptfoo_score"].clone();
    let again = check("Math.random()", "x").extras.unwrap()["promptfoo_score"].clone();
    assert_eq!(first, again);
    let spread = "const xs = Array.from({length: 1000}, Math.random); xs.every(x => x >= 0 && x < 1) && new Set(xs).size === 1000";
    assert!(check(spread, "x").pass);
}

#[test]
fn deep_recursion_is_an_error_of_the_engine() {
    let verdict = check("function f(n) { return f(n + 1) + 1; }\nreturn f(0);", "x");
    assert!(
        verdict.message.starts_with(
            "Custom function threw error: RuntimeLimitError: reached the maximum number of recursive calls"
        ),
        "{}",
        verdict.message
    );
}

#[test]
fn malformed_expected_values_are_errors_naming_the_part() {
    let error = |expected: Json| JavaScript::evaluate("pf_javascript", &Actual::text("x"), &expected).unwrap_err();
    assert!(error(json!("output")).contains("not an object with `value`"));
    assert!(error(json!({"value": 3})).contains("`value` is 3, not JavaScript code"));
    assert!(error(json!({"value": "x", "threshold": "high"})).contains("`threshold` is \"high\""));
    assert_eq!(
        JavaScript::evaluate("javascript", &Actual::text("x"), &json!({})).unwrap_err(),
        "the javascript plugin has no key `javascript`"
    );
}

#[test]
fn nodes_everyday_globals_are_there() {
    // console writes to the host's log; timers and microtasks run in order.
    let code = "console.log('checking', { n: output.length }, [1, 2]);\n\
                const order = [];\n\
                queueMicrotask(() => order.push('micro'));\n\
                const cancelled = setTimeout(() => order.push('cancelled'), 5);\n\
                clearTimeout(cancelled);\n\
                setTimeout(() => order.push('late'), 20);\n\
                setImmediate(() => order.push('soon'));\n\
                return new Promise((resolve) => setTimeout(() => resolve(order.join(',') === 'micro,soon,late'), 30));";
    let verdict = check(code, "hello");
    assert!(verdict.pass, "{}", verdict.message);
    assert!(check("typeof process === 'object' && typeof require === 'function'", "x").pass);
}

/// `pf_js_value`'s value, or its error.
fn value_of(expected: Json, actual: &Actual) -> Result<Json, String> {
    let verdict = JavaScript::evaluate("pf_js_value", actual, &expected)?;
    assert!(verdict.pass, "{}", verdict.message);
    Ok(verdict.extras.unwrap().get("value").cloned().unwrap_or(Json::Null))
}

fn module(name: &str, source: &str, function: Option<&str>) -> Json {
    json!({"name": name, "source": source, "function": function})
}

#[test]
fn configs_and_test_files_are_their_modules_values() {
    let commonjs = "const n = 2;\nmodule.exports = { prompts: ['p' + n], tests: [{ vars: { a: n } }] };\n";
    let expected = json!({"mode": "import", "file": module("promptfooconfig.js", commonjs, None)});
    assert_eq!(
        value_of(expected, &Actual::json("null")).unwrap(),
        json!({"prompts": ["p2"], "tests": [{"vars": {"a": 2}}]})
    );
    let typed = "import type { UnifiedConfig } from 'promptfoo';\nconst config: UnifiedConfig = { prompts: ['x'] };\nexport default config;\n";
    let expected = json!({"mode": "import", "file": module("promptfooconfig.ts", typed, None)});
    assert_eq!(value_of(expected, &Actual::json("null")).unwrap(), json!({"prompts": ["x"]}));
}

#[test]
fn a_test_generator_is_called_with_its_config_and_awaited() {
    let source = "interface Config { n?: number }\nexport async function generate(config?: Config) {\n  const n = config?.n ?? 1;\n  await new Promise((r) => setTimeout(r, 10));\n  return Array.from({ length: n }, (_, i) => ({ vars: { i } }));\n}\n";
    let expected = json!({"mode": "import", "file": module("tests.ts", source, Some("generate")), "args": [{"n": 2}]});
    assert_eq!(value_of(expected, &Actual::json("null")).unwrap(), json!([{"vars": {"i": 0}}, {"vars": {"i": 1}}]));
    let expected = json!({"mode": "import", "file": module("tests.ts", source, Some("missing"))});
    assert_eq!(value_of(expected, &Actual::json("null")).unwrap(), Json::Null, "undefined: no value");
}

#[test]
fn transforms_take_the_output_or_the_vars_and_their_context() {
    let inline = |code: &str, input: &str| json!({"mode": "transform", "code": code, "input": input, "args": [{"vars": {"k": "v"}, "prompt": "p"}]});
    assert_eq!(
        value_of(inline("JSON.parse(output)", "output"), &Actual::text("{\"a\":[1]}")).unwrap(),
        json!({"a": [1]})
    );
    assert_eq!(
        value_of(inline("output.toUpperCase() + context.vars.k", "output"), &Actual::text("ab")).unwrap(),
        json!("ABv")
    );
    let several = "const x = vars.url;\nreturn { ...vars, md: `![image](${x})` }";
    assert_eq!(
        value_of(inline(several, "vars"), &Actual::json(json!({"url": "u"}).to_string())).unwrap(),
        json!({"url": "u", "md": "![image](u)"})
    );
    let file = json!({"mode": "transform", "file": module("transform.js", "module.exports = (output, context) => output.length + context.prompt.length;", None), "args": [{"prompt": "pp"}]});
    assert_eq!(value_of(file, &Actual::text("abc")).unwrap(), json!(5));
    let named = json!({"mode": "transform", "file": module("t.js", "module.exports = { up: (o) => o.toUpperCase() };", Some("up"))});
    assert_eq!(value_of(named, &Actual::text("abc")).unwrap(), json!("ABC"));
}

#[test]
fn what_cannot_leave_the_sandbox_is_an_error_naming_where() {
    let config = "module.exports = { providers: [{ config: { callbacks: { add: (a) => a } } }] };";
    let error =
        value_of(json!({"mode": "import", "file": module("c.js", config, None)}), &Actual::json("null")).unwrap_err();
    assert!(error.contains("the module's value.providers[0].config.callbacks.add is a function"), "{error}");
    let cycle = "const a = {}; a.self = a; module.exports = a;";
    let error =
        value_of(json!({"mode": "import", "file": module("c.js", cycle, None)}), &Actual::json("null")).unwrap_err();
    assert!(error.contains("the module's value.self refers back to itself"), "{error}");
    let nothing = json!({"mode": "transform", "code": "undefined", "input": "output"});
    assert_eq!(value_of(nothing, &Actual::text("x")).unwrap_err(), "Transform function did not return a value");
    let thrown = json!({"mode": "transform", "code": "JSON.parse(output)", "input": "output"});
    let error = value_of(thrown, &Actual::text("not json")).unwrap_err();
    assert!(error.starts_with("SyntaxError"), "{error}");
    let sandboxed = json!({"mode": "transform", "code": "require('fs')", "input": "output"});
    assert!(value_of(sandboxed, &Actual::text("x")).unwrap_err().contains("require('fs') is not available"));
}

#[test]
fn sql_is_parsed_as_promptfoos_node_sql_parser_parses_it() {
    // node-sql-parser's generated parser recurses deeply, more than a test
    // thread's stack holds in a debug build (the component's is its own).
    let checks = std::thread::Builder::new().stack_size(256 << 20).spawn(sql_checks).unwrap();
    checks.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
}

fn sql_checks() {
    let sql = |key: &str, output: &str, value: Json| {
        let verdict = JavaScript::evaluate(key, &Actual::text(output), &json!({ "value": value })).unwrap();
        (verdict.pass, verdict.message.clone(), negated(&verdict).0)
    };
    assert_eq!(
        sql("pf_is_sql", "SELECT id, name FROM users WHERE age > 3", Json::Null),
        (true, "Assertion passed".into(), false)
    );
    let (pass, reason, negated_pass) = sql("pf_is_sql", "SELEC id FROM", Json::Null);
    assert_eq!((pass, negated_pass), (false, true));
    assert_eq!(reason, "SQL statement does not conform to the provided MySQL database syntax.");
    // PostgreSQL's dollar quotes are PostgreSQL's.
    let dollars = "SELECT $$a$$ AS x FROM t";
    assert!(sql("pf_is_sql", dollars, json!({"databaseType": "PostgreSQL"})).0);
    let (pass, reason, _) =
        sql("pf_is_sql", "SELECT * FROM secrets", json!({"allowedTables": ["select::null::users"]}));
    assert!(!pass);
    assert_eq!(
        reason,
        "SQL references unauthorized table(s). Found: [select::null::secrets]. Allowed: [select::null::users]."
    );
    assert!(sql("pf_contains_sql", "Here:\n```sql\nSELECT 1 FROM t\n```\n", Json::Null).0);
    let unknown = sql("pf_is_sql", "SELECT 1", json!({"databaseType": "Oracle"}));
    assert_eq!(unknown.1, "SQL statement does not conform to the provided Oracle database syntax.");
}
