//! `getrandom`'s `custom` backend (selected by the build tool's
//! `--cfg getrandom_backend="custom"` for wasm): there is no randomness in
//! the sandbox, so it says so. Boa reaches it only through `Math.random`,
//! which `sandbox.rs` replaces with a fixed sequence.

/// Fills nothing: the sandbox has no source of randomness.
///
/// # Safety
///
/// Never writes to `dest`; any arguments are safe.
#[unsafe(no_mangle)]
unsafe extern "Rust" fn __getrandom_v03_custom(_dest: *mut u8, _len: usize) -> Result<(), getrandom::Error> {
    Err(getrandom::Error::UNSUPPORTED)
}
