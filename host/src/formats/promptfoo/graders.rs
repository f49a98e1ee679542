//! promptfoo's grading providers: a test's `options.provider` (and
//! `defaultTest`'s) or an assertion's `provider`, which grades its
//! model-graded assertions in place of the default grader. assay grades
//! with OpenAI-compatible ones: `openai:MODEL` and `openai:chat:MODEL` for
//! text (`llm-rubric`, `factuality`, …), `openai:embedding:MODEL` for
//! `similar`, each with `config.apiBaseUrl`/`apiHost`/`apiKey`/`apiKeyEnvar`
//! as the provider's own (and the same trust rules: `providers.rs`), or a
//! `{text, embedding}` map of the two. Any other is a refusal naming it.
//! As in promptfoo, a grader gives only what it is: a chat model graded for
//! embeddings (or the reverse) is an error of that assertion, not the
//! default's answer.
//!
//! The project turns each [`GraderSpec`] (`grader_spec.rs`) into a
//! [`Grader`] (its backends), once per distinct spec; the check carries it
//! to its plugin call.

use crate::formats::promptfoo::config::Config;
use crate::formats::promptfoo::grader_spec::{GraderEndpoint, GraderSpec};
use crate::formats::promptfoo::providers::{MapError, ProviderContext, openai_endpoint};
use crate::sandbox::Grader;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The most distinct grading providers one config may name: each is a
/// client of its own, and a config is data.
const MAX_GRADERS: usize = 64;

/// The graders a config's tests and assertions name, each resolved once,
/// by the provider value as written.
#[derive(Debug, Default)]
pub struct Graders {
    by_value: HashMap<String, Result<Grader, String>>,
    secrets: Vec<String>,
}

impl Graders {
    /// Resolves every grading provider of `config` with `context`; one
    /// that only a trusted config may use (a key sent to a URL it names)
    /// in an untrusted one refuses the config.
    pub fn read(config: &Config, context: &ProviderContext<'_>) -> Result<Graders, MapError> {
        let mut graders = Graders::default();
        let values = config.tests.iter().flat_map(|test| {
            let assertions = test.asserts.iter().filter_map(|assertion| assertion.get("provider"));
            test.options.get("provider").into_iter().chain(assertions)
        });
        for value in values {
            let written = value.to_string();
            if graders.by_value.contains_key(&written) {
                continue;
            }
            if graders.by_value.len() >= MAX_GRADERS {
                let why = format!("the config names more than {MAX_GRADERS} grading providers; grade with fewer");
                graders.by_value.insert(written, Err(why));
                continue;
            }
            let grader = match spec(value, context) {
                Ok(spec) => {
                    let keys = [&spec.text, &spec.embedding].into_iter().flatten().filter_map(|e| e.api_key.clone());
                    graders.secrets.extend(keys);
                    (context.graders)(&spec)
                }
                Err(MapError::Unsupported(message)) => Err(message),
                Err(untrusted) => return Err(untrusted),
            };
            graders.by_value.insert(written, grader);
        }
        Ok(graders)
    }

    /// The grader of a provider value of the config.
    pub fn of(&self, value: &Value) -> Result<&Grader, String> {
        match self.by_value.get(&value.to_string()) {
            Some(grader) => grader.as_ref().map_err(String::clone),
            None => Err(format!("the grading provider {value} was not read with the config")),
        }
    }

    /// The keys its graders send, which reports hide.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.secrets.iter().map(String::as_str)
    }
}

/// A grading provider value, as promptfoo's `getGradingProvider` reads it:
/// an id, `{id, config}`, or `{text, embedding}`.
fn spec(value: &Value, context: &ProviderContext<'_>) -> Result<GraderSpec, MapError> {
    match value {
        Value::String(id) => one(id, &Map::new(), context),
        Value::Object(object) if object.contains_key("text") || object.contains_key("embedding") => {
            let part = |key: &str| match object.get(key) {
                None | Some(Value::Null) => Ok(GraderSpec::default()),
                Some(inner) => spec(inner, context),
            };
            let (text, embedding) = (part("text")?, part("embedding")?);
            Ok(GraderSpec { text: text.text, embedding: embedding.embedding })
        }
        Value::Object(object) => {
            let Some(id) = object.get("id").and_then(Value::as_str) else {
                return Err(MapError::Unsupported(format!(
                    "the grading provider {value} has no `id`; write `provider: openai:MODEL` or `{{id: openai:MODEL, config: {{…}}}}`"
                )));
            };
            if let Some(key) = object.keys().find(|key| !["id", "config", "label"].contains(&key.as_str())) {
                return Err(MapError::Unsupported(format!(
                    "the grading provider `{id}` has `{key}`, which assay does not read; it reads `id` and `config`"
                )));
            }
            let config = match object.get("config") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(config)) => config.clone(),
                Some(_) => {
                    return Err(MapError::Unsupported(format!(
                        "the grading provider `{id}`: `config` is not a mapping"
                    )));
                }
            };
            one(id, &config, context)
        }
        other => {
            Err(MapError::Unsupported(format!("the grading provider {other} is neither an id nor a provider object")))
        }
    }
}

/// The `config` keys of a grading provider assay reads: where it is and
/// its key. Anything else (`temperature`, …) would change how it grades,
/// and assay's judge sends only the prompt: refused by name.
const GRADER_CONFIG: &[&str] = &["apiBaseUrl", "apiHost", "apiKey", "apiKeyEnvar"];

/// One provider id with its config.
fn one(id: &str, config: &Map<String, Value>, context: &ProviderContext<'_>) -> Result<GraderSpec, MapError> {
    let unsupported = |why: String| MapError::Unsupported(why);
    let Some(rest) = id.strip_prefix("openai:") else {
        return Err(unsupported(format!(
            "the grading provider `{id}` is not supported: assay grades with OpenAI-compatible providers \
             (`openai:MODEL`, `openai:embedding:MODEL`, with `config.apiBaseUrl` for another server), or with the \
             judge of assay.toml when no provider is given"
        )));
    };
    let (embedding, model) = match rest.split_once(':') {
        Some(("chat", model)) => (false, model),
        Some(("embedding" | "embeddings", model)) => (true, model),
        Some((kind, _)) => {
            return Err(unsupported(format!(
                "the grading provider `{id}` is not supported: assay grades with chat and embedding models, not `{kind}`"
            )));
        }
        None => (false, rest),
    };
    if model.is_empty() {
        return Err(unsupported(format!("the grading provider `{id}` names no model")));
    }
    if let Some(key) = config.keys().find(|key| !GRADER_CONFIG.contains(&key.as_str())) {
        return Err(unsupported(format!(
            "the grading provider `{id}` has `config.{key}`, which assay's judge does not send (it sends the model \
             and the grading prompt); remove it, or grade with the judge of assay.toml"
        )));
    }
    let (url, api_key, _) = openai_endpoint(id, config, context)?;
    let endpoint = GraderEndpoint { url: url.trim_end_matches('/').to_owned(), model: model.to_owned(), api_key };
    Ok(match embedding {
        true => GraderSpec { text: None, embedding: Some(endpoint) },
        false => GraderSpec { text: Some(endpoint), embedding: None },
    })
}
