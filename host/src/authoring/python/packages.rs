//! The packages of a Python plugin's `requirements.txt`, installed for its
//! component: [`bundle`] runs pip (`python -m pip install --target`) with
//! the virtual environment's Python, wheels only and for the component's
//! CPython, into assay's cache keyed by the file's content (a rebuild reuses
//! them), and checks that every package is pure Python and that together
//! they fit in a component. A package that is not is refused by name, never
//! dropped: a component runs Python, not the build machine's native code.

use super::requirements::Requirements;
use crate::authoring::built::BuildStep;
use crate::errors::{AuthoringError, RequirementsErrorKind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The CPython componentize-py 0.25.1 embeds: the packages are resolved for
/// it, not for the virtual environment's Python.
pub(super) const COMPONENT_PYTHON: &str = "3.14";

/// How pip installs: wheels only (installing one runs no code, and a
/// package published only as source is refused rather than built), no
/// bytecode (the component's CPython compiles its own), no prompt.
const PIP_FLAGS: [&str; 5] =
    ["--only-binary=:all:", "--no-compile", "--no-input", "--disable-pip-version-check", "--no-warn-script-location"];

/// The most the installed packages may take: every build copies them, and
/// the cache keeps them. The component holds only what the metrics import
/// (it is capped at 64 MiB when loaded), so packages this large are far
/// more than a metric uses.
const LIMIT_BYTES: u64 = 64 * 1024 * 1024;

/// Files that are native code, which no component can run.
const NATIVE_SUFFIXES: [&str; 4] = [".so", ".pyd", ".dylib", ".dll"];

/// Writes the packages `requirements` installs into `dest`, a new folder
/// of componentize-py's path (a copy: componentize-py writes bytecode into
/// its path, and the cache stays as pip left it). They come from `cache`
/// (assay's `python-packages` folder) when an earlier build installed them,
/// else are installed there with `python`'s pip first. `dir` is the
/// plugin's folder, where relative wheel paths start.
pub(super) fn bundle(
    dir: &Path,
    python: &Path,
    requirements: &Requirements,
    cache: &Path,
    dest: &Path,
    progress: &mut impl FnMut(&BuildStep),
) -> Result<(), AuthoringError> {
    let site = cached(dir, python, requirements, cache, progress)?;
    copy_tree(&site, dest)
}

/// The folder in `cache` holding the packages, installed if need be.
fn cached(
    dir: &Path,
    python: &Path,
    requirements: &Requirements,
    cache: &Path,
    progress: &mut impl FnMut(&BuildStep),
) -> Result<PathBuf, AuthoringError> {
    let salt = format!("{COMPONENT_PYTHON} {PIP_FLAGS:?}");
    let entry = cache.join(requirements.key(dir, &salt)?);
    let site = entry.join("site");
    if site.is_dir() {
        progress(&BuildStep::PackagesCached { requirements: requirements.path.clone(), site: site.clone() });
        // Checked again: the cache is a folder anyone with the user's
        // rights could have changed.
        check(requirements, &site)?;
        return Ok(site);
    }
    progress(&BuildStep::InstallingPackages { requirements: requirements.path.clone() });
    std::fs::create_dir_all(cache).map_err(|cause| AuthoringError::CreateDir { path: cache.to_owned(), cause })?;
    let partial = Partial(cache.join(format!(".partial-{}-{}", std::process::id(), nanos())));
    let partial_site = partial.0.join("site");
    install(dir, python, requirements, &partial_site)?;
    check(requirements, &partial_site)?;
    // Another build may have finished the same packages meanwhile: theirs
    // are as good.
    if std::fs::rename(&partial.0, &entry).is_err() && !site.is_dir() {
        return Err(AuthoringError::CreateDir {
            path: entry,
            cause: std::io::Error::other("the packages could not be moved into the cache"),
        });
    }
    Ok(site)
}

/// Runs pip, its output kept for the error.
fn install(dir: &Path, python: &Path, requirements: &Requirements, site: &Path) -> Result<(), AuthoringError> {
    let fail = |kind| AuthoringError::Requirements { path: requirements.path.clone(), kind };
    let output = Command::new(python)
        .current_dir(dir)
        .args(["-m", "pip", "install", "--target"])
        .arg(site)
        .args(PIP_FLAGS)
        .args(["--python-version", COMPONENT_PYTHON, "--requirement"])
        .arg(&requirements.path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map_err(|cause| fail(RequirementsErrorKind::RunPip { python: python.to_owned(), cause }))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(12)..].iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n");
    Err(fail(RequirementsErrorKind::PipFailed { python_version: COMPONENT_PYTHON.to_owned(), output: tail }))
}

/// One installed distribution, as its `.dist-info` describes it.
struct Dist {
    /// `Name:` of its metadata.
    name: String,
    /// `Version:`.
    version: String,
    /// The tags of its wheel (`Tag:` of `WHEEL`).
    tags: Vec<String>,
    /// The names it requires (`Requires-Dist:`), normalized.
    requires: Vec<String>,
    /// Its files (`RECORD`), relative to the site folder, with their sizes.
    files: Vec<(String, u64)>,
}

/// Refuses packages that are not pure Python, and packages too large
/// together.
fn check(requirements: &Requirements, site: &Path) -> Result<(), AuthoringError> {
    let fail = |kind| AuthoringError::Requirements { path: requirements.path.clone(), kind };
    let dists = dists(site).map_err(|cause| AuthoringError::ReadModule { path: site.to_owned(), cause })?;
    let mut refused = Vec::new();
    for dist in &dists {
        let native_tag = dist.tags.iter().find(|tag| !tag.ends_with("-none-any"));
        let native_file = dist.files.iter().map(|(file, _)| file).find(|file| is_native(file));
        let why = match (native_tag, native_file) {
            (Some(tag), _) => format!("its wheel is built for {tag}"),
            (None, Some(file)) => format!("it holds the native library `{file}`"),
            (None, None) => continue,
        };
        let key = normalize(&dist.name);
        let by: Vec<&str> = dists.iter().filter(|d| d.requires.contains(&key)).map(|d| d.name.as_str()).collect();
        let required = if by.is_empty() { String::new() } else { format!(", required by {}", by.join(", ")) };
        refused.push(format!("  {} {}{required}: {why}", dist.name, dist.version));
    }
    // A native file no distribution records (pip writes every file it
    // installs into RECORD; this is a cache changed by hand).
    let recorded: Vec<&String> = dists.iter().flat_map(|d| d.files.iter().map(|(file, _)| file)).collect();
    for file in native_files(site, site).map_err(|cause| AuthoringError::ReadModule { path: site.to_owned(), cause })? {
        if !recorded.contains(&&file) {
            refused.push(format!("  the native library `{file}`, of no package"));
        }
    }
    if !refused.is_empty() {
        return Err(fail(RequirementsErrorKind::NotPurePython(refused)));
    }
    let mut sizes: Vec<(u64, &Dist)> = dists.iter().map(|d| (d.files.iter().map(|(_, size)| size).sum(), d)).collect();
    let total: u64 = sizes.iter().map(|(size, _)| size).sum();
    if total > LIMIT_BYTES {
        sizes.sort_by_key(|(size, _)| std::cmp::Reverse(*size));
        let largest =
            sizes.iter().take(3).map(|(size, d)| format!("{} {} MiB", d.name, size >> 20)).collect::<Vec<_>>();
        return Err(fail(RequirementsErrorKind::TooLarge {
            size_mib: total >> 20,
            limit_mib: LIMIT_BYTES >> 20,
            largest: largest.join(", "),
        }));
    }
    Ok(())
}

/// The distributions installed in `site`, sorted by folder name.
fn dists(site: &Path) -> Result<Vec<Dist>, String> {
    let mut infos: Vec<PathBuf> = std::fs::read_dir(site)
        .map_err(|e| e.to_string())?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "dist-info"))
        .collect();
    infos.sort();
    let mut dists = Vec::new();
    for info in infos {
        let read = |file: &str| std::fs::read_to_string(info.join(file)).map_err(|e| format!("{file}: {e}"));
        let metadata = read("METADATA")?;
        let headers = |text: &str, name: &str| -> Vec<String> {
            // Headers end where the description starts (the first blank line).
            let head = text.split("\n\n").next().unwrap_or_default();
            head.lines().filter_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned())).collect()
        };
        let first = |name: &str| headers(&metadata, name).into_iter().next().unwrap_or_default();
        let requires = headers(&metadata, "Requires-Dist:")
            .iter()
            .filter(|requirement| !requirement.contains("extra =="))
            .map(|requirement| {
                let end = requirement.find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)));
                normalize(&requirement[..end.unwrap_or(requirement.len())])
            })
            .collect();
        let files = read("RECORD")?
            .lines()
            .filter_map(|line| {
                let mut fields = line.rsplitn(3, ',');
                let size = fields.next()?.parse().unwrap_or(0);
                let _hash = fields.next()?;
                Some((fields.next()?.trim_matches('"').to_owned(), size))
            })
            .collect();
        dists.push(Dist {
            name: first("Name:"),
            version: first("Version:"),
            tags: headers(&read("WHEEL")?, "Tag:"),
            requires,
            files,
        });
    }
    Ok(dists)
}

/// The native libraries under `folder`, relative to `site`, with `/`.
fn native_files(site: &Path, folder: &Path) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path();
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            found.extend(native_files(site, &path)?);
        } else {
            let relative = path.strip_prefix(site).expect("under the site").to_string_lossy().replace('\\', "/");
            if is_native(&relative) {
                found.push(relative);
            }
        }
    }
    Ok(found)
}

/// Whether a file is a native library (`x.so`, `x.cpython-314-….so.1`).
fn is_native(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    NATIVE_SUFFIXES.iter().any(|suffix| name.ends_with(suffix) || name.contains(&format!("{suffix}.")))
}

/// A distribution name as PEP 503 compares them.
fn normalize(name: &str) -> String {
    let lower = name.to_ascii_lowercase().replace(['_', '.'], "-");
    let parts: Vec<&str> = lower.split('-').filter(|p| !p.is_empty()).collect();
    parts.join("-")
}

/// The names a metric imports the packages in `site` by: its folders
/// holding an `__init__.py` and its `.py` files, sorted.
pub(super) fn top_level(site: &Path) -> Result<Vec<String>, AuthoringError> {
    let read = |cause: std::io::Error| AuthoringError::ReadModule { path: site.to_owned(), cause: cause.to_string() };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(site).map_err(read)? {
        let path = entry.map_err(read)?.path();
        let name = path.file_name().expect("an entry").to_string_lossy();
        if path.join("__init__.py").is_file() {
            names.push(name.into_owned());
        } else if let Some(module) = name.strip_suffix(".py").filter(|_| path.is_file()) {
            names.push(module.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Copies the folder `from` to `to` (which must not exist): folders and
/// regular files only, so that no link in the cache reaches the component.
fn copy_tree(from: &Path, to: &Path) -> Result<(), AuthoringError> {
    std::fs::create_dir(to).map_err(|cause| AuthoringError::CreateDir { path: to.to_owned(), cause })?;
    let read = |cause: std::io::Error| AuthoringError::ReadModule { path: from.to_owned(), cause: cause.to_string() };
    for entry in std::fs::read_dir(from).map_err(read)? {
        let entry = entry.map_err(read)?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(read)?;
        if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target).map_err(|cause| AuthoringError::Write { path: target, cause })?;
        }
    }
    Ok(())
}

/// Nanoseconds since the epoch, to name a partial folder.
fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// A folder being installed into, removed unless it was moved into the
/// cache.
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        // Gone when moved; a leftover costs only disk.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An installed distribution: its `.dist-info` folder's name without the
    /// suffix, its METADATA, its wheel's tag, its files with their sizes.
    type Installed<'a> = (&'a str, &'a str, &'a str, &'a [(&'a str, u64)]);

    /// A site folder holding `dists`.
    fn site(dists: &[Installed]) -> tempfile::TempDir {
        let site = tempfile::tempdir().unwrap();
        for (name, metadata, tag, files) in dists {
            let info = site.path().join(format!("{name}.dist-info"));
            std::fs::create_dir_all(&info).unwrap();
            std::fs::write(info.join("METADATA"), metadata).unwrap();
            std::fs::write(info.join("WHEEL"), format!("Wheel-Version: 1.0\nTag: {tag}\n")).unwrap();
            let record: String = files.iter().map(|(file, size)| format!("{file},sha256=x,{size}\n")).collect();
            std::fs::write(info.join("RECORD"), record).unwrap();
            for (file, _) in *files {
                let path = site.path().join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "").unwrap();
            }
        }
        site
    }

    fn requirements() -> (tempfile::TempDir, Requirements) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("requirements.txt"), "x\n").unwrap();
        let read = Requirements::read(dir.path()).unwrap().unwrap();
        (dir, read)
    }

    const METRIC: &str = "Metadata-Version: 2.1\nName: metric-kit\nVersion: 1.0\nRequires-Dist: NumPy>=1\nRequires-Dist: pytest; extra == \"test\"\n\nNumpy: not a header\n";
    const NUMPY: &str = "Metadata-Version: 2.1\nName: numpy\nVersion: 2.3.5\n";

    #[test]
    fn pure_python_wheels_pass() {
        let site = site(&[("metric_kit-1.0", METRIC, "py3-none-any", &[("metric_kit/__init__.py", 10)])]);
        check(&requirements().1, site.path()).unwrap();
    }

    #[test]
    fn a_native_wheel_is_refused_naming_it_and_what_requires_it() {
        let site = site(&[
            ("metric_kit-1.0", METRIC, "py3-none-any", &[("metric_kit/__init__.py", 10)]),
            ("numpy-2.3.5", NUMPY, "cp314-cp314-manylinux_2_27_x86_64", &[("numpy/__init__.py", 10)]),
        ]);
        let (dir, requirements) = requirements();
        let error = check(&requirements, site.path()).unwrap_err();
        assert!(error.is_usage());
        assert_eq!(
            error.to_string(),
            format!(
                "`{}`: it installs packages that are not pure Python, which a component cannot hold:\n  numpy 2.3.5, required by metric-kit: its wheel is built for cp314-cp314-manylinux_2_27_x86_64\n\nConsider a pure-Python package that does the same, or the part of it the metric needs as a `.py` file of the plugin",
                dir.path().join("requirements.txt").display()
            )
        );
    }

    #[test]
    fn a_native_library_is_refused_even_in_a_wheel_tagged_pure_or_in_no_wheel() {
        let site = site(&[(
            "metric_kit-1.0",
            METRIC,
            "py3-none-any",
            &[("metric_kit/__init__.py", 10), ("metric_kit/_fast.cpython-314-x86_64-linux-gnu.so", 10)],
        )]);
        std::fs::write(site.path().join("stray.so.1"), "").unwrap();
        let error = check(&requirements().1, site.path()).unwrap_err().to_string();
        assert!(
            error.contains(":\n  metric-kit 1.0: it holds the native library `metric_kit/_fast.cpython-314-x86_64-linux-gnu.so`\n  the native library `stray.so.1`, of no package\n\n"),
            "{error}"
        );
    }

    #[test]
    fn packages_larger_than_the_limit_are_refused_naming_the_largest() {
        let site = site(&[
            ("metric_kit-1.0", METRIC, "py3-none-any", &[("metric_kit/a.py", 50 << 20)]),
            ("big-1.0", "Name: big\nVersion: 1.0\n", "py2.py3-none-any", &[("big/a.py", 20 << 20)]),
        ]);
        let error = check(&requirements().1, site.path()).unwrap_err().to_string();
        assert!(
            error.ends_with("its packages take 70 MiB installed, more than the 64 MiB a plugin may bundle (the largest: metric-kit 50 MiB, big 20 MiB)\n\nConsider dropping the packages the metric does not import"),
            "{error}"
        );
    }

    #[test]
    fn names_compare_as_pep_503_says() {
        assert_eq!(normalize("Num_Py"), "num-py");
        assert_eq!(normalize("zope.interface"), "zope-interface");
        assert_eq!(normalize("a--b__c"), "a-b-c");
    }
}
