//! What a promptfoo grading provider grades with ([`GraderSpec`]): the
//! data `graders.rs` reads from a config and the project turns into a
//! grader's backends (through `ProviderContext::graders`).

/// An OpenAI-compatible endpoint and model a grader asks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GraderEndpoint {
    /// The API base, e.g. `https://api.openai.com/v1`.
    pub url: String,
    /// The model.
    pub model: String,
    /// The bearer token, if any (reports hide it).
    pub api_key: Option<String>,
}

/// What a grading provider grades with: a text model (the judge), an
/// embedding model, or both.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GraderSpec {
    /// The chat model model-graded assertions ask.
    pub text: Option<GraderEndpoint>,
    /// The embedding model `similar` asks.
    pub embedding: Option<GraderEndpoint>,
}

impl GraderSpec {
    /// How reports and errors name it (no key).
    pub fn name(&self) -> String {
        let part = |kind: &str, endpoint: &Option<GraderEndpoint>| {
            endpoint.as_ref().map(|e| format!("{kind} {} at {}", e.model, e.url))
        };
        [part("text", &self.text), part("embedding", &self.embedding)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ")
    }
}
