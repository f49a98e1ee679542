//! The types that ask a model: `llm-rubric`, `model-graded-closedqa` and
//! `factuality` ask the host's judge (granted `judge`) with promptfoo's own
//! prompts and read its answer as promptfoo does; `similar` asks the host's
//! embeddings backend (granted `embeddings`) and compares by cosine;
//! `select-best`'s judge picks one of a test's outputs (the host renders
//! the prompt and compares the outputs).
//!
//! The host's judge takes one prompt, so promptfoo's chat messages (a system
//! and a user message) are sent as their contents joined by a blank line.

use crate::Graded;
use crate::js;
use assay_plugin_sdk::{CapabilityError, Verdict, embeddings, judge};
use serde_json::{Value as Json, json};
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
pub(crate) fn template_value(output: &str) -> String {
    match serde_json::from_str::<Json>(output) {
        Ok(Json::Null) => String::new(),
        Ok(Json::String(text)) => text,
        Ok(value @ (Json::Number(_) | Json::Bool(_))) => js::to_string(&value),
        Ok(value) => value.to_string(),
        Err(_) => output.to_owned(),
    }
}

/// Fills `{{ name }}` (any spacing) with `vars` in one template string.
pub(crate) fn fill(template: &str, vars: &[(&str, &str)]) -> String {
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
pub(crate) fn ask(key: &str, prompt: &str) -> Result<String, String> {
    judge::complete(prompt).map_err(|error| match error {
        CapabilityError::NotConfigured(_) => {
            format!("{key} needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL")
        }
        other => format!("{key} could not ask the judge: {other}"),
    })
}

/// `select-best`'s question: the judge reads the rendered prompt (the
/// expected value's `prompt`, which lists the outputs) and answers with an
/// index. The verdict passes with the computed `value` `{"chosen": N}`, the
/// first integer of its answer (the host checks it is one of the outputs),
/// or `{"failed": REASON}` where promptfoo's fails every output: an empty
/// answer, or one without an integer.
pub fn select_best(key: &str, expected: &Json) -> Result<Verdict, String> {
    let Some(prompt) = expected.get("prompt").and_then(Json::as_str) else {
        return Err(format!("{key} takes {{\"prompt\": the rendered grading prompt}}"));
    };
    let answer = ask(key, prompt)?;
    let digits: String =
        answer.trim().chars().skip_while(|c| !c.is_ascii_digit()).take_while(char::is_ascii_digit).collect();
    let value = match digits.parse::<u64>() {
        _ if answer.is_empty() => json!({ "failed": "No output" }),
        Ok(index) => json!({ "chosen": index }),
        Err(_) if digits.is_empty() => json!({ "failed": "Invalid select-best verdict: NaN" }),
        Err(_) => json!({ "failed": format!("Invalid select-best verdict: {digits}") }),
    };
    Ok(Verdict::new(true, format!("the judge answered {answer:?}")).with_extras(json!({ "value": value })))
}

/// A grader failure: fail with score 0 whichever the form (promptfoo does
/// not invert a judge's unreadable answer).
pub(crate) fn grader_failure(reason: String) -> Graded {
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

/// promptfoo 0.123.1's `GEVAL_PROMPT_STEPS`.
const GEVAL_STEPS: &str = "\nGiven evaluation criteria that outline how you should judge a piece of text, generate 3-4 concise evaluation steps applicable to any text based on the criteria below and designed to check whether the criteria are satisfied by the text.\n\n**EVALUATION CRITERIA**\n{{criteria}}\n\n**OUTPUT FORMAT**\nIMPORTANT:\n- Return output ONLY as a minified JSON object (no code fences).\n- The JSON object must contain a single key, \"steps\", whose value is a list of strings.\n- Each string must represent one evaluation step.\n- Do NOT include any explanations, commentary, extra text, or additional formatting.\n\nFormat:\n{\"steps\": <list_of_strings>}\n\nExample:\n{\"steps\":[\"<Evaluation Step 1>\",\"<Evaluation Step 2>\",\"<Evaluation Step 3>\",\"<Evaluation Step 4>\"]}\n\nHere are the 3-4 concise evaluation steps, formatted as required in a minified JSON:\nJSON:\n";

/// promptfoo 0.123.1's `GEVAL_PROMPT_EVALUATE`.
const GEVAL_EVALUATE: &str = "\nYou will be given one Reply for a Prompt below. Your task is to rate the Reply on one metric.\nPlease make sure you read and understand these instructions carefully. Please keep this document open while reviewing, and refer to it as needed.\n\n**Evaluation Criteria**\n{{criteria}}\n\n**Evaluation Steps**\n- {{steps}}\nGiven the evaluation steps, return a JSON with two keys: \n  1) a \"score\" key that MUST be an integer from 0 to {{maxScore}}, where {{maxScore}} indicates that the condition described by the Evaluation Criteria is fully and clearly observed in the Reply according to the Evaluation Steps, and 0 indicates that it is not observed at all;\n  2) a \"reason\" key, a reason for the given score, but DO NOT QUOTE THE SCORE in your reason. Please mention specific information from Prompt and Reply in your reason, but be very concise with it!\n\n**Prompt**\n{{input}}\n\n**Reply**\n{{output}}\n\n**OUTPUT FORMAT**\nIMPORTANT: \n- Return output ONLY as a minified JSON object (no code fences).\n- The JSON object must contain exactly two keys: \"score\" and \"reason\".\n- No additional words, explanations, or formatting are needed.\n- Absolutely no additional text, explanations, line breaks, or formatting outside the JSON object are allowed.\n\nExample JSON:\n{\"score\":0,\"reason\":\"The text of reply does not follow the evaluation criteria provided.\"}\n\nHere is the final evaluation in the required minified JSON format:\nJSON:\n";

/// `g-eval`: for each criterion (a text, or each of a list), the judge
/// proposes evaluation steps, then scores the output 0–10 by them; the
/// score is that over 10 (the mean over the criteria), passing at the
/// threshold (default 0.7); the `not-` form inverts both. A judge answer
/// that cannot be read fails the assertion in both forms (promptfoo's
/// grader failure), naming the criterion of a list.
pub fn g_eval(
    key: &str,
    input: &str,
    criteria: &[String],
    output: &str,
    threshold: f64,
    rubric_prompt: Option<&str>,
) -> Result<Graded, String> {
    // A `rubricPrompt` object may replace either template.
    let templates: Option<serde_json::Map<String, Json>> =
        rubric_prompt.and_then(|text| match serde_json::from_str(text) {
            Ok(Json::Object(map)) => Some(map),
            _ => None,
        });
    let template = |name: &str, default: &'static str| -> String {
        match templates.as_ref().and_then(|t| t.get(name)) {
            Some(Json::String(text)) => text.clone(),
            Some(other @ Json::Array(_)) => render("g_eval", Some(&other.to_string()), &[]),
            _ => default.to_owned(),
        }
    };
    let (steps_template, evaluate_template) = (template("steps", GEVAL_STEPS), template("evaluate", GEVAL_EVALUATE));
    if criteria.is_empty() {
        return Ok(grader_failure(
            "G-Eval assertion requires at least one criterion string in the value array.".into(),
        ));
    }
    let (input, output) = (template_value(input), template_value(output));
    let mut scores = Vec::with_capacity(criteria.len());
    let mut reasons = Vec::with_capacity(criteria.len());
    for (index, criterion) in criteria.iter().enumerate() {
        match g_eval_one(key, criterion, &input, &output, &steps_template, &evaluate_template)? {
            Ok((score, reason)) => {
                scores.push(score);
                reasons.push(reason);
            }
            Err(failure) if criteria.len() > 1 => {
                let criterion = serde_json::to_string(criterion).unwrap_or_default();
                let reason =
                    format!("G-Eval criterion {}/{} ({criterion}) failed: {failure}", index + 1, criteria.len());
                return Ok(grader_failure(reason));
            }
            Err(failure) => return Ok(grader_failure(failure)),
        }
    }
    let score = scores.iter().sum::<f64>() / scores.len() as f64;
    let pass = score >= threshold;
    Ok(Graded { pass, score, reason: reasons.join("\n\n"), negated: (!pass, 1.0 - score) })
}

/// One criterion of `g-eval`: `Ok(Ok((score, reason)))`, or `Ok(Err(why))`
/// where promptfoo's grader fails; `Err` when the judge cannot be asked.
fn g_eval_one(
    key: &str,
    criterion: &str,
    input: &str,
    output: &str,
    steps_template: &str,
    evaluate_template: &str,
) -> Result<Result<(f64, String), String>, String> {
    let answer = ask(key, &fill(steps_template, &[("criteria", criterion)]))?;
    if answer.is_empty() {
        return Ok(Err("G-Eval step-generation call to the judge returned no output".into()));
    }
    let Some(found) = first_line_match(&answer, "{\"steps\"") else {
        return Ok(Err(format!("LLM-proposed evaluation steps are not in JSON format: {answer}")));
    };
    let steps = match serde_json::from_str::<Json>(found) {
        Ok(parsed) => parsed.get("steps").cloned(),
        Err(error) => {
            return Ok(Err(format!("LLM-proposed evaluation steps are not in JSON format: {error}\n\n{answer}")));
        }
    };
    let steps: Vec<String> = match steps {
        Some(Json::Array(items)) if items.is_empty() => {
            return Ok(Err("LLM does not propose any evaluation step".into()));
        }
        Some(Json::Array(items)) => {
            let texts: Option<Vec<String>> =
                items.iter().map(|step| step.as_str().filter(|s| !js::trim(s).is_empty()).map(str::to_owned)).collect();
            match texts {
                Some(texts) => texts,
                None => {
                    let items = Json::Array(items).to_string();
                    return Ok(Err(format!("G-Eval steps response contains invalid steps: {items}")));
                }
            }
        }
        other => {
            let shown = other.map_or_else(|| "undefined".to_owned(), |v| v.to_string());
            return Ok(Err(format!("G-Eval steps response has invalid or missing steps: {shown}")));
        }
    };
    let vars = [
        ("criteria", criterion),
        ("steps", &steps.join("\n- ")),
        ("maxScore", "10"),
        ("input", input),
        ("output", output),
    ];
    let answer = ask(key, &fill(evaluate_template, &vars))?;
    if answer.is_empty() {
        return Ok(Err("G-Eval evaluation call to the judge returned no output".into()));
    }
    let Some(found) = first_line_match(&answer, "{") else {
        return Ok(Err(format!("LLM-proposed evaluation result is not in JSON format: {answer}")));
    };
    let result = match serde_json::from_str::<Json>(found) {
        Ok(result) => result,
        Err(error) => {
            return Ok(Err(format!("LLM-proposed evaluation result is not in JSON format: {error}\n\n{answer}")));
        }
    };
    let score = match result.get("score") {
        Some(Json::Number(number)) => number.as_f64().unwrap_or(f64::NAN),
        Some(Json::String(text)) if !js::trim(text).is_empty() => js::to_number(&Json::String(text.clone())),
        _ => f64::NAN,
    };
    if !score.is_finite() {
        let shown = result.get("score").map_or_else(|| "undefined".to_owned(), Json::to_string);
        return Ok(Err(format!("G-Eval result has invalid or missing score: {shown}")));
    }
    if !(0.0..=10.0).contains(&score) {
        let score = js::number_to_string(score);
        return Ok(Err(format!("G-Eval result score {score} is outside the expected 0-10 range")));
    }
    match result.get("reason") {
        Some(Json::String(reason)) if !js::trim(reason).is_empty() => Ok(Ok((score / 10.0, reason.clone()))),
        other => {
            let shown = other.map_or_else(|| "undefined".to_owned(), Json::to_string);
            Ok(Err(format!("G-Eval result has invalid or missing reason: {shown}")))
        }
    }
}

/// The first match of the JavaScript regex `/START.+\}/` in `text`: on the
/// first line (`.` does not cross a line break) holding `start` with a `}`
/// at least one character after it, from `start` to that line's last `}`.
fn first_line_match<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    text.split(['\n', '\r', '\u{2028}', '\u{2029}']).find_map(|line| {
        let from = line.find(start)?;
        let last = line.rfind('}')?;
        (last > from + start.len()).then(|| &line[from..=last])
    })
}

/// promptfoo 0.123.1's `ConversationRelevancyTemplate.generateVerdicts`,
/// around the window's messages.
const CONVERSATION_VERDICTS: (&str, &str) = (
    "Based on the given list of message exchanges between a user and an LLM, generate a JSON object to indicate whether the LAST `assistant` message is relevant to context in messages. The JSON will have 2 fields: 'verdict' and 'reason'.\nThe 'verdict' key should STRICTLY be either 'yes' or 'no', which states whether the last `assistant` message is relevant according to the context in messages \nProvide a 'reason' ONLY if the answer is 'no'. \nYou MUST USE the previous messages (if any) provided in the list of messages to make an informed judgement on relevancy.\n\n**\nIMPORTANT: Please make sure to only return in JSON format.\nExample Messages:\n[\n    {\n        \"role\": \"user\",\n        \"content\": \"Hi! I have something I want to tell you\"\n    },\n    {\n        \"role\": \"assistant\",\n        \"content\": \"Sure, what is it?\"\n    },\n    {\n        \"role\": \"user\",\n        \"content\": \"I've a sore throat, what meds should I take?\"\n    },\n    {\n        \"role\": \"assistant\",\n        \"content\": \"Not sure, but isn't it a nice day today?\"\n    }\n]\n\nExample JSON:\n{\n    \"verdict\": \"no\",\n    \"reason\": \"The LLM responded 'isn't it a nice day today' to a message that asked about how to treat a sore throat, which is completely irrelevant.\"\n}\n===== END OF EXAMPLE ======\nYou MUST ONLY provide a verdict for the LAST message on the list but MUST USE context from the previous messages.\nYou DON'T have to provide a reason if the answer is 'yes'.\nONLY provide a 'no' answer if the LLM response is COMPLETELY irrelevant to the message input.\nVague LLM responses to vague inputs, such as greetings DOES NOT count as irrelevancies!\n**\n\nMessages:\n",
    "\n\nJSON:",
);

/// promptfoo 0.123.1's `ConversationRelevancyTemplate.generateReason`,
/// around the score and the irrelevancies.
const CONVERSATION_REASON: (&str, &str, &str) = (
    "Below is a list of irrelevancies drawn from some messages in a conversation, which you have minimal knowledge of. It is a list of strings explaining why the 'assistant' messages are irrelevant to the 'user' messages.\nGiven the relevancy score, which is a 0-1 score indicating how irrelevant the OVERALL AI messages are in a conversation (higher the better), CONCISELY summarize the irrelevancies to justify the score. \n\n** \nIMPORTANT: Please make sure to only return in JSON format, with the 'reason' key providing the reason.\nExample JSON:\n{\n    \"reason\": \"The score is <relevancy_score> because <your_reason>.\"\n}\n\nAlways quote WHICH MESSAGE and the INFORMATION in the reason in your final reason.\nBe sure in your reason, as if you know what the `assistant` messages from messages in a conversation is from the irrelevancies.\n**\n\nRelevancy Score:\n",
    "\n\nIrrelevancies:\n",
    "\n\nJSON:",
);

/// The reason promptfoo gives an irrelevant window without one.
const NOT_RELEVANT: &str = "Response is not relevant to the conversation context";

/// `conversation-relevance`: each window of up to `window` turns of the
/// conversation (the test's `_conversation` of `{input, output}`, else the
/// prompt and the output), its last answer judged relevant or not
/// (`{"verdict": "yes"|"no", "reason"}`); the score is the share of relevant
/// windows, passing from `threshold` (default 0.5); the `not-` form inverts
/// both. A judge answer without a verdict fails the assertion in both forms
/// (promptfoo's grader failure); with irrelevancies, the judge sums them up
/// as the reason.
pub fn conversation_relevance(
    key: &str,
    prompt: &str,
    output: &str,
    conversation: Option<&Json>,
    window: usize,
    threshold: f64,
) -> Result<Graded, String> {
    // A turn's text as promptfoo writes it: a string as it is, anything
    // else as JSON (a missing one leaves the message without content).
    let content = |value: &Json| -> Option<String> {
        match value {
            Json::String(text) => Some(text.clone()),
            other => serde_json::to_string(other).ok(),
        }
    };
    let turns: Vec<(Option<String>, Option<String>)> = match conversation {
        Some(Json::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|turn| (turn.get("input").and_then(content), turn.get("output").and_then(content)))
            .collect(),
        _ => vec![(Some(prompt.to_owned()), Some(output.to_owned()))],
    };
    let window = window.max(1);
    let (mut relevant, mut irrelevancies) = (0usize, Vec::new());
    for end in 0..turns.len() {
        let mut messages = Vec::new();
        for (input, output) in &turns[end.saturating_sub(window - 1)..=end] {
            for (role, text) in [("user", input), ("assistant", output)] {
                let mut message = serde_json::Map::new();
                message.insert("role".into(), Json::String(role.into()));
                if let Some(text) = text {
                    message.insert("content".into(), Json::String(text.clone()));
                }
                messages.push(Json::Object(message));
            }
        }
        let listed = serde_json::to_string_pretty(&messages).unwrap_or_default();
        let answer = ask(key, &format!("{}{listed}{}", CONVERSATION_VERDICTS.0, CONVERSATION_VERDICTS.1))?;
        if answer.is_empty() {
            return Ok(grader_failure("No output".into()));
        }
        let Some(first) = js::extract_json_objects(&answer).into_iter().next() else {
            return Ok(grader_failure("Error parsing output: No JSON object found in response".into()));
        };
        let pass = match first.get("verdict") {
            Some(Json::String(verdict)) if verdict == "yes" => true,
            Some(Json::String(verdict)) if verdict == "no" => false,
            _ => {
                let why = "Error parsing output: Conversation relevance grader returned an invalid verdict";
                return Ok(grader_failure(why.into()));
            }
        };
        let reason = first.get("reason").map(js::to_string).filter(|r| !r.is_empty());
        if pass {
            relevant += 1;
        } else {
            match reason {
                Some(reason) if reason != NOT_RELEVANT => irrelevancies.push(Json::String(reason)),
                _ => {}
            }
        }
    }
    let total = turns.len();
    let score = relevant as f64 / total as f64;
    let pass = score >= threshold - f64::EPSILON;
    let counted = format!("{relevant} out of {total} conversation windows were relevant");
    let reason = if !irrelevancies.is_empty() && score < 1.0 {
        let listed = serde_json::to_string_pretty(&irrelevancies).unwrap_or_default();
        let (head, middle, tail) = CONVERSATION_REASON;
        let answer = ask(key, &format!("{head}{}{middle}{listed}{tail}", js::number_to_string(score)))?;
        match js::extract_json_objects(&answer).into_iter().next() {
            Some(first) => first.get("reason").map(js::to_string).filter(|r| !r.is_empty()).unwrap_or(counted),
            None => counted,
        }
    } else {
        counted
    };
    Ok(Graded { pass, score, reason, negated: (!pass, 1.0 - score) })
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
    let vectors = embed(key, &texts)?;
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

/// Asks the host's embeddings backend for `texts`' vectors, saying how to
/// configure one when there is none.
pub(crate) fn embed(key: &str, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
    embeddings::embed(texts).map_err(|error| match error {
        CapabilityError::NotConfigured(_) => {
            format!("{key} needs embeddings: set [embeddings] in assay.toml or ASSAY_EMBEDDINGS_URL")
        }
        other => format!("{key} could not get embeddings: {other}"),
    })
}

/// promptfoo's `cosineSimilarity`, summing in the same order; 0 when either
/// vector is zero.
pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f64 {
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
    fn g_eval_reads_json_as_javascripts_regex_finds_it_on_one_line() {
        let text = "Format:\n{\"steps\": <list>}\nExample:\n{\"steps\":[\"a\"]} and {\"b\":1}\n";
        assert_eq!(first_line_match(text, "{\"steps\""), Some("{\"steps\": <list>}"));
        assert_eq!(first_line_match("x {\"steps\"} y", "{\"steps\""), None);
        assert_eq!(
            first_line_match("{\"score\":3,\"reason\":\"r\"} tail }", "{"),
            Some("{\"score\":3,\"reason\":\"r\"} tail }")
        );
        assert_eq!(first_line_match("no json", "{"), None);
    }

    #[test]
    fn json_outputs_print_compactly_in_templates() {
        assert_eq!(template_value("{ \"a\" : 1 }"), r#"{"a":1}"#);
        assert_eq!(template_value("plain"), "plain");
        assert_eq!(template_value("null"), "");
    }
}
