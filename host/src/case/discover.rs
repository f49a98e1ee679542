//! Finds the files a run names: a single file, a directory (recursively,
//! every file with an extension the formats' table names), or a glob
//! pattern. Each file gets a stable case id.
//!
//! Symlinked directories are followed, but every directory is visited once
//! (known by device and inode), so links that loop (`up -> ..`) end the walk
//! instead of running it forever. Real directories are walked before the
//! links into them, and links in path order, so a case reachable both ways
//! keeps the id of its real path, and ids do not depend on the order the
//! file system lists entries in.
//!
//! [`CaseFiles`] finds them as they are asked for: checking the inputs
//! lists their directories (small: directories, not files), and the walk
//! then lists one directory at a time, in path order, so that a run of
//! many files starts at once and holds few paths.
//!
//! Every listing and check goes through the inputs' [`FileAccess`]: under
//! `assay serve`, beneath the served root, so that a walk never lists a
//! folder outside it (a link out, or one swapped in during the run, fails
//! to open).

use crate::case::FileAccess;
use crate::errors::DiscoverError;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A test case file and the id its case will have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseFile {
    /// Where the file is.
    pub path: PathBuf,
    /// The case id: the path relative to the directory it was found in (or
    /// as given, for a file or glob), without its extension (the longest
    /// one searched for that it has, e.g. `.suite.toml`), with `/`
    /// separators.
    pub id: String,
}

/// Whether the file's name ends with `.EXTENSION` (which may have dots).
pub(crate) fn has_extension(path: &Path, extension: &str) -> bool {
    path.file_name().is_some_and(|name| {
        let name = name.to_string_lossy();
        name.len() > extension.len() + 1
            && name.ends_with(extension)
            && name[..name.len() - extension.len()].ends_with('.')
    })
}

/// Finds every file named by `inputs`, in a stable order (each input's
/// files sorted by path; inputs in the order given; duplicates dropped):
/// directories are searched for files with any of `extensions` (the
/// formats' table, `crate::formats`, says which).
pub fn discover_with(inputs: &[PathBuf], extensions: &[&str]) -> Result<Vec<CaseFile>, DiscoverError> {
    CaseFiles::find(inputs, extensions)?.into_iter().collect()
}

/// The test case files `inputs` name, in [`discover`]'s order, found as
/// they are asked for: a directory's files are listed one directory at a
/// time, so that a walk of many files holds few of them at once. Finding
/// them checks every input (a path that does not exist, a glob matching
/// nothing, a directory that cannot be read are errors then); walking them
/// again (a clone) finds the same files while the tree does not change.
#[derive(Clone, Debug)]
pub struct CaseFiles {
    inputs: Arc<[Input]>,
    extensions: Arc<[String]>,
    access: FileAccess,
}

/// One input of [`CaseFiles`]: a directory to walk (its files' ids start
/// with `prefix`: the folder's path from the project root, or nothing), or
/// the files of a path or glob, found when it was checked.
#[derive(Debug)]
enum Input {
    Folder { root: PathBuf, prefix: PathBuf, folders: HashSet<PathBuf> },
    Files(Vec<CaseFile>),
}

impl CaseFiles {
    /// Checks `inputs` (files, directories searched for files with any of
    /// `extensions`, globs) and lists their directories.
    pub fn find(inputs: &[PathBuf], extensions: &[&str]) -> Result<CaseFiles, DiscoverError> {
        CaseFiles::find_in_project(inputs, extensions, None)
    }

    /// [`CaseFiles::find`] in the project whose root is `project_root`: a
    /// file under it (links resolved) has its path from the root as its id,
    /// however the input spelled it (`cases/echo`, `./cases/../cases/echo`
    /// and, from inside `cases/`, `echo` give one id); a file elsewhere its
    /// path from the input.
    pub fn find_in_project(
        inputs: &[PathBuf],
        extensions: &[&str],
        project_root: Option<&Path>,
    ) -> Result<CaseFiles, DiscoverError> {
        let extensions: Arc<[String]> = extensions.iter().map(|x| (*x).to_owned()).collect();
        let access = FileAccess::anywhere();
        let root = project_root.and_then(|root| std::fs::canonicalize(root).ok());
        let ids = IdBase::Project(root.as_deref());
        let found =
            inputs.iter().map(|input| Input::find(input, ids, &extensions, &access)).collect::<Result<_, _>>()?;
        Ok(CaseFiles { inputs: found, extensions, access })
    }

    /// [`CaseFiles::find`] for one input under `base` (`assay serve`'s
    /// root), listed and checked through `access`: a file it names is known
    /// by its path relative to `base`.
    pub fn find_within(
        base: &Path,
        input: &Path,
        extensions: &[&str],
        access: &FileAccess,
    ) -> Result<CaseFiles, DiscoverError> {
        let extensions: Arc<[String]> = extensions.iter().map(|x| (*x).to_owned()).collect();
        let inputs = Arc::new([Input::find(input, IdBase::Served(base), &extensions, access)?]);
        Ok(CaseFiles { inputs, extensions, access: access.clone() })
    }

    /// The files named by path or glob (not found by walking a directory),
    /// in order.
    pub fn listed(&self) -> impl Iterator<Item = &CaseFile> {
        self.inputs.iter().flat_map(|input| match input {
            Input::Files(files) => files.as_slice(),
            Input::Folder { .. } => &[],
        })
    }

    /// Whether it holds no file: the first is looked for.
    pub fn is_empty(&self) -> bool {
        self.clone().into_iter().next().is_none()
    }
}

/// What case ids are paths from.
#[derive(Clone, Copy, Debug)]
enum IdBase<'a> {
    /// The project root (absolute, links resolved), when there is a
    /// project: a file under it is known by its path from it.
    Project(Option<&'a Path>),
    /// `assay serve`'s root, which every path given starts with.
    Served(&'a Path),
}

impl IdBase<'_> {
    /// The path of `path` from the base, when it is under it.
    fn relative(self, path: &Path) -> Option<PathBuf> {
        match self {
            IdBase::Project(None) => None,
            IdBase::Project(Some(root)) => {
                std::fs::canonicalize(path).ok()?.strip_prefix(root).ok().map(Path::to_path_buf)
            }
            IdBase::Served(root) => path.strip_prefix(root).ok().map(Path::to_path_buf),
        }
    }
}

impl Input {
    fn find(input: &Path, ids: IdBase<'_>, extensions: &[String], access: &FileAccess) -> Result<Input, DiscoverError> {
        let text = input.to_string_lossy();
        let id_of = |path: &Path| id_of(&ids.relative(path).unwrap_or_else(|| path.to_path_buf()), extensions);
        if access.is_dir(input) {
            let folders = folders(access, input, true)
                .map_err(|e| DiscoverError::Io { path: input.to_path_buf(), error: e.to_string() })?;
            let prefix = match ids {
                IdBase::Project(_) => ids.relative(input).unwrap_or_default(),
                IdBase::Served(_) => PathBuf::new(),
            };
            return Ok(Input::Folder { root: input.to_path_buf(), prefix, folders });
        }
        if access.is_file(input) {
            return Ok(Input::Files(vec![CaseFile { id: id_of(input), path: input.to_path_buf() }]));
        }
        if text.contains(['*', '?', '[']) {
            let paths = glob_files(access, &text)?;
            if paths.is_empty() {
                return Err(DiscoverError::NoMatch { pattern: text.to_string() });
            }
            return Ok(Input::Files(paths.into_iter().map(|path| CaseFile { id: id_of(&path), path }).collect()));
        }
        Err(DiscoverError::NotFound { path: input.to_path_buf() })
    }
}

impl IntoIterator for CaseFiles {
    type Item = Result<CaseFile, DiscoverError>;
    type IntoIter = CaseFileWalk;

    fn into_iter(self) -> CaseFileWalk {
        // Inputs that overlap (`cases cases/a.hocon`) would name a file
        // twice: with one input, no file comes twice.
        let seen = (self.inputs.len() > 1).then(HashSet::new);
        CaseFileWalk { files: self, next_input: 0, current: None, seen, hasher: PathHasher::default() }
    }
}

/// [`CaseFiles`] as they are found.
#[derive(Debug)]
pub struct CaseFileWalk {
    files: CaseFiles,
    next_input: usize,
    current: Option<Current>,
    /// The files yielded already, by a 128-bit hash of their paths, when
    /// there is more than one input.
    seen: Option<HashSet<u128>>,
    hasher: PathHasher,
}

/// Where a [`CaseFileWalk`] is in its current input.
#[derive(Debug)]
enum Current {
    Walk { input: usize, walk: Walk },
    Files { input: usize, next: usize },
}

impl Iterator for CaseFileWalk {
    type Item = Result<CaseFile, DiscoverError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let found = match &mut self.current {
                None => {
                    let input = self.next_input;
                    self.next_input += 1;
                    self.current = Some(match self.files.inputs.get(input)? {
                        Input::Folder { root, .. } => Current::Walk { input, walk: Walk::new(root) },
                        Input::Files(_) => Current::Files { input, next: 0 },
                    });
                    continue;
                }
                Some(Current::Files { input, next }) => {
                    let Input::Files(files) = &self.files.inputs[*input] else { unreachable!("a list of files") };
                    let file = files.get(*next).cloned();
                    *next += 1;
                    file.map(Ok)
                }
                Some(Current::Walk { input, walk }) => {
                    let Input::Folder { root, prefix, folders } = &self.files.inputs[*input] else {
                        unreachable!("a folder")
                    };
                    let extensions = &self.files.extensions;
                    let wanted = |path: &Path| extensions.iter().any(|x| has_extension(path, x));
                    walk.next(&self.files.access, folders, true, wanted).map(|found| {
                        found
                            .map(|path| {
                                let relative = prefix.join(path.strip_prefix(root).unwrap_or(&path));
                                CaseFile { id: id_of(&relative, extensions), path }
                            })
                            .map_err(|e| DiscoverError::Io { path: root.clone(), error: e.to_string() })
                    })
                }
            };
            let Some(found) = found else {
                self.current = None;
                continue;
            };
            if let (Some(seen), Ok(file)) = (&mut self.seen, &found)
                && !seen.insert(self.hasher.hash(&file.path))
            {
                continue;
            }
            return Some(found);
        }
    }
}

/// A 128-bit hash of paths (two SipHashes with keys of their own), for sets
/// that must stay small however many paths they hold: two paths share one
/// with a probability of about 2^-128.
#[derive(Debug, Default)]
pub(crate) struct PathHasher {
    low: std::hash::RandomState,
    high: std::hash::RandomState,
}

impl PathHasher {
    pub(crate) fn hash(&self, path: &Path) -> u128 {
        self.hash_bytes(path.as_os_str().as_encoded_bytes())
    }

    pub(crate) fn hash_bytes(&self, bytes: &[u8]) -> u128 {
        use std::hash::BuildHasher;
        (u128::from(self.high.hash_one(bytes)) << 64) | u128::from(self.low.hash_one(bytes))
    }
}

/// The files a glob pattern matches, sorted. A pattern with `**`, and any
/// pattern beneath a root, is matched against a cycle-safe walk (through
/// `access`) of the folder before its first wildcard: the `glob` crate
/// follows symlinked directories in `**` with no cycle check, and reads the
/// file system where the path says.
pub(crate) fn glob_files(access: &FileAccess, pattern: &str) -> Result<Vec<PathBuf>, DiscoverError> {
    let bad = |e: &dyn std::fmt::Display| DiscoverError::BadGlob { pattern: pattern.to_owned(), error: e.to_string() };
    if !pattern.contains("**") && access.root().is_none() {
        let mut paths: Vec<PathBuf> =
            glob::glob(pattern).map_err(|e| bad(&e))?.filter_map(Result::ok).filter(|p| p.is_file()).collect();
        paths.sort();
        return Ok(paths);
    }
    if !pattern.contains("**") {
        return glob_by_component(access, pattern).map_err(|e| bad(&e));
    }
    let matcher = glob::Pattern::new(pattern).map_err(|e| bad(&e))?;
    let base: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| !matches!(c, Component::Normal(name) if name.to_string_lossy().contains(['*', '?', '['])))
        .collect();
    if !base.as_os_str().is_empty() && !access.is_dir(&base) {
        return Ok(Vec::new());
    }
    // The same options `glob::glob` matches with.
    let options = glob::MatchOptions::new();
    let io = |e: std::io::Error| DiscoverError::Io { path: base.clone(), error: e.to_string() };
    let folders = folders(access, &base, false).map_err(io)?;
    let mut walk = Walk::new(&base);
    let mut paths = Vec::new();
    let wanted = |path: &Path| matcher.matches_path_with(path, options) && access.is_file(path);
    while let Some(path) = walk.next(access, &folders, false, wanted) {
        paths.push(path.map_err(io)?);
    }
    paths.sort();
    Ok(paths)
}

/// The files `pattern` (no `**`) matches, sorted, found one component at a
/// time through `access`: a literal component is joined, a wildcard one
/// matched against the names of each folder reached so far. Only the
/// folders on the pattern's path are listed; one that cannot be listed
/// matches nothing, as with `glob::glob`.
fn glob_by_component(access: &FileAccess, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError> {
    let options = glob::MatchOptions::new();
    let components: Vec<Component<'_>> = Path::new(pattern).components().collect();
    let mut reached = vec![PathBuf::new()];
    for (i, component) in components.iter().enumerate() {
        let last = i + 1 == components.len();
        let keep = |path: &Path| if last { access.is_file(path) } else { access.is_dir(path) };
        let mut next = Vec::new();
        match component {
            Component::Normal(name) if name.to_string_lossy().contains(['*', '?', '[']) => {
                let matcher = glob::Pattern::new(&name.to_string_lossy())?;
                for dir in &reached {
                    for entry in access.read_dir(dir).unwrap_or_default() {
                        let path = dir.join(&entry.name);
                        if matcher.matches_with(&entry.name.to_string_lossy(), options) && keep(&path) {
                            next.push(path);
                        }
                    }
                }
            }
            other => next.extend(reached.iter().map(|dir| dir.join(other)).filter(|path| !last || keep(path))),
        }
        reached = next;
    }
    reached.sort();
    Ok(reached)
}

/// How a directory is known when looking for cycles: its device and inode
/// (which also catches bind mounts), or its canonical path where there are
/// none.
#[cfg(unix)]
type DirId = (u64, u64);
#[cfg(not(unix))]
type DirId = PathBuf;

#[cfg(unix)]
fn dir_id(access: &FileAccess, dir: &Path) -> std::io::Result<DirId> {
    access.id(dir)
}

#[cfg(not(unix))]
fn dir_id(_access: &FileAccess, dir: &Path) -> std::io::Result<DirId> {
    std::fs::canonicalize(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })
}

/// What a walk needs to know of an entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A directory, not a link.
    Folder,
    /// A link to a directory.
    LinkedFolder,
    /// Anything else.
    Other,
}

/// An entry of a directory as a walk sees it, skipping hidden entries when
/// `skip_hidden`: its path (joined by hand, so that a walk of "" yields
/// `a/b`, not `./a/b`) and kind.
fn entries(access: &FileAccess, dir: &Path, skip_hidden: bool) -> std::io::Result<Vec<(PathBuf, Kind)>> {
    let mut entries = Vec::new();
    for entry in access.read_dir(dir)? {
        if skip_hidden && entry.name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        // Beneath a root, a link leading out of it is an error, not a file
        // quietly left out.
        if entry.is_link && !entry.is_dir && access.root().is_some() {
            let path = dir.join(&entry.name);
            if let Err(error) = access.id(&path)
                && error.to_string().starts_with(crate::case::LEADS_OUTSIDE)
            {
                return Err(error);
            }
        }
        let kind = match (entry.is_dir, entry.is_link) {
            (true, false) => Kind::Folder,
            (true, true) => Kind::LinkedFolder,
            (false, _) => Kind::Other,
        };
        entries.push((dir.join(entry.name), kind));
    }
    Ok(entries)
}

/// The directories a walk of `root` reads, each under the path that claimed
/// it first: real directories claim as they are found (in path order); the
/// links found in a round claim their targets after it, in path order (a
/// link to a directory already claimed is skipped), and are read in the
/// next round. Only directories are kept, so that this is small however
/// many files there are.
fn folders(access: &FileAccess, root: &Path, skip_hidden: bool) -> std::io::Result<HashSet<PathBuf>> {
    let mut visited: HashSet<DirId> = HashSet::from([dir_id(access, root)?]);
    let mut claimed = HashSet::from([root.to_path_buf()]);
    let mut real = vec![root.to_path_buf()];
    loop {
        let mut links = Vec::new();
        while let Some(dir) = real.pop() {
            let mut found = entries(access, &dir, skip_hidden)?;
            found.sort_by(|a, b| b.0.cmp(&a.0));
            for (path, kind) in found {
                match kind {
                    Kind::Folder => {
                        if visited.insert(dir_id(access, &path)?) {
                            claimed.insert(path.clone());
                            real.push(path);
                        }
                    }
                    Kind::LinkedFolder => links.push(path),
                    Kind::Other => {}
                }
            }
        }
        links.sort();
        for link in links {
            if visited.insert(dir_id(access, &link)?) {
                claimed.insert(link.clone());
                real.push(link);
            }
        }
        if real.is_empty() {
            return Ok(claimed);
        }
    }
}

/// A walk of the files under a root, in path order, one directory listed
/// at a time: the directories it enters are the `folders` claimed for it
/// (see [`folders`]); the files it yields are those `wanted` keeps.
#[derive(Debug)]
struct Walk {
    /// The directories entered and not finished, each with its entries
    /// still to visit (in reverse path order, the next last).
    stack: Vec<Vec<(PathBuf, bool)>>,
    root: Option<PathBuf>,
}

impl Walk {
    fn new(root: &Path) -> Walk {
        Walk { stack: Vec::new(), root: Some(root.to_path_buf()) }
    }

    fn next(
        &mut self,
        access: &FileAccess,
        folders: &HashSet<PathBuf>,
        skip_hidden: bool,
        wanted: impl Fn(&Path) -> bool,
    ) -> Option<std::io::Result<PathBuf>> {
        if let Some(root) = self.root.take()
            && let Err(error) = self.enter(access, &root, folders, skip_hidden, &wanted)
        {
            return Some(Err(error));
        }
        loop {
            let top = self.stack.last_mut()?;
            let Some((path, is_folder)) = top.pop() else {
                self.stack.pop();
                continue;
            };
            if !is_folder {
                return Some(Ok(path));
            }
            if let Err(error) = self.enter(access, &path, folders, skip_hidden, &wanted) {
                return Some(Err(error));
            }
        }
    }

    /// Lists `dir`: its folders to enter and its wanted files, sorted.
    fn enter(
        &mut self,
        access: &FileAccess,
        dir: &Path,
        folders: &HashSet<PathBuf>,
        skip_hidden: bool,
        wanted: &impl Fn(&Path) -> bool,
    ) -> std::io::Result<()> {
        let mut kept = Vec::new();
        for (path, kind) in entries(access, dir, skip_hidden)? {
            if kind != Kind::Other {
                if folders.contains(&path) {
                    kept.push((path, true));
                }
            } else if wanted(&path) {
                kept.push((path, false));
            }
        }
        kept.sort_by(|a, b| b.0.cmp(&a.0));
        self.stack.push(kept);
        Ok(())
    }
}

/// `path` without the longest of `extensions` it has (else its last one).
fn id_of(path: &Path, extensions: &[String]) -> String {
    let longest = extensions.iter().filter(|x| has_extension(path, x)).max_by_key(|x| x.len());
    let stripped = longest.and_then(|x| path.to_string_lossy().strip_suffix(&format!(".{x}")).map(PathBuf::from));
    let without = stripped.unwrap_or_else(|| path.with_extension(""));
    let text = without.to_string_lossy().replace('\\', "/");
    text.trim_start_matches("./").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE_EXTENSIONS: &[&str] = &["hocon"];

    #[test]
    fn ids_drop_the_longest_extension_searched_for_and_a_leading_dot() {
        let searched = ["hocon".to_owned(), "suite.toml".to_owned()];
        assert_eq!(id_of(Path::new("./math_guy/basic.hocon"), &searched), "math_guy/basic");
        assert_eq!(id_of(Path::new("case.hocon"), &searched), "case");
        assert_eq!(id_of(Path::new("./suites/alerts.suite.toml"), &searched), "suites/alerts");
        assert_eq!(id_of(Path::new("promptfooconfig.yaml"), &searched), "promptfooconfig");
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "{}").unwrap();
    }

    #[test]
    fn a_walk_yields_files_in_path_order_one_directory_at_a_time() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        // `a/…` sorts before `a.x…` by path (a component at a time), though
        // "a." < "a/" as strings.
        for name in ["b.hocon", "a/z.hocon", "a/b/c.hocon", "a.x.hocon", "a/.hidden.hocon", "c/notes.txt", "0.hocon"] {
            touch(&dir.join(name));
        }
        let files = CaseFiles::find(&[dir.to_path_buf()], CASE_EXTENSIONS).unwrap();
        let ids: Vec<String> = files.clone().into_iter().map(|f| f.unwrap().id).collect();
        assert_eq!(ids, ["0", "a/b/c", "a/z", "a.x", "b"]);
        let mut sorted: Vec<PathBuf> = files.into_iter().map(|f| f.unwrap().path).collect();
        let walked = sorted.clone();
        sorted.sort();
        assert_eq!(walked, sorted, "the order of a sort of every path");
    }

    #[test]
    fn overlapping_inputs_yield_each_file_once_in_the_order_of_the_inputs() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        touch(&dir.join("x/one.hocon"));
        touch(&dir.join("x/two.hocon"));
        let inputs = [dir.join("x/two.hocon"), dir.join("x"), dir.join("x/one.hocon")];
        let found = discover_with(&inputs, CASE_EXTENSIONS).unwrap();
        let paths: Vec<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(paths, [dir.join("x/two.hocon"), dir.join("x/one.hocon")]);
        assert!(!CaseFiles::find(&inputs, CASE_EXTENSIONS).unwrap().is_empty());
        let empty = tempfile::tempdir().unwrap();
        assert!(CaseFiles::find(&[empty.path().to_path_buf()], CASE_EXTENSIONS).unwrap().is_empty());
    }
}
