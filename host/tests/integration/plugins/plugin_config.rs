//! Plugins from configuration: `[plugins.NAME]` with grants, limits and
//! pins, `.assay/plugins/`, `[keys]`, `assay plugins --lock`, and the
//! compile cache (cold compile, warm hit, corrupt files rebuilt).

use crate::util::{assay, fixture, stderr, stdout};
use assay::plugin::{BUILTIN_MATCHERS, MatcherPlugin, Registry};
use assay::sandbox::{CacheStatus, CompileCache, ComponentOptions, ComponentSource, Limits, Runtime};
use std::path::Path;

fn stock_bytes() -> &'static [u8] {
    BUILTIN_MATCHERS[0].bytes
}

/// The stock plugin, as bytes the binary has no precompiled artifact for:
/// loading it goes through the compile cache.
fn load_stock(runtime: &Runtime) -> MatcherPlugin {
    let bytes = assay::sandbox::precompiled::without_artifact(stock_bytes());
    MatcherPlugin::load(runtime, ComponentSource::Builtin("stock"), &bytes, ComponentOptions::default()).unwrap()
}

/// A runtime (as a new process would make) with the compile cache in
/// `dir/cache` and its key in `dir/secret.key`.
fn cached_runtime(dir: &Path) -> Runtime {
    let cache = CompileCache::with_key_file(dir.join("cache"), dir.join("secret.key"));
    Runtime::with_cache(Limits::default().memory_bytes, Some(cache))
}

#[test]
fn a_cold_start_compiles_and_a_warm_start_loads_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cold = cached_runtime(dir.path());
    assert_eq!(load_stock(&cold).cache_status(), CacheStatus::Compiled);

    // A new process: a new engine, the same cache directory and key.
    let warm = cached_runtime(dir.path());
    let plugin = load_stock(&warm);
    assert_eq!(plugin.cache_status(), CacheStatus::Hit);
    let output = crate::util::eval_one(&plugin, "keywords", "the Beatles", "\"Beatles\"");
    assert!(output.results[0].as_ref().unwrap().pass);
}

#[test]
fn a_corrupt_or_foreign_cache_file_is_ignored_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = || cached_runtime(dir.path());
    load_stock(&runtime());
    let artifact = only_file_with_extension(&dir.path().join("cache"), "cwasm");

    // Flip a byte: the tag no longer matches.
    let mut bytes = std::fs::read(&artifact).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&artifact, &bytes).unwrap();
    assert_eq!(load_stock(&runtime()).cache_status(), CacheStatus::Rebuilt);
    assert_eq!(load_stock(&runtime()).cache_status(), CacheStatus::Hit);

    // A foreign file that is not an artifact, with a matching digest as the
    // cache once had.
    let garbage = b"not a compiled component".to_vec();
    std::fs::write(&artifact, &garbage).unwrap();
    let digest: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&garbage).iter().map(|b| format!("{b:02x}")).collect()
    };
    std::fs::write(artifact.with_extension("sha256"), digest).unwrap();
    let plugin = load_stock(&runtime());
    assert_eq!(plugin.cache_status(), CacheStatus::Rebuilt);
    assert!(crate::util::eval_one(&plugin, "value", "x", "\"x\"").results[0].as_ref().unwrap().pass);
}

fn only_file_with_extension(dir: &Path, extension: &str) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[test]
fn assay_plugins_shows_the_cache_at_work() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    // rouge and levenshtein from their files; the built-ins come compiled.
    let plugins = crate::util::compiled_plugin_args();
    let plugins_with = |flags: &[&str]| {
        let mut args = vec!["plugins"];
        args.extend(plugins.iter().map(String::as_str));
        args.extend(flags);
        assay(&args)
    };
    let first = plugins_with(&["--cache-dir", cache_dir]);
    assert!(stdout(&first).contains("  compiled, and cached\n"), "{}", stdout(&first));
    assert!(stdout(&first).contains("  precompiled, embedded in assay (nothing compiled)\n"), "{}", stdout(&first));
    let second = plugins_with(&["--cache-dir", cache_dir]);
    assert!(stdout(&second).contains("  loaded from the compile cache\n"), "{}", stdout(&second));
    let off = plugins_with(&["--no-cache"]);
    assert!(stdout(&off).contains("  compiled (no cache)\n"), "{}", stdout(&off));
}

#[test]
fn precompile_fills_the_cache_with_promptfoos_built_ins_and_a_slow_first_compile_is_announced() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let first = assay(&["plugins", "--precompile", "--cache-dir", cache_dir]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let listed = stdout(&first);
    for name in ["stock", "promptfoo", "javascript", "promptfoo-python"] {
        assert!(listed.contains(&format!("\n{name} ")) || listed.starts_with(&format!("{name} ")), "{name}: {listed}");
    }
    // The big ones (the JavaScript and Python runners) are announced while
    // they compile; the small ones are quick and are not.
    let announced = stderr(&first);
    for name in ["javascript", "promptfoo-python"] {
        let line = format!("compiling built-in `{name}` (");
        assert!(announced.contains(&line), "{name}: {announced}");
    }
    assert!(!announced.contains("built-in `stock`"), "{announced}");
    assert!(announced.contains("for its first use on this machine"), "{announced}");
    let second = assay(&["plugins", "--precompile", "--cache-dir", cache_dir]);
    assert!(!stdout(&second).contains("compiled, and cached"), "{}", stdout(&second));
    assert!(stderr(&second).is_empty(), "nothing compiles, nothing is announced: {}", stderr(&second));
}

/// A project folder with an assay.toml and the given plugin files copied in.
fn project(toml: &str, plugins: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (from, to) in plugins {
        let to = dir.path().join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixture(from), to).unwrap();
    }
    std::fs::write(dir.path().join("assay.toml"), toml).unwrap();
    dir
}

fn check_in(dir: &Path, key: &str) -> std::process::Output {
    let config = dir.join("assay.toml");
    assay(&[
        "check",
        "--config",
        config.to_str().unwrap(),
        "--key",
        key,
        "--actual",
        "\"x\"",
        "--expected",
        "1",
        "--json",
    ])
}

#[test]
fn plugin_limits_and_grants_come_from_assay_toml() {
    let dir = project(
        "[plugins.hostile]\npath = \"p/hostile.wasm\"\ndeadline_ms = 100\n\n[plugins.asker]\npath = \"p/asker.wasm\"\ngrants = [\"judge\"]\n",
        &[
            ("plugins/hostile/hostile.wasm", "p/hostile.wasm"),
            ("plugins/judge-importer/judge-importer.wasm", "p/asker.wasm"),
        ],
    );
    let started = std::time::Instant::now();
    let output = check_in(dir.path(), "spin");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(verdict["error_kind"], "deadline", "{verdict}");
    assert!(verdict["message"].as_str().unwrap().contains("deadline of 100 ms"), "{verdict}");

    // Without its grant the judge importer is refused, naming the fix.
    std::fs::write(dir.path().join("assay.toml"), "[plugins.asker]\npath = \"p/asker.wasm\"\n").unwrap();
    let output = check_in(dir.path(), "ask_judge");
    assert_ne!(output.status.code(), Some(0));
    let error = stderr(&output);
    assert!(error.contains("it imports `assay:plugin/judge@0.1.0`"), "{error}");
    assert!(error.contains("[plugins.asker]"), "{error}");
}

#[test]
fn a_pin_mismatch_refuses_to_load_and_lock_writes_the_pins() {
    let dir = project(
        "# my plugins\n[plugins.hostile]\npath = \"hostile.wasm\" # keep this comment\nsha256 = \"00\"\n",
        &[("plugins/hostile/hostile.wasm", "hostile.wasm")],
    );
    let output = check_in(dir.path(), "count");
    assert_ne!(output.status.code(), Some(0));
    let error = stderr(&output);
    assert!(error.contains("but assay.toml pins 00; refusing to load it"), "{error}");
    assert!(error.contains("Consider `assay plugins --lock`"), "{error}");
    assert_eq!(error.matches("refusing to load it").count(), 1, "said once: {error}");

    let config = dir.path().join("assay.toml");
    let output = assay(&["plugins", "--lock", "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let sha = assay::sandbox::sha256_hex(&std::fs::read(dir.path().join("hostile.wasm")).unwrap());
    assert_eq!(stdout(&output), format!("pinned hostile to {sha}\n"));
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains(&format!("sha256 = \"{sha}\"")) && text.contains("# keep this comment"), "{text}");
    assert_eq!(check_in(dir.path(), "count").status.code(), Some(0));
}

#[test]
fn components_in_dot_assay_plugins_load_without_configuration() {
    let dir = project("", &[("plugins/hostile/hostile.wasm", ".assay/plugins/hostile.wasm")]);
    let output = check_in(dir.path(), "count");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn two_plugins_claiming_a_key_need_a_keys_entry_naming_the_winner() {
    let dir = project("", &[]);
    let other = dir.path().join("other.wasm");
    std::fs::write(&other, stock_bytes()).unwrap();
    let config = dir.path().join("assay.toml");
    let plugin = other.to_str().unwrap();

    let output = assay(&["plugins", "--config", config.to_str().unwrap(), "--plugin", plugin]);
    assert_ne!(output.status.code(), Some(0));
    let error = stderr(&output);
    assert!(error.contains("two plugins claim the key `value`: stock (built-in `stock`) and stock (`"), "{error}");
    assert!(error.contains("[keys] value = \"stock\" (or \"other\")"), "{error}");

    std::fs::write(&config, "[keys]\ngreater = \"other\"\nless = \"other\"\nvalue = \"other\"\nkeywords = \"stock\"\n")
        .unwrap();
    let output = assay(&["plugins", "--config", config.to_str().unwrap(), "--plugin", plugin]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    std::fs::write(&config, "[keys]\nrouge = \"other\"\n").unwrap();
    let output = assay(&["plugins", "--config", config.to_str().unwrap()]);
    assert!(stderr(&output).contains("no loaded plugin named `other` provides `rouge`"), "{}", stderr(&output));
}

#[test]
fn the_registry_routes_each_preferred_key_to_its_winner() {
    let runtime = crate::util::runtime();
    let mut registry = Registry::new();
    for key in ["value", "less", "greater"] {
        registry.prefer(key, "other");
    }
    registry.prefer("keywords", "stock");
    registry.add(load_stock(runtime)).unwrap();
    let source = ComponentSource::File("other.wasm".into());
    let other = MatcherPlugin::load(runtime, source.clone(), stock_bytes(), ComponentOptions::default()).unwrap();
    registry.add_labelled(other, "other").unwrap();
    registry.check_preferences().unwrap();
    assert_eq!(registry.plugin_for("value").unwrap().source(), &source);
    assert_eq!(registry.plugin_for("keywords").unwrap().source(), &ComponentSource::Builtin("stock"));
}

/// The stock plugin with a custom section appended: another file (another
/// sha256) that behaves the same.
fn stock_variant(tag: &str) -> Vec<u8> {
    let name = b"assay-test";
    let mut bytes = stock_bytes().to_vec();
    // A custom section: id 0, its size, then its name (length-prefixed) and
    // payload; every length here is under 128, one LEB128 byte.
    bytes.extend([0, (1 + name.len() + tag.len()) as u8, name.len() as u8]);
    bytes.extend(name);
    bytes.extend(tag.as_bytes());
    bytes
}

/// The message of `assay plugins --config CONFIG ARGS`, and whether it
/// succeeded.
fn plugins_in(config: &Path, args: &[&str]) -> (bool, String) {
    let mut all = vec!["plugins", "--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    let output = assay(&all);
    (output.status.success(), if output.status.success() { stdout(&output) } else { stderr(&output) })
}

#[test]
fn an_unpinned_plugin_cannot_take_a_pinned_plugins_label_and_lock_pins_it() {
    let dir = tempfile::tempdir().unwrap();
    let (benign, config) = (dir.path().join("benign.wasm"), dir.path().join("assay.toml"));
    std::fs::write(&benign, stock_bytes()).unwrap();
    let pin = assay::sandbox::sha256_hex(stock_bytes());
    std::fs::write(
        &config,
        format!(
            "[plugins.benign]\npath = \"benign.wasm\"\nsha256 = \"{pin}\"\n\n[keys]\nvalue = \"benign\"\nless = \"benign\"\ngreater = \"benign\"\nkeywords = \"benign\"\n"
        ),
    )
    .unwrap();
    let (ok, listed) = plugins_in(&config, &[]);
    assert!(ok, "{listed}");
    assert!(listed.contains(&format!("stock 0.1.0 (`{}`), labelled `benign`\n", benign.display())), "{listed}");
    assert!(listed.contains("shadowed: [keys] gives every key it has to other plugins\n  value  "), "{listed}");
    assert!(listed.contains(" [shadowed by `benign`]\n"), "{listed}");

    // The hijack: an unpinned file under the pinned plugin's label.
    let hijacker = dir.path().join(".assay/plugins/benign.wasm");
    std::fs::create_dir_all(hijacker.parent().unwrap()).unwrap();
    std::fs::write(&hijacker, stock_variant("hijacked")).unwrap();
    let refused = format!(
        "two plugins are labelled `benign`: [plugins.benign] in assay.toml (`{}`) and `{}`",
        benign.display(),
        hijacker.display()
    );
    let config_arg = config.to_str().unwrap();
    let check = ["check", "--config", config_arg, "--key", "value", "--actual", "\"x\"", "--expected", "\"x\""];
    let output = assay(&check);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(stderr(&output).contains(&refused), "{}", stderr(&output));
    assert!(stderr(&output).contains("Consider renaming one of them"), "{}", stderr(&output));
    for args in [&[][..], &["--lock"]] {
        let (ok, error) = plugins_in(&config, args);
        assert!(!ok && error.contains(&refused), "{args:?}: {error}");
    }
    // Nor through --plugin, nor under a built-in's name.
    std::fs::rename(&hijacker, dir.path().join("stock.wasm")).unwrap();
    let (ok, error) = plugins_in(&config, &["--plugin", dir.path().join("stock.wasm").to_str().unwrap()]);
    assert!(!ok, "{error}");
    assert!(error.contains("two plugins are labelled `stock`: the built-in `stock` and --plugin `"), "{error}");

    // Under a label of its own it loads, listed as shadowed, with the winner.
    let evil = dir.path().join(".assay/plugins/evil.wasm");
    std::fs::rename(dir.path().join("stock.wasm"), &evil).unwrap();
    let (ok, listed) = plugins_in(&config, &[]);
    assert!(ok, "{listed}");
    let entry = listed.split_once(", labelled `evil`\n").map(|(_, rest)| rest).unwrap_or_default();
    assert!(entry.contains("shadowed: [keys] gives every key it has to other plugins\n"), "{listed}");

    // `--lock` pins it as a [plugins.evil] of its own.
    let evil_sha = assay::sandbox::sha256_hex(&std::fs::read(&evil).unwrap());
    let (ok, printed) = plugins_in(&config, &["--lock"]);
    assert!(ok, "{printed}");
    assert_eq!(
        printed,
        format!(
            "pinned benign to {pin}\npinned evil to {evil_sha} (added [plugins.evil] for `.assay/plugins/evil.wasm`)\n"
        )
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(&format!("\n[plugins.evil]\npath = \".assay/plugins/evil.wasm\"\nsha256 = \"{evil_sha}\"\n")),
        "{text}"
    );
    // Once pinned it is loaded once, and a changed file is refused.
    let (ok, listed) = plugins_in(&config, &[]);
    assert!(ok && listed.matches("labelled `evil`").count() == 1, "{listed}");
    std::fs::write(&evil, stock_variant("changed")).unwrap();
    let (ok, error) = plugins_in(&config, &[]);
    assert!(!ok && error.contains(&format!("but assay.toml pins {evil_sha}; refusing to load it")), "{error}");
}

#[test]
fn lock_creates_assay_toml_to_pin_dot_assay_plugins() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join(".assay/plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(fixture("plugins/hostile/hostile.wasm"), plugins.join("hostile.wasm")).unwrap();
    let output = crate::util::assay_command().args(["plugins", "--lock"]).current_dir(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let sha = assay::sandbox::sha256_hex(&std::fs::read(plugins.join("hostile.wasm")).unwrap());
    let text = std::fs::read_to_string(dir.path().join("assay.toml")).unwrap();
    assert_eq!(text, format!("[plugins.hostile]\npath = \".assay/plugins/hostile.wasm\"\nsha256 = \"{sha}\"\n"));
}

#[test]
fn the_registry_refuses_a_second_plugin_under_a_label() {
    let runtime = crate::util::runtime();
    let mut registry = Registry::new();
    registry.add(load_stock(runtime)).unwrap();
    let source = ComponentSource::File("stock.wasm".into());
    let copy = MatcherPlugin::load(runtime, source, stock_bytes(), ComponentOptions::default()).unwrap();
    let error = registry.add_labelled(copy, "stock").unwrap_err().to_string();
    assert!(error.starts_with("two plugins are labelled `stock`: built-in `stock` and `stock.wasm`"), "{error}");
    assert_eq!(registry.plugins().len(), 1);
}

#[test]
fn lock_without_a_configuration_is_a_usage_error_and_an_unreadable_plugin_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let output = crate::util::assay_command().args(["plugins", "--lock"]).current_dir(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(stderr(&output), "error: `assay.toml`: there is no assay.toml to lock\n");
    assert!(!dir.path().join("assay.toml").exists());

    let config = dir.path().join("assay.toml");
    std::fs::write(&config, "[plugins.gone]\npath = \"gone.wasm\"\n").unwrap();
    let output = assay(&["plugins", "--lock", "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let gone = dir.path().join("gone.wasm");
    assert!(
        stderr(&output).starts_with(&format!("error: failed to read plugin `{}`: ", gone.display())),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[plugins.gone]\npath = \"gone.wasm\"\n");
}
