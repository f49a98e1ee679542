//! [`Capabilities`]: the backends behind the interfaces a plugin may be
//! granted, supplied by the embedder (e.g. the remote ones in
//! `crate::backend`); and a [`Grader`], the backends one check's call uses
//! in place of the plugin's own (a promptfoo test's grading provider).

use crate::sandbox::host::embeddings::Embeddings;
use crate::sandbox::host::judge::Judge;
use std::sync::Arc;

/// The capability backends a plugin instance can reach. A plugin only gets
/// a backend when its grants cover it; an absent backend answers every call
/// with an error saying how to configure one.
#[derive(Clone, Default)]
pub struct Capabilities {
    /// The language-model judge.
    pub judge: Option<Arc<dyn Judge>>,
    /// The embeddings backend.
    pub embeddings: Option<Arc<dyn Embeddings>>,
}

impl std::fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capabilities")
            .field("judge", &self.judge.is_some())
            .field("embeddings", &self.embeddings.is_some())
            .finish()
    }
}

/// The backends a check's plugin call uses in place of the plugin's own
/// (what the plugin is granted stays what it is): a promptfoo test's or
/// assertion's grading provider. Named, so that checks with the same grader
/// share calls; two graders are the same when their names are.
#[derive(Clone, Debug)]
pub struct Grader {
    /// What it is, e.g. `openai:gpt-4.1-mini at https://api.openai.com/v1`.
    pub name: Arc<str>,
    /// Its backends: an absent one answers as an unconfigured backend does.
    pub capabilities: Arc<Capabilities>,
}

impl PartialEq for Grader {
    fn eq(&self, other: &Grader) -> bool {
        self.name == other.name
    }
}
