//! promptfoo's `select-best` and `max-score`: a test's outputs on every
//! prompt × provider decided against one another, through the `assay`
//! binary, with a real judge server on 127.0.0.1 (a fake one) and the
//! `echo` provider (its answer is the prompt). Each comparison asks the
//! judge once whatever member runs first; filters, shards and replays
//! still compare every output; what promptfoo cannot mean is refused.

use super::promptfoo_suite::{completion, run_with, suite};
use crate::fake_server::FakeServer;
use crate::util::{assay_command, stdout};
use serde_json::{Value, json};

/// A judge answering select-best prompts with `answer_for(prompt)`.
fn judge(answer_for: fn(&str) -> String) -> FakeServer {
    FakeServer::start(move |request| {
        let prompt = request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        completion(request, &answer_for(&prompt), None)
    })
}

fn with_judge(judge: &FakeServer) -> std::process::Command {
    let mut command = assay_command();
    command.env("ASSAY_JUDGE_URL", format!("http://127.0.0.1:{}/v1", judge.port)).env("ASSAY_JUDGE_MODEL", "m");
    command
}

/// `assay run` of the config in `dir` with `judge` (its answers never
/// cached, as every run of `run_with`), and `extra`.
fn run_judged(judge: &FakeServer, dir: &std::path::Path, extra: &[&str]) -> super::promptfoo_suite::Ran {
    run_with(with_judge(judge), dir, extra)
}

/// The judge's prompts that compare outputs.
fn comparisons(judge: &FakeServer) -> Vec<String> {
    let requests = judge.requests.lock().unwrap();
    let prompts = requests.iter().filter_map(|r| r.body["messages"][0]["content"].as_str().map(str::to_owned));
    prompts.filter(|p| p.starts_with("You are comparing multiple pieces of text")).collect()
}

const TWO_PROMPTS: &str = r#"
prompts:
  - 'A tweet about {{topic}}'
  - 'A funny tweet about {{topic}}'
providers: [echo]
tests:
  - description: funniest
    vars: {topic: bananas}
    assert:
      - type: select-best
        value: choose the funniest tweet
      - type: icontains
        value: bananas
  - description: unreadable
    vars: {topic: nyc}
    assert:
      - type: select-best
        value: choose the tweet with the most facts
  - description: out of range
    vars: {topic: owls}
    assert:
      - type: select-best
        value: choose the best
"#;

/// The judge of [`TWO_PROMPTS`]: picks the second (funny) tweet about
/// bananas, cannot decide about nyc, names a seventh text for owls.
fn two_prompts_judge(prompt: &str) -> String {
    match () {
        _ if prompt.contains("about bananas") => "The funniest is 1.".to_owned(),
        _ if prompt.contains("about nyc") => "I cannot tell.".to_owned(),
        _ => "7".to_owned(),
    }
}

fn status(lines: &[Value], suffix: &str) -> String {
    let line = lines.iter().find(|l| l["id"].as_str().unwrap().ends_with(suffix)).unwrap_or_else(|| panic!("{suffix}"));
    line["status"].as_str().unwrap().to_owned()
}

/// The comparison's result on the case whose id ends with `suffix`.
fn compared(lines: &[Value], suffix: &str) -> Value {
    let line = lines.iter().find(|l| l["id"].as_str().unwrap().ends_with(suffix)).unwrap();
    let checks = line["samples"][0]["runs"][0]["interactions"][0]["checks"].as_array().unwrap();
    checks.last().unwrap().clone()
}

#[test]
fn select_best_passes_only_the_output_the_judge_picks_asking_it_once_per_test() {
    let judge = judge(two_prompts_judge);
    let dir = suite(TWO_PROMPTS, &[]);
    let ran = run_judged(&judge, dir.path(), &[]);
    let out = stdout(&ran.output);
    assert_eq!(ran.lines.len(), 6, "{out}");
    // bananas: the judge picked text 1, the funny prompt's answer.
    assert_eq!(status(&ran.lines, "[A tweet about {{topic}}] funniest"), "failed", "{out}");
    assert_eq!(status(&ran.lines, "[A funny tweet about {{topic}}] funniest"), "passed");
    let picked = compared(&ran.lines, "[A funny tweet about {{topic}}] funniest");
    assert_eq!(picked["key"], "pf_select_best");
    assert_eq!(picked["message"], "Output selected as the best: choose the funniest tweet");
    let other = compared(&ran.lines, "[A tweet about {{topic}}] funniest");
    assert_eq!((other["outcome"].clone(), other["score"].clone()), (json!("fail"), json!(0.0)));
    assert_eq!(other["message"], "Output not selected: choose the funniest tweet");
    // Its own assertion still ran first and passed on both.
    let line = ran.lines.iter().find(|l| l["id"].as_str().unwrap().ends_with("] funniest")).unwrap();
    assert_eq!(line["samples"][0]["runs"][0]["interactions"][0]["checks"][0]["key"], "pf_icontains");
    // No integer, or one that names no output: every member fails.
    for suffix in ["unreadable", "out of range"] {
        for prompt in ["A tweet about {{topic}}", "A funny tweet about {{topic}}"] {
            assert_eq!(status(&ran.lines, &format!("[{prompt}] {suffix}")), "failed", "{out}");
        }
    }
    let nan = compared(&ran.lines, "unreadable");
    assert_eq!(nan["message"], "Invalid select-best verdict: NaN");
    assert_eq!(compared(&ran.lines, "out of range")["message"], "Invalid select-best verdict: 7");
    // One comparison per test, each listing both outputs in column order.
    let asked = comparisons(&judge);
    assert_eq!(asked.len(), 3, "{asked:#?}");
    let bananas = asked.iter().find(|p| p.contains("bananas")).unwrap();
    assert!(bananas.starts_with(
        "You are comparing multiple pieces of text to see which best fits the following criteria: choose the funniest tweet"
    ));
    assert!(
        bananas.contains("<Text index=\"0\">\nA tweet about bananas\n</Text>")
            && bananas.contains("<Text index=\"1\">\nA funny tweet about bananas\n</Text>"),
        "{bananas}"
    );
    // promptfoo's output lists the comparison after the test's own.
    let result = ran.promptfoo_result("[A funny tweet about {{topic}}] funniest");
    let components = result["gradingResult"]["componentResults"].as_array().unwrap();
    assert_eq!(components.len(), 2, "{result}");
    assert_eq!(components[1]["assertion"]["type"], "select-best");
    assert_eq!(result["success"], true);
    let loser = ran.promptfoo_result("[A tweet about {{topic}}] funniest");
    assert_eq!((loser["success"].clone(), loser["score"].clone()), (json!(false), json!(0.0)), "{loser}");
}

#[test]
fn a_filtered_or_sharded_run_still_compares_every_output_and_reports_each_case_once() {
    let judge = judge(two_prompts_judge);
    let dir = suite(TWO_PROMPTS, &[]);
    let ran = run_judged(&judge, dir.path(), &["--filter", "funny tweet about {{topic}}] funniest"]);
    assert_eq!(ran.lines.len(), 1, "{}", stdout(&ran.output));
    assert_eq!(ran.lines[0]["status"], "passed", "{}", stdout(&ran.output));
    let asked = comparisons(&judge);
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("A tweet about bananas"), "the filtered-out output is compared: {}", asked[0]);

    let mut statuses = Vec::new();
    for shard in ["1/2", "2/2"] {
        let dir = suite(TWO_PROMPTS, &[]);
        let ran = run_judged(&judge, dir.path(), &["--shard", shard]);
        for line in &ran.lines {
            statuses.push((line["id"].as_str().unwrap().to_owned(), line["status"].as_str().unwrap().to_owned()));
        }
    }
    statuses.sort();
    let whole = suite(TWO_PROMPTS, &[]);
    let ran = run_judged(&judge, whole.path(), &[]);
    let mut unsharded: Vec<(String, String)> = ran
        .lines
        .iter()
        .map(|l| (l["id"].as_str().unwrap().to_owned(), l["status"].as_str().unwrap().to_owned()))
        .collect();
    unsharded.sort();
    assert_eq!(statuses, unsharded);
}

#[test]
fn a_replay_compares_the_recorded_outputs_again() {
    let judge = judge(two_prompts_judge);
    let dir = suite(TWO_PROMPTS, &[]);
    let first = run_judged(&judge, dir.path(), &[]);
    let recorded = dir.path().join("recorded");
    std::fs::rename(dir.path().join("results"), &recorded).unwrap();
    let replayed = run_judged(&judge, dir.path(), &["--replay", recorded.to_str().unwrap()]);
    let statuses = |lines: &[Value]| {
        let mut all: Vec<(String, String)> =
            lines.iter().map(|l| (l["id"].to_string(), l["status"].to_string())).collect();
        all.sort();
        all
    };
    assert_eq!(statuses(&replayed.lines), statuses(&first.lines), "{}", stdout(&replayed.output));
    assert_eq!(comparisons(&judge).len(), 6, "three comparisons, asked again on replay");

    // A replay of results that lack a member's answer says so.
    let partial = dir.path().join("partial");
    std::fs::create_dir(&partial).unwrap();
    let kept: Vec<String> = std::fs::read_to_string(recorded.join("results.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("[A tweet about {{topic}}] funniest"))
        .map(str::to_owned)
        .collect();
    std::fs::write(partial.join("results.jsonl"), kept.join("\n") + "\n").unwrap();
    let args = ["--replay", partial.to_str().unwrap(), "--filter", "funny tweet about {{topic}}] funniest"];
    let replayed = run_judged(&judge, dir.path(), &args);
    let check = compared(&replayed.lines, "funniest");
    assert_eq!(check["outcome"], "error", "{check}");
    assert!(
        check["message"].as_str().unwrap().contains("the replayed results have no answer for")
            && check["message"].as_str().unwrap().contains("[A tweet about {{topic}}] funniest"),
        "{check}"
    );
}

#[test]
fn max_score_passes_the_output_whose_other_assertions_score_best() {
    let config = r#"
prompts:
  - 'short answer about {{topic}}'
  - 'longer, about {{topic}} with details'
providers: [echo]
tests:
  - description: average
    vars: {topic: owls}
    assert:
      - type: max-score
      - type: icontains
        value: details
      - type: icontains
        value: owls
  - description: weighted below threshold
    vars: {topic: owls}
    assert:
      - type: icontains
        value: short
      - type: icontains
        value: details
      - type: max-score
        value: {method: sum, weights: {icontains: 0.5}, threshold: 2}
  - description: ties go to the first
    vars: {topic: owls}
    assert:
      - type: icontains
        value: owls
      - type: max-score
"#;
    let dir = suite(config, &[]);
    let ran = run_with(assay_command(), dir.path(), &[]);
    let out = stdout(&ran.output);
    assert_eq!(ran.lines.len(), 6, "{out}");
    let short = "[short answer about {{topic}}]";
    let long = "[longer, about {{topic}} with details]";
    assert_eq!(status(&ran.lines, &format!("{short} average")), "failed", "{out}");
    assert_eq!(status(&ran.lines, &format!("{long} average")), "passed", "{out}");
    let winner = compared(&ran.lines, &format!("{long} average"));
    assert_eq!(winner["key"], "pf_max_score");
    assert_eq!(winner["message"], "Selected as highest scoring output (score: 1.000)");
    assert_eq!(winner["extras"]["named_scores"], json!({"maxScore": 1.0, "assertionCount": 2, "totalWeight": 2.0}));
    let loser = compared(&ran.lines, &format!("{short} average"));
    assert_eq!(loser["message"], "Not selected (score: 0.500, max: 1.000)");
    // Summed with weight 0.5: each scores 0.5, the best is below 2.
    for prompt in [short, long] {
        assert_eq!(status(&ran.lines, &format!("{prompt} weighted below threshold")), "failed", "{out}");
    }
    assert_eq!(
        compared(&ran.lines, &format!("{short} weighted below threshold"))["message"],
        "Not selected - score 0.500 below threshold 2"
    );
    assert_eq!(status(&ran.lines, &format!("{short} ties go to the first")), "passed");
    assert_eq!(status(&ran.lines, &format!("{long} ties go to the first")), "failed");
    // promptfoo's output: the assertions in promptfoo's order, the comparison last.
    let result = ran.promptfoo_result(&format!("{long} average"));
    let types: Vec<&str> = result["gradingResult"]["componentResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["assertion"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["icontains", "icontains", "max-score"]);
    let loser = ran.promptfoo_result(&format!("{short} average"));
    assert_eq!((loser["success"].clone(), loser["score"].clone()), (json!(false), json!(0.0)), "{loser}");
    assert_eq!(loser["gradingResult"]["reason"], "Not selected (score: 0.500, max: 1.000)", "{loser}");
    assert_eq!(loser["namedScores"]["maxScore"], 0.5, "{loser}");
}

#[test]
fn comparisons_promptfoo_cannot_mean_are_refused_naming_the_assertion() {
    let config = r#"
prompts: ['a {{x}}', 'b {{x}}']
providers: [echo]
tests:
  - description: negated
    vars: {x: 1}
    assert: [{type: not-select-best, value: best}]
  - description: no criteria
    vars: {x: 1}
    assert: [{type: select-best}]
  - description: a key max-score does not read
    vars: {x: 1}
    assert: [{type: icontains, value: a}, {type: max-score, value: {metod: sum}}]
  - description: nothing else to score
    vars: {x: 1}
    assert: [{type: max-score}]
  - description: one output
    prompts: ['a {{x}}']
    vars: {x: 1}
    assert: [{type: max-score}, {type: icontains, value: a}]
"#;
    let dir = suite(config, &[]);
    let ran = run_with(assay_command(), dir.path(), &[]);
    let message = |suffix: &str| ran.case(suffix)["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(
        message("[a {{x}}] negated").contains("`not-select-best`, which promptfoo never runs"),
        "{}",
        message("[a {{x}}] negated")
    );
    assert!(message("[b {{x}}] no criteria").contains("must have a string value, the criteria"));
    assert!(message("[a {{x}}] a key max-score does not read").contains("has `metod`, which max-score does not read"));
    assert!(
        message("one output").contains("must have at least two outputs to compare between"),
        "{}",
        message("one output")
    );
    // Without other assertions, every member errs as promptfoo throws.
    let check = compared(&ran.lines, "[a {{x}}] nothing else to score");
    assert_eq!(check["outcome"], "error");
    assert!(check["message"].as_str().unwrap().starts_with("max-score requires at least one other assertion"));
}

#[test]
fn a_groups_members_ask_their_agents_no_more_at_once_than_the_run_allows() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NOW: AtomicUsize = AtomicUsize::new(0);
    static MOST: AtomicUsize = AtomicUsize::new(0);
    let server = FakeServer::start(|request| {
        let now = NOW.fetch_add(1, Ordering::SeqCst) + 1;
        MOST.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(150));
        NOW.fetch_sub(1, Ordering::SeqCst);
        let asked = request.body["input"].as_str().unwrap_or_default().to_owned();
        crate::connections::connections_openai::json_reply(200, "", &json!({ "answer": asked }))
    });
    let config = format!(
        r#"
prompts: ['a {{{{x}}}}', 'b {{{{x}}}}', 'c {{{{x}}}}', 'd {{{{x}}}}']
providers:
  - id: http://127.0.0.1:{port}/ask
    config: {{body: {{input: "{{{{prompt}}}}"}}, transformResponse: json.answer}}
tests:
  - vars: {{x: 1}}
    assert: [{{type: icontains, value: a}}, {{type: max-score}}]
"#,
        port = server.port
    );
    let dir = suite(&config, &[]);
    let ran = run_with(assay_command(), dir.path(), &["-j", "1"]);
    assert_eq!(ran.lines.len(), 4, "{}", stdout(&ran.output));
    assert_eq!(server.requests.lock().unwrap().len(), 4);
    assert_eq!(MOST.load(Ordering::SeqCst), 1, "with -j 1 the members ask one at a time");
}

#[test]
fn a_member_that_never_answers_ends_at_its_deadline_and_every_case_is_reported_once() {
    let server = FakeServer::start(|request| {
        let asked = request.body["input"].as_str().unwrap_or_default().to_owned();
        if asked.starts_with("slow") {
            std::thread::sleep(std::time::Duration::from_secs(4));
        }
        crate::connections::connections_openai::json_reply(200, "", &json!({ "answer": asked }))
    });
    let judge = judge(|_| "0".to_owned());
    let config = format!(
        r#"
prompts: ['fast {{{{x}}}}', 'slow {{{{x}}}}']
providers:
  - id: http://127.0.0.1:{port}/ask
    config: {{body: {{input: "{{{{prompt}}}}"}}, transformResponse: json.answer}}
tests:
  - vars: {{x: 1}}
    assert: [{{type: select-best, value: the fastest}}]
"#,
        port = server.port
    );
    let dir = suite(&config, &[]);
    let started = std::time::Instant::now();
    let ran = run_judged(&judge, dir.path(), &["--timeout", "1"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(4), "the run waited for the slow member");
    assert_eq!(ran.lines.len(), 2, "{}", stdout(&ran.output));
    let slow = ran.case("[slow {{x}}] test 1");
    assert_eq!(slow["status"], "error", "{slow}");
    assert!(slow.to_string().contains("timeout") || slow.to_string().contains("deadline"), "{slow}");
    // The fast one is compared with the slow one's missing answer, as
    // promptfoo compares an errored row's empty output.
    let fast = ran.case("[fast {{x}}] test 1");
    assert_eq!(fast["status"], "passed", "{fast}");
    let asked = comparisons(&judge);
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("<Text index=\"1\">\n\n</Text>"), "{}", asked[0]);
}
