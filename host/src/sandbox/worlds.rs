//! The worlds the sandbox hosts, as [`World`]s of the component host:
//! matcher plugins ([`Matcher`], of `assay:plugin` 0.2.0 or 0.1.0), linked
//! with the `types`, `log`, `judge` and `embeddings` interfaces of both
//! versions (each to its view of the store, so that no interface knows the
//! state that holds it), and agents (`assay:agent`), linked with WASI alone.
//!
//! A matcher is called in the version it exports; each import is served in
//! the version it names, so the kind of error a `judge` or `embeddings`
//! call fails with (typed in 0.2.0, a sentence in 0.1.0) follows the
//! version the component imports.

use crate::errors::ComponentRole;
use crate::sandbox::bindings::agent::{Agent, AgentPre};
use crate::sandbox::bindings::matcher_0_1::assay::plugin as v0_1;
use crate::sandbox::bindings::matcher_0_2::assay::plugin as v0_2;
use crate::sandbox::bindings::matcher_types::{Actual, Check, PluginInfo, Verdict};
use crate::sandbox::bindings::{matcher_0_1, matcher_0_2};
use crate::sandbox::component_host::World;
use crate::sandbox::host::budget::CapabilityHost;
use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::judge::Judge;
use crate::sandbox::host::log::LogState;
use crate::sandbox::host::types::{self, TypesHost};
use crate::sandbox::state::SandboxState;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::{Engine, Store};

/// The matcher interface of 0.2.0, which a component exporting it is
/// called by.
const MATCHER_0_2: &str = "assay:plugin/matcher@0.2.0";

/// A matcher plugin's bindings, in the version of `assay:plugin` it exports.
pub(crate) enum Matcher {
    /// Built against 0.1.0.
    V0_1(matcher_0_1::CapableMatcherPlugin),
    /// Built against 0.2.0.
    V0_2(matcher_0_2::CapableMatcherPlugin),
}

/// A pre-instantiated matcher plugin, in the version it exports.
pub(crate) enum MatcherPre {
    /// Built against 0.1.0.
    V0_1(matcher_0_1::CapableMatcherPluginPre<SandboxState>),
    /// Built against 0.2.0.
    V0_2(matcher_0_2::CapableMatcherPluginPre<SandboxState>),
}

impl Matcher {
    /// Calls `describe`.
    pub(crate) async fn describe(&self, store: &mut Store<SandboxState>) -> wasmtime::Result<PluginInfo> {
        match self {
            Matcher::V0_1(plugin) => plugin.assay_plugin_matcher().call_describe(store).await,
            Matcher::V0_2(plugin) => plugin.assay_plugin_matcher().call_describe(store).await,
        }
    }

    /// Calls `evaluate`.
    pub(crate) async fn evaluate(
        &self,
        store: &mut Store<SandboxState>,
        actuals: &[Actual<'_>],
        checks: &[Check<'_>],
    ) -> wasmtime::Result<Vec<Result<Verdict, String>>> {
        match self {
            Matcher::V0_1(plugin) => plugin.assay_plugin_matcher().call_evaluate(store, actuals, checks).await,
            Matcher::V0_2(plugin) => plugin.assay_plugin_matcher().call_evaluate(store, actuals, checks).await,
        }
    }
}

impl World for Matcher {
    const ROLE: ComponentRole = ComponentRole::Plugin;
    const EXPORTS: &'static str = "assay:plugin/matcher@0.2.0 or assay:plugin/matcher@0.1.0";
    type Pre = MatcherPre;

    /// Both versions' interfaces: their names differ by version, so each
    /// import finds its own.
    fn link(linker: &mut Linker<SandboxState>) -> wasmtime::Result<()> {
        v0_2::types::add_to_linker::<_, TypesHost>(linker, |_| TypesHost)?;
        v0_2::log::add_to_linker::<_, HasSelf<LogState>>(linker, SandboxState::log)?;
        v0_2::judge::add_to_linker::<_, CapabilityHost<dyn Judge>>(linker, SandboxState::judge)?;
        v0_2::embeddings::add_to_linker::<_, CapabilityHost<dyn Embeddings>>(linker, SandboxState::embeddings)?;
        types::link_0_1(linker)?;
        v0_1::log::add_to_linker::<_, HasSelf<LogState>>(linker, SandboxState::log)?;
        v0_1::judge::add_to_linker::<_, CapabilityHost<dyn Judge>>(linker, SandboxState::judge)?;
        v0_1::embeddings::add_to_linker::<_, CapabilityHost<dyn Embeddings>>(linker, SandboxState::embeddings)
    }

    /// A component exporting 0.2.0's matcher is called by it; any other is
    /// checked for 0.1.0's.
    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre> {
        if pre.component().get_export_index(None, MATCHER_0_2).is_some() {
            matcher_0_2::CapableMatcherPluginPre::new(pre).map(MatcherPre::V0_2)
        } else {
            matcher_0_1::CapableMatcherPluginPre::new(pre).map(MatcherPre::V0_1)
        }
    }

    fn engine(pre: &Self::Pre) -> &Engine {
        match pre {
            MatcherPre::V0_1(pre) => pre.engine(),
            MatcherPre::V0_2(pre) => pre.engine(),
        }
    }

    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self> {
        match pre {
            MatcherPre::V0_1(pre) => pre.instantiate_async(store).await.map(Matcher::V0_1),
            MatcherPre::V0_2(pre) => pre.instantiate_async(store).await.map(Matcher::V0_2),
        }
    }
}

impl World for Agent {
    const ROLE: ComponentRole = ComponentRole::Agent;
    const EXPORTS: &'static str = "assay:agent/chat@0.1.0";
    type Pre = AgentPre<SandboxState>;

    /// Agents import nothing of assay's: WASI alone.
    fn link(_linker: &mut Linker<SandboxState>) -> wasmtime::Result<()> {
        Ok(())
    }

    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre> {
        AgentPre::new(pre)
    }

    fn engine(pre: &Self::Pre) -> &Engine {
        pre.engine()
    }

    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self> {
        pre.instantiate_async(store).await
    }
}
