//! Helpers shared by the integration tests: fixture paths, loading fixture
//! plugins, running the `assay` binary.


use assay::plugin::{
    ActualValue, BatchOutput, CheckInput, Limits, MatcherPlugin, PluginOptions, PluginSource, Runtime,
};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A path under `fixtures/`.
pub fn fixture(path: &str) -> PathBuf {
    root().join("fixtures").join(path)
}

/// One runtime for the whole test binary, as in a real process.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(Runtime::default)
}

/// Loads a fixture plugin component with the given options.
pub fn load(path: &str, options: PluginOptions) -> Result<MatcherPlugin, assay::errors::PluginLoadError> {
    let path = fixture(path);
    let bytes = std::fs::read(&path).unwrap();
    MatcherPlugin::load(runtime(), PluginSource::File(path), &bytes, options)
}

/// Options with a short deadline, so that tests of runaway plugins are quick.
pub fn quick_limits() -> Limits {
    Limits { deadline: std::time::Duration::from_millis(200), ..Limits::default() }
}

/// Evaluates one check with a text actual.
pub fn eval_one(plugin: &MatcherPlugin, key: &str, actual: &str, expected: &str) -> BatchOutput {
    plugin.evaluate(&[ActualValue::Text(actual)], &[CheckInput { key, actual: 0, expected }])
}

/// Runs the `assay` binary.
pub fn assay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay")).args(args).current_dir(root()).output().unwrap()
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
