//! What the three modes share: a mode's [`Environment`] (built once, in a
//! static), a template compiled once in its own copy of it ([`Compiled`]),
//! rendering under the mode's fuel and an output cap, and an engine error
//! as a message that names the line and what is wrong.

use minijinja::syntax::SyntaxConfig;
use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, Error, ErrorKind, Output, State, UndefinedBehavior};
use std::io;

/// The name a template is compiled under: each has an environment of its
/// own, so one name is enough.
const NAME: &str = "template";

/// A mode's environment: its undefined behavior, the fuel one render may
/// burn (every instruction, and every 64 bytes made or written, costs one:
/// it bounds both the time and the memory a render takes) and how a value
/// is written where a `{{…}}` stands. Nunjucks' `dump` is added to the
/// engine's filters. No auto-escaping: the formatter decides. A trailing
/// newline is kept, as Nunjucks keeps it (Jinja drops one).
pub(super) fn environment<F>(undefined: UndefinedBehavior, fuel: u64, formatter: F) -> Environment<'static>
where
    F: Fn(&mut Output, &mut State, &Value) -> Result<(), Error> + Send + Sync + 'static,
{
    let mut env = Environment::new();
    env.set_undefined_behavior(undefined);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_fuel(Some(fuel));
    env.set_formatter(formatter);
    env.add_filter("dump", super::value::dump);
    let syntax = SyntaxConfig::builder().keep_trailing_newline(true).build();
    env.set_syntax(syntax.expect("the default delimiters are valid"));
    env
}

/// Whether `text` holds template syntax at all (`{{`, `{%` or `{#`): text
/// without is kept as it is, never compiled.
pub fn is_template(text: &str) -> bool {
    text.contains("{{") || text.contains("{%") || text.contains("{#")
}

/// A template compiled once: a copy of its mode's environment (which
/// shares the mode's filters and settings) holding it alone, boxed (an
/// environment is some 300 bytes, a template in an expected value is one
/// of many).
#[derive(Clone)]
pub(super) struct Compiled {
    env: Box<Environment<'static>>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let template = self.env.get_template(NAME).map_err(|_| std::fmt::Error)?;
        f.debug_tuple("Compiled").field(&template.source()).finish()
    }
}

/// Why a capped render failed.
pub(super) enum Failure {
    /// The output passed the cap.
    TooLarge,
    /// The engine's error.
    Engine(Error),
}

impl Compiled {
    /// Compiles `source` in a copy of `mode`; the error says what is wrong
    /// and where.
    pub(super) fn new(mode: &Environment<'static>, source: &str) -> Result<Compiled, String> {
        let mut env = Box::new(mode.clone());
        env.add_template_owned(NAME, source.to_owned()).map_err(|e| describe(&e, source))?;
        Ok(Compiled { env })
    }

    /// The variables it reads from its context, in the order they are first
    /// used (the engine's globals, `range` and the like, included: a context
    /// value would hide them). `nested` gives dotted paths (`sly_data.a.b`)
    /// where the template writes them.
    pub(super) fn variables(&self, nested: bool) -> Vec<String> {
        let Ok(template) = self.env.get_template(NAME) else { return Vec::new() };
        let source = template.source();
        let mut names: Vec<String> = template.undeclared_variables(nested).into_iter().collect();
        names.sort_by_cached_key(|name| (first_use(source, name), name.clone()));
        names
    }

    /// Whether `name` is one of the engine's globals (`range`, `dict`, …).
    pub(super) fn is_global(&self, name: &str) -> bool {
        self.env.globals().any(|(global, _)| global == name)
    }

    /// Renders it with `context`.
    pub(super) fn render(&self, context: Value) -> Result<String, Error> {
        self.env.get_template(NAME)?.render(context)
    }

    /// Renders it with `context`, stopping once the output passes `cap`
    /// bytes.
    pub(super) fn render_capped(&self, context: Value, cap: usize) -> Result<String, Failure> {
        let template = self.env.get_template(NAME).map_err(Failure::Engine)?;
        let mut out = Capped { bytes: Vec::new(), cap, over: false };
        match template.render_captured_to(context, &mut out) {
            Ok(_) => {
                Ok(String::from_utf8(out.bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
            }
            Err(_) if out.over => Err(Failure::TooLarge),
            Err(error) => Err(Failure::Engine(error)),
        }
    }

    /// An engine error of a render as a message.
    pub(super) fn describe(&self, error: &Error) -> String {
        match self.env.get_template(NAME) {
            Ok(template) => describe(error, template.source()),
            Err(_) => error.to_string(),
        }
    }
}

/// The output of a render, refused past `cap` bytes.
struct Capped {
    bytes: Vec<u8>,
    cap: usize,
    over: bool,
}

impl io::Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.bytes.len() + bytes.len() > self.cap {
            self.over = true;
            return Err(io::Error::other("the output passed its cap"));
        }
        self.bytes.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where `name` (a variable, or a dotted path) is first written in
/// `source`, as a whole word; the end when it is not found as written.
fn first_use(source: &str, name: &str) -> usize {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    source
        .match_indices(name)
        .find(|(at, _)| {
            !source[..*at].chars().next_back().is_some_and(word)
                && !source[at + name.len()..].chars().next().is_some_and(word)
        })
        .map_or(usize::MAX, |(at, _)| at)
}

/// Nunjucks tags Jinja does not have, with what to write instead.
const NUNJUCKS_TAGS: &[(&str, &str)] = &[
    ("elseif", "`{% elif … %}`"),
    ("verbatim", "`{% raw %}…{% endraw %}`"),
    ("asyncEach", "`{% for … %}`"),
    ("asyncAll", "`{% for … %}`"),
    ("ifAsync", "`{% if … %}`"),
];

/// An engine error as a message: what is wrong, then the line it is on
/// (`line 2: `{{ x | upperr }}``), then a "Consider" paragraph where the
/// mistake is a known one.
pub(super) fn describe(error: &Error, source: &str) -> String {
    let detail = error.detail().unwrap_or_default();
    let mut hint = None;
    let what = match error.kind() {
        ErrorKind::SyntaxError => {
            if let Some(tag) = detail.strip_prefix("unknown statement ") {
                hint = NUNJUCKS_TAGS
                    .iter()
                    .find(|(name, _)| *name == tag)
                    .map(|(_, instead)| format!("`{tag}` is Nunjucks'; Jinja writes {instead}"))
                    .or_else(|| {
                        matches!(tag, "include" | "extends" | "import" | "from")
                            .then(|| "a template cannot read another: write the text out".to_owned())
                    });
            } else if ["end of variable block", "end of block", "end of comment"].iter().any(|end| detail.contains(end))
            {
                hint = Some(
                    "every `{{` needs its `}}`, every `{%` its `%}` and every `{#` its `#}`; text that holds \
                     them is written `{% raw %}…{% endraw %}`"
                        .to_owned(),
                );
            }
            format!("syntax error: {detail}")
        }
        ErrorKind::UnknownFilter => {
            let name = detail.strip_prefix("filter ").and_then(|d| d.strip_suffix(" is unknown")).unwrap_or(detail);
            match crate::suggest::nearest(name, FILTERS.iter().copied()) {
                Some(near) => format!("unknown filter `{name}` (did you mean `{near}`?)"),
                None => format!("unknown filter `{name}`"),
            }
        }
        ErrorKind::UnknownMethod => {
            hint = Some("methods (`x.upper()`) are Python's; write a filter (`x | upper`)".to_owned());
            format!("unknown method: {detail}")
        }
        ErrorKind::CannotUnpack => {
            hint = Some("to loop over an object's keys and values, write `{% for k, v in obj | items %}`".to_owned());
            format!("cannot unpack: {detail}")
        }
        ErrorKind::OutOfFuel => {
            "it does more work than a template may: a loop that runs too long, or a value that keeps growing".into()
        }
        ErrorKind::TemplateNotFound => {
            hint = Some("a template cannot read another: write the text out".to_owned());
            format!("{}: {detail}", error.kind())
        }
        kind if detail.is_empty() => kind.to_string(),
        _ => detail.to_owned(),
    };
    let at = error
        .line()
        .and_then(|n| Some((n, source.lines().nth(n - 1)?)))
        .map(|(n, line)| format!(" (line {n}: `{}`)", short(line.trim())))
        .unwrap_or_default();
    match hint {
        Some(hint) => format!("{what}{at}\n\nConsider: {hint}"),
        None => format!("{what}{at}"),
    }
}

/// The filters every mode has, for "did you mean": the engine's own and
/// promptfoo's `dump`.
pub(super) const FILTERS: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "bool",
    "capitalize",
    "chain",
    "count",
    "d",
    "default",
    "dictsort",
    "dump",
    "e",
    "escape",
    "first",
    "float",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "lines",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "split",
    "string",
    "sum",
    "title",
    "trim",
    "unique",
    "upper",
    "urlencode",
    "zip",
];

/// A line of a template, cut to 60 characters.
fn short(line: &str) -> String {
    if line.chars().count() <= 60 {
        return line.to_owned();
    }
    format!("{}…", line.chars().take(59).collect::<String>())
}
