//! Where the files a case reads are opened: anywhere the trust boundary
//! lets them be (the CLI, whose user named the files), or only beneath a
//! served root, through a handle on it (`assay serve`, whose clients name
//! paths under its root).
//!
//! Beneath a root, every open resolves the path from the root's directory
//! handle, following links only while they stay beneath it (`openat2`
//! with `RESOLVE_BENEATH` where the kernel has it, cap-std's checked walk
//! otherwise): a link swapped in after a request's paths were checked, an
//! absolute link, or a `..` out of the root fails to open. A path that is
//! not under the root at all is refused before anything is opened.
//!
//! Files are opened without blocking (`O_NONBLOCK`) and must be regular
//! files, checked on the opened handle: a FIFO or a device named as a case
//! file is refused, never waited on or read forever.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a case's files are opened: anywhere, or beneath a root.
#[derive(Clone, Debug, Default)]
pub struct FileAccess {
    beneath: Option<Arc<Beneath>>,
}

/// A root and the directory handle every open goes through.
#[derive(Debug)]
struct Beneath {
    root: PathBuf,
    dir: cap_std::fs::Dir,
}

/// One entry of a directory read through [`FileAccess::read_dir`].
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its name in the directory.
    pub name: OsString,
    /// Whether it is a directory (links followed beneath the root).
    pub is_dir: bool,
    /// Whether it is a symbolic link (to whatever, or nothing).
    pub is_link: bool,
}

impl FileAccess {
    /// Files are opened where their paths say (the trust boundary decides
    /// which may be read).
    pub fn anywhere() -> FileAccess {
        FileAccess::default()
    }

    /// Files are opened only beneath `root` (absolute, links resolved, as
    /// `assay serve` keeps it), through a handle on it opened now.
    pub fn beneath(root: &Path) -> io::Result<FileAccess> {
        let dir = cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(FileAccess { beneath: Some(Arc::new(Beneath { root: root.to_path_buf(), dir })) })
    }

    /// The root files are confined to, if they are.
    pub fn root(&self) -> Option<&Path> {
        self.beneath.as_deref().map(|beneath| beneath.root.as_path())
    }

    /// Opens the regular file at `path` for reading.
    pub fn open(&self, path: &Path) -> io::Result<File> {
        let file = match &self.beneath {
            None => {
                let mut options = std::fs::OpenOptions::new();
                options.read(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
                options.open(path)?
            }
            Some(beneath) => {
                let mut options = cap_std::fs::OpenOptions::new();
                options.read(true);
                #[cfg(unix)]
                cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
                beneath.dir.open_with(beneath.relative(path)?, &options).map_err(escaped)?.into_std()
            }
        };
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "it is not a regular file"));
        }
        Ok(file)
    }

    /// The bytes of the regular file at `path`, or an error of kind
    /// `FileTooLarge` holding a [`TooLarge`] once it holds more than `cap`
    /// bytes (the cap holds while reading: a file may grow, or say it is
    /// empty as `/proc`'s do).
    pub fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        let file = self.open(path)?;
        let size = file.metadata()?.len();
        let too_large = |size: u64| io::Error::new(io::ErrorKind::FileTooLarge, TooLarge { size });
        if size > cap {
            return Err(too_large(size));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        file.take(cap + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > cap {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// The text of the regular file at `path`, at most `cap` bytes of
    /// UTF-8 (an error of kind `InvalidData` names the first bad byte).
    pub fn read_to_string(&self, path: &Path, cap: u64) -> io::Result<String> {
        String::from_utf8(self.read(path, cap)?).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            io::Error::new(io::ErrorKind::InvalidData, format!("it is not UTF-8 text (invalid byte at offset {at})"))
        })
    }

    /// The entries of the directory at `path`, in no particular order.
    pub fn read_dir(&self, path: &Path) -> io::Result<Vec<Entry>> {
        match &self.beneath {
            None => std::fs::read_dir(if path.as_os_str().is_empty() { Path::new(".") } else { path })?
                .map(|entry| {
                    let entry = entry?;
                    // The entry's own type costs no look-up; a link's
                    // target's does.
                    let kind = entry.file_type()?;
                    let is_link = kind.is_symlink();
                    let is_dir = if is_link { entry.path().is_dir() } else { kind.is_dir() };
                    Ok(Entry { is_dir, is_link, name: entry.file_name() })
                })
                .collect(),
            Some(beneath) => {
                let relative = beneath.relative(path)?;
                let dir = match relative.as_os_str().is_empty() {
                    true => beneath.dir.try_clone()?,
                    false => beneath.dir.open_dir(relative).map_err(escaped)?,
                };
                dir.entries()?
                    .map(|entry| {
                        let entry = entry?;
                        let kind = entry.file_type()?;
                        let is_link = kind.is_symlink();
                        let name = entry.file_name();
                        let is_dir =
                            if is_link { dir.metadata(&name).is_ok_and(|m| m.is_dir()) } else { kind.is_dir() };
                        Ok(Entry { is_dir, is_link, name })
                    })
                    .collect()
            }
        }
    }

    /// The device and inode of the directory (or file) at `path`, links
    /// followed (beneath the root): how a walk knows a folder it has seen.
    #[cfg(unix)]
    pub fn id(&self, path: &Path) -> io::Result<(u64, u64)> {
        match &self.beneath {
            None => {
                use std::os::unix::fs::MetadataExt;
                let metadata = std::fs::metadata(if path.as_os_str().is_empty() { Path::new(".") } else { path })?;
                Ok((metadata.dev(), metadata.ino()))
            }
            Some(beneath) => {
                use cap_std::fs::MetadataExt;
                let relative = beneath.relative(path)?;
                let metadata = match relative.as_os_str().is_empty() {
                    true => beneath.dir.dir_metadata()?,
                    false => beneath.dir.metadata(relative).map_err(escaped)?,
                };
                Ok((metadata.dev(), metadata.ino()))
            }
        }
    }

    /// Whether `path` is a regular file that can be opened (links
    /// followed, beneath the root).
    pub fn is_file(&self, path: &Path) -> bool {
        match &self.beneath {
            None => path.is_file(),
            Some(beneath) => {
                beneath.relative(path).is_ok_and(|relative| beneath.dir.metadata(relative).is_ok_and(|m| m.is_file()))
            }
        }
    }

    /// Whether `path` is a directory that can be read.
    pub fn is_dir(&self, path: &Path) -> bool {
        match &self.beneath {
            None => path.is_dir(),
            Some(beneath) => beneath.relative(path).is_ok_and(|relative| {
                relative.as_os_str().is_empty() || beneath.dir.metadata(relative).is_ok_and(|m| m.is_dir())
            }),
        }
    }
}

/// The error inside a `FileTooLarge` error of [`FileAccess::read`].
#[derive(Debug)]
pub struct TooLarge {
    /// The file's size, or the bytes read when it grew past the cap.
    pub size: u64,
}

impl TooLarge {
    /// The size `error` says a file has, when it is one of these.
    pub fn of(error: &io::Error) -> Option<u64> {
        error.get_ref()?.downcast_ref::<TooLarge>().map(|too_large| too_large.size)
    }
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "it is {} bytes", self.size)
    }
}

impl std::error::Error for TooLarge {}

/// How the error of a path that resolves out of the root begins.
pub const LEADS_OUTSIDE: &str = "it leads outside the served root";

/// What a path that resolves out of the root is told: cap-std's checked
/// walk says "a path led outside of the filesystem" (no OS error), the
/// kernel's `RESOLVE_BENEATH` `EXDEV`.
fn escaped(error: io::Error) -> io::Error {
    let out = error.raw_os_error() == Some(libc::EXDEV)
        || (error.kind() == io::ErrorKind::PermissionDenied && error.raw_os_error().is_none());
    match out {
        true => io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{LEADS_OUTSIDE} (a link under the root must be relative and stay under it)"),
        ),
        false => error,
    }
}

impl Beneath {
    /// `path` relative to the root, or an error when it is not under it.
    fn relative<'p>(&self, path: &'p Path) -> io::Result<&'p Path> {
        path.strip_prefix(&self.root)
            .map_err(|_| io::Error::new(io::ErrorKind::PermissionDenied, "it is outside the served root"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served() -> (tempfile::TempDir, PathBuf, FileAccess) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("cases")).unwrap();
        std::fs::write(root.join("cases/a.hocon"), "{}").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        let root = root.canonicalize().unwrap();
        let access = FileAccess::beneath(&root).unwrap();
        (dir, root, access)
    }

    #[test]
    fn beneath_a_root_files_inside_are_read_and_links_out_of_it_are_not() {
        let (dir, root, access) = served();
        assert_eq!(access.read_to_string(&root.join("cases/a.hocon"), 100).unwrap(), "{}");
        // A relative link that stays beneath is followed.
        std::os::unix::fs::symlink("a.hocon", root.join("cases/b.hocon")).unwrap();
        assert_eq!(access.read_to_string(&root.join("cases/b.hocon"), 100).unwrap(), "{}");
        // Links leading out, relative or absolute, and `..`, are not.
        std::os::unix::fs::symlink("../../secret.txt", root.join("cases/out.hocon")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("cases/abs.hocon")).unwrap();
        for path in [root.join("cases/out.hocon"), root.join("cases/abs.hocon"), root.join("cases/../../secret.txt")] {
            let error = access.read_to_string(&path, 100).unwrap_err().to_string();
            assert!(error.starts_with("it leads outside the served root"), "{}: {error}", path.display());
        }
        // A path not under the root at all is refused before it is opened.
        let error = access.open(&dir.path().join("secret.txt")).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
        // Anywhere, the same links are followed.
        assert_eq!(FileAccess::anywhere().read_to_string(&root.join("cases/out.hocon"), 100).unwrap(), "outside");
    }

    #[test]
    fn a_folder_swapped_for_a_link_after_it_was_checked_leads_nowhere() {
        let (dir, root, access) = served();
        let outside = dir.path().join("elsewhere");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("a.hocon"), "outside").unwrap();
        std::fs::write(outside.join("other.hocon"), "outside").unwrap();
        let path = root.join("cases/a.hocon");
        assert!(access.read(&path, 100).is_ok());
        std::fs::remove_dir_all(root.join("cases")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("cases")).unwrap();
        assert!(access.read(&path, 100).is_err());
        assert!(access.read_dir(&root.join("cases")).is_err());
        assert!(!access.is_dir(&root.join("cases")));
        assert!(FileAccess::anywhere().read_dir(&root.join("cases")).unwrap().len() == 2);
    }

    #[test]
    fn a_fifo_or_a_directory_is_refused_without_waiting_and_the_cap_holds() {
        let (_dir, root, access) = served();
        let fifo = root.join("cases/fifo.hocon");
        let made = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(made.as_ptr(), 0o600) }, 0);
        for access in [access.clone(), FileAccess::anywhere()] {
            assert_eq!(access.open(&fifo).unwrap_err().to_string(), "it is not a regular file");
            assert_eq!(access.open(&root.join("cases")).unwrap_err().to_string(), "it is not a regular file");
            let error = access.read(&root.join("cases/a.hocon"), 1).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::FileTooLarge);
            assert_eq!(TooLarge::of(&error), Some(2));
        }
        let names: Vec<_> = access.read_dir(&root).unwrap().into_iter().map(|e| (e.name, e.is_dir)).collect();
        assert_eq!(names, [(OsString::from("cases"), true)]);
    }
}
