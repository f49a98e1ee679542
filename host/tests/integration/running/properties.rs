//! Property-based tests of the HOCON test-case reader and the check planner:
//! fuzzing that runs in a plain `cargo test`, for a bounded number of
//! generated inputs per property.
//!
//! - The reader never panics: on arbitrary text, on arbitrary bytes, on
//!   HOCON-like token soup and on mutated copies of the fixture cases, every
//!   result is a test case or an error that names the file.
//! - Well-formed generated cases, rendered to HOCON in varied styles (quoted
//!   and bare keys, `:` `=` or no separator, commas, newlines, comments,
//!   escapes, triple-quoted strings), read back to exactly the model that was
//!   generated, and plan to exactly the checks that were generated.
//! - A test key no plugin provides is always an error naming its key path,
//!   never a silently planned or silently skipped check.
//!
//! # Running longer
//!
//! Each property runs [`CASES`] inputs, a few seconds in all in a debug
//! build. The `PROPTEST_CASES` environment variable overrides that number for
//! every property here (the `proptest!` macro applies proptest's environment
//! variables on top of the explicit config), so a longer run is:
//!
//! ```text
//! PROPTEST_CASES=100000 cargo test -p assay --test integration properties --release
//! ```
//!
//! `PROPTEST_RNG_SEED=N` makes a run repeatable. A failure prints the shrunk,
//! minimal input; no regression files are written
//! (`failure_persistence: None`), so to keep a failure, copy that input into
//! a unit test.
//!
//! The generator stays inside what the HOCON parser (hocon-parser 1.14)
//! supports: no `\uD83D\uDE00` surrogate-pair escapes (it rejects them;
//! characters outside the BMP are written as themselves), no integers above
//! `i64::MAX` (they become floats), no triple-quoted keys (it rejects them), and
//! dotted key paths only a few segments long (the reader refuses paths over
//! 64 segments before hocon-parser, which would overflow its stack on them:
//! see [`a_long_dotted_key_is_an_error_not_an_abort`]).

use assay::case::{CaseEnv, ChatFilter, Connection, Interaction, SuccessRatio, TestCase};
use assay::check::plan_case;
use assay::errors::CaseErrorKind;
use assay::formats::parse_case;
use assay::plugin::Registry;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Inputs per property, unless `PROPTEST_CASES` says otherwise.
const CASES: u32 = 256;

/// The stock plugin's keys, which the generator writes.
const MATCHERS: [&str; 4] = ["value", "less", "greater", "keywords"];

/// The file name given to the reader for generated text.
const FILE: &str = "cases/generated.hocon";

fn config() -> ProptestConfig {
    ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() }
}

/// The built-in registry, loaded once for the whole binary.
fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let registry = Registry::with_builtins(crate::util::runtime()).unwrap();
        assert!(MATCHERS.iter().all(|key| registry.has_key(key)), "the stock keys changed");
        registry
    })
}

/// Whether the planner takes `key` as a test: a registered key or `not_` +
/// one, in any case.
fn is_matcher(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    registry().has_key(&lower) || lower.strip_prefix("not_").is_some_and(|base| registry().has_key(base))
}

/// `ASSAY_CASE_FUZZ` is visible; `ASSAY_FUZZ` is set but not allowed.
fn env() -> CaseEnv {
    CaseEnv::new(
        [("ASSAY_CASE_FUZZ", "from the environment"), ("ASSAY_FUZZ", "not allowed")],
        [] as [&str; 0],
        ["ASSAY_JUDGE_API_KEY"],
    )
}

/// Every `fixtures/cases/**/*.hocon` file: (path, text).
fn fixtures() -> &'static [(PathBuf, String)] {
    static FIXTURES: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let pattern = crate::util::root().join("fixtures/cases/**/*.hocon");
        let files: Vec<(PathBuf, String)> = glob::glob(pattern.to_str().unwrap())
            .unwrap()
            .map(|path| {
                let path = path.unwrap();
                let text = std::fs::read_to_string(&path).unwrap();
                (path, text)
            })
            .collect();
        assert!(!files.is_empty(), "no fixture cases under {}", pattern.display());
        files
    })
}

// ---------------------------------------------------------------------------
// The reader never panics.
// ---------------------------------------------------------------------------

/// Reads `text` as `file`: the result is a case, or an error whose message
/// starts with the file. A case that reads is planned too, which must not
/// panic either.
fn reads_without_panic(text: &str, file: &Path) -> Result<(), TestCaseError> {
    match parse_case(text, "fuzz", file, &env()) {
        Ok(case) => {
            prop_assert_eq!(&case.file, file);
            let _ = plan_case(&case, registry());
        }
        Err(error) => {
            let message = error.to_string();
            let prefix = format!("`{}`: ", file.display());
            prop_assert!(message.starts_with(&prefix), "{message:?} does not start with {prefix:?}");
        }
    }
    Ok(())
}

/// Pieces of HOCON, so that random sequences come close to the grammar.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "{", "}", "[", "]", ":", "=", "+=", ",", "\n", " ", "\"", "\"\"\"", "\\", "${", "${?", "}", "${ASSAY_FUZZ}",
    "${ASSAY_CASE_FUZZ}", "${?NOT_SET}", "${agent}", "#", "//", "include ", "agent", "interactions", "response", "text", "sly_data",
    "structure", "value", "not_value", "KEYWORDS", "less", "connections", "success_ratio", "\"2/3\"",
    "timeout_in_seconds", "chat_filter", "continue_conversation", "metadata", "use_direct", "a.b", ".", "1",
    "-1.5e3", "0", "true", "null", "\"x\"", "é", "😀", "\t", "\r\n",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Deletes the byte at an index.
    Delete(Index),
    /// Inserts a punctuation byte at an index.
    Insert(Index, u8),
    /// Duplicates a span of bytes in place.
    Duplicate(Index, usize),
    /// Duplicates one of the punctuation bytes already there.
    DuplicatePunctuation(Index),
    /// Deletes one of the punctuation bytes already there.
    DeletePunctuation(Index),
}

const PUNCTUATION: &[u8] = b"{}[]\":,=$'\\#\n";

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Delete),
        (any::<Index>(), select(PUNCTUATION)).prop_map(|(at, byte)| Mutation::Insert(at, byte)),
        (any::<Index>(), 1..16usize).prop_map(|(at, len)| Mutation::Duplicate(at, len)),
        any::<Index>().prop_map(Mutation::DuplicatePunctuation),
        any::<Index>().prop_map(Mutation::DeletePunctuation),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let punctuation = |bytes: &[u8]| -> Vec<usize> {
        bytes.iter().enumerate().filter(|(_, b)| PUNCTUATION.contains(b)).map(|(i, _)| i).collect()
    };
    match mutation {
        Mutation::Delete(at) if !bytes.is_empty() => {
            bytes.remove(at.index(bytes.len()));
        }
        Mutation::Insert(at, byte) => bytes.insert(at.index(bytes.len() + 1), *byte),
        Mutation::Duplicate(at, len) if !bytes.is_empty() => {
            let start = at.index(bytes.len());
            let end = (start + len).min(bytes.len());
            let span = bytes[start..end].to_vec();
            bytes.splice(end..end, span);
        }
        Mutation::DuplicatePunctuation(at) => {
            let positions = punctuation(bytes);
            if !positions.is_empty() {
                let i = positions[at.index(positions.len())];
                bytes.insert(i, bytes[i]);
            }
        }
        Mutation::DeletePunctuation(at) => {
            let positions = punctuation(bytes);
            if !positions.is_empty() {
                bytes.remove(positions[at.index(positions.len())]);
            }
        }
        Mutation::Delete(_) | Mutation::Duplicate(..) => {}
    }
}

#[test]
fn every_fixture_reads_and_plans() {
    for (path, text) in fixtures() {
        let case = parse_case(text, "fixture", path, &env()).unwrap();
        plan_case(&case, registry()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_reader_never_panics_on_arbitrary_text(text in any::<String>()) {
        reads_without_panic(&text, Path::new(FILE))?;
    }

    #[test]
    fn the_reader_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        reads_without_panic(&String::from_utf8_lossy(&bytes), Path::new(FILE))?;
    }

    #[test]
    fn the_reader_never_panics_on_hocon_tokens(tokens in prop::collection::vec(select(TOKENS), 0..80)) {
        reads_without_panic(&tokens.concat(), Path::new(FILE))?;
    }

    #[test]
    fn the_reader_never_panics_on_mutated_fixtures(
        fixture in any::<Index>(),
        mutations in prop::collection::vec(mutation(), 1..12),
    ) {
        let (path, text) = &fixtures()[fixture.index(fixtures().len())];
        let mut bytes = text.clone().into_bytes();
        for mutation in &mutations {
            mutate(&mut bytes, mutation);
        }
        reads_without_panic(&String::from_utf8_lossy(&bytes), path)?;
    }
}

// ---------------------------------------------------------------------------
// Generated cases: the model and the rendering to HOCON.
// ---------------------------------------------------------------------------

/// The expected value of one test as written.
#[derive(Clone, Debug)]
enum Expected {
    /// A scalar: one check.
    One(Value),
    /// A non-empty list: one check per element.
    All(Vec<Value>),
    /// A parameter dictionary: one check.
    Params(Map<String, Value>),
}

impl Expected {
    fn written(&self) -> Value {
        match self {
            Expected::One(value) => value.clone(),
            Expected::All(values) => Value::Array(values.clone()),
            Expected::Params(params) => Value::Object(params.clone()),
        }
    }

    fn checks(&self) -> Vec<Value> {
        match self {
            Expected::One(value) => vec![value.clone()],
            Expected::All(values) => values.clone(),
            Expected::Params(params) => vec![Value::Object(params.clone())],
        }
    }
}

/// One test: `not_keywords: ["a", "b"]`.
#[derive(Clone, Debug)]
struct Test {
    /// The registered key.
    base: &'static str,
    negated: bool,
    /// The key as written, in some mix of cases.
    written: String,
    expected: Expected,
}

/// A dictionary under a data key: tests and nested data keys.
#[derive(Clone, Debug)]
struct Node(Vec<Entry>);

#[derive(Clone, Debug)]
enum Entry {
    Test(Test),
    Data(String, Node),
}

impl Entry {
    fn key(&self) -> &str {
        match self {
            Entry::Test(test) => &test.written,
            Entry::Data(key, _) => key,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Response {
    text: Option<Vec<Test>>,
    sly_data: Option<Vec<(String, Node)>>,
    structure: Option<Vec<(String, Node)>>,
}

#[derive(Clone, Debug)]
struct Turn {
    text: Option<String>,
    sly_data: Option<Map<String, Value>>,
    /// Seconds, as written.
    timeout: Option<String>,
    /// As written, e.g. `Maximal`.
    chat_filter: Option<String>,
    continue_conversation: Option<bool>,
    response: Option<Response>,
}

#[derive(Clone, Debug)]
enum Meta {
    Text(String),
    Number(i64),
    Bool(bool),
}

#[derive(Clone, Debug)]
struct Case {
    agent: String,
    /// As written, e.g. `HTTP`; possibly repeated.
    connections: Option<Vec<String>>,
    /// (k, n, with spaces around the numbers)
    success_ratio: Option<(u32, u32, bool)>,
    use_direct: Option<bool>,
    metadata: Option<Vec<(String, Meta)>>,
    timeout: Option<String>,
    turns: Vec<Turn>,
    /// Choices for the renderer, used in a cycle.
    style: Vec<u8>,
}

/// Characters and pieces that quoting must handle.
#[rustfmt::skip]
const ODD_PIECES: &[&str] = &[
    "\"", "\\", "\n", "\t", "\r", "\u{1}", "\u{7f}", "é", "中文", "😀", "${ASSAY_FUZZ}", "$", "{", "}", "[", "]", "=",
    "#", "//", "\"\"\"", "\u{feff}", "\u{0}", "\u{2028}", " ",
];

/// Data keys that look like tests, HOCON keywords, paths or numbers.
#[rustfmt::skip]
const ODD_KEYS: &[&str] = &[
    "value", "VALUE", "not_value", "keywords", "include", "true", "null", "a.b", "with space", "$x", "${ASSAY_FUZZ}",
    "", "1", "1.5", "-", "not_", "gist",
];

/// Test keys no built-in plugin provides.
#[rustfmt::skip]
const ODD_UNKNOWN: &[&str] = &[
    "gist", "not_gist", "regex", "equals", "contains", "not_", "not", "not_not_value", "values", "NOT_VALUES", "keyword",
    "lesser", "greater_than", "", "include", "a.b", "not value", "value ",
];

/// Keeps the first of each key.
fn unique<T>(items: Vec<T>, key: impl Fn(&T) -> &str) -> Vec<T> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().filter(|item| seen.insert(key(item).to_owned())).collect()
}

/// Strings from a safe alphabet, with quotes, backslashes, control
/// characters, non-ASCII and HOCON punctuation mixed in.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => "[a-zA-Z0-9 _.,:;!?'()/-]{1,8}",
        2 => select(ODD_PIECES).prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

/// Keys of data dictionaries, including ones that look like tests or HOCON
/// keywords (they are quoted when rendered).
fn data_key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z][a-zA-Z0-9_]{0,6}",
        1 => text(),
        1 => select(ODD_KEYS).prop_map(str::to_owned),
    ]
}

/// A data key below the first level, where a test's name would be a test.
fn nested_key() -> impl Strategy<Value = String> {
    data_key().prop_filter("a test key", |key| !is_matcher(key))
}

fn finite_f64() -> impl Strategy<Value = f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    prop_oneof![(-100_000i64..100_000).prop_map(|n| n as f64 / 100.0), POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => prop_oneof![-1000i64..1000, any::<i64>()].prop_map(Value::from),
        2 => finite_f64().prop_map(Value::from),
        4 => text().prop_map(Value::String),
    ]
}

fn object(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((data_key(), values), 0..4)
        .prop_map(|entries| unique(entries, |(key, _)| key).into_iter().collect())
}

/// Any JSON value a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            object(inner).prop_map(Value::Object),
        ]
    })
}

fn expected() -> impl Strategy<Value = Expected> {
    let params = prop::collection::vec(
        (select(vec!["criteria", "model", "threshold", "ignore_case", "max_tokens"]), scalar()),
        1..3,
    )
    .prop_map(|entries| {
        unique(entries, |(key, _)| key).into_iter().map(|(key, value)| (key.to_owned(), value)).collect()
    });
    prop_oneof![
        4 => scalar().prop_map(Expected::One),
        3 => prop::collection::vec(prop_oneof![4 => scalar(), 1 => json()], 1..5).prop_map(Expected::All),
        1 => params.prop_map(Expected::Params),
    ]
}

/// Upper-cases the characters whose bit is set in `mask`.
fn mixed_case(key: &str, mask: u32) -> String {
    key.chars().enumerate().map(|(i, c)| if mask >> (i % 32) & 1 == 1 { c.to_ascii_uppercase() } else { c }).collect()
}

fn test() -> impl Strategy<Value = Test> {
    (select(MATCHERS.to_vec()), any::<bool>(), prop_oneof![Just(0u32), Just(u32::MAX), any::<u32>()], expected())
        .prop_map(|(base, negated, mask, expected)| {
            let key = if negated { format!("not_{base}") } else { base.to_owned() };
            Test { base, negated, written: mixed_case(&key, mask), expected }
        })
}

/// At least one test: a block that checks nothing is an error.
fn tests() -> impl Strategy<Value = Vec<Test>> {
    prop::collection::vec(test(), 1..4).prop_map(|tests| unique(tests, |test| &test.written))
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = tests().prop_map(|tests| Node(tests.into_iter().map(Entry::Test).collect()));
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop::collection::vec(
            prop_oneof![
                2 => test().prop_map(Entry::Test),
                1 => (nested_key(), inner).prop_map(|(key, node)| Entry::Data(key, node)),
            ],
            1..4,
        )
        .prop_map(|entries| Node(unique(entries, Entry::key)))
    })
}

fn data_block() -> impl Strategy<Value = Vec<(String, Node)>> {
    prop::collection::vec((data_key(), node()), 1..3).prop_map(|entries| unique(entries, |(key, _)| key))
}

/// A response with at least one part: an empty one is an error.
fn response() -> impl Strategy<Value = Response> {
    (prop::option::of(tests()), prop::option::of(data_block()), prop::option::of(data_block()), tests()).prop_map(
        |(text, sly_data, structure, fallback)| {
            let text = if text.is_none() && sly_data.is_none() && structure.is_none() { Some(fallback) } else { text };
            Response { text, sly_data, structure }
        },
    )
}

fn seconds() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u64..100_000).prop_map(|s| s.to_string()),
        (1u64..100_000_000).prop_map(|ms| format!("{}.{:03}", ms / 1000, ms % 1000)),
    ]
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        prop::option::of(text()),
        prop::option::of(object(json())),
        prop::option::of(seconds()),
        prop::option::of(select(vec!["MINIMAL", "MAXIMAL", "minimal", "maximal", "Maximal"]).prop_map(str::to_owned)),
        prop::option::of(any::<bool>()),
        prop::option::weighted(0.8, response()),
    )
        .prop_map(|(text, sly_data, timeout, chat_filter, continue_conversation, response)| Turn {
            text,
            sly_data,
            timeout,
            chat_filter,
            continue_conversation,
            response,
        })
}

fn case() -> impl Strategy<Value = Case> {
    let connections = prop::collection::vec(
        select(vec!["direct", "http", "https", "grpc", "HTTP", "Direct", "HTTPS", "gRPC"]).prop_map(str::to_owned),
        1..5,
    );
    let ratio = (1u32..=10).prop_flat_map(|n| (1..=n, Just(n), any::<bool>()));
    let meta = prop_oneof![
        text().prop_map(Meta::Text),
        any::<i64>().prop_map(Meta::Number),
        any::<bool>().prop_map(Meta::Bool)
    ];
    let metadata = prop::collection::vec((data_key(), meta), 0..4).prop_map(|entries| unique(entries, |(key, _)| key));
    (
        text().prop_map(|agent| if agent.trim().is_empty() { format!("agent{agent}") } else { agent }),
        prop::option::of(connections),
        prop::option::of(ratio),
        prop::option::of(any::<bool>()),
        prop::option::of(metadata),
        prop::option::of(seconds()),
        prop::collection::vec(turn(), 1..=4),
        prop::collection::vec(any::<u8>(), 0..32),
    )
        .prop_map(|(agent, connections, success_ratio, use_direct, metadata, timeout, turns, style)| Case {
            agent,
            connections,
            success_ratio,
            use_direct,
            metadata,
            timeout,
            turns,
            style,
        })
}

/// Whether a key can be written unquoted, alone or in a path.
fn is_bare(key: &str) -> bool {
    key != "include"
        && key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Renders values to HOCON, varying the style by the case's choices.
struct Renderer<'a> {
    style: &'a [u8],
    next: usize,
}

impl Renderer<'_> {
    /// A choice in `0..n`.
    fn pick(&mut self, n: usize) -> usize {
        if self.style.is_empty() {
            return 0;
        }
        let choice = self.style[self.next % self.style.len()] as usize % n;
        self.next += 1;
        choice
    }

    /// A quoted string: JSON escapes, or a triple-quoted raw string.
    fn string(&mut self, s: &str) -> String {
        let raw_ok = !s.contains("\"\"\"") && !s.ends_with('"');
        if raw_ok && self.pick(5) == 0 {
            return format!("\"\"\"{s}\"\"\"");
        }
        self.quoted(s)
    }

    /// A JSON-style quoted string, with escapes (keys cannot be
    /// triple-quoted).
    fn quoted(&mut self, s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => write!(out, "\\u{:04x}", c as u32).unwrap(),
                '/' if self.pick(3) == 0 => out.push_str("\\/"),
                c if (c as u32) < 0x10000 && self.pick(4) == 0 => write!(out, "\\u{:04X}", c as u32).unwrap(),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// A key: bare when it can be, and chosen so.
    fn key(&mut self, key: &str) -> String {
        if is_bare(key) && self.pick(2) == 0 { key.to_owned() } else { self.quoted(key) }
    }

    /// A word value (`http`, `MAXIMAL`): bare or quoted.
    fn word(&mut self, word: &str) -> String {
        if self.pick(2) == 0 { word.to_owned() } else { self.string(word) }
    }

    /// `key: value`, `key = value`, or `key { … }` for a dictionary.
    fn entry(&mut self, key: &str, value: String) -> String {
        let key = self.key(key);
        self.entry_at(key, value)
    }

    /// An entry at a key or path already rendered.
    fn entry_at(&mut self, key: String, value: String) -> String {
        let separator = match self.pick(if value.starts_with('{') { 3 } else { 2 }) {
            0 => ": ",
            1 => " = ",
            _ => " ",
        };
        format!("{key}{separator}{value}")
    }

    /// Items with commas, newlines or comments between them, and sometimes a
    /// trailing comma.
    fn join(&mut self, items: Vec<String>) -> String {
        let mut out = String::new();
        let count = items.len();
        for (i, item) in items.into_iter().enumerate() {
            out.push_str(&item);
            if i + 1 < count {
                out.push_str(match self.pick(5) {
                    0 => ", ",
                    1 => "\n",
                    2 => ",\n    # a comment, with { braces } and \"quotes\"\n",
                    3 => " // a comment\n",
                    _ => ",",
                });
            } else if self.pick(4) == 0 {
                out.push(',');
            }
        }
        out
    }

    fn object(&mut self, entries: Vec<String>) -> String {
        let body = self.join(entries);
        format!("{{\n{body}\n}}")
    }

    fn list(&mut self, items: Vec<String>) -> String {
        let body = self.join(items);
        format!("[{body}]")
    }

    fn json(&mut self, value: &Value) -> String {
        match value {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.to_string(),
                None => format!("{:?}", n.as_f64().unwrap()),
            },
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                let items = items.iter().map(|item| self.json(item)).collect();
                self.list(items)
            }
            Value::Object(map) => self.map(map),
        }
    }

    fn map(&mut self, map: &Map<String, Value>) -> String {
        let entries = map
            .iter()
            .map(|(key, value)| {
                let value = self.json(value);
                self.entry(key, value)
            })
            .collect();
        self.object(entries)
    }

    /// `key = null` for an absent optional key, now and then.
    fn absent(&mut self, key: &str, entries: &mut Vec<String>) {
        if self.pick(4) == 0 {
            entries.push(self.entry(key, "null".into()));
        }
    }

    fn test(&mut self, test: &Test) -> String {
        let value = self.json(&test.expected.written());
        self.entry(&test.written, value)
    }

    fn node(&mut self, node: &Node) -> String {
        let entries = node
            .0
            .iter()
            .map(|entry| match entry {
                Entry::Test(test) => self.test(test),
                Entry::Data(key, node) => self.data_entry(key, node),
            })
            .collect();
        self.object(entries)
    }

    /// A data key and its dictionary. A dictionary of one entry is written
    /// now and then as a path: `a.b { value = 1 }`, `a.not_value = 1`.
    fn data_entry(&mut self, key: &str, node: &Node) -> String {
        let (path, value) = self.data_path(key, node);
        self.entry_at(path, value)
    }

    fn data_path(&mut self, key: &str, node: &Node) -> (String, String) {
        if let [only] = node.0.as_slice()
            && is_bare(key)
            && is_bare(only.key())
            && self.pick(2) == 0
        {
            let (rest, value) = match only {
                Entry::Test(test) => (test.written.clone(), self.json(&test.expected.written())),
                Entry::Data(key, node) => self.data_path(key, node),
            };
            return (format!("{key}.{rest}"), value);
        }
        (self.key(key), self.node(node))
    }

    fn data_block(&mut self, block: &[(String, Node)]) -> String {
        let entries = block.iter().map(|(key, node)| self.data_entry(key, node)).collect();
        self.object(entries)
    }

    fn response(&mut self, response: &Response) -> String {
        let mut entries = Vec::new();
        if let Some(tests) = &response.text {
            let tests = tests.iter().map(|test| self.test(test)).collect();
            let value = self.object(tests);
            entries.push(self.entry("text", value));
        }
        for (part, block) in [("sly_data", &response.sly_data), ("structure", &response.structure)] {
            if let Some(block) = block {
                let value = self.data_block(block);
                entries.push(self.entry(part, value));
            }
        }
        self.rotate(&mut entries);
        self.object(entries)
    }

    fn turn(&mut self, turn: &Turn) -> String {
        let mut entries = Vec::new();
        match &turn.text {
            Some(text) => {
                let value = self.string(text);
                entries.push(self.entry("text", value));
            }
            None => self.absent("text", &mut entries),
        }
        match &turn.sly_data {
            Some(map) => {
                let value = self.map(map);
                entries.push(self.entry("sly_data", value));
            }
            None => self.absent("sly_data", &mut entries),
        }
        match &turn.timeout {
            Some(seconds) => entries.push(self.entry("timeout_in_seconds", seconds.clone())),
            None => self.absent("timeout_in_seconds", &mut entries),
        }
        match &turn.chat_filter {
            Some(filter) => {
                let value = self.word(filter);
                entries.push(self.entry("chat_filter", value));
            }
            None => self.absent("chat_filter", &mut entries),
        }
        match turn.continue_conversation {
            Some(b) => entries.push(self.entry("continue_conversation", b.to_string())),
            None => self.absent("continue_conversation", &mut entries),
        }
        match &turn.response {
            Some(response) => {
                let value = self.response(response);
                entries.push(self.entry("response", value));
            }
            None => self.absent("response", &mut entries),
        }
        self.rotate(&mut entries);
        self.object(entries)
    }

    fn rotate(&mut self, entries: &mut [String]) {
        if !entries.is_empty() {
            let by = self.pick(entries.len());
            entries.rotate_left(by);
        }
    }

    fn case(&mut self, case: &Case) -> String {
        let mut entries = Vec::new();
        let agent = self.string(&case.agent);
        entries.push(self.entry("agent", agent));
        if let Some(connections) = &case.connections {
            let value = if connections.len() == 1 && self.pick(2) == 0 {
                self.word(&connections[0])
            } else {
                let names = connections.iter().map(|name| self.word(name)).collect();
                self.list(names)
            };
            entries.push(self.entry("connections", value));
        }
        if let Some((k, n, spaced)) = case.success_ratio {
            let ratio = if spaced { format!(" {k} / {n} ") } else { format!("{k}/{n}") };
            let value = self.string(&ratio);
            entries.push(self.entry("success_ratio", value));
        }
        match case.use_direct {
            Some(b) => entries.push(self.entry("use_direct", b.to_string())),
            None => self.absent("use_direct", &mut entries),
        }
        match &case.metadata {
            Some(metadata) => {
                let fields = metadata
                    .iter()
                    .map(|(key, value)| {
                        let value = match value {
                            Meta::Text(s) => self.string(s),
                            Meta::Number(n) => n.to_string(),
                            Meta::Bool(b) => b.to_string(),
                        };
                        self.entry(key, value)
                    })
                    .collect();
                let value = self.object(fields);
                entries.push(self.entry("metadata", value));
            }
            None => self.absent("metadata", &mut entries),
        }
        match &case.timeout {
            Some(seconds) => entries.push(self.entry("timeout_in_seconds", seconds.clone())),
            None => self.absent("timeout_in_seconds", &mut entries),
        }
        let turns = case.turns.iter().map(|turn| self.turn(turn)).collect();
        let interactions = self.list(turns);
        entries.push(self.entry("interactions", interactions));
        self.rotate(&mut entries);
        let body = self.join(entries);
        match self.pick(3) {
            0 => body,
            1 => format!("{{\n{body}\n}}\n"),
            _ => format!("# A generated case.\n{{ {body} }}"),
        }
    }
}

fn render(case: &Case) -> String {
    Renderer { style: &case.style, next: 0 }.case(case)
}

// ---------------------------------------------------------------------------
// Generated cases: what the reader and the planner must make of them.
// ---------------------------------------------------------------------------

fn node_value(node: &Node) -> Value {
    Value::Object(
        node.0
            .iter()
            .map(|entry| match entry {
                Entry::Test(test) => (test.written.clone(), test.expected.written()),
                Entry::Data(key, node) => (key.clone(), node_value(node)),
            })
            .collect(),
    )
}

fn block_value(block: &[(String, Node)]) -> Value {
    Value::Object(block.iter().map(|(key, node)| (key.clone(), node_value(node))).collect())
}

fn response_value(response: &Response) -> Map<String, Value> {
    let mut map = Map::new();
    if let Some(tests) = &response.text {
        let tests = tests.iter().map(|test| (test.written.clone(), test.expected.written())).collect();
        map.insert("text".into(), Value::Object(tests));
    }
    if let Some(block) = &response.sly_data {
        map.insert("sly_data".into(), block_value(block));
    }
    if let Some(block) = &response.structure {
        map.insert("structure".into(), block_value(block));
    }
    map
}

fn seconds_of(text: &str) -> Duration {
    Duration::from_secs_f64(text.parse().unwrap())
}

/// The test case the reader must return for a generated case.
/// `line` with its JSON escapes (the renderer's disguise of keys and
/// strings) read.
fn unescaped(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn model(case: &Case) -> TestCase {
    let mut connections = Vec::new();
    for name in case.connections.iter().flatten() {
        let connection = Connection::BUILT_IN.into_iter().find(|c| c.name() == name.to_ascii_lowercase()).unwrap();
        if !connections.contains(&connection) {
            connections.push(connection);
        }
    }
    if connections.is_empty() {
        connections.push(Connection::Direct);
    }
    let interactions = case
        .turns
        .iter()
        .map(|turn| Interaction {
            text: turn.text.clone(),
            sly_data: turn.sly_data.clone(),
            timeout: turn.timeout.as_deref().map(seconds_of),
            chat_filter: match turn.chat_filter.as_deref().map(str::to_ascii_uppercase).as_deref() {
                Some("MAXIMAL") => ChatFilter::Maximal,
                _ => ChatFilter::Minimal,
            },
            continue_conversation: turn.continue_conversation.unwrap_or(true),
            response: turn.response.as_ref().map(response_value).unwrap_or_default(),
        })
        .collect();
    TestCase {
        key_lines: assay::case::KeyLines::NONE,
        id: "generated".into(),
        file: PathBuf::from(FILE),
        agent: case.agent.clone(),
        connections,
        success_ratio: case
            .success_ratio
            .map(|(required, samples, _)| SuccessRatio { required, samples })
            .unwrap_or_default(),
        use_direct: case.use_direct.unwrap_or(false),
        metadata: case
            .metadata
            .iter()
            .flatten()
            .map(|(key, value)| {
                let value = match value {
                    Meta::Text(s) => s.clone(),
                    Meta::Number(n) => n.to_string(),
                    Meta::Bool(b) => b.to_string(),
                };
                (key.clone(), value)
            })
            .collect(),
        timeout: case.timeout.as_deref().map(seconds_of),
        interactions,
    }
}

/// One check, comparable: (target, key, negated, expected JSON).
type Summary = (String, String, bool, String);

fn summarize_node(node: &Node, target: &str, path: &[String], out: &mut Vec<Summary>) {
    for entry in &node.0 {
        match entry {
            Entry::Test(test) => summarize_test(test, &format!("{target}({path:?})"), out),
            Entry::Data(key, node) => {
                let path: Vec<String> = path.iter().cloned().chain([key.clone()]).collect();
                summarize_node(node, target, &path, out);
            }
        }
    }
}

fn summarize_test(test: &Test, target: &str, out: &mut Vec<Summary>) {
    for value in test.expected.checks() {
        out.push((target.to_owned(), test.base.to_owned(), test.negated, value.to_string()));
    }
}

/// The checks the planner must make of one response, sorted.
fn expected_checks(response: Option<&Response>) -> Vec<Summary> {
    let mut out = Vec::new();
    let Some(response) = response else { return out };
    for test in response.text.iter().flatten() {
        summarize_test(test, "Text", &mut out);
    }
    for (target, block) in [("SlyData", &response.sly_data), ("Structure", &response.structure)] {
        for (key, node) in block.iter().flatten() {
            summarize_node(node, target, std::slice::from_ref(key), &mut out);
        }
    }
    out.sort();
    out
}

fn read(text: &str) -> Result<TestCase, String> {
    parse_case(text, "generated", Path::new(FILE), &env()).map_err(|e| e.to_string())
}

/// How many tests (not checks) a case has.
fn test_count(case: &Case) -> usize {
    fn in_node(node: &Node) -> usize {
        node.0.iter().map(|entry| if let Entry::Data(_, node) = entry { in_node(node) } else { 1 }).sum()
    }
    let blocks = |response: &Response| -> usize {
        [&response.sly_data, &response.structure].into_iter().flatten().flatten().map(|(_, node)| in_node(node)).sum()
    };
    case.turns
        .iter()
        .filter_map(|turn| turn.response.as_ref())
        .map(|response| response.text.as_ref().map_or(0, Vec::len) + blocks(response))
        .sum::<usize>()
}

/// Where a test sits: the key path errors name, and whether it is in a
/// `text` block.
struct Site {
    path: String,
    in_text: bool,
    /// Whether the new key is already a key beside it.
    collides: bool,
}

/// Renames the `n`-th test (in document order) to `new`.
fn rename_test(case: &mut Case, mut n: usize, new: &str) -> Option<Site> {
    fn in_node(node: &mut Node, n: &mut usize, new: &str, at: &str) -> Option<Site> {
        let collides = node.0.iter().any(|entry| entry.key() == new);
        for entry in &mut node.0 {
            match entry {
                Entry::Test(test) if *n == 0 => {
                    test.written = new.to_owned();
                    return Some(Site { path: format!("{at}.{new}"), in_text: false, collides });
                }
                Entry::Test(_) => *n -= 1,
                Entry::Data(key, node) => {
                    if let Some(site) = in_node(node, n, new, &format!("{at}.{key}")) {
                        return Some(site);
                    }
                }
            }
        }
        None
    }
    for (i, turn) in case.turns.iter_mut().enumerate() {
        let Some(response) = &mut turn.response else { continue };
        let at = format!("interactions[{i}].response");
        if let Some(tests) = &mut response.text {
            if n < tests.len() {
                let collides = tests.iter().any(|test| test.written == new);
                tests[n].written = new.to_owned();
                return Some(Site { path: format!("{at}.text.{new}"), in_text: true, collides });
            }
            n -= tests.len();
        }
        for (part, block) in [("sly_data", &mut response.sly_data), ("structure", &mut response.structure)] {
            for (key, node) in block.iter_mut().flatten() {
                if let Some(site) = in_node(node, &mut n, new, &format!("{at}.{part}.{key}")) {
                    return Some(site);
                }
            }
        }
    }
    None
}

/// Keys no plugin provides: identifiers, and near misses of real keys.
fn unknown_key() -> impl Strategy<Value = String> {
    let near_miss = (select(MATCHERS.to_vec()), any::<bool>(), 0..3usize, any::<Index>(), "[a-z_]").prop_map(
        |(base, negated, edit, at, c)| {
            let mut key: Vec<char> = if negated { format!("not_{base}") } else { base.to_owned() }.chars().collect();
            let i = at.index(key.len());
            match edit {
                0 => {
                    key.remove(i);
                }
                1 => key.insert(i, c.chars().next().unwrap()),
                _ => {
                    let j = (i + 1) % key.len();
                    key.swap(i, j)
                }
            }
            key.into_iter().collect::<String>()
        },
    );
    prop_oneof![
        2 => "[a-zA-Z_][a-zA-Z0-9_]{0,10}",
        2 => near_miss,
        1 => select(ODD_UNKNOWN).prop_map(str::to_owned),
    ]
    .prop_filter("a registered key", |key| !is_matcher(key))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_cases_read_back_and_plan_exactly(case in case()) {
        let text = render(&case);
        let read = read(&text);
        prop_assert!(read.is_ok(), "{}\n--- from ---\n{text}", read.unwrap_err());
        let read = read.unwrap();
        // Where the keys are is the reader's to find (checked below).
        let located = TestCase { key_lines: assay::case::KeyLines::NONE, ..read.clone() };
        prop_assert_eq!(&located, &model(&case), "--- from ---\n{}", text);

        let plan = plan_case(&read, registry());
        prop_assert!(plan.is_ok(), "{}\n--- from ---\n{text}", plan.unwrap_err());
        let plan = plan.unwrap();
        prop_assert_eq!(plan.interactions.len(), case.turns.len());
        let mut count = 0;
        for (checks, turn) in plan.interactions.iter().zip(&case.turns) {
            let mut actual: Vec<Summary> = checks
                .iter()
                .map(|c| (format!("{:?}", c.target), c.key.clone(), c.negated, c.expected.to_string()))
                .collect();
            actual.sort();
            let expected = expected_checks(turn.response.as_ref());
            count += expected.len();
            prop_assert_eq!(actual, expected, "--- from ---\n{}", text);
            for check in checks {
                prop_assert_eq!(&check.expected_json, &check.expected.to_string());
                let written = if check.negated { format!("not_{}", check.key) } else { check.key.clone() };
                prop_assert_eq!(check.display_key(), written.clone());
                // Its line asks for it: the key is there, or (a list's
                // element on a line of its own) its expected value.
                let line = check.line.and_then(|line| text.lines().nth(line as usize - 1));
                prop_assert!(line.is_some(), "{written} has no line\n--- from ---\n{}", text);
                let line = unescaped(line.unwrap()).to_lowercase();
                // (a list or a dictionary: the line it opens on; a number
                // as the renderer spelled it)
                let at_value = match &check.expected {
                    serde_json::Value::String(value) => {
                        line.contains(&value.to_lowercase()) || line.contains("\"\"\"")
                    }
                    serde_json::Value::Array(_) => line.contains('['),
                    serde_json::Value::Object(_) => line.contains('{'),
                    serde_json::Value::Number(number) => line
                        .split([' ', ',', '[', ']', '{', '}', ':', '='])
                        .any(|word| word.parse::<f64>().ok() == number.as_f64()),
                    other => line.contains(&other.to_string()),
                };
                prop_assert!(
                    line.contains(&written.to_lowercase()) || at_value,
                    "{written} = {} is said to be at `{line}`\n--- from ---\n{}", check.expected, text
                );
            }
        }
        prop_assert_eq!(plan.check_count(), count);
    }

    #[test]
    fn an_unknown_test_key_is_an_error_naming_its_path(
        mut case in case(),
        extra in test(),
        which in any::<Index>(),
        new in unknown_key(),
    ) {
        if test_count(&case) == 0 {
            let response = case.turns[0].response.get_or_insert_with(Response::default);
            response.text.get_or_insert_with(Vec::new).push(extra);
        }
        let tests = test_count(&case);
        let site = rename_test(&mut case, which.index(tests), &new).unwrap();
        prop_assume!(!site.collides);
        let text = render(&case);
        let read = read(&text);
        prop_assert!(read.is_ok(), "{}\n--- from ---\n{text}", read.unwrap_err());
        let error = plan_case(&read.unwrap(), registry());
        prop_assert!(error.is_err(), "`{}` was planned\n--- from ---\n{}", site.path, text);
        let error = error.unwrap_err();
        let message = error.to_string();
        prop_assert!(message.contains(&site.path), "{message:?} does not name {}", site.path);
        match &error {
            CaseErrorKind::UnknownMatcher { path, key, .. } if site.in_text => {
                prop_assert_eq!(path, &site.path);
                prop_assert_eq!(key, &new);
            }
            // Below sly_data or structure, an unknown key is a test no
            // plugin provides or a nested data key, whose value must be a
            // dictionary of tests, and is not: the error says both.
            CaseErrorKind::WrongType { path, .. } | CaseErrorKind::Invalid { path, .. } if !site.in_text => {
                prop_assert!(
                    path == &site.path || path.starts_with(&format!("{}.", site.path)),
                    "{} is not at {}", path, site.path
                );
            }
            other => prop_assert!(false, "unexpected error for `{}`: {other:?}\n--- from ---\n{text}", site.path),
        }
    }
}

// ---------------------------------------------------------------------------
// Found while writing these properties.
// ---------------------------------------------------------------------------

/// Set in the child process of [`a_long_dotted_key_is_an_error_not_an_abort`].
const CHILD: &str = "ASSAY_PROPERTIES_CHILD";

/// hocon-parser caps brace nesting at 128 levels, but not a dotted key path:
/// `a.a.a…a = 1` with enough segments exhausts the stack inside
/// `hocon::parse_with_env` and aborts the process, which no `catch_unwind`
/// contains. How many is enough depends on the stack and the optimization
/// level: about 105 on a 2 MiB thread (tests, tokio workers,
/// `spawn_blocking`) with hocon-parser unoptimized, a few thousand at most
/// in the `assay` binary, where `assay plan` aborts (SIGABRT) on a case with
/// a 2,000-segment key. The reader now refuses such paths before parsing;
/// this test reads in a child process, so a regression fails the test
/// instead of aborting the test binary.
#[test]
fn a_long_dotted_key_is_an_error_not_an_abort() {
    // The test's own name, wherever its module is (test names leave the
    // crate's out).
    let module = module_path!().trim_start_matches("integration::");
    let name = format!("{module}::a_long_dotted_key_is_an_error_not_an_abort");
    if std::env::var_os(CHILD).is_some() {
        let text = format!("{} = 1", vec!["a"; 10_000].join("."));
        assert!(parse_case(&text, "deep", Path::new(FILE), &env()).is_err());
        return;
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "the child {}:\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 passed"), "the child ran no test");
}
