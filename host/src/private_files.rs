//! Private files: what assay writes for the user alone (the caches, the cache
//! key, the results of a run). Directories it creates are 0700 and files
//! 0600 (a umask can only take bits away from these); a whole file is written to a temporary file with
//! a random name, created with `O_CREAT|O_EXCL|O_NOFOLLOW` (so a planted file
//! or symbolic link is never written through), and renamed into place, so a
//! reader never sees half of it. It also owns the check a cache makes of its
//! directory: owned by the user, and writable by no one else.
//!
//! Modes, owners and `O_NOFOLLOW` are Unix notions; elsewhere the files are
//! written the same way with the platform's default permissions and the
//! owner check passes.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};

/// The user's cache folder for assay: `$XDG_CACHE_HOME/assay` (an absolute
/// `XDG_CACHE_HOME` only), else `~/.cache/assay`.
pub(crate) fn user_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("assay"))
}

/// Creates `dir` and its missing parents, each with mode 0700. A directory
/// that exists is left as it is.
pub(crate) fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir)
}

/// Why `dir` cannot hold files only the user may change: it is not a
/// directory, is owned by someone else, or is writable by group or others.
/// Symbolic links to it are followed: what counts is the directory itself.
pub(crate) fn check_dir(dir: &Path) -> Result<(), String> {
    let metadata = fs::metadata(dir).map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
    if !metadata.is_dir() {
        return Err(format!("`{}` is not a directory", dir.display()));
    }
    #[cfg(unix)]
    {
        let user = current_uid();
        if metadata.uid() != user {
            return Err(format!("`{}` is owned by uid {}, not by you (uid {user})", dir.display(), metadata.uid()));
        }
        if metadata.mode() & 0o022 != 0 {
            return Err(format!(
                "`{}` is writable by group or others (mode {:o})",
                dir.display(),
                metadata.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// The effective uid of this process.
#[cfg(unix)]
pub(crate) fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Writes `bytes` to `path` with mode 0600, replacing it atomically: the
/// bytes go to a fresh temporary file in the same directory, which is then
/// renamed over `path` (a symbolic link at `path` is replaced, not followed).
pub(crate) fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (temp, mut file) = create_temp(path)?;
    let written = file.write_all(bytes).and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Writes `bytes` to `path` with mode 0600 unless `path` exists, in which
/// case it fails with [`io::ErrorKind::AlreadyExists`] and leaves it alone.
/// The file appears whole or not at all: the bytes are written and synced to
/// a temporary file first, then hard-linked as `path` (which, unlike a
/// rename, never replaces what is there).
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (temp, mut file) = create_temp(path)?;
    let linked = file.write_all(bytes).and_then(|()| file.sync_all()).and_then(|()| fs::hard_link(&temp, path));
    let _ = fs::remove_file(&temp);
    linked
}

/// Creates `path` (or truncates it) for writing, with mode 0600, refusing to
/// write through a symbolic link there (the error then says so).
pub(crate) fn create(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return io::Error::new(e.kind(), "it is a symbolic link, which assay does not write through");
        }
        e
    })?;
    // A file that was already there keeps its mode on open: make it private too.
    #[cfg(unix)]
    file.set_permissions(fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

/// The bytes of the regular file at `path`, not following a symbolic link
/// there and not blocking on a FIFO (either is an error).
pub(crate) fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let mut file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::other(format!("`{}` is not a regular file", path.display())));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A new file next to `path`, named after it with a random suffix, opened
/// `O_CREAT|O_EXCL|O_NOFOLLOW` with mode 0600.
fn create_temp(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path.file_name().ok_or_else(|| io::Error::other(format!("`{}` names no file", path.display())))?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    // A clash of 128 random bits means something is wrong with the random
    // source; a few tries tell that apart from bad luck.
    let mut last = None;
    for _ in 0..4 {
        let mut suffix = [0u8; 16];
        getrandom::fill(&mut suffix).map_err(|e| io::Error::other(format!("no random numbers: {e}")))?;
        let mut temp_name = name.to_owned();
        temp_name.push(format!(".{}.tmp", hex(&suffix)));
        let temp = path.with_file_name(temp_name);
        match options.open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// Lowercase hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn created_directories_and_written_files_are_private() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a").join("b");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&root.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        check_dir(&dir).unwrap();

        let file = dir.join("f");
        write(&file, b"one").unwrap();
        assert_eq!(mode(&file), 0o600);
        write(&file, b"two").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"two");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temporary file is left behind");
    }

    #[test]
    fn write_replaces_a_planted_symlink_instead_of_writing_through_it() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("target");
        fs::write(&target, "keep").unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
        assert!(fs::symlink_metadata(&link).unwrap().is_file());
    }

    #[test]
    fn write_new_never_replaces_a_file() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("key");
        write_new(&file, b"first").unwrap();
        assert_eq!(mode(&file), 0o600);
        let error = write_new(&file, b"second").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&file).unwrap(), b"first");
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 1, "no temporary file is left behind");
    }

    #[test]
    fn create_is_private_and_refuses_a_symlink() {
        let root = tempfile::tempdir().unwrap();
        let existing = root.path().join("results.jsonl");
        fs::write(&existing, "old").unwrap();
        fs::set_permissions(&existing, fs::Permissions::from_mode(0o644)).unwrap();
        drop(create(&existing).unwrap());
        assert_eq!(mode(&existing), 0o600);
        assert_eq!(fs::read(&existing).unwrap(), b"");

        let target = root.path().join("precious");
        fs::write(&target, "keep").unwrap();
        let link = root.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = create(&link).unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn a_directory_writable_by_others_or_not_a_directory_fails_the_check() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("open");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let reason = check_dir(&dir).unwrap_err();
        assert!(reason.contains("is writable by group or others (mode 777)"), "{reason}");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        check_dir(&dir).unwrap();

        let file = root.path().join("file");
        fs::write(&file, "").unwrap();
        assert!(check_dir(&file).unwrap_err().contains("is not a directory"));
    }

    #[test]
    fn read_takes_regular_files_only() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f");
        write(&file, b"bytes").unwrap();
        assert_eq!(read(&file).unwrap(), b"bytes");
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read(&link).is_err());
        assert!(read(root.path()).is_err());
    }
}
