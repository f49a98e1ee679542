//! promptfoo configs run as they are (`assay run promptfooconfig.yaml`),
//! through the `assay` binary: every construct of the reader (prompts
//! inline and from files, providers, tests inline and from CSV, YAML and
//! JSONL files, `defaultTest`, var combinations, the Nunjucks subset,
//! `options.prefix`/`suffix`), each error naming the test and the fix,
//! providers against real local servers (the OpenAI mock of `assay agent
//! serve`, a fake JSON API, an `exec:` script), promptfoo's test grading
//! (`threshold`, `weight`, `metric`), promptfoo's output file, and hostile
//! configs. Assertions here use `assay:KEY` (any assay matcher) where the
//! promptfoo plugin's own keys are not what is tested.

use crate::connections::connections_openai::json_reply;
use crate::fake_server::FakeServer;
use crate::util::{Served, assay_command, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

/// A folder holding `promptfooconfig.yaml` and the other files given, and
/// an `assay.toml` that trusts the config (its `exec:` providers run; see
/// `trust.rs` for a config that is data).
pub(crate) fn suite(config: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("promptfooconfig.yaml"), config).unwrap();
    std::fs::write(dir.path().join("assay.toml"), "[trust]\ncommands = [\"promptfooconfig.yaml\"]\n").unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// What a run gave: its output, its results lines, and promptfoo's output
/// file.
pub(crate) struct Ran {
    pub(crate) output: std::process::Output,
    pub(crate) lines: Vec<Value>,
    pub(crate) promptfoo: Value,
}

impl Ran {
    /// The results line of the case whose id ends with `suffix`.
    pub(crate) fn case(&self, suffix: &str) -> &Value {
        let ids: Vec<&str> = self.lines.iter().filter_map(|l| l["id"].as_str()).collect();
        self.lines
            .iter()
            .find(|line| line["id"].as_str().is_some_and(|id| id.ends_with(suffix)))
            .unwrap_or_else(|| panic!("no case ending with {suffix:?} among {ids:?}\n{}", stdout(&self.output)))
    }

    /// The text the case's agent answered.
    fn answer(&self, suffix: &str) -> &str {
        self.case(suffix)["samples"][0]["runs"][0]["interactions"][0]["response"]["text"].as_str().unwrap_or_default()
    }

    /// promptfoo's result of the case whose id ends with `suffix`.
    pub(crate) fn promptfoo_result(&self, suffix: &str) -> &Value {
        let results = self.promptfoo["results"]["results"].as_array().expect("results.results");
        results
            .iter()
            .find(|r| r["id"].as_str().is_some_and(|id| id.ends_with(suffix)))
            .unwrap_or_else(|| panic!("no promptfoo result for {suffix:?}"))
    }

    pub(crate) fn ids(&self) -> Vec<String> {
        self.lines.iter().map(|l| l["id"].as_str().unwrap().to_owned()).collect()
    }
}

/// `assay run DIR/promptfooconfig.yaml` with the folder's assay.toml,
/// `-o DIR/out.json` and no answer cache, plus `extra`.
pub(crate) fn run(dir: &Path, extra: &[&str]) -> Ran {
    run_with(assay_command(), dir, extra)
}

pub(crate) fn run_with(mut command: std::process::Command, dir: &Path, extra: &[&str]) -> Ran {
    let config = dir.join("promptfooconfig.yaml");
    let results = dir.join("results");
    let out = dir.join("out.json");
    let assay_toml = dir.join("assay.toml");
    let args = [
        "run",
        config.to_str().unwrap(),
        "--config",
        assay_toml.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        // A judge on a port an earlier run's judge had, asked the same
        // prompt, would be answered from that run's cache, and the test
        // would not see the request it looks for.
        "--no-judge-cache",
    ];
    let output = command.args(args).args(extra).output().unwrap();
    let lines = std::fs::read_to_string(results.join("results.jsonl"))
        .map(|text| text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
        .unwrap_or_default();
    let promptfoo = std::fs::read_to_string(&out).map(|t| serde_json::from_str(&t).unwrap()).unwrap_or(Value::Null);
    Ran { output, lines, promptfoo }
}

#[test]
fn every_prompt_provider_and_test_is_a_case_rendered_as_promptfoo_renders_it() {
    let config = r#"
prompts:
  - "Q: {{question}}"
  - file://prompts.txt
  - {raw: "Raw {{ user.name | trim | dump }}", label: labelled}
providers: [echo]
defaultTest:
  vars: {who: " world ", user: {name: "  Ann  "}}
  options: {prefix: "<", suffix: ">"}
tests:
  - description: inline
    vars: {question: "2+2?"}
  - vars: {question: [red, blue]}
  - file://more.yaml
  - file://rows.jsonl
  - file://rows.csv
"#;
    let dir = suite(
        config,
        &[
            ("prompts.txt", "Hi {{ who | trim }}\n---\nn{{n}} {{list}}{{missing}}\n"),
            ("more.yaml", "- description: from yaml\n  vars: {question: yaml, n: 3.0, list: [1, 2]}\n"),
            ("rows.jsonl", "{\"description\": \"from jsonl\", \"vars\": {\"question\": \"jsonl\"}}\n\n"),
            ("rows.csv", "question,__description,__prefix\n\"a, \"\"quoted\"\" one\",from csv,[\n"),
        ],
    );
    let ran = run(dir.path(), &[]);
    assert!(ran.output.status.success(), "{}{}", stdout(&ran.output), stderr(&ran.output));
    // 4 prompts (the file holds two) × 1 provider × 6 tests (one with two combinations).
    assert_eq!(ran.lines.len(), 24, "{:?}", ran.ids());
    assert_eq!(ran.answer("[Q: {{question}}] inline"), "<Q: 2+2?>");
    assert_eq!(ran.answer("[Q: {{question}}] test 2 #1"), "<Q: red>");
    assert_eq!(ran.answer("[Q: {{question}}] test 2 #2"), "<Q: blue>");
    assert_eq!(ran.answer("[prompts.txt: Hi {{ who | trim }}] inline"), "<Hi world>");
    assert_eq!(ran.answer("[prompts.txt: n{{n}} {{list}}{{missing}}] from yaml"), "<n3 1,2>");
    assert_eq!(ran.answer("[labelled] from jsonl"), "<Raw \"Ann\">");
    // A CSV row's `__prefix` is the test's own option, over defaultTest's.
    assert_eq!(ran.answer("[Q: {{question}}] from csv"), "[Q: a, \"quoted\" one>");
    let id = ran.case("[Q: {{question}}] inline")["id"].as_str().unwrap();
    assert!(id.ends_with("promptfooconfig/[Q: {{question}}] inline"), "{id}");
}

#[test]
fn each_unsupported_construct_is_an_error_naming_the_test_and_the_fix() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: py
    assert: [{type: not-python, value: "file://check.txt"}]
  - description: transform
    assert: [{type: assay:keywords, value: x, transform: "output.toUpperCase()"}]
  - description: context transform
    assert: [{type: contains, value: x, contextTransform: "output"}]
  - description: unknown type
    assert: [{type: perplexity}]
  - description: tag
    vars: {q: "{% if x %}y{% endif %}"}
  - description: the plugin loads on demand
    vars: {q: x}
    assert: [{type: contains, value: x}, {type: not-icontains, value: Y}]
  - description: test provider
    provider: openai:gpt-4o
"#;
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    assert_eq!(ran.output.status.code(), Some(1));
    let error = |suffix: &str| ran.case(suffix)["error"]["message"].as_str().unwrap_or_default().to_owned();
    let py = error("/py");
    assert!(
        py.contains("tests[0] (\"py\")")
            && py.contains("`not-python`) names `file://check.txt`, which is not a `.py` file; write `file://FILE.py`"),
        "{py}"
    );
    // promptfoo's own assertions take a `transform`; an `assay:KEY` one
    // says what it takes.
    let transform = error("/transform");
    assert!(transform.contains("has `transform`; an `assay:KEY` assertion has `value`, `weight`"), "{transform}");
    let context = error("/context transform");
    assert!(context.contains("`contextTransform`") && context.contains("give the test a `context` var"), "{context}");
    let unknown = error("/unknown type");
    assert!(unknown.contains("`perplexity` is not an assertion type") && unknown.contains("levenshtein"), "{unknown}");
    // A var holding template syntax is rendered too (promptfoo renders a
    // rendered prompt again): `x` is not set, so nothing is sent.
    assert_eq!(ran.case("/tag")["status"], "passed");
    assert_eq!(ran.answer("/tag"), "");
    assert_eq!(ran.case("/the plugin loads on demand")["status"], "passed");
    assert!(error("/test provider").contains("`provider` is not supported"), "{}", error("/test provider"));

    // Tags, loops and filters render as promptfoo's Nunjucks renders them;
    // what Nunjucks has and Jinja lacks is the case's error, saying so.
    let config = "prompts:\n  - {raw: '{% for x in o.xs %}{{ loop.index }}{{x}} {% endfor %}{% if q %}{{ q | upper }}{% endif %}', label: loop}\n  - {raw: '{{ q | random }}', label: random}\n  - {raw: '{{ q | upperr }}', label: typo}\nproviders: [echo]\ntests: [{vars: {o: {xs: [a, b]}, q: hi}}]\n";
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    let error = |suffix: &str| ran.case(suffix)["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert_eq!(ran.answer("[loop] test 1"), "1a 2b HI");
    let random = error("[random] test 1");
    assert!(random.contains("`random` is a Nunjucks filter that assay's templates do not have"), "{random}");
    let typo = error("[typo] test 1");
    assert!(typo.contains("unknown filter `upperr` (did you mean `upper`?)"), "{typo}");
}

#[test]
fn a_config_that_cannot_be_read_is_one_error_case_naming_the_key() {
    let cases = [
        (
            "prompts: [x]\nproviders: [anthropic:messages:claude-3-5-sonnet]\ntests: [{}]\n",
            "providers[0]: the provider `anthropic:messages:claude-3-5-sonnet` is not supported",
        ),
        ("prompts: [x]\nproviders: [echo]\nscenarios: []\n", "scenarios are not supported"),
        ("prompts: [x]\nproviders: [echo]\ntests: file://nowhere.csv\n", "nowhere.csv"),
        (
            "prompts: [x]\nproviders: [{id: http, config: {url: 'http://127.0.0.1:1', transformResponse: 'file://t.js'}}]\n",
            "is a module's function, which assay does not run for a provider",
        ),
        (
            "prompts: [x]\nproviders: [{id: http, config: {url: 'http://127.0.0.1:1', transformResponse: 'context.response.status'}}]\n",
            "reads `context` (the response's status and headers), which assay does not give it",
        ),
        (
            "prompts: [x]\nproviders: [{id: 'openai:chat:m', config: {num_predict: 5}}]\n",
            "`config.num_predict` is not a parameter promptfoo's openai provider sends; to send it in the request body as it is, put it under `config.passthrough`",
        ),
        ("prompts: [x]\nproviders: [echo]\nmystery: 1\n", "`mystery` is not a promptfoo config key assay reads"),
        ("prompts: [x]\nproviders: [echo]\ntargets: [echo]\n", "both `providers` and `targets`"),
        ("prompts: [x]\nproviders: [{id: echo, delay: 5}]\n", "a provider's `delay` is not supported"),
        ("prompts: [x]\nproviders: [{id: echo, prompts: [y]}]\n", "`y` names no prompt; the prompts' labels are \"x\""),
        (
            "prompts: [x]\nproviders: [echo]\ntests: [{vars: {}, options: {storeOutputAs: [a]}}]\n",
            "`options.storeOutputAs` is the list [\"a\"], not the name of a var",
        ),
        (
            "prompts: [x]\nproviders: [echo]\ntests: [{options: {provider: 'vertex:gemini'}, assert: [{type: llm-rubric, value: y}]}]\n",
            "the grading provider `vertex:gemini` is not supported",
        ),
        (
            "prompts: [x]\nproviders: [echo]\ntests: [{assertScoringFunction: 'file://s.js'}]\n",
            "assertScoringFunction: cannot read it: `file://s.js`",
        ),
        ("prompts: [x]\nproviders: [echo]\ntests: [{providerOutput: hi}]\n", "`providerOutput` is not supported"),
        (
            "prompts: [x]\nproviders: [echo]\ntests: [{vars: {a: 'file://a.py'}}]\n",
            "its var `a` (`file://a.py`): cannot read it",
        ),
        ("providers: [echo]\n", "the config has no prompts"),
        ("prompts: [x]\nproviders: [echo]\ntests: [3]\n", "tests[0]"),
    ];
    for (config, expected) in cases {
        let dir = suite(config, &[]);
        let ran = run(dir.path(), &[]);
        assert_eq!(ran.output.status.code(), Some(1), "{config}");
        let message = ran.lines.iter().map(|l| l["error"]["message"].as_str().unwrap_or_default()).collect::<String>();
        assert!(message.contains(expected), "{config}: {message}");
    }
    // The unsupported provider's cases say what to use instead.
    let dir = suite("prompts: [x]\nproviders: ['ollama:chat:llama3']\n", &[]);
    let ran = run(dir.path(), &[]);
    let message = ran.lines[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("apiBaseUrl: http://localhost:11434/v1"), "{message}");
}

#[test]
fn threshold_weight_and_metric_grade_a_test_as_promptfoo_does() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
tests:
  - description: every assertion must pass
    vars: {q: alpha beta}
    assert:
      - {type: "assay:keywords", value: alpha, metric: words}
      - {type: "assay:keywords", value: gamma, weight: 0, metric: words}
  - description: the weighted mean reaches the threshold
    threshold: 0.75
    vars: {q: alpha beta}
    assert:
      - {type: "assay:keywords", value: alpha, weight: 3, metric: "{{q}} hits"}
      - {type: "assay:keywords", value: gamma}
  - description: the weighted mean misses it
    threshold: 0.8
    vars: {q: alpha beta}
    assert:
      - {type: "assay:keywords", value: alpha, weight: 3}
      - {type: "assay:keywords", value: gamma}
  - description: weights of 0 make a score of 0
    threshold: 0.1
    vars: {q: alpha}
    assert:
      - {type: "assay:keywords", value: alpha, weight: 0}
  - description: no assertions pass
    vars: {q: alpha}
"#;
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    let status = |suffix: &str| ran.case(suffix)["status"].as_str().unwrap().to_owned();
    // A failed assertion of weight 0 still fails a test without a threshold.
    assert_eq!(status("every assertion must pass"), "failed");
    assert_eq!(status("the weighted mean reaches the threshold"), "passed");
    assert_eq!(status("the weighted mean misses it"), "failed");
    assert_eq!(status("weights of 0 make a score of 0"), "failed");
    assert_eq!(status("no assertions pass"), "passed");
    let every = ran.promptfoo_result("every assertion must pass");
    assert_eq!(every["score"], json!(1.0));
    assert_eq!(every["success"], json!(false));
    assert_eq!(every["namedScores"], json!({"words": 1.0}));
    let reached = ran.promptfoo_result("the weighted mean reaches the threshold");
    assert_eq!(reached["score"], json!(0.75));
    assert_eq!(reached["namedScores"], json!({"alpha beta hits": 1.0}));
    assert_eq!(reached["gradingResult"]["reason"], "Aggregate score 0.75 ≥ 0.75 threshold");
    let missed = ran.promptfoo_result("the weighted mean misses it");
    assert_eq!((missed["success"].clone(), missed["failureReason"].clone()), (json!(false), json!(1)));
    assert_eq!(ran.promptfoo_result("weights of 0 make a score of 0")["score"], json!(0.0));
    assert_eq!(ran.promptfoo_result("no assertions pass")["score"], json!(1.0));
}

#[test]
fn promptfoos_output_file_has_the_fields_its_consumers_read() {
    let config = r#"
prompts: ["Say {{word}}"]
providers: [{id: echo, label: mirror}, "exec:./missing-program"]
tests:
  - description: said
    vars: {word: hi}
    assert: [{type: "assay:keywords", value: hi}, {type: "assay:not_keywords", value: bye}]
"#;
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    let document = &ran.promptfoo;
    assert_eq!(document["results"]["version"], 3);
    assert_eq!(document["results"]["stats"]["successes"], 1);
    assert_eq!(document["results"]["stats"]["failures"], 0);
    assert_eq!(document["results"]["stats"]["errors"], 1);
    let prompts = document["results"]["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 2);
    assert_eq!(prompts[0]["provider"], "mirror");
    let result = ran.promptfoo_result("[mirror] said");
    for field in ["success", "score", "namedScores", "gradingResult", "vars", "prompt", "provider", "response"] {
        assert!(!result[field].is_null(), "{field} in {result}");
    }
    assert_eq!(result["success"], true);
    assert_eq!(result["vars"], json!({"word": "hi"}));
    assert_eq!(result["prompt"], json!({"raw": "Say hi", "label": "Say {{word}}"}));
    assert_eq!(result["provider"], json!({"id": "echo", "label": "mirror"}));
    assert_eq!(result["response"]["output"], "Say hi");
    let components = result["gradingResult"]["componentResults"].as_array().unwrap();
    assert_eq!(components.len(), 2);
    assert_eq!(components[1]["pass"], true);
    assert_eq!(components[1]["score"], 1.0);
    assert_eq!(components[1]["assertion"], json!({"type": "assay:not_keywords", "value": "bye"}));
    assert!(components[0]["reason"].as_str().unwrap().contains("hi"));
    let failed = ran.promptfoo_result("[exec:./missing-program] said");
    assert_eq!((failed["success"].clone(), failed["failureReason"].clone()), (json!(false), json!(2)));
    assert!(failed["error"].as_str().unwrap().contains("missing-program"), "{failed}");
    assert!(failed["gradingResult"].is_null());
}

#[test]
fn promptfoos_output_file_lists_results_in_promptfoos_order_and_leaves_nothing_beside_it() {
    // Two prompts × 60 tests, eight at a time: the cases end in any order,
    // and their results wait in a temporary file until the run ends.
    let tests: String = (0..60).map(|i| format!("  - vars: {{word: w{i}}}\n")).collect();
    let config = format!("prompts: ['Say {{{{word}}}}', 'Repeat {{{{word}}}}']\nproviders: [echo]\ntests:\n{tests}");
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &["-j", "8"]);
    assert!(ran.output.status.success(), "{}{}", stdout(&ran.output), stderr(&ran.output));
    let results = ran.promptfoo["results"]["results"].as_array().unwrap();
    let order: Vec<(u64, u64)> =
        results.iter().map(|r| (r["testIdx"].as_u64().unwrap(), r["promptIdx"].as_u64().unwrap())).collect();
    let promptfoos: Vec<(u64, u64)> = (0..60).flat_map(|test| (0..2).map(move |prompt| (test, prompt))).collect();
    assert_eq!(order, promptfoos);
    for (result, (test, prompt)) in results.iter().zip(&promptfoos) {
        let said = if *prompt == 0 { "Say" } else { "Repeat" };
        assert_eq!(result["response"]["output"], format!("{said} w{test}"));
    }
    let mut beside: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    beside.sort();
    assert_eq!(beside, ["assay.toml", "out.json", "promptfooconfig.yaml", "results"]);
}

#[test]
fn an_output_file_that_cannot_be_kept_is_one_error_naming_it_and_every_case_is_still_reported() {
    let tests: String = (0..20).map(|i| format!("  - vars: {{word: w{i}}}\n")).collect();
    let dir = suite(&format!("prompts: ['Say {{{{word}}}}']\nproviders: [echo]\ntests:\n{tests}"), &[]);
    let out = dir.path().join("missing/out.json");
    let results = dir.path().join("results");
    let config = dir.path().join("promptfooconfig.yaml");
    let output = assay_command()
        .args(["run", config.to_str().unwrap(), "--config", dir.path().join("assay.toml").to_str().unwrap()])
        .args(["--results", results.to_str().unwrap(), "-o", out.to_str().unwrap(), "-j", "1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let errors: Vec<String> = stderr(&output).lines().filter(|l| l.starts_with("error")).map(str::to_owned).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("promptfoo's output file") && errors[0].contains("missing/out.json"), "{errors:?}");
    // The run stops admitting cases; each one admitted is reported once.
    let lines = std::fs::read_to_string(results.join("results.jsonl")).unwrap();
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap()).unwrap();
    let (reported, not_run) = (lines.lines().count() as u64, summary["not_run"].as_u64().unwrap());
    assert!(reported < 20, "the run went on after the error: {reported} cases");
    assert_eq!(reported + not_run, 20, "{summary}");
}

#[test]
fn openai_providers_reach_an_openai_compatible_server() {
    let served = Served::start(&["--protocol", "openai", "echo"]);
    let config = format!(
        "prompts: ['Tell me about {{{{topic}}}}']\nproviders:\n  - id: openai:chat:echo\n    config: {{apiBaseUrl: '{}', temperature: 0}}\n  - id: openai:echo\n    label: short form\n    config: {{apiBaseUrl: '{}'}}\ntests:\n  - vars: {{topic: owls}}\n    assert: [{{type: 'assay:keywords', value: owls}}]\n",
        served.url, served.url
    );
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &[]);
    assert!(ran.output.status.success(), "{}{}", stdout(&ran.output), stderr(&ran.output));
    assert_eq!(ran.answer("[openai:chat:echo] test 1"), "Tell me about owls");
    assert_eq!(ran.answer("[short form] test 1"), "Tell me about owls");
    let usage = &ran.case("[short form] test 1")["samples"][0]["runs"][0]["interactions"][0]["usage"];
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 0, "{usage}");
}

#[test]
fn an_openai_api_key_is_sent_and_never_reported() {
    let server = FakeServer::start(|request| {
        let content = format!("key seen: {}", request.header("authorization").unwrap_or("none"));
        completion(request, &content, None)
    });
    let config = format!(
        "prompts: [hello]\nproviders:\n  - id: openai:chat:m\n    config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1', apiKey: sk-literal-0123456789}}\n  - id: openai:chat:n\n    config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1', apiKeyEnvar: MY_KEY}}\n",
        server.port, server.port
    );
    let dir = suite(&config, &[]);
    let mut command = assay_command();
    command.env("MY_KEY", "sk-from-env-9876543210");
    let ran = run_with(command, dir.path(), &["--verbose"]);
    assert!(ran.output.status.success(), "{}{}", stdout(&ran.output), stderr(&ran.output));
    let requests = server.requests.lock().unwrap().clone();
    let headers: Vec<&str> = requests.iter().filter_map(|r| r.header("authorization")).collect();
    assert!(headers.contains(&"Bearer sk-literal-0123456789") && headers.contains(&"Bearer sk-from-env-9876543210"));
    assert_eq!(ran.answer("[openai:chat:m] test 1"), "key seen: Bearer [REDACTED]");
    let everything = format!(
        "{}{}{}{}",
        stdout(&ran.output),
        stderr(&ran.output),
        std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap(),
        std::fs::read_to_string(dir.path().join("out.json")).unwrap()
    );
    for secret in ["sk-literal-0123456789", "sk-from-env-9876543210"] {
        assert!(!everything.contains(secret), "{secret} leaked");
    }
}

#[test]
fn prompts_vars_and_providers_render_as_promptfoo_renders_them() {
    // The model answers with the messages it was sent, as JSON, and the body's extra parameters.
    let server = FakeServer::start(|request| {
        let content =
            json!({"messages": request.body["messages"], "seed": request.body["seed"], "top": request.body["top_k"]})
                .to_string();
        completion(request, &content, None)
    });
    let config = format!(
        r#"prompts:
  - label: plain
    raw: 'Tweet: {{{{ ask }}}}'
  - label: chat
    raw: '[{{"role": "system", "content": "Be {{{{ tone }}}}"}}, {{"role": "user", "content": "{{{{ ask }}}}"}}]'
  - label: other
    raw: 'never sent to the model'
targets:
  - id: openai:chat:m
    prompts: [plain, chat]
    config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1', seed: 7, passthrough: {{top_k: 3}}}}
  - id: echo
    prompts: [plain]
tests:
  - vars:
      topic: owls
      ask: 'about {{{{ topic | upper }}}} {{{{ facts }}}}'
      tone: 'file://tone.txt'
      facts: 'file://facts.yaml'
  - vars: {{ask: hi, tone: x}}
    options: {{suffix: ' !'}}
"#,
        server.port
    );
    let dir = suite(&config, &[("tone.txt", "  terse\n\n"), ("facts.yaml", "a: 1\nb: [x]\n")]);
    let ran = run(dir.path(), &[]);
    assert!(ran.output.status.success(), "{}{}", stdout(&ran.output), stderr(&ran.output));
    // Three cases a test: the openai provider's two prompts and echo's one.
    assert_eq!(ran.lines.len(), 6, "{:?}", ran.lines.iter().map(|l| &l["id"]).collect::<Vec<_>>());
    // A var holding a template is rendered; a file var is its text, trimmed, a YAML one JSON.
    assert_eq!(ran.answer("[echo] [plain] test 1"), r#"Tweet: about OWLS {"a":1,"b":["x"]}"#);
    assert_eq!(ran.answer("[echo] [plain] test 2"), "Tweet: hi !");
    let plain: Value = serde_json::from_str(ran.answer("[openai:chat:m] [plain] test 1")).unwrap();
    assert_eq!(plain["messages"], json!([{"role": "user", "content": r#"Tweet: about OWLS {"a":1,"b":["x"]}"#}]));
    assert_eq!((plain["seed"].clone(), plain["top"].clone()), (json!(7), json!(3)));
    // A chat-format prompt is sent as its messages, each string rendered
    // once (promptfoo renders a JSON prompt's strings one pass only).
    let requests = server.requests.lock().unwrap().clone();
    let chat = requests.iter().find(|r| r.body["messages"][0]["role"] == "system").expect("the chat prompt was sent");
    assert_eq!(
        chat.body["messages"],
        json!([{"role": "system", "content": "Be terse"}, {"role": "user", "content": r#"about {{ topic | upper }} {"a":1,"b":["x"]}"#}])
    );
}

/// An OpenAI chat completion answering `content`, with `usage` if given.
pub(crate) fn completion(
    request: &crate::fake_server::Recorded,
    content: &str,
    usage: Option<Value>,
) -> crate::fake_server::Reply {
    let mut body = json!({"id": "c", "object": "chat.completion", "created": 1, "model": request.body["model"],
                          "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]});
    if let Some(usage) = usage {
        body["usage"] = usage;
    }
    json_reply(200, "", &body)
}

#[test]
fn cost_is_priced_from_token_usage_with_promptfoo_s_table_or_the_provider_s_own_price() {
    let server = FakeServer::start(|request| {
        completion(request, "hi", Some(json!({"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000})))
    });
    // gpt-4o-mini: 1,000 tokens in at $0.15/M and out at $0.60/M is $0.00075.
    let config = format!(
        r#"prompts: [hi]
providers:
  - id: openai:chat:gpt-4o-mini
    config: {{apiBaseUrl: 'http://127.0.0.1:{port}/v1'}}
  - id: openai:chat:my-own-model
    label: priced
    config: {{apiBaseUrl: 'http://127.0.0.1:{port}/v1', cost: 0.000001}}
  - id: openai:chat:unknown-model
    label: unpriced
    config: {{apiBaseUrl: 'http://127.0.0.1:{port}/v1'}}
tests:
  - description: cheap
    assert: [{{type: cost, threshold: 0.001}}]
  - description: dear
    assert: [{{type: cost, threshold: 0.0005}}]
"#,
        port = server.port
    );
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &[]);
    let status = |id: &str| ran.case(id)["status"].as_str().unwrap().to_owned();
    assert_eq!(status("[openai:chat:gpt-4o-mini] cheap"), "passed");
    assert_eq!(status("[openai:chat:gpt-4o-mini] dear"), "failed");
    let cost = &ran.case("[openai:chat:gpt-4o-mini] cheap")["samples"][0]["runs"][0]["interactions"][0]["cost"];
    assert!((cost.as_f64().unwrap() - 0.00075).abs() < 1e-12, "{cost}");
    // The provider's own price: 2,000 tokens at $1/M is $0.002, over both.
    assert_eq!((status("[priced] cheap"), status("[priced] dear")), ("failed".into(), "failed".into()));
    // A model promptfoo does not price: the check says no cost is known.
    let unpriced = &ran.case("[unpriced] cheap")["samples"][0]["runs"][0]["interactions"][0]["checks"][0];
    assert!(unpriced["message"].as_str().unwrap().contains("reports no cost"), "{unpriced}");
}

#[test]
fn an_openai_answer_holding_json_reaches_the_assertions_whole() {
    // The model answers with the prompt's own text: pure JSON, or prose
    // around a JSON object.
    let server = FakeServer::start(|request| {
        let content = request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        completion(request, &content, None)
    });
    let config = format!(
        r#"prompts: ['{{{{answer}}}}']
providers:
  - id: openai:chat:m
    config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1'}}
tests:
  - vars: {{answer: '{{"tone":"formal"}}'}}
    assert:
      - type: is-json
      - type: equals
        value: '{{"tone":"formal"}}'
  - vars: {{answer: 'Use the style {{"tone":"formal"}} please'}}
    assert:
      - type: equals
        value: 'Use the style {{"tone":"formal"}} please'
      - type: contains
        value: '{{"tone":"formal"}}'
"#,
        server.port
    );
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &[]);
    assert!(ran.output.status.success(), "{}{}", stdout(&ran.output), stderr(&ran.output));
    assert_eq!(ran.answer("/test 1"), r#"{"tone":"formal"}"#);
    assert_eq!(ran.answer("/test 2"), r#"Use the style {"tone":"formal"} please"#);
}

#[test]
fn http_providers_fill_the_body_and_read_the_answer_by_field_path() {
    let server = FakeServer::start(|request| {
        let asked = request.body["input"]["text"].as_str().unwrap_or("?").to_owned();
        json_reply(200, "", &json!({"choices": [{"message": {"content": format!("you said: {asked}")}}], "x": 1}))
    });
    let config = format!(
        r#"
prompts: ['He said "{{{{line}}}}"']
providers:
  - id: http
    label: field path
    config:
      url: http://127.0.0.1:{port}/chat
      method: POST
      headers: {{x-team: qa}}
      body: {{input: {{text: "{{{{prompt}}}}"}}, n: 1}}
      transformResponse: json.choices[0].message.content
  - id: http://127.0.0.1:{port}/whole
    label: whole body
    config:
      body: '{{"input": {{"text": "{{{{ prompt }}}}"}}}}'
tests:
  - vars: {{line: "a }}}} b\nc"}}
"#,
        port = server.port
    );
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &[]);
    assert!(ran.output.status.success(), "{}{}", stdout(&ran.output), stderr(&ran.output));
    assert_eq!(ran.answer("[field path] test 1"), "you said: He said \"a }} b\nc\"");
    let whole: Value = serde_json::from_str(ran.answer("[whole body] test 1")).unwrap();
    assert_eq!(whole["x"], 1);
    let requests = server.requests.lock().unwrap().clone();
    let chat = requests.iter().find(|r| r.request_line.starts_with("POST /chat")).unwrap();
    assert_eq!(chat.header("x-team"), Some("qa"));
    assert_eq!(chat.body, json!({"input": {"text": "He said \"a }} b\nc\""}, "n": 1}));
}

#[test]
fn an_http_providers_javascript_transform_response_runs_sandboxed_on_each_answer() {
    let server = FakeServer::start(|request| {
        let asked = request.body["q"].as_str().unwrap_or("?").to_owned();
        json_reply(200, "", &json!({"items": [{"text": asked}, {"text": "second"}], "status": "ok"}))
    });
    let provider = |label: &str, transform: &str| {
        format!(
            "  - id: http\n    label: {label}\n    config:\n      url: http://127.0.0.1:{}/ask\n      body: {{q: '{{{{prompt}}}}'}}\n      transformResponse: {}\n",
            server.port,
            serde_json::to_string(transform).unwrap()
        )
    };
    let config = format!(
        "prompts: ['{{{{word}}}}']\nproviders:\n{}{}{}{}{}{}tests:\n  - vars: {{word: owls}}\n    options: {{transform: 'output.toUpperCase()'}}\n    assert: [{{type: equals, value: OWLS | SECOND}}]\n",
        provider("expression", "json.items.map(i => i.text).join(' | ')"),
        provider("arrow", "(json, text) => ({ output: json.items.map(i => i.text).join(' | ') })"),
        provider("function", "function (json) { return json.items[0].text + ' | ' + json.items[1].text; }"),
        provider("error", "({ error: 'the backend said no' })"),
        provider("throws", "json.items.find(i => i.missing).text"),
        provider("loops", "(() => { while (true) {} })()"),
    );
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &[]);
    for label in ["expression", "arrow", "function"] {
        let case = ran.case(&format!("[{label}] test 1"));
        assert_eq!(case["status"], "passed", "{label}: {}", stdout(&ran.output));
        // The answer recorded is the whole body; the checks read the
        // provider's transform, then the test's.
        let checks = &case["samples"][0]["runs"][0]["interactions"][0]["checks"];
        assert_eq!(checks[0]["target"], "derived[1]", "{label}");
    }
    let error = ran.case("[error] test 1").to_string();
    assert!(error.contains("the backend said no"), "{error}");
    let throws = ran.case("[throws] test 1").to_string();
    assert!(throws.contains("Transform failed: cannot convert"), "{throws}");
    assert_eq!(ran.case("[throws] test 1")["status"], "error");
    // JavaScript that never ends stops at the plugin's deadline.
    let loops = ran.case("[loops] test 1");
    assert_eq!(loops["status"], "error", "{loops}");
    assert!(loops.to_string().contains("deadline"), "{loops}");
}

#[test]
fn exec_providers_get_the_prompt_as_an_argument() {
    let script = "#!/bin/sh\n# promptfoo's exec provider: the prompt, then the options and context as JSON.\nprintf '\\033[1mgot\\033[0m: %s | %s | %s\\n' \"$1\" \"$2\" \"$3\"\n";
    let failing = "#!/bin/sh\necho 'no luck' >&2\nexit 3\n";
    let config = "prompts: ['ask {{x}}']\nproviders:\n  - id: 'exec:./answer.sh'\n    config: {flavour: plain}\n  - 'exec:./fail.sh'\ntests:\n  - vars: {x: \"it's 'quoted'\"}\n";
    let dir = suite(config, &[("answer.sh", script), ("fail.sh", failing)]);
    for name in ["answer.sh", "fail.sh"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path().join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let ran = run(dir.path(), &[]);
    assert_eq!(
        ran.answer("[exec:./answer.sh] test 1"),
        r#"got: ask it's 'quoted' | {"id":"exec:./answer.sh","config":{"flavour":"plain"}} | {}"#
    );
    let failed = ran.case("[exec:./fail.sh] test 1");
    let error = failed["samples"][0]["runs"][0]["interactions"][0]["error"]["message"].as_str().unwrap();
    assert!(error.contains("exited with") && error.contains("no luck"), "{error}");
}

#[test]
fn hostile_configs_are_refused_with_located_errors() {
    let escape = "prompts: [file://../outside.txt]\nproviders: [echo]\n";
    let absolute = "prompts: [file:///etc/passwd]\nproviders: [echo]\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("outside.txt"), "secret").unwrap();
    let inner = dir.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.txt"), inner.join("link.txt")).unwrap();
    std::fs::write(inner.join("assay.toml"), "").unwrap();
    let nested =
        format!("prompts: [x]\nproviders: [echo]\ntests: [{{vars: {{a: {}1{}}}}}]\n", "[".repeat(300), "]".repeat(300));
    let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nprompts: [x]\nproviders: [echo]\n";
    let template_bomb = format!(
        "prompts: ['{}']\nproviders: [echo]\ntests: [{{vars: {{v: '{}'}}}}]\n",
        "{{v}}".repeat(64),
        "x".repeat(100_000)
    );
    // Seven vars of ten strings each: 10,000,000 combinations.
    let ten = "['0','1','2','3','4','5','6','7','8','9']";
    let vars: Vec<String> = "abcdefg".chars().map(|name| format!("{name}: {ten}")).collect();
    let combinations = format!("prompts: [x]\nproviders: [echo]\ntests:\n  - vars: {{{}}}\n", vars.join(", "));
    let cases: Vec<(String, &str)> = vec![
        (escape.into(), "outside the config's folder"),
        (absolute.into(), "absolute path"),
        ("prompts: [file://link.txt]\nproviders: [echo]\n".into(), "outside the config's folder"),
        (nested, "recursion limit"),
        (bomb.into(), "repetition limit"),
        (template_bomb, "renders to over 4 MiB"),
        (combinations, "expands into over 250000 cases"),
    ];
    for (config, expected) in cases {
        std::fs::write(inner.join("promptfooconfig.yaml"), &config).unwrap();
        let ran = run(&inner, &[]);
        assert_eq!(ran.output.status.code(), Some(1), "{}", stderr(&ran.output));
        let message = ran.lines.iter().map(|l| l["error"]["message"].as_str().unwrap_or_default()).collect::<String>();
        assert!(message.contains(expected), "{expected}: {message}");
        assert!(!message.contains("secret"));
    }
    // A config over the cap is not read at all.
    let huge = format!("prompts: [x]\nproviders: [echo]\n#{}\n", "x".repeat(17 << 20));
    std::fs::write(inner.join("promptfooconfig.yaml"), huge).unwrap();
    let ran = run(&inner, &[]);
    let message = ran.lines[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("over the cap of 16 MiB"), "{message}");
}

#[test]
fn a_directory_run_leaves_promptfoo_configs_to_be_named() {
    let listed = crate::util::assay(&["run", "fixtures/", "--list"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(!stdout(&listed).contains("promptfoo"), "{}", stdout(&listed));
    // Named, the fixture's config is a promptfoo suite; a scenario's YAML
    // is not mistaken for one.
    let anywhere = assay::case::FileAccess::anywhere();
    assert!(assay::formats::promptfoo::is_config(&crate::util::fixture("promptfoo/promptfooconfig.yaml"), &anywhere));
    assert!(!assay::formats::promptfoo::is_config(
        &crate::util::fixture("scenarios/kyma/scenario_01_pod_secret_missing.yml"),
        &anywhere
    ));
}

/// promptfoo's own verdicts on the fixture, recorded with
/// `NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules node
/// benches/promptfoo_eval.mjs fixtures/promptfoo/promptfooconfig.yaml
/// fixtures/promptfoo/promptfoo-output.json` (promptfoo 0.123.1).
const RECORDED: &str = include_str!("../../../../fixtures/promptfoo/promptfoo-output.json");

#[test]
fn the_fixture_passes_with_no_configuration_and_matches_promptfoos_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let results = dir.path().join("results");
    let output = assay_command()
        .args(["run", "fixtures/promptfoo/promptfooconfig.yaml", "--results", results.to_str().unwrap()])
        .args(["--promptfoo-output", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("6 test cases: 6 passed"), "{}", stdout(&output));
    let ours: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    let theirs: Value = serde_json::from_str(RECORDED).unwrap();
    let by_prompt = |document: &Value| -> std::collections::BTreeMap<String, Value> {
        let results = document["results"]["results"].as_array().unwrap();
        results
            .iter()
            .map(|r| {
                let components: Vec<Value> = r["gradingResult"]["componentResults"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| json!([c["pass"], c["score"].as_f64(), c["assertion"]]))
                    .collect();
                let verdict = json!({
                    "success": r["success"], "score": r["score"].as_f64(), "namedScores": r["namedScores"],
                    "vars": r["vars"], "output": r["response"]["output"], "components": components,
                });
                (r["prompt"]["raw"].as_str().unwrap().to_owned(), verdict)
            })
            .collect()
    };
    let (ours, theirs) = (by_prompt(&ours), by_prompt(&theirs));
    assert_eq!(ours.len(), 6);
    for (prompt, verdict) in &theirs {
        let mine = &ours[prompt];
        for field in ["success", "vars", "output", "components"] {
            assert_eq!(mine[field], verdict[field], "{prompt}: {field}");
        }
        assert!((mine["score"].as_f64().unwrap() - verdict["score"].as_f64().unwrap()).abs() < 1e-9, "{prompt}");
        let named = |v: &Value| -> Vec<(String, f64)> {
            v["namedScores"].as_object().unwrap().iter().map(|(k, s)| (k.clone(), s.as_f64().unwrap())).collect()
        };
        assert_eq!(named(mine), named(verdict), "{prompt}");
    }
}

#[test]
fn latency_is_checked_on_the_interactions_time_and_cost_where_the_connection_reports_one() {
    let config = r#"
prompts: [hello]
providers: [echo]
tests:
  - description: fast enough
    assert: [{type: latency, threshold: 60000}]
  - description: too fast for not-latency
    assert: [{type: not-latency, threshold: 60000}]
  - description: no cost
    assert: [{type: cost, threshold: 1}]
"#;
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    let check = |suffix: &str| ran.case(suffix)["samples"][0]["runs"][0]["interactions"][0]["checks"][0].clone();
    let fast = check("fast enough");
    assert_eq!((fast["target"].as_str(), fast["outcome"].as_str()), (Some("latency_ms"), Some("pass")), "{fast}");
    assert!(fast["actual"].as_str().unwrap().parse::<f64>().is_ok(), "{fast}");
    assert_eq!(check("too fast for not-latency")["outcome"], "fail");
    let cost = check("no cost");
    assert_eq!(cost["outcome"], "fail");
    assert!(cost["message"].as_str().unwrap().contains("reports no cost"), "{cost}");
}

#[test]
fn plan_and_replay_take_promptfoo_configs_like_any_case() {
    let planned = crate::util::assay(&["plan", "fixtures/promptfoo/promptfooconfig.yaml"]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    let plan = stdout(&planned);
    assert!(plan.contains("fixtures/promptfoo/promptfooconfig/France  agent echo  connections direct"), "{plan}");
    assert!(plan.contains(r#"not_pf_contains {"value":"London"}"#), "{plan}");
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let config = "fixtures/promptfoo/promptfooconfig.yaml";
    let ran = crate::util::assay(&["run", config, "--quiet", "--results", first.to_str().unwrap()]);
    assert!(ran.status.success(), "{}", stderr(&ran));
    let replayed = crate::util::assay(&[
        "run",
        config,
        "--replay",
        first.to_str().unwrap(),
        "--results",
        second.to_str().unwrap(),
    ]);
    assert!(replayed.status.success(), "{}{}", stdout(&replayed), stderr(&replayed));
    assert!(stdout(&replayed).contains("Replaying 6 recorded cases"), "{}", stdout(&replayed));
}

#[test]
fn an_assay_provider_is_a_connection_of_assay_toml() {
    let dir = suite(
        "prompts: ['hi {{who}}']\nproviders: ['assay:echo', 'assay:nowhere']\ntests: [{vars: {who: ann}}]\n",
        &[],
    );
    let agent = crate::util::fixture("commands/agent.py");
    let toml =
        format!("[connections.echo]\ntype = \"command\"\ncommand = [\"python3\", {:?}]\n", agent.to_str().unwrap());
    std::fs::write(dir.path().join("assay.toml"), toml).unwrap();
    let ran = run(dir.path(), &[]);
    assert_eq!(ran.answer("[assay:echo] test 1"), "hi ann");
    let unknown = ran.case("[assay:nowhere] test 1")["error"]["message"].as_str().unwrap();
    assert!(unknown.contains("unknown connection `nowhere`"), "{unknown}");
}

#[test]
fn without_a_judge_promptfoo_configs_grade_with_promptfoos_default_grader_from_the_environment() {
    // The model echoes; the grader (the same server, as with promptfoo)
    // passes a rubric whose prompt names owls.
    let server = FakeServer::start(|request| {
        let prompt = request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        if prompt.contains("<Rubric>") {
            let pass = prompt.contains("mentions owls");
            return completion(
                request,
                &json!({"reason": "graded", "pass": pass, "score": f64::from(u8::from(pass))}).to_string(),
                None,
            );
        }
        completion(request, &prompt, None)
    });
    let config = "prompts: ['Tell me about {{topic}}']\nproviders: [openai:chat:gpt-4.1-mini]\ntests:\n  - vars: {topic: owls}\n    assert: [{type: llm-rubric, value: mentions owls}]\n  - vars: {topic: bats}\n    assert: [{type: llm-rubric, value: mentions bats}]\n";
    let dir = suite(config, &[]);
    let base = format!("http://127.0.0.1:{}/v1", server.port);
    let with_env = |key: Option<&str>| {
        let mut command = assay_command();
        command.env("OPENAI_BASE_URL", &base).env_remove("ASSAY_JUDGE_URL").env_remove("OPENAI_API_KEY");
        if let Some(key) = key {
            command.env("OPENAI_API_KEY", key);
        }
        command
    };
    let ran = run_with(with_env(Some("sk-grader-key-0123456789")), dir.path(), &[]);
    assert_eq!(ran.case("test 1")["status"], "passed", "{}", stdout(&ran.output));
    assert_eq!(ran.case("test 2")["status"], "failed", "{}", stdout(&ran.output));
    let requests = server.requests.lock().unwrap().clone();
    let graded: Vec<_> = requests.iter().filter(|r| r.body.to_string().contains("<Rubric>")).collect();
    assert_eq!(graded.len(), 2);
    for request in graded {
        // promptfoo 0.123.1's default grading model, which takes no temperature.
        assert_eq!(request.body["model"], "gpt-5.6-sol");
        assert!(request.body.get("temperature").is_none(), "{}", request.body);
        assert_eq!(request.header("authorization"), Some("Bearer sk-grader-key-0123456789"));
    }
    let reports = format!(
        "{}{}",
        stdout(&ran.output),
        std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap()
    );
    assert!(!reports.contains("sk-grader-key-0123456789"));

    // Without OPENAI_API_KEY there is no default grader, and the error says how to configure one.
    let ran = run_with(with_env(None), dir.path(), &[]);
    assert_eq!(ran.case("test 1")["status"], "error");
    assert!(stdout(&ran.output).contains("needs a judge"), "{}", stdout(&ran.output));

    // An assay case never gets it: only promptfoo's assertions grade as promptfoo does.
    std::fs::write(
        dir.path().join("own.hocon"),
        "{ \"agent\": \"echo\", \"interactions\": [ { \"text\": \"hi\", \"response\": { \"text\": { \"gist\": \"a greeting\" } } } ] }",
    )
    .unwrap();
    let output = with_env(Some("sk-grader-key-0123456789"))
        .args([
            "run",
            dir.path().join("own.hocon").to_str().unwrap(),
            "--results",
            dir.path().join("own").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(stdout(&output).contains("judge"), "{}{}", stdout(&output), stderr(&output));
    assert!(!output.status.success());
}

#[test]
fn tests_choose_their_prompts_and_providers_and_csv_files_hold_prompts() {
    let config = r#"
prompts:
  - file://prompts.csv
  - {id: plain, label: Plain one, raw: 'plain {{q}}'}
  - file://lines.csv
providers:
  - echo
  - {id: echo, label: second}
defaultTest:
  providers: [second]
tests:
  - description: by label
    vars: {q: a}
    prompts: [Terse]
  - description: by id on both providers
    vars: {q: b}
    prompts: [plain]
    providers: ['ech*']
  - description: by a file's label prefix
    vars: {q: c}
    prompts: ['Prompt*']
  - description: nowhere
    vars: {q: d}
    prompts: []
  - description: not a list
    vars: {q: e}
    prompts: Terse
"#;
    let files = [
        ("prompts.csv", "prompt,label\n\"Say {{q}}, tersely\",Terse\n\"Say {{q}} at length\",\n"),
        ("lines.csv", "prompt\nline one {{q}}\n\nline two {{q}}\n"),
    ];
    let dir = suite(config, &files);
    let ran = run(dir.path(), &[]);
    let mut ids = ran.ids();
    ids.sort();
    let short: Vec<String> = ids.iter().map(|id| id.rsplit_once("promptfooconfig/").unwrap().1.to_owned()).collect();
    assert_eq!(
        short,
        [
            // `ech*` names both providers by id; `plain` the prompt by id.
            "[echo] [Plain one] by id on both providers",
            "[second] [Plain one] by id on both providers",
            // A broken test runs where defaultTest's `providers` says, each an error.
            "[second] [Plain one] not a list",
            // A CSV file without a comma has a prompt per line, after a `prompt` header.
            "[second] [Prompt 1 - line one {{q}}] by a file's label prefix",
            "[second] [Prompt 1 - line one {{q}}] not a list",
            "[second] [Prompt 2 - Say {{q}} at length] by a file's label prefix",
            "[second] [Prompt 2 - Say {{q}} at length] not a list",
            "[second] [Prompt 2 - line two {{q}}] by a file's label prefix",
            "[second] [Prompt 2 - line two {{q}}] not a list",
            "[second] [Terse] by label",
            "[second] [Terse] not a list",
            // A test its filters send nowhere is an error case, not silence.
            "nowhere",
        ],
        "{}",
        stdout(&ran.output)
    );
    assert_eq!(ran.answer("[Terse] by label"), "Say a, tersely");
    let nowhere = ran.case("/nowhere")["error"]["message"].as_str().unwrap().to_owned();
    assert!(nowhere.contains("tests[3]") && nowhere.contains("would run nowhere"), "{nowhere}");
    let error = ran.case("not a list")["error"]["message"].as_str().unwrap().to_owned();
    assert!(error.contains("the test's `prompts` is the string \"Terse\", not a list of names"), "{error}");
}

/// `assay run CONFIG` with `--results DIR/results`: its output and results
/// lines.
fn run_config(dir: &Path, config: &str) -> (std::process::Output, Vec<Value>) {
    let results = dir.join("results");
    let output = assay_command()
        .args(["run", dir.join(config).to_str().unwrap(), "--results", results.to_str().unwrap()])
        .output()
        .unwrap();
    let lines = std::fs::read_to_string(results.join("results.jsonl"))
        .map(|text| text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
        .unwrap_or_default();
    (output, lines)
}

/// The outcome of each case, by the end of its id.
fn outcomes(lines: &[Value]) -> Vec<(String, String)> {
    let mut outcomes: Vec<(String, String)> = lines
        .iter()
        .map(|line| {
            let id = line["id"].as_str().unwrap();
            (id.rsplit('/').next().unwrap().to_owned(), line["status"].as_str().unwrap().to_owned())
        })
        .collect();
    outcomes.sort();
    outcomes
}

#[test]
fn a_config_written_in_typescript_runs_sandboxed_with_its_test_generators_and_transforms() {
    let dir = tempfile::tempdir().unwrap();
    let config = r#"import type { UnifiedConfig } from 'promptfoo';
interface Row { word: string }
const rows: Row[] = [{ word: 'alpha' }];
const config: UnifiedConfig = {
  prompts: ['say {{word}} {{extra}}'],
  providers: ['echo'],
  // One line is an expression (promptfoo puts `return` before it).
  defaultTest: { options: { transformVars: '({ extra: vars.word.toUpperCase() })' } },
  tests: [
    ...rows.map((row) => ({ description: 'typed', vars: row, assert: [{ type: 'contains', value: 'say alpha ALPHA' }] })),
    { path: 'file://gen.ts:make', config: { n: 2 } },
    'file://static.js',
    {
      description: 'transformed',
      vars: { word: 'beta' },
      options: { transform: 'output.toUpperCase()' },
      assert: [
        { type: 'equals', value: 'SAY BETA BETA' },
        { type: 'equals', value: 'SAY', transform: "output.split(' ')[0]" },
        { type: 'equals', value: 'B', transform: 'file://first.js:first' },
      ],
    },
    { description: 'unparsable', vars: { word: 'x' }, options: { transform: 'JSON.parse(output)' }, assert: [{ type: 'is-json' }] },
  ],
};
export default config;
"#;
    std::fs::write(dir.path().join("promptfooconfig.ts"), config).unwrap();
    std::fs::write(
        dir.path().join("gen.ts"),
        "export async function make(config?: { n: number }): Promise<object[]> {\n  return Array.from({ length: config!.n }, (_, i: number) => ({ description: `gen ${i}`, vars: { word: `w${i}` }, assert: [{ type: 'contains', value: `W${i}` }] }));\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("static.js"),
        "module.exports = [{ description: 'static', vars: { word: 'gamma' }, assert: [{ type: 'icontains', value: 'gamma GAMMA' }] }];\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("first.js"),
        "exports.first = (output, context) => output.split(' ')[1][context.vars.word.length - 4];\n",
    )
    .unwrap();
    let (output, lines) = run_config(dir.path(), "promptfooconfig.ts");
    let pairs: Vec<(&str, &str)> = [
        ("gen 0", "passed"),
        ("gen 1", "passed"),
        ("static", "passed"),
        ("transformed", "passed"),
        ("typed", "passed"),
        ("unparsable", "error"),
    ]
    .into();
    let expected: Vec<(String, String)> = pairs.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    assert_eq!(outcomes(&lines), expected, "{}", stdout(&output));
    let transformed = lines.iter().find(|l| l["id"].as_str().unwrap().ends_with("transformed")).unwrap();
    let checks = &transformed["samples"][0]["runs"][0]["interactions"][0]["checks"];
    let targets: Vec<&str> = checks.as_array().unwrap().iter().map(|c| c["target"].as_str().unwrap()).collect();
    assert_eq!(targets, ["derived[0]", "derived[1]", "derived[2]"]);
    assert_eq!(checks[0]["actual"], "SAY BETA BETA");
    let unparsable = lines.iter().find(|l| l["id"].as_str().unwrap().ends_with("unparsable")).unwrap().to_string();
    assert!(unparsable.contains("derived[0] (the value this check reads) failed: SyntaxError"), "{unparsable}");
}

#[test]
fn a_javascript_config_cannot_reach_the_machine_and_what_it_cannot_hand_over_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let cases = [
        (
            "fs.js",
            format!("require('fs').writeFileSync('{}', 'x'); module.exports = {{prompts: ['hi']}};", marker.display()),
            "require('fs') is not available",
        ),
        ("env.js", "module.exports = { prompts: [process.env.HOME], providers: ['echo'] };".to_owned(), "process.env"),
        ("loop.js", "while (true) {}\nmodule.exports = {};".to_owned(), "deadline"),
        (
            "callback.js",
            "module.exports = { prompts: ['x'], providers: [{ id: 'echo', config: { callbacks: { add: (a) => a } } }] };"
                .to_owned(),
            "the module's value.providers[0].config.callbacks.add is a function, which cannot leave the sandbox",
        ),
        (
            "never.mjs",
            "await new Promise(() => {});\nexport default {};".to_owned(),
            "did not finish loading (a top-level `await` that never settles)",
        ),
        ("broken.ts", "const x: = 1;\nexport default {};".to_owned(), "broken.ts:1: "),
        // A parser's recursion and a value's size stop at the sandbox's
        // stack and memory, not the host's.
        (
            "deep.ts",
            format!("const x: number = {}1{};\nexport default {{}};", "(".repeat(100_000), ")".repeat(100_000)),
            "overflowed its call stack",
        ),
        (
            "big.js",
            "module.exports = { prompts: ['x'.repeat(20_000_000)], providers: ['echo'] };".to_owned(),
            "exceeded its memory limit",
        ),
    ];
    for (name, code, error) in &cases {
        std::fs::write(dir.path().join(name), code).unwrap();
        let (output, lines) = run_config(dir.path(), name);
        assert_eq!(output.status.code(), Some(1), "{name}: {}", stdout(&output));
        assert_eq!(lines.len(), 1, "{name}: one error case");
        let message = lines[0]["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("its module, run sandboxed, failed"), "{name}: {message}");
        assert!(message.contains(error), "{name}: {message}");
    }
    assert!(!marker.exists());
    // Python is not run at all.
    std::fs::write(dir.path().join("checks.py"), "open('ran', 'w')\n").unwrap();
    let (output, _) = run_config(dir.path(), "checks.py");
    let text = stdout(&output);
    assert!(
        text.contains("it is a program, not a case file") && text.contains("Consider writing the config as YAML"),
        "{text}"
    );
}

#[test]
fn derived_metrics_are_computed_over_each_prompt_columns_summed_named_scores() {
    let config = r#"
prompts: ['say {{word}}', 'shout {{word}}']
providers: [echo]
derivedMetrics:
  - {name: Both, value: '(Tone + Length) / __count'}
  - {name: Twice, value: 'Both * 2'}
  - {name: Unknown, value: 'Missing + 1'}
tests:
  - vars: {word: hi}
    assert:
      - {type: contains, value: say, metric: Tone}
      - {type: contains, value: hi, metric: Length, weight: 3}
  - vars: {word: bye}
    assert:
      - {type: contains, value: say, metric: Tone}
"#;
    let dir = suite(config, &[]);
    let ran = run(dir.path(), &[]);
    let prompts = ran.promptfoo["results"]["prompts"].as_array().unwrap();
    let scores = |i: usize| prompts[i]["metrics"]["namedScores"].clone();
    // `say`: Tone 1 + 1, Length 1 × weight 3, over 2 results.
    assert_eq!(scores(0), json!({"Tone": 2.0, "Length": 3.0, "Both": 2.5, "Twice": 5.0, "Unknown": 0.0}));
    assert_eq!(scores(1), json!({"Tone": 0.0, "Length": 3.0, "Both": 1.5, "Twice": 3.0, "Unknown": 0.0}));
    assert_eq!(prompts[0]["metrics"]["testPassCount"], 2);
    assert_eq!(prompts[1]["metrics"]["testFailCount"], 2);
    // An expression assay cannot evaluate is refused when the config is read.
    let dir = suite("prompts: [x]\nproviders: [echo]\nderivedMetrics: [{name: M, value: 'exec(1)'}]\n", &[]);
    let ran = run(dir.path(), &[]);
    let error = ran.lines[0]["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        error.contains("derivedMetrics[0]") && error.contains("`exec(…)` is not a function assay evaluates"),
        "{error}"
    );
}

/// A grading server: chat requests pass when the prompt mentions owls;
/// embeddings are letter counts.
fn grading_server() -> FakeServer {
    FakeServer::start(|request| {
        if request.request_line.contains("/embeddings") {
            let inputs = request.body["input"].as_array().cloned().unwrap_or_default();
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    let text = text.as_str().unwrap_or_default();
                    let vector: Vec<f64> =
                        ('a'..='z').map(|c| text.chars().filter(|t| *t == c).count() as f64).collect();
                    json!({"index": i, "embedding": vector})
                })
                .collect();
            return json_reply(200, "", &json!({"data": data}));
        }
        let prompt = request.body["messages"].to_string();
        if prompt.contains("Rubric") {
            let pass = prompt.contains("owls");
            return completion(
                request,
                &json!({"reason": "graded", "pass": pass, "score": u8::from(pass)}).to_string(),
                None,
            );
        }
        completion(request, request.body["messages"][0]["content"].as_str().unwrap_or_default(), None)
    })
}

#[test]
fn grading_providers_of_tests_and_assertions_grade_in_place_of_the_judge() {
    let (model, grader) = (grading_server(), grading_server());
    let config = format!(
        r#"
prompts: ['Tell me about {{{{topic}}}}']
providers: [openai:chat:m]
defaultTest:
  options:
    provider: openai:chat:test-grader
tests:
  - description: the test's grader
    vars: {{topic: owls}}
    assert: [{{type: llm-rubric, value: mentions owls}}]
  - description: an assertion's own grader, elsewhere, with a key of its own
    vars: {{topic: owls}}
    assert:
      - type: llm-rubric
        value: mentions owls
        provider: {{id: openai:own-grader, config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1', apiKey: sk-grader-literal-123456}}}}
  - description: embeddings from an embedding grader
    vars: {{topic: owls}}
    options:
      provider: {{embedding: openai:embedding:emb}}
    assert: [{{type: similar, value: Tell me about owls, threshold: 0.99}}]
  - description: a chat grader asked for embeddings
    vars: {{topic: owls}}
    assert: [{{type: similar, value: Tell me about owls}}]
  - description: a grader assay does not speak
    vars: {{topic: owls}}
    options:
      provider: anthropic:messages:claude
    assert: [{{type: llm-rubric, value: mentions owls}}]
  - description: a grader setting what the judge does not send
    vars: {{topic: owls}}
    options:
      provider: {{id: openai:x, config: {{temperature: 0.5}}}}
    assert: [{{type: llm-rubric, value: mentions owls}}]
"#,
        grader.port
    );
    let dir = suite(&config, &[]);
    let mut command = assay_command();
    command
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{}/v1", model.port))
        .env("OPENAI_API_KEY", "sk-env-key-0000");
    // With a judge configured too: the graders win over it.
    command.env("ASSAY_JUDGE_URL", "http://127.0.0.1:9/v1");
    let ran = run_with(command, dir.path(), &[]);
    let out = stdout(&ran.output);
    assert_eq!(ran.case("the test's grader")["status"], "passed", "{out}");
    assert_eq!(ran.case("an assertion's own grader, elsewhere, with a key of its own")["status"], "passed", "{out}");
    assert_eq!(ran.case("embeddings from an embedding grader")["status"], "passed", "{out}");
    let chat_for_embeddings = ran.case("a chat grader asked for embeddings");
    assert_eq!(chat_for_embeddings["status"], "error", "{out}");
    let refused = ran.case("a grader assay does not speak")["error"]["message"].as_str().unwrap().to_owned();
    assert!(refused.contains("the grading provider `anthropic:messages:claude` is not supported"), "{refused}");
    let refused =
        ran.case("a grader setting what the judge does not send")["error"]["message"].as_str().unwrap().to_owned();
    assert!(refused.contains("`config.temperature`, which assay's judge does not send"), "{refused}");
    // Where each grading request went, with which model and key.
    let graded = |server: &FakeServer| -> Vec<(String, String)> {
        let requests = server.requests.lock().unwrap().clone();
        requests
            .iter()
            .filter(|r| r.request_line.contains("/embeddings") || r.body["messages"].to_string().contains("Rubric"))
            .map(|r| {
                (
                    r.body["model"].as_str().unwrap_or_default().to_owned(),
                    r.header("authorization").unwrap_or("").to_owned(),
                )
            })
            .collect()
    };
    let at_model = graded(&model);
    assert!(at_model.contains(&("test-grader".into(), "Bearer sk-env-key-0000".into())), "{at_model:?}");
    assert!(at_model.contains(&("emb".into(), "Bearer sk-env-key-0000".into())), "{at_model:?}");
    assert_eq!(graded(&grader), [("own-grader".to_owned(), "Bearer sk-grader-literal-123456".to_owned())]);
    let everything = format!("{out}{}", std::fs::read_to_string(dir.path().join("results/results.jsonl")).unwrap());
    assert!(!everything.contains("sk-grader-literal-123456") && !everything.contains("sk-env-key-0000"));
}

#[test]
fn a_data_config_may_not_send_the_environments_key_to_a_grader_it_names() {
    let grader = grading_server();
    let config = format!(
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - options:\n      provider: {{id: openai:g, config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1'}}}}\n    assert: [{{type: llm-rubric, value: x}}]\n",
        grader.port
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("promptfooconfig.yaml"), config).unwrap();
    let output = assay_command()
        .env("OPENAI_API_KEY", "sk-env-key-0000")
        .args(["run", dir.path().join("promptfooconfig.yaml").to_str().unwrap()])
        .args(["--results", dir.path().join("r").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(stdout(&output).contains("OPENAI_API_KEY"), "{}", stdout(&output));
    assert!(grader.requests.lock().unwrap().is_empty(), "the key went out");
}

#[test]
fn providers_are_read_from_yaml_files_beside_the_config_and_code_is_refused() {
    let config = "prompts: ['{{q}}']\nproviders: [file://one.yaml, {id: file://two.json}]\ntests: [{vars: {q: hi}, assert: [{type: equals, value: hi}]}]\n";
    let files = [
        ("one.yaml", "id: echo\nlabel: from yaml\n"),
        ("two.json", r#"[{"id": "echo", "label": "a"}, {"id": "echo", "label": "b"}]"#),
    ];
    let dir = suite(config, &files);
    let ran = run(dir.path(), &[]);
    let mut ids: Vec<String> = ran.ids().iter().map(|id| id.rsplit_once('/').unwrap().1.to_owned()).collect();
    ids.sort();
    assert_eq!(ids, ["[a] test 1", "[b] test 1", "[from yaml] test 1"], "{}", stdout(&ran.output));
    assert!(ran.output.status.success(), "{}", stdout(&ran.output));
    for (provider, error) in [
        ("file://provider.js", "is a provider written in code"),
        ("file://../outside.yaml", "outside the config's folder"),
        ("file://list.yaml", "holds the number 3, not a provider"),
    ] {
        let dir =
            suite(&format!("prompts: [x]\nproviders: ['{provider}']\n"), &[("provider.js", "x"), ("list.yaml", "3\n")]);
        std::fs::write(dir.path().parent().unwrap().join("outside.yaml"), "id: echo\n").unwrap();
        let ran = run(dir.path(), &[]);
        let message = ran.lines[0]["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(message.contains(error), "{provider}: {message}");
    }
}

#[test]
fn g_eval_asks_for_steps_then_a_score_out_of_ten_per_criterion() {
    let judge = FakeServer::start(|request| {
        let prompt = request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        let answer = if prompt.contains("generate 3-4 concise evaluation steps") {
            r#"Sure: {"steps":["Check A","Check B"]}"#.to_owned()
        } else if prompt.contains("**Evaluation Steps**\n- Check A\n- Check B\n") {
            match () {
                _ if prompt.contains("good") => r#"{"score":8,"reason":"fine"}"#.to_owned(),
                _ if prompt.contains("fair") => r#"{"score":"6","reason":"so so"}"#.to_owned(),
                _ => r#"{"score":11,"reason":"too much"}"#.to_owned(),
            }
        } else {
            "unexpected".to_owned()
        };
        completion(request, &answer, None)
    });
    let config = r#"
prompts: ['Tell me about {{topic}}']
providers: [echo]
tests:
  - description: one criterion
    vars: {topic: owls}
    assert: [{type: g-eval, value: good writing}]
  - description: the mean of two
    vars: {topic: owls}
    assert: [{type: g-eval, value: [good writing, fair writing], threshold: 0.75}]
  - description: negated
    vars: {topic: owls}
    assert: [{type: not-g-eval, value: fair writing}]
  - description: a score out of range
    vars: {topic: owls}
    assert: [{type: g-eval, value: [good writing, broken writing]}]
"#;
    let dir = suite(config, &[]);
    let mut command = assay_command();
    command.env("ASSAY_JUDGE_URL", format!("http://127.0.0.1:{}/v1", judge.port)).env("ASSAY_JUDGE_MODEL", "m");
    let ran = run_with(command, dir.path(), &[]);
    let result = |suffix: &str| ran.promptfoo_result(suffix)["gradingResult"]["componentResults"][0].clone();
    assert_eq!(
        (result("one criterion")["pass"].clone(), result("one criterion")["score"].as_f64()),
        (json!(true), Some(0.8))
    );
    // (0.8 + 0.6) / 2 = 0.7 < 0.75.
    let mean = result("the mean of two");
    assert_eq!(mean["pass"], false, "{mean}");
    assert!((mean["score"].as_f64().unwrap() - 0.7).abs() < 1e-9, "{mean}");
    assert_eq!(mean["reason"], "fine\n\nso so");
    // not-: 0.6 < 0.7 passes, scoring 1 - 0.6.
    let negated = result("negated");
    assert_eq!(negated["pass"], true, "{negated}");
    assert!((negated["score"].as_f64().unwrap() - 0.4).abs() < 1e-9, "{negated}");
    let broken = result("a score out of range");
    assert_eq!((broken["pass"].clone(), broken["score"].as_f64()), (json!(false), Some(0.0)));
    assert!(
        broken["reason"].as_str().unwrap().starts_with("G-Eval criterion 2/2 (\"broken writing\") failed: G-Eval result score 11 is outside the expected 0-10 range"),
        "{broken}"
    );
}

#[test]
fn conversation_relevance_judges_each_window_of_the_conversation() {
    // The last assistant message of a window is relevant unless it talks
    // about stocks; the sum-up names the irrelevancies it was given.
    let judge = FakeServer::start(|request| {
        let prompt = request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        let answer = if let Some(listed) = prompt.split("Irrelevancies:\n").nth(1) {
            format!(r#"{{"reason": "summed up: {}"}}"#, listed.trim_end_matches("\n\nJSON:").replace(['\n', '"'], ""))
        } else {
            let messages: Value =
                serde_json::from_str(prompt.rsplit("Messages:\n").next().unwrap().trim_end_matches("\n\nJSON:"))
                    .unwrap();
            let last = messages.as_array().unwrap().last().unwrap()["content"].as_str().unwrap_or_default().to_owned();
            match last.contains("stock") {
                true => r#"{"verdict": "no", "reason": "stocks at a wedding"}"#.to_owned(),
                false if last.contains("garble") => "no verdict here".to_owned(),
                false => r#"{"verdict": "yes"}"#.to_owned(),
            }
        };
        completion(request, &answer, None)
    });
    let config = r#"
prompts: ['{{message}}']
providers: [echo]
tests:
  - description: the prompt and answer alone
    vars: {message: hello there}
    assert: [{type: conversation-relevance}]
  - description: one window of four off topic
    vars:
      message: unused
      _conversation:
        - {input: plan my wedding, output: happy to help}
        - {input: flowers?, output: the stock market fell}
        - {input: I meant flowers, output: roses}
        - {input: and music?, output: a string quartet}
    assert:
      - {type: conversation-relevance, threshold: 0.8, config: {windowSize: 2}}
      - {type: not-conversation-relevance, threshold: 0.8}
  - description: an answer without a verdict
    vars:
      message: unused
      _conversation: [{input: hi, output: garble}]
    assert: [{type: not-conversation-relevance}]
  - description: a config it does not read
    vars: {message: x}
    assert: [{type: conversation-relevance, config: {window: 2}}]
"#;
    let dir = suite(config, &[]);
    let mut command = assay_command();
    command.env("ASSAY_JUDGE_URL", format!("http://127.0.0.1:{}/v1", judge.port)).env("ASSAY_JUDGE_MODEL", "m");
    let ran = run_with(command, dir.path(), &[]);
    let component =
        |suffix: &str, i: usize| ran.promptfoo_result(suffix)["gradingResult"]["componentResults"][i].clone();
    let alone = component("the prompt and answer alone", 0);
    assert_eq!((alone["pass"].clone(), alone["score"].as_f64()), (json!(true), Some(1.0)), "{alone}");
    assert_eq!(alone["reason"], "1 out of 1 conversation windows were relevant");
    let windows = component("one window of four off topic", 0);
    assert!(!windows.is_null(), "{}", stdout(&ran.output));
    assert_eq!((windows["pass"].clone(), windows["score"].as_f64()), (json!(false), Some(0.75)), "{windows}");
    assert_eq!(windows["reason"], "summed up: [  stocks at a wedding]");
    let negated = component("one window of four off topic", 1);
    assert_eq!(negated["pass"], true, "{negated}");
    assert!((negated["score"].as_f64().unwrap() - 0.25).abs() < 1e-9, "{negated}");
    // A grader failure fails both forms.
    let failed = component("an answer without a verdict", 0);
    assert_eq!((failed["pass"].clone(), failed["score"].as_f64()), (json!(false), Some(0.0)), "{failed}");
    assert!(failed["reason"].as_str().unwrap().contains("No JSON object found in response"), "{failed}");
    let refused = ran.case("a config it does not read")["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        refused.contains("config has `window`; a `conversation-relevance` assertion's config has `windowSize`"),
        "{refused}"
    );
    // Windows of two: the second window holds turns 1-2.
    let requests = judge.requests.lock().unwrap().clone();
    let second = requests
        .iter()
        .map(|r| r.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned())
        .find(|p| p.contains("the stock market fell") && !p.contains("Irrelevancies"))
        .unwrap();
    assert!(second.contains("plan my wedding") && !second.contains("I meant flowers"), "{second}");
}

#[test]
fn a_conversation_longer_than_the_judge_calls_a_check_may_make_is_an_error_saying_so() {
    let judge = FakeServer::start(|request| completion(request, r#"{"verdict": "yes"}"#, None));
    let turns: Vec<String> = (0..70).map(|i| format!("{{input: q{i}, output: a{i}}}")).collect();
    let config = format!(
        "prompts: [x]\nproviders: [echo]\ntests:\n  - vars:\n      _conversation: [{}]\n    assert: [{{type: conversation-relevance}}]\n",
        turns.join(", ")
    );
    let dir = suite(&config, &[]);
    let mut command = assay_command();
    command.env("ASSAY_JUDGE_URL", format!("http://127.0.0.1:{}/v1", judge.port)).env("ASSAY_JUDGE_MODEL", "m");
    let ran = run_with(command, dir.path(), &[]);
    assert_eq!(ran.case("test 1")["status"], "error", "{}", stdout(&ran.output));
    assert!(stdout(&ran.output).contains("has used every judge call it may make"), "{}", stdout(&ran.output));
    assert_eq!(judge.requests.lock().unwrap().len(), 64);
}

#[test]
fn a_config_naming_more_than_64_grading_providers_is_refused_past_them() {
    let tests: Vec<String> = (0..70)
        .map(|i| format!("  - {{options: {{provider: 'openai:m{i}'}}, assert: [{{type: llm-rubric, value: x}}]}}"))
        .collect();
    let config = format!("prompts: [x]\nproviders: [echo]\ntests:\n{}\n", tests.join("\n"));
    let dir = suite(&config, &[]);
    // Nothing leaves the machine: the graders' server is a closed local port.
    let mut command = assay_command();
    command.env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1").env_remove("OPENAI_API_BASE_URL");
    let ran = run_with(command, dir.path(), &[]);
    let error = ran.case("/test 70")["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("names more than 64 grading providers"), "{error}");
    // The first 64 are graders (their checks fail for want of a server, not of a grader).
    let first = ran.case("/test 1").to_string();
    assert!(!first.contains("more than 64"), "{first}");
}

#[test]
fn answers_that_are_not_only_text_reach_the_assertions_as_promptfoos_openai_provider_makes_them() {
    // The model answers by the prompt: a tool call, a tool call with
    // content, a reasoning model's answer, or JSON under a json_schema.
    let server = FakeServer::start(|request| {
        let prompt = request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        let call = json!([{"id": "t1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]);
        let message = match prompt.as_str() {
            "tool" => json!({"role": "assistant", "content": null, "tool_calls": call}),
            "both" => json!({"role": "assistant", "content": "checking", "tool_calls": call}),
            "function" => {
                json!({"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{}"}})
            }
            "think" => json!({"role": "assistant", "content": "Paris", "reasoning": "the capital"}),
            _ => json!({"role": "assistant", "content": "{ \"score\": 1.0 }"}),
        };
        let body = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}]});
        json_reply(200, "", &body)
    });
    let config = format!(
        r#"
prompts: ['{{{{q}}}}']
providers:
  - id: openai:chat:m
    config: {{apiBaseUrl: 'http://127.0.0.1:{port}/v1', apiKey: k}}
  - id: openai:chat:s
    label: schema
    config: {{apiBaseUrl: 'http://127.0.0.1:{port}/v1', apiKey: k, response_format: {{type: json_schema, json_schema: {{name: x, schema: {{type: object}}}}}}}}
tests:
  - vars: {{q: tool}}
    assert:
      - {{type: is-valid-openai-tools-call}}
      - {{type: contains, value: get_weather}}
      - {{type: javascript, value: "output[0].function.name === 'get_weather'"}}
  - vars: {{q: both}}
  - vars: {{q: function}}
    assert: [{{type: javascript, value: "output.name === 'f' && typeof output === 'object'"}}]
  - vars: {{q: think}}
  - vars: {{q: json}}
"#,
        port = server.port
    );
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &[]);
    let call =
        r#"[{"id":"t1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]"#;
    assert_eq!(ran.answer("[openai:chat:m] test 1"), call);
    assert_eq!(ran.case("[openai:chat:m] test 1")["status"], "passed", "{}", stdout(&ran.output));
    assert_eq!(
        ran.answer("[openai:chat:m] test 2"),
        format!(r#"{{"role":"assistant","content":"checking","tool_calls":{call}}}"#)
    );
    assert_eq!(ran.answer("[openai:chat:m] test 3"), r#"{"name":"f","arguments":"{}"}"#);
    // A javascript assertion gets such an answer as the object, as in
    // promptfoo; the record says so, for replays.
    assert_eq!(ran.case("[openai:chat:m] test 3")["status"], "passed", "{}", stdout(&ran.output));
    let record = &ran.case("[openai:chat:m] test 3")["samples"][0]["runs"][0]["interactions"][0]["response"];
    assert_eq!(record["text_is_json"], true, "{record}");
    let text = &ran.case("[openai:chat:m] test 4")["samples"][0]["runs"][0]["interactions"][0]["response"];
    assert!(text.get("text_is_json").is_none(), "{text}");
    let replayed = assay_command()
        .args(["run", dir.path().join("promptfooconfig.yaml").to_str().unwrap(), "--config"])
        .arg(dir.path().join("assay.toml"))
        .args(["--replay", dir.path().join("results").to_str().unwrap()])
        .args(["--results", dir.path().join("replayed").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(stdout(&replayed).contains("7 passed") || stdout(&replayed).contains("passed"), "{}", stdout(&replayed));
    let lines = std::fs::read_to_string(dir.path().join("replayed/results.jsonl")).unwrap();
    let function = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["id"].as_str().unwrap().ends_with("[openai:chat:m] test 3"))
        .unwrap();
    assert_eq!(function["status"], "passed", "{function}");
    assert_eq!(ran.answer("[openai:chat:m] test 4"), "Thinking: the capital\n\nParis");
    // Text stays verbatim; under a json_schema, JSON is parsed and written
    // again as JavaScript writes it.
    assert_eq!(ran.answer("[openai:chat:m] test 5"), "{ \"score\": 1.0 }");
    assert_eq!(ran.answer("[schema] test 5"), r#"{"score":1}"#);
    // The tool call is in the structure too, for assay's own checks.
    let structure =
        &ran.case("[openai:chat:m] test 1")["samples"][0]["runs"][0]["interactions"][0]["response"]["structure"];
    assert_eq!(structure["get_weather"], json!({"city": "Paris"}));
}

#[test]
fn a_providers_functions_tools_and_response_format_are_read_from_files_beside_the_config() {
    let server = FakeServer::start(|request| completion(request, &request.body.to_string(), None));
    let config = format!(
        "prompts: [x]\nproviders:\n  - id: openai:chat:m\n    config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1', apiKey: k, functions: file://functions.yaml, tools: file://tools.json, response_format: file://format.yaml}}\n",
        server.port
    );
    let files = [
        ("functions.yaml", "- name: get_weather\n  parameters: {type: object}\n"),
        ("tools.json", r#"[{"type": "function", "function": {"name": "t"}}]"#),
        ("format.yaml", "type: json_object\n"),
    ];
    let dir = suite(&config, &files);
    let ran = run(dir.path(), &[]);
    let requests = server.requests.lock().unwrap().clone();
    let body = &requests[0].body;
    assert_eq!(
        body["functions"],
        json!([{"name": "get_weather", "parameters": {"type": "object"}}]),
        "{}",
        stdout(&ran.output)
    );
    assert_eq!(body["tools"], json!([{"type": "function", "function": {"name": "t"}}]));
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    // Code, or a file out of the folder, is refused naming the key.
    for (value, error) in
        [("file://tools.js", "is not a YAML or JSON file"), ("file://../x.json", "outside the config's folder")]
    {
        let config = format!("prompts: [x]\nproviders:\n  - id: openai:chat:m\n    config: {{tools: '{value}'}}\n");
        let dir = suite(&config, &[("tools.js", "module.exports = []")]);
        std::fs::write(dir.path().parent().unwrap().join("x.json"), "[]").unwrap();
        let ran = run(dir.path(), &[]);
        let message = ran.lines[0]["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(message.contains("providers[0].config.tools") && message.contains(error), "{value}: {message}");
    }
}

#[test]
fn a_function_call_is_checked_against_the_providers_functions() {
    let server = FakeServer::start(|request| {
        let prompt = request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
        let arguments = if prompt.contains("good") { r#"{"city":"Paris"}"# } else { r#"{"city":3}"# };
        let message = json!({"role": "assistant", "content": null, "function_call": {"name": "get_weather", "arguments": arguments}});
        let body = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "function_call", "message": message}]});
        json_reply(200, "", &body)
    });
    let config = format!(
        "prompts: ['{{{{q}}}}']\nproviders:\n  - id: openai:chat:m\n    config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1', apiKey: k, functions: file://functions.yaml}}\n  - echo\ntests:\n  - vars: {{q: good}}\n    assert: [{{type: is-valid-openai-function-call}}]\n  - vars: {{q: bad}}\n    assert: [{{type: is-valid-openai-function-call}}]\n",
        server.port
    );
    let functions =
        "- name: get_weather\n  parameters: {type: object, properties: {city: {type: string}}, required: [city]}\n";
    let dir = suite(&config, &[("functions.yaml", functions)]);
    let ran = run(dir.path(), &[]);
    assert_eq!(ran.case("[openai:chat:m] test 1")["status"], "passed", "{}", stdout(&ran.output));
    let bad = ran.case("[openai:chat:m] test 2").to_string();
    assert!(bad.contains("Call to \\\"get_weather\\\" does not match schema"), "{bad}");
    // echo cannot check calls, as in promptfoo.
    let echo = ran.case("[echo] test 1").to_string();
    assert!(echo.contains("Provider does not have functionality for checking function call"), "{echo}");
}

#[test]
fn the_html_report_reads_the_results_of_a_config_with_an_openai_provider() {
    let server = FakeServer::start(|request| completion(request, "hi there", None));
    let config = format!(
        "prompts: [hi]\nproviders:\n  - id: openai:chat:m\n    config: {{apiBaseUrl: 'http://127.0.0.1:{}/v1', apiKey: k}}\ntests: [{{assert: [{{type: contains, value: hi}}]}}]\n",
        server.port
    );
    let dir = suite(&config, &[]);
    let ran = run(dir.path(), &[]);
    assert!(ran.output.status.success(), "{}", stdout(&ran.output));
    let report = assay_command().args(["report", dir.path().join("results").to_str().unwrap()]).output().unwrap();
    assert!(report.status.success(), "{}{}", stdout(&report), stderr(&report));
}

#[test]
fn an_assert_scoring_function_decides_the_test_from_the_named_scores() {
    let config = r#"
prompts: ["{{q}}"]
providers: [echo]
defaultTest:
  assertScoringFunction: file://score.js
  assert:
    - {type: contains, value: cat, metric: animal}
    - {type: contains, value: dog, metric: animal, weight: 3}
    - {type: contains, value: red, metric: colour}
tests:
  - description: weighted
    vars: {q: a red dog}
  - description: too low
    vars: {q: a red cat}
  - description: override
    vars: {q: a red cat}
    assertScoringFunction: file://score.js:lenient
  - description: throws
    vars: {q: x}
    assertScoringFunction: file://score.js:broken
  - description: python
    vars: {q: x}
    assertScoringFunction: file://score.py
"#;
    let score = r#"
module.exports = (namedScores, context) => {
  const score = namedScores.animal;
  return { pass: score >= 0.7 && context.componentResults.length === 3, score, reason: `animal ${score}, colour ${namedScores.colour}, threshold ${context.threshold}` };
};
module.exports.lenient = (namedScores) => ({ pass: namedScores.colour === 1, score: 1, reason: 'colour is enough' });
module.exports.broken = () => { throw new Error('no scores'); };
"#;
    let dir = suite(config, &[("score.js", score), ("score.py", "def func(scores, context):\n    return True\n")]);
    let ran = run(dir.path(), &[]);
    let status = |suffix: &str| ran.case(suffix)["status"].as_str().unwrap().to_owned();
    let scoring = |suffix: &str| {
        let checks = ran.case(suffix)["samples"][0]["runs"][0]["interactions"][0]["checks"].clone();
        checks.as_array().unwrap().last().unwrap().clone()
    };
    // `a red dog`: animal = (0 × 1 + 1 × 3) / 4 = 0.75, though `cat` failed.
    assert_eq!(status("/weighted"), "passed", "{}", stdout(&ran.output));
    assert_eq!(scoring("/weighted")["target"], "scoring");
    assert_eq!(scoring("/weighted")["message"], "animal 0.75, colour 1, threshold undefined");
    assert_eq!(status("/too low"), "failed");
    assert_eq!(scoring("/too low")["message"], "animal 0.25, colour 1, threshold undefined");
    assert_eq!(status("/override"), "passed");
    assert_eq!(status("/throws"), "failed");
    assert!(scoring("/throws")["message"].as_str().unwrap().starts_with("Scoring function error: Error: no scores"));
    // A Python one runs in the Python runner: `True` is no GradingResult.
    assert_eq!(status("/python"), "failed");
    assert_eq!(
        scoring("/python")["message"],
        "Scoring function error: assertion scoring function must return a GradingResult"
    );
    // promptfoo's output carries the function's score and reason.
    let result = ran.promptfoo_result("/weighted");
    assert_eq!(result["score"], 0.75);
    assert_eq!(result["gradingResult"]["reason"], "animal 0.75, colour 1, threshold undefined");
    assert_eq!(result["gradingResult"]["componentResults"].as_array().unwrap().len(), 3);
}
