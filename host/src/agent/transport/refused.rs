//! The transport of a connection assay does not speak: every request is
//! refused with what to use instead.

use crate::agent::message::ChatRequest;
use crate::agent::transport::{Reply, Transport};
use crate::errors::AgentErrorKind;

/// Refuses every request, naming the connection and the way out.
pub struct Refused {
    /// Where requests would have gone, for messages.
    pub endpoint: &'static str,
    /// Why, and what to use instead.
    pub message: &'static str,
}

/// neuro-san's gRPC service, which assay does not speak.
pub const GRPC: Refused = Refused {
    endpoint: "grpc",
    message: "assay does not speak neuro-san's gRPC service\n\nConsider `connections: [http]`: the same server answers over HTTP",
};

/// `replay` with no recording: the runner answers a replayed job from its
/// recording before any transport is asked, so a request here is a job
/// that has none.
pub const REPLAY: Refused =
    Refused { endpoint: "replay", message: "`replay` answers only from a recording, and the job has none" };

impl Transport for Refused {
    fn endpoint(&self, _agent: &str) -> String {
        self.endpoint.to_owned()
    }

    fn chat<'a>(&'a self, _request: &'a ChatRequest) -> Reply<'a> {
        Box::pin(async move { Err(AgentErrorKind::Unsupported(self.message.to_owned())) })
    }
}
