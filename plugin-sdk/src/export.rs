//! The thin layer between the generated bindings and the SDK's own types:
//! the `export_matcher!`/`export_agent!` macros and the conversions they
//! call. Everything with logic lives in `matcher.rs`/`agent.rs`.

/// Makes a [`Matcher`](crate::Matcher) the component's `matcher` export.
///
/// Expands to nothing unless the target is `wasm32`, so the plugin crate
/// still builds and tests natively.
#[macro_export]
macro_rules! export_matcher {
    ($matcher:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::bindings::matcher::exports::assay::plugin::matcher as __wit;
            struct AssayMatcherExport;
            impl __wit::Guest for AssayMatcherExport {
                fn describe() -> __wit::PluginInfo {
                    $crate::export::describe::<$matcher>()
                }
                fn evaluate(
                    actuals: ::std::vec::Vec<__wit::Actual>,
                    checks: ::std::vec::Vec<__wit::Check>,
                ) -> ::std::vec::Vec<::std::result::Result<__wit::Verdict, ::std::string::String>> {
                    $crate::export::evaluate::<$matcher>(actuals, checks)
                }
            }
            $crate::bindings::matcher::__export_matcher_world!(AssayMatcherExport with_types_in $crate::bindings::matcher);
        };
    };
}

/// Makes an [`Agent`](crate::agent::Agent) the component's `chat` export.
///
/// Expands to nothing unless the target is `wasm32`.
#[macro_export]
macro_rules! export_agent {
    ($agent:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::bindings::agent::exports::assay::agent::chat as __wit;
            struct AssayAgentExport;
            impl __wit::Guest for AssayAgentExport {
                fn describe() -> __wit::AgentInfo {
                    $crate::export::describe_agent::<$agent>()
                }
                fn chat(
                    request: __wit::ChatRequest,
                ) -> ::std::result::Result<::std::vec::Vec<__wit::ChatMessage>, ::std::string::String> {
                    $crate::export::chat::<$agent>(request)
                }
            }
    $crate::bindings::agent::__export_agent_world!(AssayAgentExport with_types_in $crate::bindings::agent);
        };
    };
}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use crate::agent::{Agent, ChatFilter, ChatRequest};
    use crate::bindings::agent::exports::assay::agent::chat as agent_wit;
    use crate::bindings::matcher::assay::plugin::types::{MatcherInfo, Node};
    use crate::bindings::matcher::exports::assay::plugin::matcher as wit;
    use crate::{Actual, Json, Matcher};

    /// `describe`, converted to the generated type.
    pub fn describe<M: Matcher>() -> wit::PluginInfo {
        install_panic_hook();
        let info = M::describe();
        wit::PluginInfo {
            name: info.name,
            version: info.version,
            matchers: info.matchers.into_iter().map(|(key, summary)| MatcherInfo { key, summary }).collect(),
        }
    }

    /// Routes a panic's message to the host's log before the trap, so that
    /// the host can say where the plugin panicked.
    fn install_panic_hook() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                let payload = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let location = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let message =
                    format!("panicked at {}: {payload}", location.unwrap_or_else(|| "an unknown place".into()));
                crate::log::emit(crate::log::Level::Error, &message);
            }));
        });
    }

    /// `evaluate`, converted from and to the generated types: each
    /// expected value is built from its nodes, each verdict's extras laid
    /// out as nodes (no JSON text either way).
    pub fn evaluate<M: Matcher>(
        actuals: Vec<wit::Actual>,
        checks: Vec<wit::Check>,
    ) -> Vec<Result<wit::Verdict, String>> {
        install_panic_hook();
        let actuals: Vec<Actual> = actuals
            .into_iter()
            .map(|actual| match actual {
                wit::Actual::Text(text) => Actual::text(text),
                wit::Actual::Json(json) => Actual::json(json),
            })
            .collect();
        checks
            .into_iter()
            .map(|check| {
                let expected = value_of(check.expected);
                let verdict = crate::evaluate_one::<M>(&actuals, &check.key, check.actual, expected)?;
                Ok(wit::Verdict {
                    pass: verdict.pass,
                    score: verdict.score,
                    message: verdict.message,
                    extras: verdict.extras.map(nodes_of),
                })
            })
            .collect()
    }

    /// A list or an object being built, with what it still needs.
    enum Open {
        List(Vec<Json>, u32),
        Object(std::vec::IntoIter<String>, serde_json::Map<String, Json>),
    }

    /// The value `nodes` lay out (`assay:plugin@0.3.0`'s `value`: pre-order,
    /// each list or object followed by its items), or what is wrong with
    /// them. Built with a stack of its own, so no depth overflows the
    /// guest's stack.
    fn value_of(nodes: Vec<Node>) -> Result<Json, String> {
        let malformed = |what: &str| format!("the expected value is malformed: {what}");
        let count = nodes.len();
        let mut open: Vec<Open> = Vec::new();
        for (index, node) in nodes.into_iter().enumerate() {
            let mut done = match node {
                Node::Null => Json::Null,
                Node::Boolean(b) => Json::Bool(b),
                Node::Integer(i) => Json::from(i),
                Node::Unsigned(u) => Json::from(u),
                Node::Float(f) => serde_json::Number::from_f64(f)
                    .map(Json::Number)
                    .ok_or_else(|| malformed("a number JSON cannot hold"))?,
                Node::Text(s) => Json::String(s),
                Node::List(0) => Json::Array(Vec::new()),
                Node::Object(keys) if keys.is_empty() => Json::Object(serde_json::Map::new()),
                Node::List(n) => {
                    open.push(Open::List(Vec::with_capacity((n as usize).min(count - index)), n));
                    continue;
                }
                Node::Object(keys) => {
                    open.push(Open::Object(keys.into_iter(), serde_json::Map::new()));
                    continue;
                }
            };
            loop {
                match open.last_mut() {
                    None if index + 1 == count => return Ok(done),
                    None => return Err(malformed("nodes are left over")),
                    Some(Open::List(items, left)) => {
                        items.push(done);
                        *left -= 1;
                        if *left > 0 {
                            break;
                        }
                    }
                    Some(Open::Object(keys, map)) => {
                        map.insert(keys.next().expect("an open object has a key left"), done);
                        if keys.len() > 0 {
                            break;
                        }
                    }
                }
                done = match open.pop().expect("matched above") {
                    Open::List(items, _) => Json::Array(items),
                    Open::Object(_, map) => Json::Object(map),
                };
            }
        }
        Err(malformed("nodes are missing"))
    }

    /// `value` laid out as nodes, its strings moved, not copied.
    fn nodes_of(value: Json) -> Vec<Node> {
        let mut nodes = Vec::new();
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            nodes.push(match value {
                Json::Null => Node::Null,
                Json::Bool(b) => Node::Boolean(b),
                Json::Number(n) => match (n.as_i64(), n.as_u64()) {
                    (Some(i), _) => Node::Integer(i),
                    (None, Some(u)) => Node::Unsigned(u),
                    _ => Node::Float(n.as_f64().unwrap_or_default()),
                },
                Json::String(s) => Node::Text(s),
                Json::Array(items) => {
                    let count = items.len() as u32;
                    stack.extend(items.into_iter().rev());
                    Node::List(count)
                }
                Json::Object(map) => {
                    let mut keys = Vec::with_capacity(map.len());
                    let start = stack.len();
                    for (key, value) in map {
                        keys.push(key);
                        stack.push(value);
                    }
                    stack[start..].reverse();
                    Node::Object(keys)
                }
            });
        }
        nodes
    }

    /// The agent's `describe`, converted to the generated type.
    pub fn describe_agent<A: Agent>() -> agent_wit::AgentInfo {
        let info = A::describe();
        agent_wit::AgentInfo { name: info.name, description: info.description }
    }

    /// The agent's `chat`, converted from and to the generated types.
    pub fn chat<A: Agent>(request: agent_wit::ChatRequest) -> Result<Vec<agent_wit::ChatMessage>, String> {
        let parse = |json: Option<String>, what: &str| -> Result<Option<crate::Json>, String> {
            json.map(|j| serde_json::from_str(&j).map_err(|e| format!("the request's {what} is not valid JSON: {e}")))
                .transpose()
        };
        let request = ChatRequest {
            agent: request.agent,
            text: request.text,
            sly_data: parse(request.sly_data, "sly_data")?,
            chat_context: parse(request.chat_context, "chat_context")?,
            chat_filter: match request.chat_filter {
                agent_wit::ChatFilter::Minimal => ChatFilter::Minimal,
                agent_wit::ChatFilter::Maximal => ChatFilter::Maximal,
            },
            metadata: request.metadata,
        };
        let messages = A::chat(&request)?;
        Ok(messages
            .into_iter()
            .map(|m| agent_wit::ChatMessage {
                message_type: m.message_type,
                text: m.text,
                structure: m.structure.map(|s| s.to_string()),
                sly_data: m.sly_data.map(|s| s.to_string()),
                chat_context: m.chat_context.map(|c| c.to_string()),
                origin: m
                    .origin
                    .into_iter()
                    .map(|(tool, instantiation_index)| agent_wit::Origin { tool, instantiation_index })
                    .collect(),
            })
            .collect())
    }
}

#[cfg(target_arch = "wasm32")]
pub use wasm::*;
