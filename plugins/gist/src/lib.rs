//! `gist`: a language-model judge decides whether a text meets acceptance
//! criteria written in plain words (`"gist": "names the Beatles as the
//! band"`); `not_gist` is the host's negation. It imports the `judge`
//! capability, which the host grants the built-in gist plugin. Without a
//! judge (the host's `not-configured`) it says how to configure one.
//!
//! The judge's answer is read the way neuro-san reads it: the check passes
//! only when the answer says pass and does not say fail. An answer saying
//! both or neither is an error verdict quoting it, never a guess.

use assay_plugin_sdk::{Actual, CapabilityError, Json, Matcher, PluginInfo, Verdict, export_matcher, judge};

/// The gist matcher.
pub struct Gist;

/// What the judge is asked.
const PROMPT: &str = "You are a strict test judge. Decide whether the TEXT meets the ACCEPTANCE CRITERIA.\n\
Answer with one word: pass if it meets them, fail if it does not.\n\n\
ACCEPTANCE CRITERIA:\n{criteria}\n\nTEXT:\n{text}\n";

impl Matcher for Gist {
    fn describe() -> PluginInfo {
        PluginInfo::new("gist", env!("CARGO_PKG_VERSION"))
            .matcher("gist", "a language-model judge decides whether the text meets the acceptance criteria")
    }

    fn evaluate(_key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {
        let criteria = expected.as_str().ok_or("gist needs the acceptance criteria as a string")?;
        let text = match actual.as_str() {
            Some(text) => text.to_owned(),
            None => actual.as_json()?.to_string(),
        };
        let prompt = PROMPT.replace("{criteria}", criteria).replace("{text}", &text);
        let answer = judge::complete(&prompt).map_err(|error| match error {
            CapabilityError::NotConfigured(_) => {
                "gist needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL".to_owned()
            }
            other => format!("gist could not ask the judge: {other}"),
        })?;
        decide(&answer, criteria)
    }
}

/// Reads the judge's answer: pass only when it says pass and not fail.
pub fn decide(answer: &str, criteria: &str) -> Result<Verdict, String> {
    let lower = answer.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let says = |stem: &str| words.iter().any(|w| w.starts_with(stem));
    match (says("pass"), says("fail")) {
        (true, false) => Ok(Verdict::new(true, format!("the judge found the text meets {criteria:?}"))),
        (false, true) => Ok(Verdict::new(false, format!("the judge found the text does not meet {criteria:?}"))),
        _ => Err(format!("the judge's answer is equivocal: {:?}", answer.chars().take(300).collect::<String>())),
    }
}

export_matcher!(Gist);

#[cfg(test)]
mod tests;
