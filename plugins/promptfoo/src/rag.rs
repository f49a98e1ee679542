//! promptfoo's retrieval (RAGAS) types, as promptfoo 0.123.1 computes them:
//! `answer-relevance` (the judge writes three questions the answer answers;
//! their embeddings' mean cosine with the query's), `context-recall` (the
//! judge marks each sentence of the expected answer `[Attributed]` to the
//! context or not), `context-relevance` (the judge quotes the context's
//! sentences the query needs; their share of the context) and
//! `context-faithfulness` (the judge splits the answer into statements, then
//! says for each whether the context supports it).
//!
//! The `not-` form of each inverts the pass and gives `1 − score`, except
//! where the judge's answer cannot be read (a grader failure fails both).

use crate::graded::{ask, cosine, embed, fill, grader_failure, template_value};
use crate::{Graded, js};
use serde_json::Value as Json;
use std::sync::OnceLock;

/// promptfoo 0.123.1's RAGAS prompts (`src/external/prompts/ragas.ts`),
/// keyed `answer_relevance`, `context_recall`, `context_relevance`,
/// `context_faithfulness_longform`, `context_faithfulness_nli`.
const PROMPTS: &str = include_str!("rag_prompts.json");

/// The default prompt `name`.
fn default_prompt(name: &str) -> &'static str {
    static PARSED: OnceLock<Json> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(PROMPTS).expect("rag_prompts.json is JSON"))[name]
        .as_str()
        .unwrap_or_default()
}

/// A context: one text, or chunks (promptfoo's `string | string[]`).
#[derive(Debug)]
pub enum Context {
    /// One text.
    Text(String),
    /// Chunks, each a text.
    Chunks(Vec<String>),
}

impl Context {
    /// Reads a `context` value: a non-empty text or a non-empty list of
    /// non-empty texts, as promptfoo requires.
    pub fn read(key: &str, value: &Json) -> Result<Context, String> {
        const WHAT: &str = "a non-empty text or a list of non-empty texts";
        match value {
            Json::String(text) if !text.is_empty() => Ok(Context::Text(text.clone())),
            Json::Array(items) if !items.is_empty() => items
                .iter()
                .map(|item| item.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Context::Chunks)
                .ok_or_else(|| format!("{key}'s context is {WHAT}")),
            _ => Err(format!("{key}'s context is {WHAT}")),
        }
    }

    /// promptfoo's `serializeContext`: chunks joined by a blank line.
    fn serialized(&self) -> String {
        match self {
            Context::Text(text) => text.clone(),
            Context::Chunks(chunks) => chunks.join("\n\n"),
        }
    }
}

/// The template: the test's `rubricPrompt` (text) or promptfoo's default.
fn template<'a>(rubric_prompt: Option<&'a str>, default: &str) -> &'a str {
    match rubric_prompt {
        Some(text) if !text.is_empty() => text,
        _ => default_prompt(default),
    }
}

/// A score as JavaScript's `toFixed(2)` writes it (a tie rounds away from
/// zero, where Rust's formatting rounds it to even).
fn fixed2(score: f64) -> String {
    let exact = format!("{:.60}", score.abs());
    let tie = exact.split_once('.').is_some_and(|(_, fraction)| {
        fraction.len() > 3 && fraction.as_bytes()[2] == b'5' && fraction[3..].bytes().all(|b| b == b'0')
    });
    if tie {
        let nudged = score + score.signum() * 1e-9;
        format!("{nudged:.2}")
    } else {
        format!("{score:.2}")
    }
}

/// Whether `score` reaches `threshold`, as promptfoo compares.
fn reaches(score: f64, threshold: f64) -> bool {
    score >= threshold - f64::EPSILON
}

/// A scored RAG verdict: `not-` inverts the pass and gives `1 − score`.
fn scored(pass: bool, score: f64, reason: String) -> Graded {
    Graded { pass, score, reason, negated: (!pass, 1.0 - score) }
}

/// The verdict of `name`'s `score` against `threshold`, with promptfoo's
/// reason (`Recall 0.67 is >= 0.5`).
fn against_threshold(name: &str, score: f64, threshold: f64) -> Graded {
    let pass = reaches(score, threshold);
    let relation = if pass { ">=" } else { "<" };
    scored(pass, score, format!("{name} {} is {relation} {}", fixed2(score), js::number_to_string(threshold)))
}

/// promptfoo's `splitIntoSentences`: the non-blank lines, as they are.
fn lines(text: &str) -> Vec<&str> {
    text.split('\n').filter(|line| !js::trim(line).is_empty()).collect()
}

/// promptfoo's `splitTextIntoSentences`: text of two or more non-blank
/// lines is its lines; other text is cut after `.`, `!` or `?` followed by
/// white space; each piece trimmed, empty pieces and bare list markers
/// (`1.`, `2)`) dropped.
fn sentences(text: &str) -> Vec<String> {
    let lines = lines(text);
    let pieces: Vec<&str> = if lines.len() > 1 { lines } else { split_after_stops(text) };
    pieces
        .into_iter()
        .map(js::trim)
        .filter(|piece| !piece.is_empty() && !is_list_marker(piece))
        .map(str::to_owned)
        .collect()
}

/// `text.split(/(?<=[.!?])\s+/)`.
fn split_after_stops(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut previous = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if js::is_space(c) && matches!(previous, Some('.' | '!' | '?')) {
            let mut end = at + c.len_utf8();
            while let Some(&(next_at, next)) = chars.peek().filter(|(_, next)| js::is_space(*next)) {
                end = next_at + next.len_utf8();
                chars.next();
            }
            pieces.push(&text[start..at]);
            start = end;
            previous = None;
            continue;
        }
        previous = Some(c);
    }
    pieces.push(&text[start..]);
    pieces
}

/// `/^\d+[.)]$/`.
fn is_list_marker(piece: &str) -> bool {
    piece.len() > 1
        && piece[..piece.len() - 1].bytes().all(|b| b.is_ascii_digit())
        && matches!(piece.as_bytes()[piece.len() - 1], b'.' | b')')
}

/// Whether `word` occurs in `text` between JavaScript word boundaries
/// (`/\bword\b/`).
fn has_word(text: &str, word: &str) -> bool {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.match_indices(word).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| text.as_bytes()[i]);
        let after = text.as_bytes().get(at + word.len()).copied();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// `answer-relevance`: the judge asked three times for the question the
/// output answers; the mean cosine similarity of those questions'
/// embeddings with the query's (the test's `query` var, else the prompt).
pub fn answer_relevance(
    key: &str,
    query: &str,
    output: &str,
    threshold: f64,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    let prompt = fill(template(rubric_prompt, "answer_relevance"), &[("answer", &template_value(output))]);
    let mut texts = vec![query.to_owned()];
    for _ in 0..3 {
        let question = ask(key, &prompt)?;
        if question.is_empty() {
            return Ok(grader_failure("No output".to_owned()));
        }
        texts.push(question);
    }
    let vectors = embed(key, &texts)?;
    let Some((query_vector, question_vectors)) = vectors.split_first().filter(|(_, q)| q.len() == 3) else {
        return Err(format!("{key} got {} embeddings for 4 texts", vectors.len()));
    };
    let mut total = 0.0;
    for vector in question_vectors {
        if vector.len() != query_vector.len() {
            return Err(format!(
                "{key} got embeddings of different lengths ({} and {})",
                vector.len(),
                query_vector.len()
            ));
        }
        total += cosine(query_vector, vector);
    }
    let similarity = total / 3.0;
    let pass = reaches(similarity, threshold);
    let relation = if pass { "greater" } else { "less" };
    let reason =
        format!("Relevance {} is {relation} than threshold {}", fixed2(similarity), js::number_to_string(threshold));
    Ok(scored(pass, similarity, reason))
}

/// `context-recall`: the share of the judge's classified lines marked
/// `[Attributed]` (and not `[Not Attributed]`).
pub fn context_recall(
    key: &str,
    context: &Context,
    ground_truth: &str,
    threshold: f64,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    let context = context.serialized();
    let prompt =
        fill(template(rubric_prompt, "context_recall"), &[("context", &context), ("groundTruth", ground_truth)]);
    let answer = ask(key, &prompt)?;
    if answer.is_empty() {
        return Ok(grader_failure("No output".to_owned()));
    }
    let (attributed, not_attributed) = ("[attributed]", "[not attributed]");
    let classified: Vec<String> = lines(&answer)
        .into_iter()
        .map(str::to_lowercase)
        .filter(|line| line.contains(attributed) || line.contains(not_attributed))
        .collect();
    if classified.is_empty() {
        return Ok(grader_failure("Grader returned no [Attributed]/[Not Attributed] classifications".to_owned()));
    }
    let numerator =
        classified.iter().filter(|line| !line.contains(not_attributed) && line.contains(attributed)).count();
    let score = numerator as f64 / classified.len() as f64;
    Ok(against_threshold("Recall", score, threshold))
}

/// `context-relevance`: how many of the context's sentences (or chunks)
/// the judge quotes as needed for the query, over how many there are.
pub fn context_relevance(
    key: &str,
    query: &str,
    context: &Context,
    threshold: f64,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    let serialized = context.serialized();
    let prompt = fill(template(rubric_prompt, "context_relevance"), &[("context", &serialized), ("query", query)]);
    let answer = ask(key, &prompt)?;
    if answer.is_empty() {
        return Ok(grader_failure("No output".to_owned()));
    }
    let (pre_segmented, units) = match context {
        Context::Chunks(chunks) => (true, chunks.iter().filter(|c| !js::trim(c).is_empty()).count()),
        Context::Text(text) => (lines(text).len() > 1, sentences(text).len()),
    };
    let insufficient = answer.contains("Insufficient Information");
    let mut quoted: Vec<String> = Vec::new();
    if !insufficient {
        let found = match pre_segmented {
            true => lines(&answer).into_iter().map(str::to_owned).collect(),
            false => sentences(&answer),
        };
        for sentence in found {
            if !quoted.contains(&sentence) {
                quoted.push(sentence);
            }
        }
    }
    let numerator = quoted.len().min(units);
    let score = if units > 0 { numerator as f64 / units as f64 } else { 0.0 };
    let normalized_context = normalize(&serialized);
    if !quoted.is_empty() && !quoted.iter().any(|s| normalized_context.contains(&normalize(strip_marker(s)))) {
        return Ok(grader_failure("Grader output does not quote the provided context".to_owned()));
    }
    Ok(against_threshold("Context relevance", score, threshold))
}

/// Lower case, runs of white space as one space, trimmed.
fn normalize(text: &str) -> String {
    js::split_spaces(&text.to_lowercase()).join(" ")
}

/// `s.replace(/^\s*(?:\d+[.)]|[-*])\s*/, "")`: a leading list marker.
fn strip_marker(sentence: &str) -> &str {
    let rest = sentence.trim_start_matches(js::is_space);
    let after = if let Some(rest) = rest.strip_prefix(['-', '*']) {
        rest
    } else {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match rest[digits..].strip_prefix(['.', ')']) {
            Some(after) if digits > 0 => after,
            _ => return sentence,
        }
    };
    after.trim_start_matches(js::is_space)
}

/// `context-faithfulness`: the judge turns the answer into statements
/// (one a line), then gives a verdict per statement; the score is one minus
/// the share not supported (missing verdicts count as not supported).
pub fn context_faithfulness(
    key: &str,
    query: &str,
    output: &str,
    context: &Context,
    threshold: f64,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    // An override is a list of two prompts (texts or `{content}`).
    let overrides: Vec<Option<String>> = match rubric_prompt {
        None => vec![None, None],
        Some(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Array(items)) => (0..2)
                .map(|i| match items.get(i) {
                    Some(Json::String(text)) => Some(text.clone()),
                    Some(message) => message["content"].as_str().map(str::to_owned),
                    None => None,
                })
                .collect(),
            _ => return Err(format!("{key}'s rubricPrompt must be a list of two prompts (statements, then verdicts)")),
        },
    };
    let longform = template(overrides[0].as_deref(), "context_faithfulness_longform");
    let answer = template_value(output);
    let statements_text = ask(key, &fill(longform, &[("question", query), ("answer", &answer)]))?;
    if statements_text.is_empty() {
        return Ok(grader_failure("No output".to_owned()));
    }
    let statements = lines(&statements_text);
    if statements.is_empty() {
        return Ok(grader_failure("Could not extract context-faithfulness statements".to_owned()));
    }
    let nli = template(overrides[1].as_deref(), "context_faithfulness_nli")
        .replace("{{statements|join(\"\\n\")}}", &statements.join("\n"));
    let context = context.serialized();
    let verdicts = ask(key, &fill(&nli, &[("context", &context), ("statements", &statements.join(","))]))?;
    if verdicts.is_empty() {
        return Ok(grader_failure("No output".to_owned()));
    }
    let verdicts = js::trim(&verdicts.to_lowercase()).to_owned();
    let total = statements.len() as f64;
    let final_answer = "final verdict for each statement in order:";
    let score = if let Some(at) = verdicts.find(final_answer) {
        let parsed: Vec<&str> =
            verdicts[at + final_answer.len()..].split('.').filter(|a| !js::trim(a).is_empty()).collect();
        (!parsed.is_empty() && parsed.iter().all(|a| has_word(a, "yes") || has_word(a, "no"))).then(|| {
            let unsupported = parsed.iter().filter(|a| !a.contains("yes")).count();
            1.0 - (unsupported as f64 + (total - parsed.len() as f64).max(0.0)) / total
        })
    } else {
        let no = verdicts.matches("verdict: no").count() as f64;
        let yes = verdicts.matches("verdict: yes").count() as f64;
        (no + yes > 0.0).then(|| 1.0 - (no + (total - no - yes).max(0.0)) / total)
    };
    let Some(score) = score else {
        return Ok(grader_failure("Could not parse context-faithfulness verdicts".to_owned()));
    };
    let score = score.clamp(0.0, 1.0);
    Ok(against_threshold("Faithfulness", score, threshold))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_written_as_javascript_to_fixed_writes_them() {
        assert_eq!(fixed2(0.125), "0.13");
        assert_eq!(fixed2(0.375), "0.38");
        assert_eq!(fixed2(0.5), "0.50");
        assert_eq!(fixed2(1.0 / 3.0), "0.33");
        assert_eq!(fixed2(0.0), "0.00");
    }

    #[test]
    fn prose_splits_after_stops_and_lines_split_on_newlines() {
        assert_eq!(sentences("One. Two!  Three? four"), ["One.", "Two!", "Three?", "four"]);
        assert_eq!(
            sentences("1. Paris is the capital. 2. France is in Europe."),
            ["Paris is the capital.", "France is in Europe."]
        );
        assert_eq!(sentences("a. b\n\nc"), ["a. b", "c"]);
        assert_eq!(sentences("\nOnly one line. Two sentences.\n"), ["Only one line.", "Two sentences."]);
        assert_eq!(lines("x\n \ny "), ["x", "y "]);
    }

    #[test]
    fn list_markers_and_word_boundaries_read_as_javascript_reads_them() {
        assert_eq!(strip_marker("  12) quoted"), "quoted");
        assert_eq!(strip_marker("- quoted"), "quoted");
        assert_eq!(strip_marker("12 quoted"), "12 quoted");
        assert!(has_word(" yes", "yes") && !has_word(" yesterday", "yes") && !has_word("know", "no"));
        assert!(is_list_marker("3.") && !is_list_marker(".") && !is_list_marker("3a."));
    }

    #[test]
    fn every_default_prompt_is_present() {
        for name in [
            "answer_relevance",
            "context_recall",
            "context_relevance",
            "context_faithfulness_longform",
            "context_faithfulness_nli",
        ] {
            assert!(default_prompt(name).len() > 100, "{name}");
        }
        assert!(default_prompt("context_faithfulness_nli").contains("{{statements|join(\"\\n\")}}"));
    }
}
