//! Community plugins in a project: `[plugins.NAME]` entries with `oci` or
//! `url`, pinned by `sha256` (and for OCI the manifest's digest). A run
//! reads the pinned component from the plugin store, fetching it by its
//! pin only when this machine has not seen it ([`Project::plugin_files`]);
//! [`Project::add_plugin`] and [`Project::update_plugins`] are the only
//! ones that follow a tag, and write the pins into assay.toml, keeping the
//! rest of the file as it is.

use super::Project;
use super::lock::plugins_table;
use crate::config::{PluginConfig, PluginSource};
use crate::distribution::{CosignKey, Credentials, Distribution, Fetched, PluginReference, Store, with_digest};
use crate::errors::{CommunityError, FetchError, LockError, ProjectError};
use crate::plugin::{BUILTIN_MATCHERS, MatcherKey, MatcherPlugin};
use crate::sandbox::{ComponentOptions, ComponentSource, Grants};
use oci_client::Reference;
use std::path::{Path, PathBuf};

/// What `assay plugin add` is asked.
#[derive(Clone, Debug, Default)]
pub struct AddPlugin {
    /// An OCI reference (`ghcr.io/acme/rouge:1.2.0`) or an https URL.
    pub reference: String,
    /// The `[plugins.NAME]` to write (default: the name the plugin gives
    /// itself).
    pub label: Option<String>,
    /// Capabilities granted besides `log`: `judge`, `embeddings`.
    pub grants: Vec<String>,
    /// A cosign public key whose signature it must carry (OCI only), as a
    /// path from the current folder.
    pub cosign_key: Option<PathBuf>,
}

/// A community plugin fetched, loaded and described.
#[derive(Clone, Debug)]
pub struct CommunityPlugin {
    /// Its `[plugins.NAME]`.
    pub label: String,
    /// What was fetched: the pinned reference, the digests, the bytes.
    pub fetched: Fetched,
    /// The name it gives itself.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its keys.
    pub keys: Vec<MatcherKey>,
    /// The capabilities its imports ask for.
    pub requested_grants: Vec<&'static str>,
    /// The cosign key its signature was verified with.
    pub signed_with: Option<PathBuf>,
}

impl CommunityPlugin {
    /// The capabilities it asks for that `grants` does not allow.
    fn ungranted(&self, grants: &Grants) -> Vec<String> {
        self.requested_grants.iter().filter(|grant| !grants.allows(grant)).map(|grant| grant.to_string()).collect()
    }
}

/// What `assay plugin update` found for one plugin.
#[derive(Clone, Debug)]
pub struct Update {
    /// Its `[plugins.NAME]`.
    pub label: String,
    /// Its sha256 before.
    pub from_sha256: String,
    /// What its reference names now (unchanged when the sha256 is the
    /// same).
    pub to: CommunityPlugin,
}

impl Update {
    /// Whether the pin moved.
    pub fn changed(&self) -> bool {
        self.from_sha256 != self.to.fetched.sha256
    }
}

impl Project {
    /// Fetching and publishing components, into the plugin store under the
    /// user's cache folder, logging in to registries with
    /// `ASSAY_REGISTRY_USERNAME` and `ASSAY_REGISTRY_PASSWORD` when both
    /// are set.
    pub fn distribution(&self) -> Result<Distribution, FetchError> {
        let dir = Store::default_dir().ok_or_else(|| FetchError::Store {
            dir: PathBuf::from("~/.cache/assay/plugins"),
            message: "neither XDG_CACHE_HOME nor HOME is set, so there is no cache folder".into(),
        })?;
        let variable = |name: &str| self.environment.get(name).filter(|v| !v.is_empty()).cloned();
        let credentials = match (variable("ASSAY_REGISTRY_USERNAME"), variable("ASSAY_REGISTRY_PASSWORD")) {
            (Some(username), Some(password)) => Some(Credentials { username, password }),
            _ => None,
        };
        Ok(Distribution::new(Store::new(dir), credentials))
    }

    /// The file of the community plugin `[plugins.LABEL]`: from the plugin
    /// store, fetched by its pin when this machine does not have it.
    pub(super) fn community_component(&self, label: &str, plugin: &PluginConfig) -> Result<PathBuf, ProjectError> {
        let fail = |error| ProjectError::FetchPlugin { configured_as: Some(label.to_owned()), error };
        let text = match plugin.source() {
            Ok(PluginSource::Oci(text) | PluginSource::Url(text)) => text,
            _ => unreachable!("a community plugin"),
        };
        let reference = PluginReference::parse(text).map_err(fail)?;
        let unpinned = |message: String| fail(FetchError::Unpinned { label: label.to_owned(), message });
        if let PluginReference::Oci(oci) = &reference
            && oci.digest().is_none()
        {
            return Err(unpinned(format!("`oci = \"{text}\"` pins no manifest digest (`@sha256:…`)")));
        }
        let Some(sha256) = &plugin.sha256 else {
            return Err(unpinned("it pins no `sha256`, which a community plugin needs".into()));
        };
        let key = self.cosign_key(plugin).map_err(fail)?;
        self.distribution().and_then(|d| d.pinned(&reference, sha256, key.as_ref())).map_err(fail)
    }

    fn cosign_key(&self, plugin: &PluginConfig) -> Result<Option<CosignKey>, FetchError> {
        plugin.cosign_key.as_ref().map(|file| CosignKey::read(&self.config.resolve(file))).transpose()
    }

    /// `assay plugin add`: fetches what the reference names (with a cosign
    /// key, only when signed by it), loads it as a run would to check it is
    /// a matcher plugin of a contract assay speaks and to ask what it is,
    /// requires every capability it asks for to be granted, and writes its
    /// pinned `[plugins.NAME]` into assay.toml (made when missing). Nothing
    /// is written when any step fails.
    pub fn add_plugin(&self, request: &AddPlugin) -> Result<CommunityPlugin, CommunityError> {
        let reference = PluginReference::parse(&request.reference)?;
        let grants = Grants::from_names(request.grants.iter().map(String::as_str)).map_err(CommunityError::BadGrant)?;
        let key = request.cosign_key.as_deref().map(CosignKey::read).transpose()?;
        let fetched = self.distribution()?.fetch(&reference, key.as_ref())?;
        let plugin = self.describe(request.label.clone(), &reference, fetched, key.as_ref())?;
        let missing = plugin.ungranted(&grants);
        if !missing.is_empty() {
            return Err(CommunityError::Ungranted { reference: reference.to_text(), missing });
        }
        let label = plugin.label.as_str();
        if !label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-') {
            return Err(CommunityError::BadLabel { label: label.to_owned() });
        }
        if BUILTIN_MATCHERS.iter().any(|b| b.name == label) {
            let taken_by = format!("the built-in `{label}`");
            return Err(CommunityError::LabelTaken { label: label.to_owned(), taken_by, same_source: false });
        }
        if let Some(existing) = self.config.plugins.get(label) {
            let same_source = existing.source().ok().is_some_and(|source| same_reference(source, &reference));
            let taken_by = match existing.source() {
                Ok(PluginSource::Path(path)) => format!("`path = \"{}\"`", path.display()),
                Ok(PluginSource::Oci(text) | PluginSource::Url(text)) => format!("`{text}`"),
                Err(error) => error.to_string(),
            };
            return Err(CommunityError::LabelTaken { label: label.to_owned(), taken_by, same_source });
        }
        let (path, mut document) = self.config_document()?;
        let mut entry = toml_edit::Table::new();
        let source_key = if matches!(reference, PluginReference::Oci(_)) { "oci" } else { "url" };
        entry[source_key] = toml_edit::value(&plugin.fetched.pinned);
        entry["sha256"] = toml_edit::value(&plugin.fetched.sha256);
        let granted: Vec<&str> = request.grants.iter().map(String::as_str).filter(|g| *g != "log").collect();
        if !granted.is_empty() {
            entry["grants"] = toml_edit::value(granted.into_iter().collect::<toml_edit::Array>());
        }
        if let Some(key) = &request.cosign_key {
            entry["cosign-key"] = toml_edit::value(relative_to(key, &self.config.dir).to_string_lossy().as_ref());
        }
        plugins_table(&mut document, &path)?.insert(label, toml_edit::Item::Table(entry));
        std::fs::write(&path, document.to_string()).map_err(|cause| LockError::Write { path: path.clone(), cause })?;
        Ok(plugin)
    }

    /// `assay plugin update [NAME…]`: for each community plugin (or each
    /// one named), fetches what its reference's tag (or URL) names now and,
    /// when that changed, loads it to check it is still a plugin and asks
    /// for nothing `grants` does not allow, then moves its pins in
    /// assay.toml. Nothing is written unless every plugin could be
    /// checked.
    pub fn update_plugins(&self, labels: &[String]) -> Result<Vec<Update>, CommunityError> {
        for label in labels {
            match self.config.plugins.get(label).map(PluginConfig::source) {
                None => {
                    let known: Vec<&str> = self.config.plugins.keys().map(String::as_str).collect();
                    let message = format!("assay.toml has no [plugins.{label}] (it has: {})", known.join(", "));
                    return Err(CommunityError::NotCommunity { message });
                }
                Some(Ok(PluginSource::Path(_))) => {
                    let message = format!(
                        "[plugins.{label}] is a file (`path`): rebuild it and run `assay plugins --lock` to pin it"
                    );
                    return Err(CommunityError::NotCommunity { message });
                }
                Some(_) => {}
            }
        }
        let distribution = self.distribution()?;
        let mut updates = Vec::new();
        for (label, plugin) in &self.config.plugins {
            let text = match plugin.source() {
                Ok(PluginSource::Oci(text) | PluginSource::Url(text)) => text,
                _ => continue,
            };
            if !labels.is_empty() && !labels.contains(label) {
                continue;
            }
            let reference = match PluginReference::parse(text)? {
                PluginReference::Oci(oci) => PluginReference::Oci(following(&oci)),
                url => url,
            };
            let key = self.cosign_key(plugin)?;
            let fetched = distribution.fetch(&reference, key.as_ref())?;
            let from_sha256 = plugin.sha256.clone().unwrap_or_default();
            let to = self.describe(Some(label.clone()), &reference, fetched, key.as_ref())?;
            let granted =
                Grants::from_names(plugin.grants.iter().map(String::as_str)).map_err(CommunityError::BadGrant)?;
            let missing = to.ungranted(&granted);
            if !missing.is_empty() {
                return Err(CommunityError::UpdateUngranted {
                    label: label.clone(),
                    reference: reference.to_text(),
                    missing,
                });
            }
            updates.push(Update { label: label.clone(), from_sha256, to });
        }
        let moved: Vec<&Update> = updates
            .iter()
            .filter(|u| u.changed() || self.pinned_text(&u.label) != Some(&u.to.fetched.pinned))
            .collect();
        if !moved.is_empty() {
            let (path, mut document) = self.config_document()?;
            for update in moved {
                let entry = &mut document["plugins"][update.label.as_str()];
                let source_key = if entry.get("oci").is_some() { "oci" } else { "url" };
                entry[source_key] = toml_edit::value(&update.to.fetched.pinned);
                entry["sha256"] = toml_edit::value(&update.to.fetched.sha256);
            }
            std::fs::write(&path, document.to_string())
                .map_err(|cause| LockError::Write { path: path.clone(), cause })?;
        }
        Ok(updates)
    }

    /// `assay plugin publish`: loads the component in `file` as a run
    /// would (so that only a working matcher plugin is published), and
    /// pushes it to `reference` (an OCI reference with a tag) as a Wasm
    /// component artifact whose manifest carries its name, version, keys
    /// (`dev.assay.plugin.keys`, JSON) and the capabilities it asks for
    /// (`dev.assay.plugin.grants`).
    pub fn publish_plugin(&self, reference: &str, file: &Path) -> Result<CommunityPlugin, CommunityError> {
        let reference = PluginReference::parse(reference)?;
        let bytes = crate::sandbox::read_component_file(file).map_err(|cause| {
            CommunityError::Config(LockError::ReadPlugin { path: file.to_owned(), cause: cause.to_string() })
        })?;
        let sha256 = crate::sandbox::sha256_hex(&bytes);
        let fetched =
            Fetched { pinned: reference.to_text(), manifest_digest: None, sha256, path: file.to_owned(), bytes };
        let mut plugin = self.describe(None, &reference, fetched, None)?;
        let keys: Vec<serde_json::Value> =
            plugin.keys.iter().map(|k| serde_json::json!({ "key": k.key, "summary": k.summary })).collect();
        let annotations = [
            ("org.opencontainers.image.title", plugin.name.clone()),
            ("org.opencontainers.image.version", plugin.version.clone()),
            ("dev.assay.plugin.keys", serde_json::Value::Array(keys).to_string()),
            ("dev.assay.plugin.grants", plugin.requested_grants.join(",")),
        ];
        let annotations = annotations.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let digest = self.distribution()?.publish(&reference, plugin.fetched.bytes.clone(), annotations)?;
        let PluginReference::Oci(oci) = &reference else { unreachable!("publish refuses URLs") };
        plugin.fetched.pinned = with_digest(oci, &digest).whole();
        plugin.fetched.manifest_digest = Some(digest);
        Ok(plugin)
    }

    /// The reference `[plugins.LABEL]` pins now.
    fn pinned_text(&self, label: &str) -> Option<&String> {
        let plugin = self.config.plugins.get(label)?;
        plugin.oci.as_ref().or(plugin.url.as_ref())
    }

    /// Loads `fetched` as a run would (every capability allowed, so that
    /// what it asks for can be told) and asks it what it is.
    fn describe(
        &self,
        label: Option<String>,
        reference: &PluginReference,
        fetched: Fetched,
        key: Option<&CosignKey>,
    ) -> Result<CommunityPlugin, CommunityError> {
        let options = ComponentOptions {
            grants: Grants::ALL,
            sha256: Some(fetched.sha256.clone()),
            ..ComponentOptions::default()
        };
        let source = ComponentSource::File(fetched.path.clone());
        let loaded = MatcherPlugin::load(&self.runtime, source, &fetched.bytes, options)
            .map_err(|error| CommunityError::Load { reference: reference.to_text(), error })?;
        Ok(CommunityPlugin {
            label: label.unwrap_or_else(|| loaded.name().to_owned()),
            name: loaded.name().to_owned(),
            version: loaded.version().to_owned(),
            keys: loaded.keys().to_vec(),
            requested_grants: loaded.requested_grants().to_vec(),
            signed_with: key.map(|k| k.file().to_owned()),
            fetched,
        })
    }
}

/// The reference `update` follows: its tag, without the pinned digest (a
/// reference by digest alone stays where it is).
fn following(reference: &Reference) -> Reference {
    match reference.tag() {
        Some(tag) => {
            Reference::with_tag(reference.registry().to_owned(), reference.repository().to_owned(), tag.to_owned())
        }
        None => reference.clone(),
    }
}

/// Whether `source` names what `reference` names, pins aside.
fn same_reference(source: PluginSource<'_>, reference: &PluginReference) -> bool {
    match (source, reference) {
        (PluginSource::Oci(text), PluginReference::Oci(wanted)) => PluginReference::parse(text)
            .is_ok_and(|r| matches!(r, PluginReference::Oci(have) if following(&have) == following(wanted))),
        (PluginSource::Url(text), PluginReference::Url(wanted)) => text == wanted.as_str(),
        _ => false,
    }
}

/// `path` as written from the configuration's folder `dir`: relative to
/// it when it lies beneath it, absolute otherwise.
fn relative_to(path: &Path, dir: &Path) -> PathBuf {
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let (file, dir) = (absolute(path), absolute(dir));
    file.strip_prefix(&dir).map(Path::to_path_buf).unwrap_or(file)
}
