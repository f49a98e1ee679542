//! Component files (matcher plugins and agents): where a component comes
//! from ([`ComponentSource`]), reading one from disk within a size cap (a
//! file's size is checked before anything is read, and the read itself
//! stops past the cap, since the file can grow in between), its sha256, and
//! making a component of a core module that embeds its component type.

use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where a component came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComponentSource {
    /// Embedded in the assay binary.
    Builtin(&'static str),
    /// Loaded from a file.
    File(PathBuf),
}

impl fmt::Display for ComponentSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentSource::Builtin(name) => write!(f, "built-in `{name}`"),
            ComponentSource::File(path) => write!(f, "`{}`", path.display()),
        }
    }
}

/// The largest component file assay reads: 64 MiB. The first-party plugins
/// are well under 1 MiB; a Python plugin with its interpreter is about 40.
pub const MAX_COMPONENT_BYTES: u64 = 64 << 20;

/// Why a component file could not be read.
#[derive(Debug)]
pub enum ComponentFileError {
    /// Opening or reading it failed.
    Io(std::io::Error),
    /// It is a directory, a pipe or a device, not a file.
    NotAFile,
    /// It is larger than the cap (its size in bytes, or at least the bytes
    /// read before the cap stopped the read).
    TooLarge(u64),
}

impl fmt::Display for ComponentFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentFileError::Io(error) => write!(f, "{error}"),
            ComponentFileError::NotAFile => write!(f, "it is not a regular file"),
            ComponentFileError::TooLarge(size) => write!(
                f,
                "it is {size} bytes ({:.1} MiB), over the {} MiB cap on component files\n\nConsider stripping its debug information (`wasm-tools strip`) and building it in release mode",
                *size as f64 / (1 << 20) as f64,
                MAX_COMPONENT_BYTES >> 20
            ),
        }
    }
}

impl std::error::Error for ComponentFileError {}

/// The bytes of the component file at `path`, at most
/// [`MAX_COMPONENT_BYTES`] of them.
pub fn read_component_file(path: &Path) -> Result<Vec<u8>, ComponentFileError> {
    read_capped(path, MAX_COMPONENT_BYTES)
}

fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ComponentFileError> {
    let file = std::fs::File::open(path).map_err(ComponentFileError::Io)?;
    let metadata = file.metadata().map_err(ComponentFileError::Io)?;
    if !metadata.is_file() {
        return Err(ComponentFileError::NotAFile);
    }
    if metadata.len() > cap {
        return Err(ComponentFileError::TooLarge(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // One byte past the cap tells a file that grew since from one that
    // ends exactly there.
    file.take(cap + 1).read_to_end(&mut bytes).map_err(ComponentFileError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ComponentFileError::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The sha256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The component in `bytes`: the bytes themselves, or, for a core module
/// with an embedded component type (what `cargo build` makes of a plugin
/// crate), the component `wit-component` makes of it.
pub(crate) fn as_component(bytes: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    const CORE_MODULE_VERSION: [u8; 4] = [1, 0, 0, 0];
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("it does not start with the WebAssembly magic bytes".into());
    }
    if bytes[4..8] != CORE_MODULE_VERSION {
        return Ok(Cow::Borrowed(bytes));
    }
    let encoder = wit_component::ComponentEncoder::default()
        .module(bytes)
        .map_err(|e| format!("it is a core module without an embedded component type ({e:#}); build it with the plugin SDK, or make it a component with `wasm-tools component new`"))?;
    encoder
        .validate(true)
        .encode()
        .map(Cow::Owned)
        .map_err(|e| format!("it is a core module that cannot be made a component: {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_at_the_cap_is_read_and_one_past_it_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.wasm");
        std::fs::write(&path, [7u8; 100]).unwrap();
        assert_eq!(read_capped(&path, 100).unwrap(), [7u8; 100]);
        match read_capped(&path, 99) {
            Err(ComponentFileError::TooLarge(100)) => {}
            other => panic!("expected TooLarge(100), got {other:?}"),
        }
        assert!(matches!(read_capped(dir.path(), 100), Err(ComponentFileError::NotAFile)));
        assert!(matches!(read_capped(&dir.path().join("none"), 100), Err(ComponentFileError::Io(_))));
    }

    #[cfg(unix)]
    #[test]
    fn a_device_that_never_ends_is_not_read() {
        // /dev/zero reports size 0 and would fill memory if read whole.
        assert!(matches!(read_component_file(Path::new("/dev/zero")), Err(ComponentFileError::NotAFile)));
    }
}
