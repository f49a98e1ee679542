//! promptfoo's `select-best` and `max-score`: a test's outputs on every
//! prompt × provider compared with one another ([`crate::job::CaseGroup`]),
//! after the test's other assertions, as promptfoo decides them. The
//! config reader puts these assertions last (`Test::put_comparisons_last`)
//! so that the checks, the assertions and their results keep one order.

use crate::check::{Check, CheckResult, KeySet, Outcome, Target, Verdict, check_score};
use crate::errors::{ErrorKind, describe_json};
use crate::formats::promptfoo::config::{Test, is_comparison};
use crate::job::{CompareRule, Deciding, SampleResult, output_of};
use crate::template::NunjucksTemplate;
use serde_json::{Map, Value, json};

/// The key of `select-best`'s results, and of the promptfoo plugin's check
/// that reads the judge's choice.
pub(crate) const SELECT_BEST_KEY: &str = "pf_select_best";
/// The key of `max-score`'s results.
const MAX_SCORE_KEY: &str = "pf_max_score";

/// promptfoo 0.123.1's `SELECT_BEST_PROMPT`: one system message.
const SELECT_BEST_PROMPT: &str = "You are comparing multiple pieces of text to see which best fits the following criteria: {{criteria}}\n\nHere are the pieces of text:\n\n{% for output in outputs %}\n<Text index=\"{{ loop.index0 }}\">\n{{ output }}\n</Text>\n{% endfor %}\n\nOutput the index of the text that best fits the criteria. You must output a single integer.";

/// The type of `assertion`, if it has one.
fn kind(assertion: &Map<String, Value>) -> Option<&str> {
    assertion.get("type").and_then(Value::as_str)
}

/// The rules of `test`'s comparison assertions, or why they cannot run.
/// `members` is how many outputs they compare; `grader` gives a grading
/// provider's grader (for `select-best`'s judge).
pub fn rules(
    test: &Test,
    members: usize,
    grader: &dyn Fn(&Value) -> Result<crate::sandbox::Grader, String>,
    keys: &dyn KeySet,
) -> Result<Vec<Box<dyn CompareRule>>, String> {
    let own: Vec<&str> = test.asserts.iter().filter_map(|a| kind(a)).filter(|k| !is_comparison(k)).collect();
    // promptfoo decides every select-best before any max-score.
    let mut select_best_rules: Vec<Box<dyn CompareRule>> = Vec::new();
    let mut max_score_rules: Vec<Box<dyn CompareRule>> = Vec::new();
    for (i, assertion) in test.asserts.iter().enumerate() {
        let Some(kind) = kind(assertion).filter(|k| is_comparison(k)) else { continue };
        let at = format!("assert[{i}]");
        if kind.starts_with("not-") {
            return Err(format!(
                "{at} is `{kind}`, which promptfoo never runs (it compares only `select-best` and `max-score`); \
                 drop the `not-`"
            ));
        }
        if test.scoring.is_some() {
            return Err(format!(
                "{at} (`{kind}`) with an `assertScoringFunction` is not supported: the function decides the test \
                 before the comparison; keep one of them"
            ));
        }
        if test.output_transform().is_some() || assertion.contains_key("transform") {
            return Err(format!(
                "{at} (`{kind}`) compares the providers' answers, and assay does not compare transformed outputs; \
                 drop the `transform`"
            ));
        }
        if members < 2 {
            return Err(format!(
                "{at} (`{kind}`) must have at least two outputs to compare between; this test runs on one prompt \
                 and provider"
            ));
        }
        let line = test.assert_lines.get(i).copied().flatten();
        match kind {
            "select-best" => select_best_rules.push(Box::new(select_best(test, assertion, &at, grader, keys, line)?)),
            _ => max_score_rules.push(Box::new(max_score(assertion, &own, &at, line)?)),
        }
    }
    select_best_rules.append(&mut max_score_rules);
    Ok(select_best_rules)
}

/// A `select-best` assertion's rule.
fn select_best(
    test: &Test,
    assertion: &Map<String, Value>,
    at: &str,
    grader: &dyn Fn(&Value) -> Result<crate::sandbox::Grader, String>,
    keys: &dyn KeySet,
    line: Option<u32>,
) -> Result<SelectBest, String> {
    let criteria = match assertion.get("value") {
        Some(Value::String(criteria)) => criteria.clone(),
        other => {
            let found = other.map_or("missing".to_owned(), describe_json);
            return Err(format!("{at} (`select-best`) must have a string value, the criteria; it is {found}"));
        }
    };
    if !keys.has_key(SELECT_BEST_KEY) {
        return Err(format!(
            "{at} (`select-best`) needs the key `{SELECT_BEST_KEY}` of the promptfoo assertions plugin, which is not \
             loaded\n\nConsider [plugins.promptfoo] path = \"plugins/promptfoo/promptfoo.wasm\" in assay.toml"
        ));
    }
    let rubric = assertion.get("rubricPrompt").or_else(|| test.options.get("rubricPrompt"));
    let sources = match rubric {
        None => vec![SELECT_BEST_PROMPT.to_owned()],
        Some(rubric) => messages(&super::rubric_text(rubric)),
    };
    let messages = sources
        .iter()
        .map(|source| NunjucksTemplate::parse(source))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| format!("{at}: its rubricPrompt: {e}"))?;
    let mut check = Check::new(SELECT_BEST_KEY, Target::Text, json!({}));
    if let Some(provider) = assertion.get("provider").or_else(|| test.options.get("provider")) {
        check.grader = Some(grader(provider).map_err(|e| format!("{at}: {e}"))?);
    }
    let vars = test.vars.clone();
    Ok(SelectBest { criteria, messages, vars, check, line })
}

/// A rubric prompt's message contents: each message of a JSON list of
/// chat messages, or the whole text.
fn messages(rubric: &str) -> Vec<String> {
    match serde_json::from_str::<Value>(rubric) {
        Ok(Value::Array(list)) => list
            .iter()
            .map(|message| match &message["content"] {
                Value::String(content) => content.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => vec![rubric.to_owned()],
    }
}

/// A `max-score` assertion's rule: its `value`'s `method` (`average` or
/// `sum`), `weights` by assertion type and `threshold`, over the checks of
/// the test's other assertions (`own`, their types in order).
fn max_score(assertion: &Map<String, Value>, own: &[&str], at: &str, line: Option<u32>) -> Result<MaxScore, String> {
    let empty = Map::new();
    let value = match assertion.get("value") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(value)) => value,
        Some(other) => {
            return Err(format!(
                "{at} (`max-score`) has the value {}; it takes an object of `method`, `weights` and `threshold`",
                describe_json(other)
            ));
        }
    };
    if let Some(key) = value.keys().find(|k| !["method", "weights", "threshold"].contains(&k.as_str())) {
        return Err(format!(
            "{at}.value has `{key}`, which max-score does not read: it reads `method`, `weights` and `threshold`"
        ));
    }
    let sum = match value.get("method") {
        None => false,
        Some(Value::String(method)) if method == "sum" => true,
        Some(Value::String(method)) if method == "average" => false,
        Some(other) => return Err(format!("{at}.value.method is {}, not `average` or `sum`", describe_json(other))),
    };
    let by_type = match value.get("weights") {
        None => Map::new(),
        Some(Value::Object(weights)) => weights.clone(),
        Some(other) => {
            return Err(format!("{at}.value.weights is {}, not weights by assertion type", describe_json(other)));
        }
    };
    let mut weights = Vec::with_capacity(own.len());
    for kind in own {
        weights.push(match by_type.get(*kind) {
            None => 1.0,
            Some(weight) => weight.as_f64().ok_or_else(|| format!("{at}.value.weights.{kind} is not a number"))?,
        });
    }
    let threshold = match value.get("threshold") {
        None => None,
        Some(threshold) => Some(threshold.as_f64().ok_or_else(|| format!("{at}.value.threshold is not a number"))?),
    };
    let expected = Value::Object(value.clone());
    Ok(MaxScore { weights, sum, threshold, expected, line })
}

/// promptfoo's `select-best`: the judge picks the best output for the
/// criteria.
#[derive(Clone, Debug)]
pub(crate) struct SelectBest {
    /// What the judge looks for.
    pub criteria: String,
    /// The grading prompt's messages, templates of the test's vars,
    /// `criteria` and `outputs` (each output parsed as JSON when it is).
    pub messages: Vec<NunjucksTemplate>,
    /// The test's vars.
    pub vars: Map<String, Value>,
    /// The check that asks the judge: its key computes the index the
    /// judge chose (see [`SelectBest::verdicts`]) from the rendered prompt
    /// (its `prompt` expected value) and the number of outputs
    /// (`outputs`).
    pub check: Check,
    /// Its line in the case's file.
    pub line: Option<u32>,
}

/// promptfoo's `max-score`: the output whose other checks score best.
#[derive(Clone, Debug)]
pub(crate) struct MaxScore {
    /// Each of a member's own checks' weight, in check order (by its
    /// assertion type, 1 unless the rule says otherwise).
    pub weights: Vec<f64>,
    /// Whether the weighted scores are summed, not averaged.
    pub sum: bool,
    /// The lowest score the best may have to pass.
    pub threshold: Option<f64>,
    /// The expected value its results show (the assertion's `value`).
    pub expected: Value,
    /// Its line in the case's file.
    pub line: Option<u32>,
}

impl SelectBest {
    /// The prompt that asks the judge to pick one of `outputs`: the
    /// messages rendered, joined by a blank line.
    fn prompt(&self, outputs: &[&str]) -> Result<String, String> {
        let mut vars = self.vars.clone();
        vars.insert("criteria".into(), Value::String(self.criteria.clone()));
        let parsed = outputs.iter().map(|o| serde_json::from_str(o).unwrap_or_else(|_| Value::String((*o).into())));
        vars.insert("outputs".into(), Value::Array(parsed.collect()));
        let rendered: Result<Vec<String>, String> = self.messages.iter().map(|m| m.render(&vars)).collect();
        Ok(rendered?.join("\n\n"))
    }

    /// The check asking the judge to pick one of `outputs` with `prompt`.
    fn asking(&self, prompt: String, outputs: usize) -> Check {
        let expected = json!({ "prompt": prompt, "outputs": outputs });
        Check { expected_json: expected.to_string(), expected, ..self.check.clone() }
    }

    /// Each member's verdict from what the judge's check computed: `{"chosen":
    /// N}`, the index it chose, or `{"failed": REASON}`, where every member
    /// fails as promptfoo's do; an error verdict (the judge could not be
    /// asked) is every member's.
    fn verdicts(&self, computed: Result<Value, Verdict>, members: usize) -> Vec<Verdict> {
        let value = match computed {
            Ok(value) => value,
            Err(verdict) => return vec![verdict; members],
        };
        let chosen = match (&value["chosen"], &value["failed"]) {
            (Value::Number(n), _) => match n.as_u64().map(|n| n as usize).filter(|&n| n < members) {
                Some(index) => index,
                None => return vec![scored(Verdict::fail(format!("Invalid select-best verdict: {n}")), 0.0); members],
            },
            (_, Value::String(reason)) => return vec![scored(Verdict::fail(reason.clone()), 0.0); members],
            _ => {
                let message = format!("select-best's check gave {value}, not a chosen output");
                return vec![Verdict::error(ErrorKind::BadAnswer, message); members];
            }
        };
        (0..members)
            .map(|index| match index == chosen {
                true => scored(pass(format!("Output selected as the best: {}", self.criteria)), 1.0),
                false => scored(Verdict::fail(format!("Output not selected: {}", self.criteria)), 0.0),
            })
            .collect()
    }

}

impl CompareRule for SelectBest {
    fn first(&self, samples: &[Option<SampleResult>]) -> Deciding {
        let outputs: Vec<&str> = samples.iter().map(|s| output_of(s.as_ref())).collect();
        match self.prompt(&outputs) {
            Ok(prompt) => Deciding::AfterComputing { check: self.asking(prompt, outputs.len()), name: "select-best" },
            Err(why) => {
                let message = format!("select-best could not render its grading prompt: {why}");
                Deciding::Now(vec![Verdict::error(ErrorKind::BadAnswer, message); samples.len()])
            }
        }
    }

    fn decide(&self, computed: Result<Value, Verdict>, members: usize) -> Vec<Verdict> {
        self.verdicts(computed, members)
    }

    fn result(&self, verdict: Verdict) -> CheckResult {
        compared(SELECT_BEST_KEY, Value::String(self.criteria.clone()), verdict, self.line)
    }
}

impl MaxScore {
    /// Each member's verdict from its own checks' results (`None`: it
    /// has none, its request failed), promptfoo's `selectMaxScore`.
    fn verdicts(&self, members: &[Option<&[CheckResult]>]) -> Vec<Verdict> {
        let mut scores = Vec::with_capacity(members.len());
        for checks in members {
            let own: Vec<(usize, &CheckResult)> = checks
                .unwrap_or_default()
                .iter()
                .enumerate()
                .filter(|(_, check)| ![SELECT_BEST_KEY, MAX_SCORE_KEY].contains(&check.key.as_str()))
                .collect();
            if own.is_empty() {
                let why = "max-score requires at least one other assertion (besides max-score or select-best) to \
                           aggregate scores from";
                return vec![Verdict::error(ErrorKind::BadAnswer, why); members.len()];
            }
            let (mut total, mut weights) = (0.0, 0.0);
            for (index, check) in &own {
                let weight = self.weights.get(*index).copied().unwrap_or(1.0);
                total += check_score(check) * weight;
                weights += weight;
            }
            let score = match self.sum {
                true => total,
                false if weights > 0.0 => total / weights,
                false => 0.0,
            };
            scores.push((score, own.len(), weights));
        }
        let (mut best, mut winner) = (f64::NEG_INFINITY, 0);
        for (index, (score, _, _)) in scores.iter().enumerate() {
            if *score > best {
                (best, winner) = (*score, index);
            }
        }
        let meets = self.threshold.is_none_or(|threshold| best >= threshold);
        scores
            .iter()
            .enumerate()
            .map(|(index, &(score, count, weight))| {
                let verdict = if index == winner && meets {
                    scored(pass(format!("Selected as highest scoring output (score: {score:.3})")), 1.0)
                } else if score == best && !meets {
                    let threshold = self.threshold.unwrap_or_default();
                    scored(Verdict::fail(format!("Not selected - score {score:.3} below threshold {threshold}")), 0.0)
                } else {
                    scored(Verdict::fail(format!("Not selected (score: {score:.3}, max: {best:.3})")), 0.0)
                };
                let named = json!({ "maxScore": score, "assertionCount": count, "totalWeight": weight });
                Verdict { extras: Some(json!({ "named_scores": named })), ..verdict }
            })
            .collect()
    }

}

impl CompareRule for MaxScore {
    fn first(&self, samples: &[Option<SampleResult>]) -> Deciding {
        let checks: Vec<Option<&[CheckResult]>> = samples.iter().map(|s| own_checks(s.as_ref())).collect();
        Deciding::Now(self.verdicts(&checks))
    }

    fn result(&self, verdict: Verdict) -> CheckResult {
        compared(MAX_SCORE_KEY, self.expected.clone(), verdict, self.line)
    }
}

/// The checks of a member's first answer, or `None` when it has none.
fn own_checks(sample: Option<&SampleResult>) -> Option<&[CheckResult]> {
    let interaction = sample?.runs.first()?.interactions.first()?;
    interaction.response.as_ref().map(|_| interaction.checks.as_slice())
}

/// A rule's result on a member: its verdict on the member's answer text.
fn compared(key: &str, expected: Value, verdict: Verdict, line: Option<u32>) -> CheckResult {
    CheckResult {
        target: "text".into(),
        key: key.to_owned(),
        expected,
        actual: None,
        actual_is_answer: true,
        verdict,
        gate: true,
        line,
    }
}

/// A passing verdict decided by the host.
fn pass(message: String) -> Verdict {
    Verdict { outcome: Outcome::Pass, ..Verdict::fail(message) }
}

/// `verdict` with `score`.
fn scored(verdict: Verdict, score: f64) -> Verdict {
    Verdict { score: Some(score), ..verdict }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_prompt_lists_every_output_by_index() {
        let template = NunjucksTemplate::parse(SELECT_BEST_PROMPT).unwrap();
        let vars = json!({ "criteria": "funniest", "outputs": ["one", "two"] });
        let text = template.render(vars.as_object().unwrap()).unwrap();
        assert!(
            text.starts_with(
                "You are comparing multiple pieces of text to see which best fits the following criteria: funniest"
            ),
            "{text}"
        );
        assert!(
            text.contains("<Text index=\"0\">\none\n</Text>") && text.contains("<Text index=\"1\">\ntwo\n</Text>"),
            "{text}"
        );
    }
}
