//! The worlds the sandbox hosts, as [`World`]s of the component host:
//! matcher plugins ([`Matcher`], of `assay:plugin` 0.3.0, 0.2.0 or 0.1.0),
//! linked with the `types`, `log`, `judge` and `embeddings` interfaces of
//! every version (each to its view of the store, so that no interface knows the
//! state that holds it), and agents (`assay:agent`), linked with WASI alone.
//!
//! A matcher is called in the version it exports; each import is served in
//! the version it names, so the kind of error a `judge` or `embeddings`
//! call fails with (typed since 0.2.0, a sentence in 0.1.0) follows the
//! version the component imports. The host hands every version the same
//! checks ([`CheckArg`]) and reads every version's verdicts as one
//! [`Answer`]: 0.3.0's typed values are made and read by `value.rs`.

use crate::errors::ComponentRole;
use crate::sandbox::bindings::agent::{Agent, AgentPre};
use crate::sandbox::bindings::matcher_0_1::assay::plugin as v0_1;
use crate::sandbox::bindings::matcher_0_2::assay::plugin as v0_2;
use crate::sandbox::bindings::matcher_0_3::assay::plugin as v0_3;
use crate::sandbox::bindings::matcher_types::{Actual, Check, MatcherInfo, PluginInfo, Verdict};
use crate::sandbox::bindings::{matcher_0_1, matcher_0_2, matcher_0_3};
use crate::sandbox::component_host::World;
use crate::sandbox::host::budget::CapabilityHost;
use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::judge::Judge;
use crate::sandbox::host::log::LogState;
use crate::sandbox::host::types::{self, TypesHost};
use crate::sandbox::state::SandboxState;
use crate::sandbox::value;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::{Engine, Store};

/// The matcher interfaces of 0.3.0 and 0.2.0, which a component exporting
/// one is called by.
const MATCHER_0_3: &str = "assay:plugin/matcher@0.3.0";
const MATCHER_0_2: &str = "assay:plugin/matcher@0.2.0";

/// A matcher plugin's bindings, in the version of `assay:plugin` it exports.
pub(crate) enum Matcher {
    /// Built against 0.1.0.
    V0_1(matcher_0_1::CapableMatcherPlugin),
    /// Built against 0.2.0.
    V0_2(matcher_0_2::CapableMatcherPlugin),
    /// Built against 0.3.0.
    V0_3(matcher_0_3::CapableMatcherPlugin),
}

/// A pre-instantiated matcher plugin, in the version it exports.
pub(crate) enum MatcherPre {
    /// Built against 0.1.0.
    V0_1(matcher_0_1::CapableMatcherPluginPre<SandboxState>),
    /// Built against 0.2.0.
    V0_2(matcher_0_2::CapableMatcherPluginPre<SandboxState>),
    /// Built against 0.3.0.
    V0_3(matcher_0_3::CapableMatcherPluginPre<SandboxState>),
}

/// One check, as the host hands it to a matcher of any version.
pub(crate) struct CheckArg<'a> {
    /// The key, lowercase, without `not_`.
    pub key: &'a str,
    /// Index into the call's actual values.
    pub actual: u32,
    /// The expected value, for 0.3.0.
    pub expected: &'a serde_json::Value,
    /// The same as JSON text, for 0.2.0 and 0.1.0.
    pub expected_json: &'a str,
}

/// A matcher's verdict on one check, whatever version it answered in.
pub(crate) struct Answer {
    /// Whether the check holds.
    pub pass: bool,
    /// Its score, if any (not yet checked).
    pub score: Option<f64>,
    /// Its message (not yet capped).
    pub message: String,
    /// Its extras, as the guest gave them (not yet capped or read).
    pub extras: Option<Extras>,
}

/// A verdict's extras as the guest gave them.
pub(crate) enum Extras {
    /// JSON text (0.2.0 and 0.1.0).
    Json(String),
    /// A typed value (0.3.0), read by `value::value_of`.
    Nodes(Vec<v0_3::types::NodeResult>),
}

impl From<Verdict> for Answer {
    fn from(v: Verdict) -> Answer {
        Answer { pass: v.pass, score: v.score, message: v.message, extras: v.extras.map(Extras::Json) }
    }
}

impl From<v0_3::types::Verdict> for Answer {
    fn from(v: v0_3::types::Verdict) -> Answer {
        Answer { pass: v.pass, score: v.score, message: v.message, extras: v.extras.map(Extras::Nodes) }
    }
}

impl Matcher {
    /// Calls `describe`.
    pub(crate) async fn describe(&self, store: &mut Store<SandboxState>) -> wasmtime::Result<PluginInfo> {
        match self {
            Matcher::V0_1(plugin) => plugin.assay_plugin_matcher().call_describe(store).await,
            Matcher::V0_2(plugin) => plugin.assay_plugin_matcher().call_describe(store).await,
            Matcher::V0_3(plugin) => {
                let info = plugin.assay_plugin_matcher().call_describe(store).await?;
                let matchers = info.matchers.into_iter().map(|m| MatcherInfo { key: m.key, summary: m.summary });
                Ok(PluginInfo { name: info.name, version: info.version, matchers: matchers.collect() })
            }
        }
    }

    /// Calls `evaluate`, in the version the plugin exports.
    pub(crate) async fn evaluate(
        &self,
        store: &mut Store<SandboxState>,
        actuals: &[Actual<'_>],
        checks: &[CheckArg<'_>],
    ) -> wasmtime::Result<Vec<Result<Answer, String>>> {
        let answers = |verdicts: Vec<Result<Verdict, String>>| {
            verdicts.into_iter().map(|verdict| verdict.map(Answer::from)).collect()
        };
        let as_text = || -> Vec<Check<'_>> {
            checks.iter().map(|c| Check { key: c.key, actual: c.actual, expected: c.expected_json }).collect()
        };
        match self {
            Matcher::V0_1(plugin) => {
                Ok(answers(plugin.assay_plugin_matcher().call_evaluate(store, actuals, &as_text()).await?))
            }
            Matcher::V0_2(plugin) => {
                Ok(answers(plugin.assay_plugin_matcher().call_evaluate(store, actuals, &as_text()).await?))
            }
            Matcher::V0_3(plugin) => {
                let actuals: Vec<v0_3::types::Actual<'_>> = actuals
                    .iter()
                    .map(|actual| match *actual {
                        Actual::Text(text) => v0_3::types::Actual::Text(text),
                        Actual::Json(json) => v0_3::types::Actual::Json(json),
                    })
                    .collect();
                let keys: Vec<Vec<Vec<&str>>> = checks.iter().map(|c| value::keys_of(c.expected)).collect();
                let nodes: Vec<Vec<v0_3::types::NodeParam<'_>>> =
                    checks.iter().zip(&keys).map(|(c, keys)| value::nodes_of(c.expected, keys)).collect();
                let checks: Vec<v0_3::types::Check<'_>> = checks
                    .iter()
                    .zip(&nodes)
                    .map(|(c, nodes)| v0_3::types::Check { key: c.key, actual: c.actual, expected: nodes })
                    .collect();
                let verdicts = plugin.assay_plugin_matcher().call_evaluate(store, &actuals, &checks).await?;
                Ok(verdicts.into_iter().map(|verdict| verdict.map(Answer::from)).collect())
            }
        }
    }
}

impl World for Matcher {
    const ROLE: ComponentRole = ComponentRole::Plugin;
    const EXPORTS: &'static str =
        "assay:plugin/matcher@0.3.0, assay:plugin/matcher@0.2.0 or assay:plugin/matcher@0.1.0";
    type Pre = MatcherPre;

    /// Every version's interfaces: their names differ by version, so each
    /// import finds its own.
    fn link(linker: &mut Linker<SandboxState>) -> wasmtime::Result<()> {
        v0_3::types::add_to_linker::<_, TypesHost>(linker, |_| TypesHost)?;
        v0_3::log::add_to_linker::<_, HasSelf<LogState>>(linker, SandboxState::log)?;
        v0_3::judge::add_to_linker::<_, CapabilityHost<dyn Judge>>(linker, SandboxState::judge)?;
        v0_3::embeddings::add_to_linker::<_, CapabilityHost<dyn Embeddings>>(linker, SandboxState::embeddings)?;
        v0_2::types::add_to_linker::<_, TypesHost>(linker, |_| TypesHost)?;
        v0_2::log::add_to_linker::<_, HasSelf<LogState>>(linker, SandboxState::log)?;
        v0_2::judge::add_to_linker::<_, CapabilityHost<dyn Judge>>(linker, SandboxState::judge)?;
        v0_2::embeddings::add_to_linker::<_, CapabilityHost<dyn Embeddings>>(linker, SandboxState::embeddings)?;
        types::link_0_1(linker)?;
        v0_1::log::add_to_linker::<_, HasSelf<LogState>>(linker, SandboxState::log)?;
        v0_1::judge::add_to_linker::<_, CapabilityHost<dyn Judge>>(linker, SandboxState::judge)?;
        v0_1::embeddings::add_to_linker::<_, CapabilityHost<dyn Embeddings>>(linker, SandboxState::embeddings)
    }

    /// A component exporting 0.3.0's or 0.2.0's matcher is called by it;
    /// any other is checked for 0.1.0's.
    fn pre(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self::Pre> {
        if pre.component().get_export_index(None, MATCHER_0_3).is_some() {
            matcher_0_3::CapableMatcherPluginPre::new(pre).map(MatcherPre::V0_3)
        } else if pre.component().get_export_index(None, MATCHER_0_2).is_some() {
            matcher_0_2::CapableMatcherPluginPre::new(pre).map(MatcherPre::V0_2)
        } else {
            matcher_0_1::CapableMatcherPluginPre::new(pre).map(MatcherPre::V0_1)
        }
    }

    fn engine(pre: &Self::Pre) -> &Engine {
        match pre {
            MatcherPre::V0_1(pre) => pre.engine(),
            MatcherPre::V0_2(pre) => pre.engine(),
            MatcherPre::V0_3(pre) => pre.engine(),
        }
    }

    async fn instantiate(pre: &Self::Pre, store: &mut Store<SandboxState>) -> wasmtime::Result<Self> {
        match pre {
            MatcherPre::V0_1(pre) => pre.instantiate_async(store).await.map(Matcher::V0_1),
            MatcherPre::V0_2(pre) => pre.instantiate_async(store).await.map(Matcher::V0_2),
            MatcherPre::V0_3(pre) => pre.instantiate_async(store).await.map(Matcher::V0_3),
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
