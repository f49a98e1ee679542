//! promptfoo's templates ([`NunjucksTemplate`]): its prompts, assertion
//! values and metric names, written in Nunjucks and run as Jinja, which
//! Nunjucks copies: variables and dotted paths (`{{ user.name }}`,
//! `{{ items.0 }}`), filters (`trim`, `upper`, `lower`, `length`, `join`,
//! `default`, `replace`, `dump`, …), `{% if %}`, `{% for %}`, `{% set %}`,
//! macros, expressions and `{# comments #}`.
//!
//! What Nunjucks does differently is done its way: values print as
//! Nunjucks prints them (numbers as JavaScript writes them, `1` not `1.0`;
//! a list as its elements joined by `,`; an object as `[object Object]`; a
//! variable that is not set, or `null`, as nothing, and so is a path
//! through one); `dump` is `JSON.stringify`; a trailing newline is kept.
//! Nunjucks' own filters are added as Nunjucks writes them (`truncate`,
//! `wordcount`, `striptags`, `center`, `nl2br`, `forceescape`: see
//! `filters.rs`); what else Nunjucks has and Jinja lacks (`random`, which
//! would make a prompt differ between runs, `urlize`, `{% elseif %}`,
//! `{% for k, v in object %}`) is an error that says what to write
//! instead, never a prompt sent half-rendered. A render
//! stops at [`MAX_RENDERED_BYTES`], and at the fuel that bounds its work.

use crate::template::engine::{self, Compiled, Failure};
use crate::template::value::{self, Numbers};
use minijinja::value::{Rest, Value};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};
use serde_json::{Map, Value as Json};
use std::sync::LazyLock;

/// The most output one template may render, in bytes: a variable holding a
/// long text is fine, a template that multiplies one is not.
pub const MAX_RENDERED_BYTES: usize = 4 << 20;

/// The fuel of one render: about a million instructions, or 64 MB of
/// values made (a loop or a string doubled by `{% set %}` stops there).
const FUEL: u64 = 1_000_000;

/// Nunjucks' filters that Jinja does not have and assay does not add: each
/// is an error saying so.
const NUNJUCKS_ONLY: &[&str] = &["random", "urlize"];

/// The environment of every promptfoo template, built once.
static ENVIRONMENT: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = engine::environment(UndefinedBehavior::Chainable, FUEL, |out, _, value| {
        let mut text = String::new();
        value::write_nunjucks(&mut text, value);
        out.write_str(&text).map_err(Error::from)
    });
    super::filters::add_nunjucks_filters(&mut env);
    env.add_filter("load", load);
    env.add_filter("nunjucks_pairs", nunjucks_pairs);
    for name in NUNJUCKS_ONLY {
        env.add_filter(*name, move |_: &Value, _: Rest<Value>| -> Result<Value, Error> {
            Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("`{name}` is a Nunjucks filter that assay's templates do not have"),
            ))
        });
    }
    env
});

/// Nunjucks' `{% for key, value in object %}` walks an object's entries
/// (and an array of pairs as it is); Jinja unpacks only pairs. Each such
/// loop's iterable goes through `nunjucks_pairs`, which makes an object its
/// `[key, value]` entries, in order, and leaves anything else as it is.
/// Only tags are rewritten: text inside `{% raw %}`, comments, and string
/// literals inside other tags stay as written.
fn pairs_loops(source: &str) -> std::borrow::Cow<'_, str> {
    static LOOP: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^\{%(-?)(\s*)for(\s+\w+\s*,\s*\w+\s+)in\s+(.+?)(\s*)(-?)%\}$").expect("a valid pattern")
    });
    static RAW: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"^\{%-?\s*raw\s*-?%\}$").expect("a valid pattern"));
    static END_RAW: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\{%-?\s*endraw\s*-?%\}").expect("a valid pattern"));
    let mut out = String::new();
    let (mut copied, mut at) = (0, 0);
    while let Some(found) = source[at..].find('{') {
        let start = at + found;
        let rest = &source[start..];
        let close = match rest.as_bytes().get(1) {
            Some(b'%') => "%}",
            Some(b'{') => "}}",
            Some(b'#') => "#}",
            _ => {
                at = start + 1;
                continue;
            }
        };
        let Some(length) = tag_length(rest, close) else { break };
        let tag = &rest[..length];
        at = start + length;
        if close != "%}" {
            continue;
        }
        if RAW.is_match(tag) {
            // Nothing in a raw block is a tag.
            at = END_RAW.find(&source[at..]).map_or(source.len(), |end| at + end.end());
        } else if LOOP.is_match(tag) {
            out.push_str(&source[copied..start]);
            out.push_str(&LOOP.replace(tag, "{%${1}${2}for${3}in (${4}) | nunjucks_pairs${5}${6}%}"));
            copied = at;
        }
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(source);
    }
    out.push_str(&source[copied..]);
    std::borrow::Cow::Owned(out)
}

/// The length of the tag at the start of `text` up to and including
/// `close`, string literals skipped (a comment has none); `None` when it
/// does not close.
fn tag_length(text: &str, close: &str) -> Option<usize> {
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(2) {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if close != "#}" && (c == '"' || c == '\'') => quote = Some(c),
            None if text[i..].starts_with(close) => return Some(i + close.len()),
            None => {}
        }
    }
    None
}

/// `nunjucks_pairs` ([`pairs_loops`]).
fn nunjucks_pairs(value: Value) -> Value {
    match value.kind() {
        minijinja::value::ValueKind::Map => {
            let entries = value.try_iter().into_iter().flatten().map(|key| {
                let item = value.get_item(&key).unwrap_or_default();
                Value::from(vec![key, item])
            });
            Value::from(entries.collect::<Vec<_>>())
        }
        _ => value,
    }
}

/// promptfoo's own filter `load`: JSON text parsed (its `JSON.parse`); text
/// that is not JSON is an error, as it is in promptfoo.
fn load(text: String) -> Result<Value, Error> {
    serde_json::from_str::<Json>(&text)
        .map(|json| value::from_json(&json, Numbers::JavaScript))
        .map_err(|error| Error::new(ErrorKind::InvalidOperation, format!("`load` got text that is not JSON: {error}")))
}

/// A promptfoo template, parsed.
#[derive(Clone, Debug)]
pub struct NunjucksTemplate {
    body: Body,
}

#[derive(Clone, Debug)]
enum Body {
    /// Text without template syntax, as it is.
    Text(String),
    /// A template, with the variables it reads.
    Template { compiled: Compiled, variables: Vec<String> },
}

impl NunjucksTemplate {
    /// Parses `source`; the error says what is wrong and on which line.
    pub fn parse(source: &str) -> Result<NunjucksTemplate, String> {
        if !engine::is_template(source) {
            return Ok(NunjucksTemplate { body: Body::Text(source.to_owned()) });
        }
        let source = pairs_loops(source);
        let compiled = Compiled::new(&ENVIRONMENT, &source)?;
        let variables = compiled.variables(false);
        Ok(NunjucksTemplate { body: Body::Template { compiled, variables } })
    }

    /// Renders it with `vars`; an error when the output would pass
    /// [`MAX_RENDERED_BYTES`], or when the template fails.
    pub fn render(&self, vars: &Map<String, Json>) -> Result<String, String> {
        let too_large = || {
            format!(
                "it renders to over {} MiB; a prompt that large is a mistake or an attack",
                MAX_RENDERED_BYTES >> 20
            )
        };
        match &self.body {
            Body::Text(text) if text.len() > MAX_RENDERED_BYTES => Err(too_large()),
            Body::Text(text) => Ok(text.clone()),
            Body::Template { compiled, variables } => {
                let context =
                    value::context(variables, |name| Some(value::from_json(vars.get(name)?, Numbers::JavaScript)));
                compiled.render_capped(context, MAX_RENDERED_BYTES).map_err(|failure| match failure {
                    Failure::TooLarge => too_large(),
                    Failure::Engine(error) => compiled.describe(&error),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(template: &str, vars: Json) -> Result<String, String> {
        NunjucksTemplate::parse(template)?.render(vars.as_object().unwrap())
    }

    #[test]
    fn loops_over_an_objects_entries_take_key_and_value_as_in_nunjucks() {
        let vars =
            json!({"turns": [{"user": "hi"}, {"assistant": "hello", "user": "bye"}], "pairs": [["a", 1], ["b", 2]]});
        let template =
            "{% for turn in turns %}{% for role, text in turn %}{{ role }}={{ text }};{% endfor %}{% endfor %}";
        assert_eq!(render(template, vars.clone()).unwrap(), "user=hi;assistant=hello;user=bye;");
        assert_eq!(render("{%- for k , v in pairs -%}{{k}}{{v}} {% endfor %}", vars.clone()).unwrap(), "a1 b2 ");
        // Only tags are rewritten: not raw text, comments or strings.
        let raw = "{% raw %}{% for k, v in pairs %}{% endraw %}";
        assert_eq!(render(raw, vars.clone()).unwrap(), "{% for k, v in pairs %}");
        let quoted = "{{ '{% for k, v in pairs %}' }}{# {% for k, v in x %} #}";
        assert_eq!(render(quoted, vars.clone()).unwrap(), "{% for k, v in pairs %}");
        assert_eq!(
            pairs_loops("{% if a %}{% for k, v in o %}{% endfor %}{% endif %}"),
            "{% if a %}{% for k, v in (o) | nunjucks_pairs %}{% endfor %}{% endif %}"
        );
        // One loop variable walks an object's keys, as before.
        assert_eq!(render("{% for k in turns[1] %}{{ k }} {% endfor %}", vars).unwrap(), "assistant user ");
    }

    #[test]
    fn promptfoos_load_filter_parses_json_text_and_refuses_other_text() {
        let vars = json!({"style": r#"{"tone": "formal", "n": [1, 2]}"#, "bad": "{tone"});
        assert_eq!(render("{{ (style | load).tone }} {{ (style | load).n[1] }}", vars.clone()).unwrap(), "formal 2");
        let error = render("{{ bad | load }}", vars).unwrap_err();
        assert!(error.contains("`load` got text that is not JSON"), "{error}");
    }

    #[test]
    fn variables_paths_and_filters_render_as_nunjucks_does() {
        let vars = json!({"name": " Ann ", "user": {"age": 3.0, "tags": ["a", "b"]}, "n": null, "o": {"k": 1}});
        assert_eq!(render("Hi {{name}}!", vars.clone()).unwrap(), "Hi  Ann !");
        assert_eq!(render("{{ name | trim }}", vars.clone()).unwrap(), "Ann");
        assert_eq!(render("{{ name | trim | dump }}", vars.clone()).unwrap(), "\"Ann\"");
        assert_eq!(render("{{user.age}} {{user.tags}} {{user.tags.1}}", vars.clone()).unwrap(), "3 a,b b");
        // JSON.stringify has one number type: 3.0 is 3.
        assert_eq!(render("{{ user | dump }}", vars.clone()).unwrap(), r#"{"age":3,"tags":["a","b"]}"#);
        assert_eq!(
            render("{{ user | dump(2) }}", vars.clone()).unwrap(),
            "{\n  \"age\": 3,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}"
        );
        assert_eq!(
            render("[{{missing}}][{{n}}][{{o}}][{{missing.deeper.still}}]", vars).unwrap(),
            "[][][[object Object]][]"
        );
    }

    #[test]
    fn tags_loops_and_filters_render() {
        let vars =
            json!({"items": ["red", "green"], "user": {"name": "ann", "admin": true}, "n": 2.0, "text": " a\nb "});
        let cases = [
            ("{% for item in items %}{{ loop.index }}. {{ item | upper }}\n{% endfor %}", "1. RED\n2. GREEN\n"),
            ("{% if user.admin %}Hello {{ user.name | capitalize }}{% else %}hi{% endif %}", "Hello Ann"),
            ("{% if missing %}yes{% elif n > 1 %}many{% endif %}", "many"),
            ("{% set greeting = 'Hi ' ~ user.name %}{{ greeting }}", "Hi ann"),
            ("{{ items | join(' & ') }} ({{ items | length }})", "red & green (2)"),
            ("{{ nothing | default('none given') }}", "none given"),
            ("{{ user.name | replace('a', 'A') | lower }}", "ann"),
            ("{{ text | trim }}|{{ n * 2 }}|{{ n / 4 }}", "a\nb|4|0.5"),
            ("{# a note #}{% raw %}{{ kept }}{% endraw %}", "{{ kept }}"),
            ("{% for k, v in user | items %}{{ k }}={{ v }};{% endfor %}", "name=ann;admin=true;"),
            ("{% macro tag(x) %}<{{ x }}>{% endmacro %}{{ tag(items[0]) }}", "<red>"),
            ("{{ items | dump }}\n", "[\"red\",\"green\"]\n"),
        ];
        for (template, rendered) in cases {
            assert_eq!(render(template, vars.clone()).unwrap(), rendered, "{template}");
        }
    }

    #[test]
    fn what_nunjucks_has_and_jinja_lacks_is_an_error_saying_what_to_write() {
        let vars = json!({"x": "a b c", "o": {"k": 1}});
        let cases = [
            ("{{ x | random }}", "`random` is a Nunjucks filter that assay's templates do not have (line 1"),
            ("{{ x | upperr }}", "unknown filter `upperr` (did you mean `upper`?) (line 1: `{{ x | upperr }}`)"),
            ("{% if x %}a{% elseif x %}b{% endif %}", "Consider: `elseif` is Nunjucks'; Jinja writes `{% elif … %}`"),
            ("{% for k, v in [1, 2] %}{{k}}{% endfor %}", "cannot unpack"),
            ("{{ x.upper() }}", "write a filter (`x | upper`)"),
            ("{% include 'other.njk' %}", "a template cannot read another"),
            (
                "line one\n{{ x",
                "syntax error: unexpected end of input, expected end of variable block (line 2: `{{ x`)",
            ),
            ("{{ }}", "syntax error: unexpected end of variable block (line 1: `{{ }}`)"),
        ];
        for (template, message) in cases {
            let error = render(template, vars.clone()).unwrap_err();
            assert!(error.contains(message), "{template}: {error}");
        }
    }

    #[test]
    fn a_template_bomb_stops_at_the_cap() {
        let big = "x".repeat(1 << 20);
        let error = render(&"{{v}}".repeat(8), json!({ "v": big })).unwrap_err();
        assert!(error.starts_with("it renders to over 4 MiB"), "{error}");
        // Loops that multiply one var's output stop at the cap too…
        let nested = "{% for a in range(1000) %}{% for b in range(1000) %}{{ v }}{% endfor %}{% endfor %}";
        let error = render(nested, json!({"v": "x".repeat(100)})).unwrap_err();
        assert!(error.starts_with("it renders to over 4 MiB"), "{error}");
        // …and loops that write little, or a value doubled until it is huge,
        // at the fuel, before they take the time or the memory.
        let error = render(nested, json!({"v": "x"})).unwrap_err();
        assert!(error.starts_with("it does more work than a template may"), "{error}");
        let doubling = format!("{{% set s = v %}}{}{{{{ s | length }}}}", "{% set s = s ~ s %}".repeat(40));
        let error = render(&doubling, json!({"v": "x".repeat(1000)})).unwrap_err();
        assert!(error.starts_with("it does more work than a template may"), "{error}");
        assert_eq!(render("x", json!({})).unwrap(), "x");
    }

    #[test]
    fn every_filter_suggested_is_one_the_engine_has() {
        for name in engine::FILTERS {
            let result = render(&format!("{{{{ x | {name} }}}}"), json!({"x": [1]}));
            assert!(!result.as_ref().is_err_and(|e| e.starts_with("unknown filter")), "{name}: {result:?}");
        }
    }

    #[test]
    fn vars_are_data_and_text_without_tags_is_kept_as_it_is() {
        let vars = json!({"q": "{% if x %}y{% endif %} {{ q }}"});
        assert_eq!(render("Q: {{ q }}", vars.clone()).unwrap(), "Q: {% if x %}y{% endif %} {{ q }}");
        assert_eq!(
            render("50% off {#1", vars).unwrap_err().lines().next().unwrap(),
            "syntax error: unexpected end of comment (line 1: `50% off {#1`)"
        );
        assert_eq!(render("just text }} with braces %}", json!({})).unwrap(), "just text }} with braces %}");
    }
}
