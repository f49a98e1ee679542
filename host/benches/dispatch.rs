//! Dispatch cost: the stock matchers called natively vs through their
//! WebAssembly component.
//!
//! For each key (`keywords`, `value`), mode (one check, or a batch of 100
//! checks sharing one actual) and actual size (100 B, 10 KB, 1 MB) there are
//! two benchmarks side by side:
//!
//! - `KEY/MODE/SIZE/native`: the stock plugin's Rust code called in-process,
//!   doing the same work as the component's export: one `Actual` built from
//!   a copy of the string (the guest also gets a copy), each check's expected
//!   value built as a `Json` (a clone: the component builds it from the
//!   typed nodes of `assay:plugin@0.3.0`), `Matcher::evaluate` per check
//!   (`assay_plugin_sdk::evaluate_one::<Stock>`).
//! - `KEY/MODE/SIZE/wasm`: `MatcherPlugin::evaluate` on the built-in stock
//!   component, with a warm instance pool: copying into the sandbox, the
//!   call, the host's output caps. The plugin gets a 60 s deadline instead
//!   of the default 2 s: `value/batch100/1MB/wasm` takes longer than 2 s and
//!   would fault.
//!
//! Every benchmark declares its checks as its throughput, so criterion's
//! `thrpt` line reads in checks per second; time per check = 1 / thrpt (or
//! the batch time / 100). wasm/native = the ratio of the two `time` lines.
//!
//! The checks: `keywords` looks for a keyword at the very end of the text
//! (every other check of a batch for one that is absent), so each check
//! scans the whole string. `value` compares a JSON object of the given size
//! with a small object it does not equal: the actual is parsed once per
//! batch, and each verdict message renders the actual.
//!
//! `{rouge,bleu,meteor}/single/SIZE/{native,wasm}`: one check of a metric
//! (ROUGE: rouge1, rouge2, rougeL; sentence BLEU; METEOR) of a text of 1 KB
//! or 10 KB against a reference that rewords every fifth word, by the
//! plugin's Rust code in-process and by its component loaded from
//! `plugins/NAME/NAME.wasm` with the default sandbox limits. To compare two
//! builds of the components with one bench binary, set
//! `ASSAY_BENCH_PLUGINS` to a directory laid out as `plugins/` (e.g.
//! `mkdir -p /tmp/old/rouge && cp plugins/rouge/rouge.wasm /tmp/old/rouge/`).
//!
//! Run: `cargo bench -p assay --bench dispatch -- --warm-up-time 1 --measurement-time 3`

use assay::plugin::{ActualValue, BUILTIN_MATCHERS, CheckInput, MatcherPlugin, PluginScope};
use assay::sandbox::{ComponentOptions, ComponentSource, Limits, Runtime};
use assay_plugin_bleu::BleuMatcher;
use assay_plugin_meteor::MeteorMatcher;
use assay_plugin_rouge::Rouge;
use assay_plugin_sdk::{Actual, Matcher, evaluate_one};
use assay_plugin_stock::Stock;
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// The actual sizes, with their labels.
const SIZES: &[(&str, usize)] = &[("100B", 100), ("10KB", 10_000), ("1MB", 1_000_000)];

/// Checks in a batch.
const BATCH: usize = 100;

/// The keyword every `keywords` check that should pass looks for.
const NEEDLE: &str = "needle";

/// Filler text of exactly `size` bytes ending in [`NEEDLE`].
fn text_of(size: usize) -> String {
    let filler = "lorem ipsum dolor sit amet consectetur adipiscing elit ";
    let body = size - NEEDLE.len();
    let mut text: String = filler.chars().cycle().take(body).collect();
    text.push_str(NEEDLE);
    assert_eq!(text.len(), size);
    text
}

/// A compact JSON object of about `size` bytes: `{"items":[{..},..]}`.
fn json_of(size: usize) -> String {
    let mut items = Vec::new();
    let mut length = "{\"items\":[]}".len();
    let mut id = 0;
    while length < size {
        let item = serde_json::json!({ "id": id, "name": format!("item {id}"), "tags": ["red", "ripe"], "ok": true });
        length += item.to_string().len() + 1;
        items.push(item);
        id += 1;
    }
    serde_json::json!({ "items": items }).to_string()
}

/// The expected value of check `i` of a batch, as JSON text.
fn expected(key: &str, i: usize) -> String {
    match key {
        "keywords" if i.is_multiple_of(2) => serde_json::to_string(NEEDLE).unwrap(),
        "keywords" => serde_json::to_string(&format!("absent{i}")).unwrap(),
        _ => format!("{{\"items\":[{i}]}}"),
    }
}

/// One benchmark input: an actual and its checks, in both forms.
struct Case {
    actual: String,
    is_text: bool,
    key: &'static str,
    expected: Vec<String>,
    /// The same, parsed.
    expected_values: Vec<serde_json::Value>,
}

impl Case {
    fn new(key: &'static str, size: usize, checks: usize) -> Case {
        let is_text = key == "keywords";
        let actual = if is_text { text_of(size) } else { json_of(size) };
        let expected: Vec<String> = (0..checks).map(|i| expected(key, i)).collect();
        let expected_values = expected.iter().map(|e| serde_json::from_str(e).expect("JSON")).collect();
        Case { actual, is_text, key, expected, expected_values }
    }

    /// The native path: what the component's export does, in-process (its
    /// expected values come typed, built as a `Json`: natively, a clone).
    fn run_native(&self) -> Vec<bool> {
        let actual = if self.is_text { Actual::text(self.actual.clone()) } else { Actual::json(self.actual.clone()) };
        let actuals = [actual];
        self.expected_values
            .iter()
            .map(|expected| evaluate_one::<Stock>(&actuals, self.key, 0, Ok(expected.clone())).expect("a verdict").pass)
            .collect()
    }

    /// The component path.
    fn run_wasm(&self, plugin: &MatcherPlugin) -> Vec<bool> {
        let actual = if self.is_text { ActualValue::Text(&self.actual) } else { ActualValue::Json(&self.actual) };
        let inputs: Vec<CheckInput<'_>> = self
            .expected
            .iter()
            .zip(&self.expected_values)
            .map(|(json, value)| CheckInput { key: self.key, actual: 0, expected: value, expected_json: json })
            .collect();
        let output = plugin.evaluate(&[actual], &inputs, &PluginScope::default(), None, None);
        output.results.into_iter().map(|r| r.expect("a verdict").pass).collect()
    }
}

fn dispatch(c: &mut Criterion) {
    let runtime = Runtime::new(Limits::default().memory_bytes);
    let stock = BUILTIN_MATCHERS.iter().find(|p| p.name == "stock").expect("the stock plugin is built in");
    // A long deadline: a batch of 100 `value` checks on a 1 MB actual takes
    // longer than the default 2 s and would fault instead of being measured.
    let limits = Limits { deadline: Duration::from_secs(60), ..Limits::default() };
    let options = ComponentOptions { limits, grants: stock.grants, ..ComponentOptions::default() };
    let plugin = MatcherPlugin::load(&runtime, ComponentSource::Builtin(stock.name), stock.bytes, options)
        .expect("the stock component loads");

    for key in ["keywords", "value"] {
        for (mode, checks) in [("single", 1), ("batch100", BATCH)] {
            for &(label, size) in SIZES {
                let case = Case::new(key, size, checks);
                // Both paths must agree before their times mean anything.
                let native = case.run_native();
                assert_eq!(native, case.run_wasm(&plugin), "{key} {mode} {label}: native and wasm disagree");
                let expected_passes = if key == "keywords" { checks.div_ceil(2) } else { 0 };
                assert_eq!(native.iter().filter(|&&p| p).count(), expected_passes, "{key} {mode} {label}");

                let mut group = c.benchmark_group(format!("{key}/{mode}/{label}"));
                group.throughput(Throughput::Elements(checks as u64));
                if size * checks >= 1_000_000 {
                    // Milliseconds per iteration: few samples, each one run.
                    group.sample_size(10).sampling_mode(SamplingMode::Flat);
                }
                group
                    .bench_function(BenchmarkId::from_parameter("native"), |b| b.iter(|| black_box(case.run_native())));
                group.bench_function(BenchmarkId::from_parameter("wasm"), |b| {
                    b.iter(|| black_box(case.run_wasm(black_box(&plugin))))
                });
                group.finish();
            }
        }
    }
}

/// A text of about `size` bytes and a reference that rewords every fifth
/// word of it.
fn rouge_texts(size: usize) -> (String, String) {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett"];
    let (mut text, mut reference) = (String::new(), String::new());
    let mut i = 0;
    while text.len() < size {
        let word = words[(i * 7 + i / 10) % words.len()];
        text.push_str(word);
        text.push(' ');
        reference.push_str(if i % 5 == 0 { "other" } else { word });
        reference.push(' ');
        i += 1;
    }
    (text, reference)
}

/// The directory the metric components are loaded from: `plugins/` of
/// this checkout, or `ASSAY_BENCH_PLUGINS` (a directory with the same
/// layout, e.g. a copy of an older build's components) to compare two
/// builds of the components with one bench binary.
fn plugins_dir() -> std::path::PathBuf {
    std::env::var_os("ASSAY_BENCH_PLUGINS")
        .map(Into::into)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins").into())
}

/// `KEY/single/SIZE/{native,wasm}` for one metric plugin: one check of the
/// text of [`rouge_texts`] against its reference, by the plugin's Rust code
/// in-process (`M`) and by its component loaded from `plugins/FILE` with
/// the default sandbox limits. Both must give the same score.
fn metric<M: Matcher>(c: &mut Criterion, key: &'static str, file: &str) {
    let runtime = Runtime::new(Limits::default().memory_bytes);
    let path = plugins_dir().join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
    let plugin = MatcherPlugin::load(&runtime, ComponentSource::File(path), &bytes, ComponentOptions::default())
        .unwrap_or_else(|e| panic!("the {key} component loads: {e:#}"));
    for (label, size) in [("100B", 100), ("1KB", 1_000), ("10KB", 10_000)] {
        let (text, reference) = rouge_texts(size);
        let expected_value = serde_json::json!({ "reference": reference, "threshold": 0.5 });
        let expected = expected_value.to_string();
        // The component's export gets the expected value as typed nodes and
        // builds it as a `Json` (`assay:plugin@0.3.0`): natively, a clone.
        let native =
            || evaluate_one::<M>(&[Actual::text(text.clone())], key, 0, Ok(expected_value.clone())).expect("a verdict");
        let wasm = || {
            let inputs = [CheckInput { key, actual: 0, expected: &expected_value, expected_json: &expected }];
            plugin
                .evaluate(&[ActualValue::Text(&text)], &inputs, &PluginScope::default(), None, None)
                .results
                .remove(0)
                .expect("a verdict")
        };
        let (native_score, wasm_score) = (native().score.expect("a score"), wasm().score.expect("a score"));
        // The same up to the last bits: the component's `exp`/`ln` (bleu's
        // geometric mean) are Rust's libm, the native ones the platform's.
        assert!(
            (native_score - wasm_score).abs() <= 4.0 * f64::EPSILON * native_score.abs(),
            "{key} {label}: native {native_score} and wasm {wasm_score} disagree"
        );

        let mut group = c.benchmark_group(format!("{key}/single/{label}"));
        group.throughput(Throughput::Elements(1));
        group.bench_function(BenchmarkId::from_parameter("native"), |b| b.iter(|| black_box(native())));
        group.bench_function(BenchmarkId::from_parameter("wasm"), |b| b.iter(|| black_box(wasm())));
        group.finish();
    }
}

fn rouge(c: &mut Criterion) {
    metric::<Rouge>(c, "rouge", "rouge/rouge.wasm");
}

fn bleu(c: &mut Criterion) {
    metric::<BleuMatcher>(c, "bleu", "bleu/bleu.wasm");
}

fn meteor(c: &mut Criterion) {
    metric::<MeteorMatcher>(c, "meteor", "meteor/meteor.wasm");
}

criterion_group!(benches, dispatch, rouge, bleu, meteor);
criterion_main!(benches);
