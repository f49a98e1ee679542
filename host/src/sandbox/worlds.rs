//! The two worlds the sandbox hosts, as [`World`]s of the component host:
//! matcher plugins (`assay:plugin`), linked with the `types`, `log`,
//! `judge` and `embeddings` interfaces (each to its view of the store, so
//! that no interface knows the state that holds it), and agents
//! (`assay:agent`), linked with WASI alone.

use crate::errors::ComponentRole;
use crate::sandbox::bindings::agent::{Agent, AgentPre};
use crate::sandbox::bindings::matcher::assay::plugin::{embeddings, judge, log, types};
use crate::sandbox::bindings::matcher::{CapableMatcherPlugin, CapableMatcherPluginPre};
use crate::sandbox::component_host::World;
use crate::sandbox::host::budget::CapabilityHost;
use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::judge::Judge;
use crate::sandbox::host::log::LogState;
use crate::sandbox::host::types::TypesHost;
use crate::sandbox::state::SandboxState;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::{Engine, Store};

impl World for CapableMatcherPlugin {
    const ROLE: ComponentRole = ComponentRole::Plugin;
    const EXPORTS: &'static str = "assay:plugin/matcher@0.1.0";
    type Pre = CapableMatcherPluginPre<SandboxState>;

    fn link(linker: &mut Linker<SandboxState>) -> wasmtime::Result<()> {
        types::add_to_linker::<_, TypesHost>(linker, |_| TypesHost)?;
        log::add_to_linker::<_, HasSelf<LogState>>(linker, SandboxState::log)?;
        judge::add_to_linker::<_, CapabilityHost<dyn Judge>>(linker, SandboxState::judge)?;
        embeddings::add_to_linker::<_, CapabilityHost<dyn Embeddings>>(linker, SandboxState::embeddings)
    }

    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre> {
        CapableMatcherPluginPre::new(pre)
    }

    fn engine(pre: &Self::Pre) -> &Engine {
        pre.engine()
    }

    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self> {
        pre.instantiate_async(store).await
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
