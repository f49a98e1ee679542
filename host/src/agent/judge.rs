//! A neuro-san agent as the judge (`[judge] neuro_san =
//! "http://localhost:8080/gist"`): the prompt goes out as the user message
//! over the neuro-san transport, and the answer is the text of the reduced
//! response. One attempt per call; the [`RemoteJudge`] around it retries,
//! caches and bounds it as it does an OpenAI-compatible judge.
//! [`remote_judge`] makes the judge of any [`JudgeSettings`].

use crate::agent::{ChatRequest, HttpAgents, HttpSettings, reduce};
use crate::backend::{Attempt, JudgeBackend, JudgeClient, JudgeSettings, RemoteJudge, is_retryable};
use crate::credentials::redact_urls;
use crate::errors::AgentErrorKind;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// The judge `settings` describe: an OpenAI-compatible endpoint, or a
/// neuro-san agent asked through this module's client. Fails on a
/// malformed URL.
pub fn remote_judge(settings: JudgeSettings) -> Result<RemoteJudge, String> {
    match &settings.backend {
        JudgeBackend::NeuroSan { url } => {
            let agent = JudgeAgent::new(url, settings.timeout)?;
            RemoteJudge::with_client(settings, Arc::new(agent))
        }
        JudgeBackend::OpenAi { .. } => RemoteJudge::new(settings),
    }
}

/// A judge agent on a neuro-san server.
#[derive(Clone)]
struct JudgeAgent {
    /// The agent's name: the URL's last path segment.
    agent: String,
    /// `{server}/api/v1/{agent}/streaming_chat`.
    streaming_chat: String,
    client: HttpAgents,
}

impl std::fmt::Debug for JudgeAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeAgent")
            .field("agent", &self.agent)
            .field("streaming_chat", &redact_urls(&self.streaming_chat))
            .field("client", &self.client)
            .finish()
    }
}

impl JudgeAgent {
    /// Reads `http://HOST:PORT/AGENT` (or a full `…/api/v1/AGENT/streaming_chat`
    /// URL) and builds the client, with `timeout` as its idle bound.
    fn new(url: &str, timeout: Duration) -> Result<JudgeAgent, String> {
        let shown = redact_urls(url);
        let parsed = reqwest::Url::parse(url).map_err(|e| {
            format!(
                "invalid neuro-san judge URL `{shown}`: {e}\n\nConsider the agent's URL, e.g. http://localhost:8080/gist"
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "invalid neuro-san judge URL `{shown}`: it must start with http:// or https://, e.g. http://localhost:8080/gist"
            ));
        }
        let segments: Vec<&str> =
            parsed.path_segments().map(|s| s.filter(|s| !s.is_empty()).collect()).unwrap_or_default();
        let agent = match segments.as_slice() {
            [.., "api", "v1", agent, "streaming_chat"] => *agent,
            [.., agent] => *agent,
            [] => {
                return Err(format!(
                    "the neuro-san judge URL `{shown}` names no agent\n\nConsider the agent's name as the last path segment, e.g. http://localhost:8080/gist"
                ));
            }
        };
        let mut server = parsed.clone();
        server.set_path("");
        server.set_query(None);
        let server = server.as_str().trim_end_matches('/').to_owned();
        let settings = HttpSettings { base_url: server.clone(), idle_timeout: timeout, ..HttpSettings::default() };
        let client = HttpAgents::new(settings)?;
        Ok(JudgeAgent {
            agent: agent.to_owned(),
            streaming_chat: format!("{server}/api/v1/{agent}/streaming_chat"),
            client,
        })
    }

    /// Sends `prompt` as the user message: the answer's text.
    async fn ask(&self, prompt: &str) -> Attempt<String> {
        let request = ChatRequest { agent: self.agent.clone(), text: prompt.to_owned(), ..ChatRequest::default() };
        let where_ = redact_urls(&self.streaming_chat);
        match self.client.chat(&self.streaming_chat, &request).await {
            Ok(messages) => Attempt::Done(
                reduce(messages)
                    .text
                    .filter(|t| !t.trim().is_empty())
                    .ok_or_else(|| format!("the judge agent at {where_} answered with no text")),
            ),
            Err(AgentErrorKind::Status { status, body }) if is_retryable(status) => Attempt::Retry {
                error: format!("the judge agent at {where_} answered HTTP {status}: {body}"),
                wait: None,
            },
            Err(kind) => Attempt::Done(Err(format!("the judge agent at {where_}: {kind}"))),
        }
    }
}

impl JudgeClient for JudgeAgent {
    fn complete<'a>(&'a self, prompt: &'a str) -> Pin<Box<dyn Future<Output = Attempt<String>> + Send + 'a>> {
        Box::pin(self.ask(prompt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_the_last_path_segment() {
        let timeout = Duration::from_secs(1);
        let judge = JudgeAgent::new("http://localhost:8080/gist", timeout).unwrap();
        assert_eq!(judge.agent, "gist");
        assert_eq!(judge.streaming_chat, "http://localhost:8080/api/v1/gist/streaming_chat");
        let full = JudgeAgent::new("https://judge.example:9/api/v1/my_gist/streaming_chat", timeout).unwrap();
        assert_eq!(full.agent, "my_gist");
        assert_eq!(full.streaming_chat, "https://judge.example:9/api/v1/my_gist/streaming_chat");
        let error = JudgeAgent::new("http://localhost:8080/", timeout).unwrap_err();
        assert!(error.contains("names no agent"), "{error}");
        let error = JudgeAgent::new("localhost:8080/gist", timeout).unwrap_err();
        assert!(error.starts_with("invalid neuro-san judge URL"), "{error}");
    }
}
