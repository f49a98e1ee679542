//! The capability policy: which imports a component may have, given its
//! grants. Checked before anything of the component runs.

use crate::errors::{ComponentRole, Denied};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The capabilities a plugin is granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grants {
    /// Log lines to the host (on by default).
    pub log: bool,
    /// The language-model judge.
    pub judge: bool,
    /// The embeddings backend.
    pub embeddings: bool,
}

impl Default for Grants {
    /// Only `log`.
    fn default() -> Self {
        Grants { log: true, judge: false, embeddings: false }
    }
}

impl Grants {
    /// No capability at all: what agents get.
    pub const NONE: Grants = Grants { log: false, judge: false, embeddings: false };

    /// Every capability: what a component is loaded with to ask it what it
    /// is before anyone grants it anything (`assay plugin add`).
    pub const ALL: Grants = Grants { log: true, judge: true, embeddings: true };

    /// Parses grant names as written in `assay.toml` (`log`, `judge`,
    /// `embeddings`), on top of the default (`log`).
    pub(crate) fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Grants, String> {
        let mut grants = Grants::default();
        for name in names {
            match name {
                "log" => grants.log = true,
                "judge" => grants.judge = true,
                "embeddings" => grants.embeddings = true,
                other => return Err(format!("unknown grant `{other}`: the grants are log, judge and embeddings")),
            }
        }
        Ok(grants)
    }

    /// Whether `grant` (`log`, `judge`, `embeddings`) is granted.
    pub(crate) fn allows(&self, grant: &str) -> bool {
        match grant {
            "log" => self.log,
            "judge" => self.judge,
            "embeddings" => self.embeddings,
            _ => false,
        }
    }
}

/// What an import needs: nothing, a grant, or it is refused outright.
enum Need {
    Nothing,
    Grant(&'static str),
    Refused,
}

fn need(import: &str) -> Need {
    let (name, _version) = import.split_once('@').unwrap_or((import, ""));
    match name {
        "assay:plugin/types" => Need::Nothing,
        "assay:plugin/log" => Need::Grant("log"),
        "assay:plugin/judge" => Need::Grant("judge"),
        "assay:plugin/embeddings" => Need::Grant("embeddings"),
        // Outgoing HTTP is not linked at all.
        _ if name.starts_with("wasi:http/") => Need::Refused,
        // The rest of WASI is linked with nothing granted (see
        // `host/wasi.rs`): no preopened directory, so no file can be opened;
        // TCP, UDP and name lookups refused and every address denied; empty
        // environment and arguments, no stdin, output into the capped log.
        // Components from most toolchains (componentize-py, jco, TinyGo)
        // import all of it whether they use it or not.
        _ if name.starts_with("wasi:") => Need::Nothing,
        _ => Need::Refused,
    }
}

/// The grants `component`'s imports ask for (`log`, `judge`,
/// `embeddings`), each once, in that order.
pub(crate) fn requested_grants(engine: &Engine, component: &Component) -> Vec<&'static str> {
    let mut asked: Vec<&'static str> = component
        .component_type()
        .imports(engine)
        .filter_map(|(import, _)| match need(import) {
            Need::Grant(grant) => Some(grant),
            Need::Nothing | Need::Refused => None,
        })
        .collect();
    let order = |grant: &&str| ["log", "judge", "embeddings"].iter().position(|g| g == grant);
    asked.sort_by_key(order);
    asked.dedup();
    asked
}

/// Checks every import of `component`, loaded as `role`, against
/// `grants`. Only plugins can be granted anything: an agent's refusal names
/// no grant.
pub(crate) fn check_imports(
    engine: &Engine,
    component: &Component,
    role: ComponentRole,
    grants: &Grants,
) -> Result<(), Denied> {
    let denied = |import: &str, grant| Denied { role, import: import.to_owned(), grant };
    for (import, _) in component.component_type().imports(engine) {
        match need(import) {
            Need::Nothing => {}
            Need::Grant(grant) if grants.allows(grant) => {}
            Need::Grant(grant) if role == ComponentRole::Plugin => return Err(denied(import, Some(grant))),
            Need::Grant(_) | Need::Refused => return Err(denied(import, None)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plugin_is_told_which_grant_would_allow_an_import() {
        // The stock matchers import `log` (and `types`, which needs nothing).
        let engine = Engine::default();
        let stock = Component::new(&engine, include_bytes!("../../../plugins/stock/stock.wasm")).unwrap();
        assert_eq!(check_imports(&engine, &stock, ComponentRole::Plugin, &Grants::default()), Ok(()));
        let plugin = check_imports(&engine, &stock, ComponentRole::Plugin, &Grants::NONE).unwrap_err();
        assert_eq!((plugin.import.as_str(), plugin.grant), ("assay:plugin/log@0.3.0", Some("log")));
        let agent = check_imports(&engine, &stock, ComponentRole::Agent, &Grants::NONE).unwrap_err();
        assert_eq!(agent.grant, None);
        assert_eq!(agent.to_string(), "it imports `assay:plugin/log@0.3.0`, which assay does not provide to agents");
    }

    #[test]
    fn one_grant_covers_a_capability_in_every_version_of_the_contract() {
        let engine = Engine::default();
        // gist imports `judge@0.3.0`; the judge importer, `judge@0.1.0`.
        let gist = Component::new(&engine, include_bytes!("../../../plugins/gist/gist.wasm")).unwrap();
        let old = include_bytes!("../../../fixtures/plugins/judge-importer/judge-importer.wasm");
        let old = Component::new(&engine, old).unwrap();
        let judge = Grants { judge: true, ..Grants::default() };
        for (component, import) in [(&gist, "assay:plugin/judge@0.3.0"), (&old, "assay:plugin/judge@0.1.0")] {
            assert_eq!(check_imports(&engine, component, ComponentRole::Plugin, &judge), Ok(()));
            let denied = check_imports(&engine, component, ComponentRole::Plugin, &Grants::default()).unwrap_err();
            assert_eq!((denied.import.as_str(), denied.grant), (import, Some("judge")));
        }
    }
}
