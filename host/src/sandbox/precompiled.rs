//! Built-in components compiled to native code ahead of time, so that a
//! first run compiles nothing.
//!
//! `cargo xtask build` writes, beside each built-in component listed in
//! [`PRECOMPILED`], the component compiled by this crate's wasmtime for
//! [`PRECOMPILED_TARGET`] (`NAME.x86_64-linux.cwasm`): the sha256 of the
//! component it was compiled from, then wasmtime's serialized component.
//! The binary embeds them (on x86-64 Linux; elsewhere the list is empty).
//! A component whose bytes have an embedded artifact is deserialized from
//! it instead of compiled; wasmtime checks on load that the artifact fits
//! the running engine (its version, configuration and this CPU) and any
//! mismatch means compiling as before, through the compile cache. A test
//! (`plugins/precompiled.rs`) compiles each listed component again and
//! fails if an artifact is stale.
//!
//! The artifacts are compiled for an explicit target and CPU level,
//! x86-64-v3 (wasmtime then infers nothing from the machine that
//! compiles), so that `cargo xtask build` writes the same bytes wherever it
//! runs and they serve every x86-64 Linux machine of the last decade; on
//! an older CPU wasmtime refuses them and the built-ins compile as before. Why not in
//! a build script: that needs wasmtime as a build dependency, which cargo
//! compiles a second time (measured: 12 minutes more on a 2-core machine)
//! in every build from scratch, CI's included.

use wasmtime::Engine;
use wasmtime::component::Component;

/// The target the artifacts are compiled for.
#[cfg(any(test, feature = "internals"))]
pub const PRECOMPILED_TARGET: &str = "x86_64-unknown-linux-gnu";

/// The CPU features the artifacts may use: x86-64-v3's (Intel since 2013,
/// AMD since 2015), what wasmtime would use on most machines compiling for
/// themselves. The bare baseline would leave them all unused (rounding a
/// float, for one, becomes a call).
#[cfg(any(test, feature = "internals"))]
const X86_64_V3: &[&str] = &[
    "has_cmpxchg16b",
    "has_sse3",
    "has_ssse3",
    "has_sse41",
    "has_sse42",
    "has_popcnt",
    "has_avx",
    "has_avx2",
    "has_fma",
    "has_bmi1",
    "has_bmi2",
    "has_lzcnt",
];

/// The suffix an artifact's file has in place of the component's `.wasm`.
#[cfg(any(test, feature = "internals"))]
pub const ARTIFACT_SUFFIX: &str = ".x86_64-linux.cwasm";

/// Declares the precompiled components once: their paths (for the writer
/// and the test) and their embedded artifacts (on the target they are for).
macro_rules! precompiled {
    ($($path:literal),* $(,)?) => {
        /// The built-in components that have an artifact, by their path in
        /// the repository without `.wasm`: the embedded matchers and demo
        /// agents that take well under a second to compile. The Python and
        /// JavaScript runtimes are left out: their artifacts would add
        /// ~60 MB to the binary (`assay plugins --precompile` puts them in
        /// the compile cache ahead of a run instead).
        #[cfg(any(test, feature = "internals"))]
        pub const PRECOMPILED: &[&str] = &[$($path),*];

        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        const ARTIFACTS: &[&[u8]] =
            &[$(include_bytes!(concat!("../../../", $path, ".x86_64-linux.cwasm"))),*];

        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        const ARTIFACTS: &[&[u8]] = &[];
    };
}

precompiled![
    "plugins/stock/stock",
    "plugins/gist/gist",
    "plugins/promptfoo/promptfoo",
    "fixtures/agents/echo/echo",
    "fixtures/agents/flaky/flaky",
    "fixtures/agents/math_guy/math_guy",
    "fixtures/agents/music_nerd_pro/music_nerd_pro",
];

/// The length of an artifact file's header: the component's sha256.
const HEADER: usize = 32;

/// The artifact file for the component in `bytes`: its sha256, then the
/// component compiled for [`PRECOMPILED_TARGET`] with the configuration of
/// the runtime's main engine. (For `cargo xtask build` and the tests.)
#[cfg(any(test, feature = "internals"))]
pub fn precompile(bytes: &[u8]) -> wasmtime::Result<Vec<u8>> {
    use sha2::{Digest, Sha256};
    let mut config = super::engine_config::config(false, None);
    config.target(PRECOMPILED_TARGET)?;
    for feature in X86_64_V3 {
        // SAFETY: the code may use these CPU features; wasmtime checks on
        // load that the CPU it runs on has each (`Component::deserialize`
        // refuses the artifact otherwise, and `load` then compiles).
        unsafe { config.cranelift_flag_enable(feature) };
    }
    let compiled = Engine::new(&config)?.precompile_component(bytes)?;
    Ok([&Sha256::digest(bytes)[..], &compiled].concat())
}

/// The component in `bytes` with a custom section appended: the same
/// component to run, but bytes no artifact is for, so that loading it
/// compiles it. (For the tests and benches of the compile path.)
#[cfg(any(test, feature = "internals"))]
pub fn without_artifact(bytes: &[u8]) -> Vec<u8> {
    const NAME: &[u8] = b"assay-not-precompiled";
    // Section id 0 (custom), its size, then its name; no payload.
    let size = 1 + NAME.len() as u8;
    [bytes, &[0, size, NAME.len() as u8], NAME].concat()
}

/// The embedded artifact file compiled from the component whose sha256 is
/// `component_sha`, if there is one.
pub fn artifact(component_sha: &[u8; 32]) -> Option<&'static [u8]> {
    ARTIFACTS.iter().copied().find(|file| file.get(..HEADER) == Some(&component_sha[..]))
}

/// The component whose sha256 is `component_sha`, from its embedded
/// artifact, when there is one that `engine` can run.
pub(crate) fn load(engine: &Engine, component_sha: &[u8; 32]) -> Option<Component> {
    let compiled = &artifact(component_sha)?[HEADER..];
    // SAFETY: the artifact is part of this binary, written by
    // `cargo xtask build` with this crate's wasmtime from the component
    // whose sha256 heads it; wasmtime checks that it fits `engine` and
    // this CPU, and refuses it otherwise.
    unsafe { Component::deserialize(engine, compiled) }.ok()
}
