//! The types that ask a model: `llm-rubric`, `model-graded-closedqa` and
//! `factuality` ask the host's judge (granted `judge`) with promptfoo's own
//! prompts and read its answer as promptfoo does; `similar` asks the host's
//! embeddings backend (granted `embeddings`) and compares by cosine.
//!
//! The host's judge takes one prompt, so promptfoo's chat messages (a system
//! and a user message) are sent as their contents joined by a blank line.

use crate::Graded;
use crate::js;
use assay_plugin_sdk::{CapabilityError, embeddings, judge};
use serde_json::Value as Json;
use std::sync::OnceLock;

/// promptfoo 0.123.1's default prompts (chat messages with `{{ var }}`
/// placeholders), keyed by assay key without `pf_`.
const PROMPTS: &str = include_str!("prompts.json");

/// The default prompt of `kind` (`llm_rubric`, `factuality`,
/// `model_graded_closedqa`).
fn default_prompt(kind: &str) -> &'static Json {
    static PARSED: OnceLock<Json> = OnceLock::new();
    &PARSED.get_or_init(|| serde_json::from_str(PROMPTS).expect("prompts.json is JSON"))[kind]
}

/// promptfoo's `tryParse` as the template then prints it: a JSON output is
/// printed compactly (a JSON string as its text, `null` as nothing), any
/// other output as it is.
fn template_value(output: &str) -> String {
    match serde_json::from_str::<Json>(output) {
        Ok(Json::Null) => String::new(),
        Ok(Json::String(text)) => text,
        Ok(value @ (Json::Number(_) | Json::Bool(_))) => js::to_string(&value),
        Ok(value) => value.to_string(),
        Err(_) => output.to_owned(),
    }
}

/// Fills `{{ name }}` (any spacing) with `vars` in one template string.
fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let Some(end) = rest[start..].find("}}") else { break };
        let name = rest[start + 2..start + end].trim();
        match vars.iter().find(|(var, _)| *var == name) {
            Some((_, value)) => {
                out.push_str(&rest[..start]);
                out.push_str(value);
            }
            None => out.push_str(&rest[..start + end + 2]),
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The prompt sent to the judge: the override (chat messages as JSON, or
/// plain text) or the default, filled, messages joined by a blank line.
fn render(kind: &str, rubric_prompt: Option<&str>, vars: &[(&str, &str)]) -> String {
    let template = match rubric_prompt {
        Some(text) => match serde_json::from_str::<Json>(text) {
            Ok(messages @ Json::Array(_)) => messages,
            _ => return fill(text, vars),
        },
        None => default_prompt(kind).clone(),
    };
    let contents: Vec<String> = template
        .as_array()
        .into_iter()
        .flatten()
        .map(|message| match &message["content"] {
            Json::String(content) => fill(content, vars),
            other => fill(&other.to_string(), vars),
        })
        .collect();
    contents.join("\n\n")
}

/// Asks the judge, saying how to configure one when there is none.
fn ask(key: &str, prompt: &str) -> Result<String, String> {
    judge::complete(prompt).map_err(|error| match error {
        CapabilityError::NotConfigured(_) => {
            format!("{key} needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL")
        }
        other => format!("{key} could not ask the judge: {other}"),
    })
}

/// A grader failure: fail with score 0 whichever the form (promptfoo does
/// not invert a judge's unreadable answer).
fn grader_failure(reason: String) -> Graded {
    Graded { pass: false, score: 0.0, reason, negated: (false, 0.0) }
}

/// `llm-rubric`: the judge's JSON answer's `pass` (default true; a string
/// passes when it reads true/yes/pass/y) and `score` (default the pass as
/// 0 or 1); with a threshold, passing also needs the score to reach it. The
/// `not-` form inverts the pass and gives `1 − score` clamped to [0, 1].
pub fn llm_rubric(
    key: &str,
    output: &str,
    rubric: Option<&Json>,
    threshold: Option<f64>,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    let rubric = match rubric {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    let output = template_value(output);
    let prompt = render("llm_rubric", rubric_prompt, &[("output", &output), ("rubric", &rubric)]);
    let answer = ask(key, &prompt)?;
    if answer.is_empty() {
        return Ok(grader_failure("the judge gave no output".to_owned()));
    }
    let Some(Json::Object(parsed)) = js::extract_json_objects(&answer).into_iter().next() else {
        return Ok(grader_failure(format!("could not extract JSON from the judge's answer: {answer:?}")));
    };
    let mut pass = match parsed.get("pass") {
        None | Some(Json::Null) => true,
        Some(Json::Bool(flag)) => *flag,
        Some(other) => matches!(js::to_string(other).to_lowercase().as_str(), "true" | "yes" | "pass" | "y"),
    };
    let score = match parsed.get("score") {
        Some(Json::Number(number)) => number.as_f64().unwrap_or(f64::NAN),
        found => {
            let number = found.map_or(f64::NAN, js::to_number);
            if number.is_finite() { number } else { f64::from(u8::from(pass)) }
        }
    };
    if let Some(threshold) = threshold {
        pass = pass && score >= threshold;
    }
    let reason = match parsed.get("reason").map(js::to_string).filter(|r| !r.is_empty()) {
        Some(reason) => reason,
        None if pass => "Grading passed".to_owned(),
        None => format!("Score {} below threshold {}", js::number_to_string(score), threshold.unwrap_or(f64::NAN)),
    };
    let inverted = (1.0 - if score.is_finite() { score } else { 0.0 }).clamp(0.0, 1.0);
    Ok(Graded { pass, score, reason, negated: (!pass, inverted) })
}

/// `model-graded-closedqa`: passes when the judge's answer, trailing space
/// trimmed, ends with `Y`. promptfoo ignores `not-` for this type: the
/// `not-` form gives the same verdict.
pub fn closed_qa(
    key: &str,
    input: &str,
    criteria: &str,
    output: &str,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    let completion = template_value(output);
    let prompt = render(
        "model_graded_closedqa",
        rubric_prompt,
        &[("input", input), ("criteria", criteria), ("completion", &completion)],
    );
    let answer = ask(key, &prompt)?;
    if answer.is_empty() {
        return Ok(grader_failure("the judge gave no output".to_owned()));
    }
    let trimmed = js::trim_end(&answer);
    let pass = trimmed.ends_with('Y');
    let reason = if pass {
        format!("The submission meets the criterion:\n{answer}")
    } else if trimmed.ends_with('N') {
        format!("The submission does not meet the criterion:\n{answer}")
    } else {
        format!("Model grader produced a malformed response:\n{answer}")
    };
    let score = f64::from(u8::from(pass));
    Ok(Graded { pass, score, reason, negated: (pass, score) })
}

/// `factuality`: the judge's category A–E (from a JSON answer's `category`,
/// else the first `(X)` in the text); A, B, C and E pass with score 1, D
/// fails with 0. promptfoo ignores `not-` for this type too.
pub fn factuality(
    key: &str,
    input: &str,
    ideal: &str,
    output: &str,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    let completion = template_value(output);
    let prompt =
        render("factuality", rubric_prompt, &[("input", input), ("ideal", ideal), ("completion", &completion)]);
    let answer = ask(key, &prompt)?;
    if answer.is_empty() {
        return Ok(grader_failure("the judge gave no output".to_owned()));
    }
    let category = match js::extract_json_objects(&answer).into_iter().next() {
        Some(Json::Object(parsed)) => match parsed.get("category") {
            Some(Json::String(category)) if !category.is_empty() => {
                let option = js::trim(category).to_uppercase();
                if !matches!(option.as_str(), "A" | "B" | "C" | "D" | "E") {
                    return Ok(grader_failure(format!("Invalid category value: {option}")));
                }
                Some(option)
            }
            _ => None,
        },
        _ => None,
    };
    let category = match category.or_else(|| legacy_category(&answer)) {
        Some(category) => category,
        None => {
            return Ok(grader_failure(format!("Factuality checker output did not match expected format: {answer}")));
        }
    };
    let pass = category != "D";
    let score = f64::from(u8::from(pass));
    let reason = format!("the judge chose category {category}");
    Ok(Graded { pass, score, reason, negated: (pass, score) })
}

/// promptfoo's legacy reading `/\s*\(?([a-eA-E])\)/`: the first letter A–E
/// directly followed by `)`.
fn legacy_category(answer: &str) -> Option<String> {
    let chars: Vec<char> = answer.chars().collect();
    chars
        .windows(2)
        .find(|pair| {
            pair[0].is_ascii_alphabetic() && ('a'..='e').contains(&pair[0].to_ascii_lowercase()) && pair[1] == ')'
        })
        .map(|pair| pair[0].to_ascii_uppercase().to_string())
}

/// `similar` (cosine): the best of the values passes when its similarity
/// reaches the threshold (less `f64::EPSILON`), scoring the similarity; the
/// `not-` form passes when every similarity is at most the threshold (plus
/// `EPSILON`) and scores `1 − similarity` of the closest value.
pub fn similar(key: &str, output: &str, values: &[String], threshold: f64) -> Result<Graded, String> {
    let mut texts = values.to_vec();
    texts.push(output.to_owned());
    let vectors = embeddings::embed(&texts).map_err(|error| match error {
        CapabilityError::NotConfigured(_) => {
            format!("{key} needs embeddings: set [embeddings] in assay.toml or ASSAY_EMBEDDINGS_URL")
        }
        other => format!("{key} could not get embeddings: {other}"),
    })?;
    let (output_vector, value_vectors) = vectors.split_last().ok_or_else(|| format!("{key} got no embeddings"))?;
    let mut similarities = Vec::with_capacity(values.len());
    for vector in value_vectors {
        if vector.len() != output_vector.len() {
            return Err(format!(
                "{key} got embeddings of different lengths ({} and {})",
                vector.len(),
                output_vector.len()
            ));
        }
        similarities.push(cosine(vector, output_vector));
    }
    let direct = similarities.iter().copied().find(|&s| s >= threshold - f64::EPSILON);
    let (pass, score) = match direct {
        Some(similarity) => (true, similarity),
        None => (false, similarities.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
    };
    // The `not-` form: the first value too similar fails it; otherwise the
    // closest value's inverse score.
    let negated = match similarities.iter().copied().find(|&s| s > threshold + f64::EPSILON) {
        Some(similarity) => (false, 1.0 - similarity),
        None => (
            true,
            similarities.iter().map(|s| 1.0 - s).reduce(|best, s| if s < best { s } else { best }).unwrap_or(0.0),
        ),
    };
    let reason = format!("cosine similarity {} against threshold {threshold}", js::number_to_string(score));
    Ok(Graded { pass, score, reason, negated })
}

/// promptfoo's `cosineSimilarity`, summing in the same order; 0 when either
/// vector is zero.
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot = a.iter().zip(b).fold(0.0, |acc, (&x, &y)| acc + f64::from(x) * f64::from(y));
    let norm = |v: &[f32]| v.iter().fold(0.0, |acc, &x| acc + f64::from(x) * f64::from(x)).sqrt();
    let (norm_a, norm_b) = (norm(a), norm(b));
    if norm_a == 0.0 || norm_b == 0.0 { 0.0 } else { dot / (norm_a * norm_b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_known_names_and_keep_others() {
        assert_eq!(fill("a {{ output }} b {{x}} c {{rubric}}", &[("output", "O"), ("rubric", "R")]), "a O b {{x}} c R");
    }

    #[test]
    fn the_default_rubric_prompt_joins_system_and_user() {
        let prompt = render("llm_rubric", None, &[("output", "OUT"), ("rubric", "RUB")]);
        assert!(prompt.starts_with("You are grading output"), "{prompt}");
        assert!(prompt.ends_with("<Output>\nOUT\n</Output>\n<Rubric>\nRUB\n</Rubric>"), "{prompt}");
    }

    #[test]
    fn legacy_categories_read_the_first_letter_before_a_parenthesis() {
        assert_eq!(legacy_category("I pick (b) because"), Some("B".to_owned()));
        assert_eq!(legacy_category("none here"), None);
    }

    #[test]
    fn json_outputs_print_compactly_in_templates() {
        assert_eq!(template_value("{ \"a\" : 1 }"), r#"{"a":1}"#);
        assert_eq!(template_value("plain"), "plain");
        assert_eq!(template_value("null"), "");
    }
}
