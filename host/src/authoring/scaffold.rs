//! A new plugin crate: the name checked (it is the plugin's name, and with
//! `-` as `_` its key), an empty folder, and the files of `template.rs`
//! written into it.

use super::template;
use crate::errors::AuthoringError;
use std::path::{Path, PathBuf};

/// What to scaffold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaffoldOptions {
    /// The plugin's name: lowercase letters, digits, `_` and `-`, starting
    /// with a letter, and not `not_`/`not-` (which would read as a negated
    /// key).
    pub name: String,
    /// The folder to create the crate in (default: `NAME`, relative to the
    /// current directory). It must not exist, or be empty.
    pub dir: Option<PathBuf>,
    /// The SDK the crate depends on.
    pub sdk: SdkDependency,
}

impl ScaffoldOptions {
    /// The plugin `name` in the folder `NAME`, on this assay's SDK release.
    #[cfg(any(test, feature = "internals"))] // for tests
    pub fn new(name: impl Into<String>) -> ScaffoldOptions {
        ScaffoldOptions { name: name.into(), dir: None, sdk: SdkDependency::default() }
    }
}

/// Where the crate gets `assay-plugin-sdk` from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SdkDependency {
    /// The SDK this assay carries, written into the crate's
    /// `vendor/assay-plugin-sdk/` and named by that relative path: the
    /// crate builds with nothing but Rust and the package registry, and a
    /// teammate who clones it builds the same.
    #[default]
    Vendored,
    /// A release from crates.io, e.g. `0.1` ([`SdkDependency::registry`]).
    Version(String),
    /// A local crate (a checkout of assay's `plugin-sdk/`), written as a
    /// path relative to the new crate when it can be (so that a teammate's
    /// checkout beside it works too), else absolute.
    Path(PathBuf),
}

impl SdkDependency {
    /// The SDK release of this assay from crates.io.
    pub fn registry() -> SdkDependency {
        SdkDependency::Version(super::sdk::release_minor())
    }

    /// The dependency as a TOML value, for a crate in `dir`.
    fn to_toml(&self, dir: &Path) -> Result<String, AuthoringError> {
        Ok(match self {
            SdkDependency::Vendored => format!("{{ path = {:?} }}", super::sdk::VENDORED_DIR),
            SdkDependency::Version(version) => format!("{version:?}"),
            SdkDependency::Path(path) => {
                let absolute = |path: &Path| {
                    std::path::absolute(path).map_err(|cause| AuthoringError::Absolute { path: path.to_owned(), cause })
                };
                let (sdk, crate_dir) = (absolute(path)?, absolute(dir)?);
                let written = relative(&sdk, &crate_dir).unwrap_or(sdk);
                format!("{{ path = {:?} }}", written.to_string_lossy().replace('\\', "/"))
            }
        })
    }
}

/// `to` as a path relative to `from` (both absolute), when they share a
/// root.
fn relative(to: &Path, from: &Path) -> Option<PathBuf> {
    let (to, from): (Vec<_>, Vec<_>) = (to.components().collect(), from.components().collect());
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut path: PathBuf = from[common..].iter().map(|_| std::path::Component::ParentDir).collect();
    path.extend(&to[common..]);
    Some(path)
}

/// A crate [`scaffold`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scaffold {
    /// The plugin's name (the crate's package name).
    pub name: String,
    /// The key its matcher answers: the name with `-` as `_`.
    pub key: String,
    /// The crate's folder, as given (or `NAME`).
    pub dir: PathBuf,
    /// Every file written, under `dir`.
    pub files: Vec<PathBuf>,
}

/// Writes a plugin crate: `Cargo.toml`, `src/lib.rs` (a matcher that
/// passes when the text mentions every word of the expected phrase, with
/// its unit tests) and `.gitignore`. It refuses a name no plugin can have,
/// and a folder that has files in it.
pub fn scaffold(options: ScaffoldOptions) -> Result<Scaffold, AuthoringError> {
    let (name, dir) = checked_name_and_dir(&options.name, options.dir)?;
    let key = name.replace('-', "_");
    let sdk = options.sdk.to_toml(&dir)?;
    let mut contents = vec![
        ("Cargo.toml".to_owned(), template::cargo_toml(name, &sdk)),
        ("src/lib.rs".to_owned(), template::lib_rs(name, &key)),
        (".gitignore".to_owned(), "/target\n".to_owned()),
    ];
    if options.sdk == SdkDependency::Vendored {
        let vendored = super::sdk::files().into_iter();
        contents.extend(vendored.map(|(path, text)| (format!("{}/{path}", super::sdk::VENDORED_DIR), text)));
    }
    let files = write_files(&dir, &contents)?;
    Ok(Scaffold { name: name.to_owned(), key, dir, files })
}

/// The name trimmed and checked (one a plugin, and with `-` as `_` its key,
/// can have), and the folder to write in (`dir`, default `NAME`), which must
/// not exist or be empty.
pub(super) fn checked_name_and_dir(name: &str, dir: Option<PathBuf>) -> Result<(&str, PathBuf), AuthoringError> {
    let name = name.trim();
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !valid || name.starts_with("not_") || name.starts_with("not-") {
        return Err(AuthoringError::BadName(name.to_owned()));
    }
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    // A file, or a folder that cannot be read, counts as taken too.
    if dir.exists() && std::fs::read_dir(&dir).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(AuthoringError::NotEmpty(dir));
    }
    Ok((name, dir))
}

/// Writes each `(path relative to dir, contents)`, creating folders as
/// needed; the files written, in order.
pub(super) fn write_files(dir: &Path, contents: &[(String, String)]) -> Result<Vec<PathBuf>, AuthoringError> {
    let mut files = Vec::new();
    for (relative, text) in contents {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().expect("a file in the folder"))
            .map_err(|cause| AuthoringError::CreateDir { path: dir.to_owned(), cause })?;
        std::fs::write(&path, text).map_err(|cause| AuthoringError::Write { path: path.clone(), cause })?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(name: &str, dir: &Path) -> ScaffoldOptions {
        ScaffoldOptions { dir: Some(dir.to_owned()), ..ScaffoldOptions::new(name) }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_scaffold_writes_a_crate_whose_key_is_the_name_with_underscores() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("crate");
        let made = scaffold(ScaffoldOptions { sdk: SdkDependency::registry(), ..options(" my-check ", &dir) }).unwrap();
        assert_eq!((made.name.as_str(), made.key.as_str(), made.dir.as_path()), ("my-check", "my_check", &*dir));
        let names = ["Cargo.toml", "src/lib.rs", ".gitignore"];
        assert_eq!(made.files, names.map(|name| dir.join(name)));
        let manifest = read(&dir.join("Cargo.toml"));
        assert!(manifest.starts_with("[package]\nname = \"my-check\"\n"), "{manifest}");
        assert!(manifest.contains("\nassay-plugin-sdk = \"0.1\"\n"), "{manifest}");
        assert!(manifest.contains("\n[package.metadata.assay]\ncomponent = \"my-check.wasm\"\n"), "{manifest}");
        let lib = read(&dir.join("src/lib.rs"));
        assert!(lib.contains("PluginInfo::new(\"my-check\", env!(\"CARGO_PKG_VERSION\"))"), "{lib}");
        assert!(lib.contains(".matcher(\"my_check\", "), "{lib}");
        assert_eq!(read(&dir.join(".gitignore")), "/target\n");
    }

    #[test]
    fn the_sdk_is_vendored_a_release_or_a_relative_path() {
        assert_eq!(SdkDependency::default(), SdkDependency::Vendored);
        assert_eq!(SdkDependency::registry(), SdkDependency::Version("0.1".into()));
        let temp = tempfile::tempdir().unwrap();
        let made = scaffold(options("vendored", &temp.path().join("vendored"))).unwrap();
        assert!(read(&made.files[0]).contains("\nassay-plugin-sdk = { path = \"vendor/assay-plugin-sdk\" }\n"));
        let sdk = temp.path().join("vendored/vendor/assay-plugin-sdk");
        assert!(read(&sdk.join("Cargo.toml")).contains("name = \"assay-plugin-sdk\""));
        assert!(sdk.join("src/lib.rs").is_file() && sdk.join("wit/plugin-0.3/plugin.wit").is_file());
        // A path beside the crate is written relative to it.
        let sdk = SdkDependency::Path(temp.path().join("checkout/plugin-sdk"));
        let made = scaffold(ScaffoldOptions { sdk, ..options("local", &temp.path().join("plugins/local")) }).unwrap();
        assert!(read(&made.files[0]).contains("\nassay-plugin-sdk = { path = \"../../checkout/plugin-sdk\" }\n"));
        assert_eq!(made.files.len(), 3, "nothing vendored");
    }

    #[test]
    fn a_name_no_plugin_can_have_is_refused_and_nothing_written() {
        let temp = tempfile::tempdir().unwrap();
        for name in ["Not-Lower", "9lives", "-dash", "", "two words", "not_value", "not-value", "ünï"] {
            let error = scaffold(options(name, &temp.path().join("x"))).unwrap_err();
            assert!(matches!(&error, AuthoringError::BadName(bad) if bad == name.trim()), "{name}: {error}");
            assert!(error.is_usage());
        }
        assert_eq!(
            AuthoringError::BadName("Not-Lower".into()).to_string(),
            "`Not-Lower` cannot name a plugin: use lowercase letters, digits, `_` and `-`, starting with a letter (and not `not_`)"
        );
        assert!(!temp.path().join("x").exists());
    }

    #[test]
    fn a_folder_with_files_or_a_file_is_refused_and_an_empty_folder_is_used() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("file"), "x").unwrap();
        for taken in [temp.path().to_owned(), temp.path().join("file")] {
            let error = scaffold(options("fine", &taken)).unwrap_err();
            assert!(matches!(&error, AuthoringError::NotEmpty(dir) if *dir == taken), "{error}");
            assert_eq!(error.to_string(), format!("`{}` already exists and is not empty", taken.display()));
        }
        assert_eq!(read(&temp.path().join("file")), "x");
        assert!(!temp.path().join("Cargo.toml").exists());

        let empty = temp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(scaffold(options("fine", &empty)).unwrap().files.iter().all(|file| file.is_file()));
    }
}
