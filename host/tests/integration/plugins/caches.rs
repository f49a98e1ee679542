//! The compile cache, the answer cache and the results as someone else
//! meets them: planted artifacts and answers are never used, tampered files
//! are rebuilt, files and directories are private, a cache directory open to
//! others (or a refused key) turns the cache off with one warning, and a
//! project's `[cache] dir` needs the user's say-so.
//!
//! Several tests chown a directory or file to another uid to make it "owned
//! by someone else": they need root (the project's test machines run as
//! root) and fail, never skip, without it.

use crate::judge::judge_server;
use crate::util::{COMPILED_PLUGINS, assay_command, compiled_plugin_args, root, stderr, stdout};
use assay::plugin::MatcherPlugin;
use assay::sandbox::{CacheStatus, CompileCache, ComponentOptions, ComponentSource, Limits, Runtime};
use sha2::Digest;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A uid that is not the test's own.
const SOMEONE_ELSE: u32 = 4242;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).mode() & 0o7777
}

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A runtime, as a new process would make it, with the compile cache in
/// `cache` and its key in `home/secret.key`.
fn runtime(cache: &Path, home: &Path) -> Runtime {
    let cache = CompileCache::with_key_file(cache, home.join("secret.key"));
    Runtime::with_cache(Limits::default().memory_bytes, Some(cache))
}

/// The bytes of [`COMPILED_PLUGINS`]`[index]` (0: rouge, 1: levenshtein).
fn compiled_bytes(index: usize) -> Vec<u8> {
    std::fs::read(root().join(COMPILED_PLUGINS[index])).unwrap()
}

/// Loads [`COMPILED_PLUGINS`]`[index]` (0: rouge, 1: levenshtein) from its
/// file: components the binary does not embed compiled, so that loading
/// one goes through the compile cache.
fn load_compiled(runtime: &Runtime, index: usize) -> MatcherPlugin {
    let path = root().join(COMPILED_PLUGINS[index]);
    MatcherPlugin::load(runtime, ComponentSource::File(path), &compiled_bytes(index), ComponentOptions::default())
        .unwrap()
}

fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .collect();
    files.sort();
    files
}

/// Gives `path` to [`SOMEONE_ELSE`]; needs root.
fn give_away(path: &Path) {
    std::os::unix::fs::chown(path, Some(SOMEONE_ELSE), None)
        .unwrap_or_else(|e| panic!("this test needs root, to make `{}` belong to another uid: {e}", path.display()));
}

#[test]
fn a_valid_artifact_of_another_component_planted_under_a_key_is_never_run() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("cache");
    let first = runtime(&cache, home.path());
    assert_eq!(load_compiled(&first, 0).cache_status(), CacheStatus::Compiled);
    let [rouge_file] = files_with_extension(&cache, "cwasm").try_into().unwrap();
    assert_eq!(load_compiled(&first, 1).cache_status(), CacheStatus::Compiled);
    let levenshtein_file = files_with_extension(&cache, "cwasm").into_iter().find(|f| *f != rouge_file).unwrap();

    // rouge's whole cache file, and every file beside it, under levenshtein's key,
    // with a digest of it as the cache once had.
    let rouge_bytes = std::fs::read(&rouge_file).unwrap();
    std::fs::write(&levenshtein_file, &rouge_bytes).unwrap();
    std::fs::write(levenshtein_file.with_extension("sha256"), sha256_hex(&rouge_bytes)).unwrap();
    let levenshtein = load_compiled(&runtime(&cache, home.path()), 1);
    assert_eq!((levenshtein.name(), levenshtein.cache_status()), ("levenshtein", CacheStatus::Rebuilt));
    let rouge = load_compiled(&runtime(&cache, home.path()), 0);
    assert_eq!((rouge.name(), rouge.cache_status()), ("rouge", CacheStatus::Hit), "rouge's own file still serves");

    // What the finding planted: a bare artifact that this very engine
    // compiled from rouge, with its sha256 beside it.
    let engine_runtime = runtime(&cache, home.path());
    let artifact = engine_runtime.engine().precompile_component(&compiled_bytes(0)).unwrap();
    std::fs::write(&levenshtein_file, &artifact).unwrap();
    std::fs::write(levenshtein_file.with_extension("sha256"), sha256_hex(&artifact)).unwrap();
    let levenshtein = load_compiled(&engine_runtime, 1);
    assert_eq!((levenshtein.name(), levenshtein.cache_status()), ("levenshtein", CacheStatus::Rebuilt));
    let levenshtein = load_compiled(&runtime(&cache, home.path()), 1);
    assert_eq!(
        (levenshtein.name(), levenshtein.cache_status()),
        ("levenshtein", CacheStatus::Hit),
        "the rebuilt file is levenshtein's own"
    );
}

#[test]
fn a_flipped_byte_anywhere_or_another_users_key_means_a_rebuild() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("cache");
    load_compiled(&runtime(&cache, home.path()), 0);
    let [file] = files_with_extension(&cache, "cwasm").try_into().unwrap();
    let genuine = std::fs::read(&file).unwrap();
    // The tag (the first bytes), the artifact (the middle, the last byte).
    for at in [0, 31, 32, genuine.len() / 2, genuine.len() - 1] {
        let mut bytes = genuine.clone();
        bytes[at] ^= 0x01;
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(load_compiled(&runtime(&cache, home.path()), 0).cache_status(), CacheStatus::Rebuilt, "byte {at}");
        assert_eq!(std::fs::read(&file).unwrap(), genuine, "byte {at}: the rebuild writes the genuine file back");
    }
    // Cut short, down to less than a tag.
    for length in [genuine.len() - 1, 10, 0] {
        std::fs::write(&file, &genuine[..length]).unwrap();
        assert_eq!(load_compiled(&runtime(&cache, home.path()), 0).cache_status(), CacheStatus::Rebuilt);
    }
    // A directory, or a symbolic link to the genuine file, at its name.
    let elsewhere = home.path().join("elsewhere.cwasm");
    std::fs::write(&elsewhere, &genuine).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    assert_eq!(load_compiled(&runtime(&cache, home.path()), 0).cache_status(), CacheStatus::Rebuilt);
    assert!(std::fs::symlink_metadata(&file).unwrap().is_file(), "the link was replaced, not written through");
    assert_eq!(load_compiled(&runtime(&cache, home.path()), 0).cache_status(), CacheStatus::Hit);

    // The same directory with another user's key: their files do not count.
    let other_home = tempfile::tempdir().unwrap();
    assert_eq!(load_compiled(&runtime(&cache, other_home.path()), 0).cache_status(), CacheStatus::Rebuilt);
    assert_eq!(load_compiled(&runtime(&cache, home.path()), 0).cache_status(), CacheStatus::Rebuilt);
}

#[test]
fn the_cache_directory_and_its_files_are_private() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("made").join("cache");
    load_compiled(&runtime(&cache, home.path()), 0);
    assert_eq!(mode(&home.path().join("made")), 0o700);
    assert_eq!(mode(&cache), 0o700);
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one file, no temporary left: {files:?}");
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&home.path().join("secret.key")), 0o600);
}

#[test]
fn a_cache_directory_open_to_others_or_owned_by_someone_else_is_not_used() {
    let home = tempfile::tempdir().unwrap();
    let open = home.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(load_compiled(&runtime(&open, home.path()), 0).cache_status(), CacheStatus::Uncached);
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);

    let theirs = home.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    give_away(&theirs);
    assert_eq!(load_compiled(&runtime(&theirs, home.path()), 0).cache_status(), CacheStatus::Uncached);
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
}

#[test]
fn a_refused_key_turns_the_cache_off_and_is_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let key = home.path().join("secret.key");
    std::fs::write(&key, [9u8; 32]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cache = home.path().join("cache");
    assert_eq!(load_compiled(&runtime(&cache, home.path()), 0).cache_status(), CacheStatus::Uncached);
    assert!(!cache.exists(), "nothing is written without a key");
    assert_eq!(std::fs::read(&key).unwrap(), [9u8; 32]);
    assert_eq!(mode(&key), 0o644);
}

/// `assay` with its configuration (the key) and caches in `home`.
fn assay_in(home: &Path, args: &[&str]) -> std::process::Command {
    let mut command = assay_command();
    command.args(args).env("XDG_CONFIG_HOME", home.join("config")).env("XDG_CACHE_HOME", home.join("cache"));
    command
}

/// `assay plugins` with [`COMPILED_PLUGINS`] loaded, and `args`: the
/// built-ins come precompiled, so these two are what meets the cache.
fn plugins_in(home: &Path, args: &[&str]) -> std::process::Command {
    let mut command = assay_in(home, &["plugins"]);
    command.args(compiled_plugin_args()).args(args);
    command
}

/// What `assay plugins` said about each plugin's cache, in order (the
/// built-ins, which nothing compiles, say neither).
fn cache_lines(output: &Output) -> Vec<String> {
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(output), stderr(output));
    stdout(output)
        .lines()
        .filter(|l| l.starts_with("  compiled") || l.starts_with("  loaded"))
        .map(str::to_owned)
        .collect()
}

const HIT: &str = "  loaded from the compile cache";
const COMPILED: &str = "  compiled, and cached";
const REBUILT: &str = "  compiled (a bad cache file was replaced)";
const UNCACHED: &str = "  compiled (no cache)";

#[test]
fn a_refused_key_is_warned_about_once_and_the_run_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let key = home.path().join("config").join("assay").join("secret.key");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "too short").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = judge_server::start();
    let cache = home.path().join("chosen");
    let gist = || {
        assay_in(home.path(), &["check", "--key", "gist", "--actual", "\"x\"", "--expected", "\"say pass\""])
            .args(["--cache-dir", cache.to_str().unwrap()])
            .env("ASSAY_JUDGE_URL", format!("{}/v1", server.url()))
            .env("ASSAY_JUDGE_MODEL", "m")
            .output()
            .unwrap()
    };
    let output = gist();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(stdout(&output), "PASS gist: the judge found the text meets \"say pass\"\n");
    // The compile cache and the judge's answer cache both met the key.
    let warnings = stderr(&output);
    assert_eq!(warnings.matches("warning:").count(), 1, "{warnings}");
    assert!(warnings.contains(&format!("the cache key `{}` is 9 bytes long, not 32", key.display())), "{warnings}");
    assert!(warnings.contains("Consider deleting it"), "{warnings}");
    assert!(!cache.exists(), "nothing is cached");
    // Nothing was cached, so the judge is asked again.
    assert_eq!(gist().status.code(), Some(0));
    assert_eq!(judge_server::count(&server), 2);
}

#[test]
fn a_cache_directory_open_to_others_is_warned_about_and_compiled_around() {
    let home = tempfile::tempdir().unwrap();
    let open = home.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let output = plugins_in(home.path(), &["--cache-dir", open.to_str().unwrap()]).output().unwrap();
    assert_eq!(cache_lines(&output), [UNCACHED, UNCACHED]);
    let warning = stderr(&output);
    assert!(
        warning.contains(&format!(
            "warning: not using the cache in `{}`: `{0}` is writable by group or others (mode 777)",
            open.display()
        )),
        "{warning}"
    );
    assert!(warning.contains("Consider `chmod 700`"), "{warning}");
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
}

/// A project whose assay.toml sets `[cache] dir = ".assay/cache"`.
fn project_with_cache_dir() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let project = tempfile::tempdir().unwrap();
    let config = project.path().join("assay.toml");
    std::fs::write(&config, "[cache]\ndir = \".assay/cache\"\n").unwrap();
    let dir = project.path().join(".assay").join("cache");
    (project, config, dir)
}

#[test]
fn a_projects_cache_dir_is_ignored_unless_the_user_allows_it() {
    let home = tempfile::tempdir().unwrap();
    let (_project, config, project_cache) = project_with_cache_dir();
    let config = config.to_str().unwrap();
    let per_user = home.path().join("cache").join("assay").join("components");

    let ignored = plugins_in(home.path(), &["--config", config]).output().unwrap();
    assert_eq!(cache_lines(&ignored), [COMPILED, COMPILED]);
    let warning = stderr(&ignored);
    assert!(
        warning.contains(&format!("warning: ignoring `[cache] dir = \".assay/cache\"` in `{config}`")),
        "{warning}"
    );
    assert!(warning.contains("--allow-project-cache-dir"), "{warning}");
    assert!(warning.contains("ASSAY_ALLOW_PROJECT_CACHE_DIR=1"), "{warning}");
    assert!(!project_cache.exists(), "nothing is written there");
    assert_eq!(files_with_extension(&per_user, "cwasm").len(), 2, "the per-user cache is used instead");
    // A false value of the variable does not allow it either.
    let still_ignored =
        plugins_in(home.path(), &["--config", config]).env("ASSAY_ALLOW_PROJECT_CACHE_DIR", "0").output().unwrap();
    assert_eq!(cache_lines(&still_ignored), [HIT, HIT]);
    assert!(stderr(&still_ignored).contains("warning: ignoring `[cache] dir"));
    assert!(!project_cache.exists());

    let flag = plugins_in(home.path(), &["--config", config, "--allow-project-cache-dir"]).output().unwrap();
    assert_eq!(cache_lines(&flag), [COMPILED, COMPILED]);
    assert_eq!(stderr(&flag), "");
    assert_eq!(files_with_extension(&project_cache, "cwasm").len(), 2);
    let env =
        plugins_in(home.path(), &["--config", config]).env("ASSAY_ALLOW_PROJECT_CACHE_DIR", "1").output().unwrap();
    assert_eq!(cache_lines(&env), [HIT, HIT]);
    assert_eq!(stderr(&env), "");
}

#[test]
fn artifacts_swapped_in_an_allowed_project_cache_dir_are_not_run() {
    let home = tempfile::tempdir().unwrap();
    let (_project, config, project_cache) = project_with_cache_dir();
    let plugins = || {
        plugins_in(home.path(), &["--config", config.to_str().unwrap(), "--allow-project-cache-dir"]).output().unwrap()
    };
    assert_eq!(cache_lines(&plugins()), [COMPILED, COMPILED]);
    // Whoever can write the project swaps rouge's and levenshtein's artifacts,
    // digests as the cache once had included.
    let [a, b] = files_with_extension(&project_cache, "cwasm").try_into().unwrap();
    let (a_bytes, b_bytes) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    for (file, bytes) in [(&a, &b_bytes), (&b, &a_bytes)] {
        std::fs::write(file, bytes).unwrap();
        std::fs::write(file.with_extension("sha256"), sha256_hex(bytes)).unwrap();
    }
    let swapped = plugins();
    assert_eq!(cache_lines(&swapped), [REBUILT, REBUILT]);
    let listing = stdout(&swapped);
    let names: Vec<&str> =
        listing.lines().filter(|l| !l.starts_with(' ')).map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(names, ["stock", "gist", "rouge", "levenshtein"]);
    assert_eq!(cache_lines(&plugins()), [HIT, HIT]);
}

#[test]
fn a_planted_answer_does_not_forge_a_gist_verdict() {
    let home = tempfile::tempdir().unwrap();
    let server = judge_server::start();
    let cache = home.path().join("chosen");
    let gist = || {
        assay_in(home.path(), &["check", "--key", "gist", "--actual", "\"x\"", "--expected", "\"be strict\""])
            .args(["--cache-dir", cache.to_str().unwrap()])
            .env("ASSAY_JUDGE_URL", format!("{}/v1", server.url()))
            .env("ASSAY_JUDGE_MODEL", "m")
            .output()
            .unwrap()
    };
    let first = gist();
    assert_eq!(first.status.code(), Some(1), "{}{}", stdout(&first), stderr(&first));
    assert_eq!(judge_server::count(&server), 1);
    let answers = cache.join("judge");
    assert_eq!(mode(&answers), 0o700);
    let [entry] = files_with_extension(&answers, "txt").try_into().unwrap();
    assert_eq!(mode(&entry), 0o600);
    let genuine = std::fs::read_to_string(&entry).unwrap();
    assert!(genuine.ends_with("\nfail"), "{genuine:?}");

    // A bare answer, as the cache once stored them; the genuine tag with
    // another answer.
    let forged_under_genuine_tag = genuine.replace("\nfail", "\npass");
    for (n, forged) in ["pass", forged_under_genuine_tag.as_str()].into_iter().enumerate() {
        std::fs::write(&entry, forged).unwrap();
        let output = gist();
        assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
        assert!(stdout(&output).starts_with("FAIL gist"), "{}", stdout(&output));
        assert_eq!(judge_server::count(&server), 2 + n, "the judge is asked afresh");
        assert_eq!(std::fs::read_to_string(&entry).unwrap(), genuine, "and the entry overwritten");
    }
    // The genuine entry still serves.
    assert_eq!(gist().status.code(), Some(1));
    assert_eq!(judge_server::count(&server), 3);
}

#[test]
fn the_key_and_the_caches_live_where_the_environment_says() {
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("home");
    let cache = scratch.path().join("from-env");
    let output = assay_command()
        .arg("plugins")
        .args(compiled_plugin_args())
        .current_dir(scratch.path())
        .env("HOME", &home)
        // Relative: ignored, as the XDG specification says.
        .env("XDG_CONFIG_HOME", "relative")
        .env_remove("XDG_CACHE_HOME")
        .env("ASSAY_CACHE_DIR", &cache)
        .output()
        .unwrap();
    assert_eq!(cache_lines(&output), [COMPILED, COMPILED]);
    let key = home.join(".config").join("assay").join("secret.key");
    assert_eq!((mode(&key), std::fs::metadata(&key).unwrap().len()), (0o600, 32));
    assert_eq!(mode(key.parent().unwrap()), 0o700);
    assert!(!scratch.path().join("relative").exists());
    assert_eq!(files_with_extension(&cache, "cwasm").len(), 2);
    assert!(!home.join(".cache").exists(), "ASSAY_CACHE_DIR wins over the per-user cache");
}

/// A folder with one passing case.
fn one_case() -> tempfile::TempDir {
    let cases = tempfile::tempdir().unwrap();
    std::fs::write(
        cases.path().join("one.hocon"),
        r#"{ "agent": "echo", "interactions": [ { "text": "hello", "response": { "text": { "keywords": "hello" } } } ] }"#,
    )
    .unwrap();
    cases
}

/// Runs one passing case with results in `results` and JUnit in `junit`.
fn run_one(results: &Path, junit: &Path) -> Output {
    let cases = one_case();
    assay_command()
        .args(["run", "--results", results.to_str().unwrap(), "--junit", junit.to_str().unwrap()])
        .arg(cases.path())
        .output()
        .unwrap()
}

#[test]
fn results_are_private_and_never_written_through_a_symlink() {
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("results").join("run");
    let junit = out.path().join("reports").join("junit.xml");
    let output = run_one(&results, &junit);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    for dir in [out.path().join("results"), results.clone(), out.path().join("reports")] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    for file in [results.join("results.jsonl"), results.join("summary.json"), junit.clone()] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    assert_eq!(std::fs::read_dir(&results).unwrap().count(), 2, "no temporary file is left behind");

    // The evaluation workflows' reports too.
    let assessed = out.path().join("assessed");
    let cases = one_case();
    let output =
        assay_command().args(["assess", "--results", assessed.to_str().unwrap()]).arg(cases.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(mode(&assessed), 0o700);
    assert_eq!(mode(&assessed.join("assess.json")), 0o600);
    assert_eq!(mode(&assessed.join("results.jsonl")), 0o600);

    // A results directory someone prepared with a link to a file of yours.
    let precious = out.path().join("precious");
    std::fs::write(&precious, "keep").unwrap();
    let prepared = out.path().join("prepared");
    std::fs::create_dir(&prepared).unwrap();
    std::os::unix::fs::symlink(&precious, prepared.join("results.jsonl")).unwrap();
    let output = run_one(&prepared, &junit);
    assert_eq!(output.status.code(), Some(2), "{}{}", stdout(&output), stderr(&output));
    assert!(
        stderr(&output)
            .contains(&format!("cannot create `{}`: it is a symbolic link", prepared.join("results.jsonl").display())),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
}
