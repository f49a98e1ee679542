use crate::case::CaseEnv;
use crate::formats::{Scenario, ScenarioFile, read_scenario_file};
use serde_json::json;

/// Writes `text` as `name` in a fresh folder and reads it.
fn read(name: &str, text: &str) -> Result<ScenarioFile, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    read_scenario_file(&path, &CaseEnv::empty()).map_err(|e| e.to_string())
}

fn queries(text: &str) -> Vec<Scenario> {
    match read("kyma.yml", text).unwrap() {
        ScenarioFile::Queries(scenarios) => scenarios,
        other => panic!("not a Kyma file: {other:?}"),
    }
}

const TWO_QUERIES: &str = "\
id: test-deploy-7 # format: test-<resource_kind>-<test_id>
description: the Deployment's image does not exist
queries:
  - user_query: Why does the Deployment not start?
    resource:
      kind: Deployment
      api_version: apps/v1
      name: web
      namespace: test-deploy-7
    expectations:
      - name: image_missing
        statement: points out that the image cannot be pulled
        threshold: 0.5
        required: true
      - name: suggests_tag
        statement: suggests a tag that exists
        threshold: 0.75
        required: false
  - user_query: How do I fix it?
    expectations:
      - name: fix
        statement: says to correct the image name
";

#[test]
fn each_query_is_a_scenario_of_its_own() {
    let [first, second] = &queries(TWO_QUERIES)[..] else { panic!("two scenarios") };
    assert_eq!((first.id.as_str(), second.id.as_str()), ("test-deploy-7/0", "test-deploy-7/1"));
    assert_eq!(first.problem, "Why does the Deployment not start?");
    assert_eq!(
        first.sly_data,
        json!({"resource": {"kind": "Deployment", "api_version": "apps/v1", "name": "web", "namespace": "test-deploy-7"}})
            .as_object()
            .cloned()
    );
    assert_eq!(second.sly_data, None, "a query without a resource sends no private data");
    assert_eq!(first.agent, None);
    let [image, tag] = &first.expectations[..] else { panic!("two expectations") };
    assert_eq!((image.id.as_str(), image.threshold, image.required), ("image_missing", Some(0.5), true));
    assert_eq!((tag.id.as_str(), tag.threshold, tag.required), ("suggests_tag", Some(0.75), false));
    // Judged like a seed expectation without `key`: gist on the statement.
    assert_eq!((image.key.as_str(), &image.expected), ("gist", &json!("points out that the image cannot be pulled")));
    assert_eq!((image.weight, image.categories.len()), (1, 0));
    // `threshold` and `required` may be left out: every answer must match,
    // and the expectation gates.
    assert_eq!((second.expectations[0].threshold, second.expectations[0].required), (None, true));
}

#[test]
fn json_and_hocon_files_in_kyma_format_read_too() {
    let json = r#"{"id": "x", "agent": "echo", "queries": [{"user_query": "q", "expectations": [{"name": "n", "statement": "s"}]}]}"#;
    let from_json = match read("x.json", json).unwrap() {
        ScenarioFile::Queries(scenarios) => scenarios,
        other => panic!("{other:?}"),
    };
    assert_eq!(from_json[0].id, "x/0");
    assert_eq!(from_json[0].agent.as_deref(), Some("echo"));
    let hocon = "id: x, agent: echo, queries: [{user_query: q, expectations: [{name: n, statement: s}]}]";
    let ScenarioFile::Queries(from_hocon) = read("x.hocon", hocon).unwrap() else { panic!("a Kyma file") };
    assert_eq!(
        from_hocon,
        from_json.into_iter().map(|s| Scenario { file: from_hocon[0].file.clone(), ..s }).collect::<Vec<_>>()
    );
}

#[test]
fn a_missing_user_query_is_located() {
    let text = TWO_QUERIES
        .replace("  - user_query: How do I fix it?\n", "  - expectations:\n")
        .replace("    expectations:\n      - name: fix", "      - name: fix");
    let error = read("kyma.yml", &text).unwrap_err();
    assert!(error.contains("kyma.yml`: missing `queries[1].user_query`: what the user asks the agent"), "{error}");
}

#[test]
fn a_threshold_must_be_a_score_above_zero() {
    for (bad, wanted) in [
        ("1.5", "invalid `queries[0].expectations[1].threshold`: 1.5 is not a score in (0, 1]"),
        ("0", "invalid `queries[0].expectations[1].threshold`: 0 is not a score in (0, 1]"),
        ("-0.2", "is not a score in (0, 1]\n\nConsider a fraction such as 0.5"),
        ("high", "`queries[0].expectations[1].threshold` must be a number in (0, 1], e.g. 0.5, but it is"),
    ] {
        let error =
            read("kyma.yml", &TWO_QUERIES.replace("threshold: 0.75", &format!("threshold: {bad}"))).unwrap_err();
        assert!(error.contains(wanted), "{bad}: {error}");
    }
}

#[test]
fn unknown_keys_are_located_with_the_nearest_known_one() {
    let error = read("kyma.yml", &TWO_QUERIES.replace("required: false", "requried: false")).unwrap_err();
    assert!(
        error.contains("unknown key `requried` at `queries[0].expectations[1].requried` (did you mean `required`?)"),
        "{error}"
    );
    let error = read("kyma.yml", &TWO_QUERIES.replace("user_query: How", "user_qeury: How")).unwrap_err();
    assert!(
        error.contains("unknown key `user_qeury` at `queries[1].user_qeury` (did you mean `user_query`?)"),
        "{error}"
    );
    let error = read("kyma.yml", &TWO_QUERIES.replace("description:", "descripton:")).unwrap_err();
    assert!(error.contains("unknown key `descripton` at `descripton` (did you mean `description`?)"), "{error}");
}

#[test]
fn a_file_mixing_both_formats_names_the_keys_of_each() {
    let error = read("kyma.yml", &format!("scenario_id: s\nproblem: p\n{TWO_QUERIES}")).unwrap_err();
    assert!(
        error.contains(
            "the file mixes Kyma's format (`id`, `queries`) with the scenario format (`scenario_id`, `problem`)"
        ),
        "{error}"
    );
    assert!(error.contains("Consider one format per file"), "{error}");
    // `queries` alone makes a file Kyma's: a seed scenario with it is mixed.
    let error = read("s.yml", "scenario_id: s\nproblem: p\nexpectations: []\nqueries: []\n").unwrap_err();
    assert!(error.contains("invalid `scenario_id`: the file mixes Kyma's format (`queries`) with"), "{error}");
    // A seed scenario reads as before.
    let seed = "scenario_id: s\nproblem: p\nexpectations: [{expectation_id: e, statement: st}]\n";
    assert!(matches!(read("s.yml", seed).unwrap(), ScenarioFile::Scenario(_)));
}

#[test]
fn names_may_repeat_as_kyma_s_runner_allows_queries_are_one_conversation_and_lists_are_not_empty() {
    // A name used twice in a query is kept, the second reported apart.
    let ScenarioFile::Queries(scenarios) =
        read("kyma.yml", &TWO_QUERIES.replace("name: suggests_tag", "name: image_missing")).unwrap()
    else {
        panic!("Kyma's format")
    };
    let ids: Vec<&str> = scenarios[0].expectations.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["image_missing", "image_missing (2)"]);
    // The second query is asked after the first, in its conversation.
    assert!(scenarios[0].conversation.is_empty());
    let earlier: Vec<&str> = scenarios[1].conversation.iter().map(|(text, _)| text.as_str()).collect();
    assert_eq!(earlier, [scenarios[0].problem.as_str()]);
    assert_eq!(scenarios[1].conversation[0].1, scenarios[0].sly_data);
    let error = read("kyma.yml", "id: x\nqueries: []\n").unwrap_err();
    assert!(error.contains("invalid `queries`: the list is empty; give at least one query"), "{error}");
    let error = read("kyma.yml", "id: x\nqueries: [{user_query: q, expectations: []}]\n").unwrap_err();
    assert!(error.contains("invalid `queries[0].expectations`: the list is empty"), "{error}");
    let error = read("kyma.yml", "queries: [{user_query: q, expectations: [{name: n, statement: s}]}]\n").unwrap_err();
    assert!(error.contains("missing `id`"), "{error}");
    let error =
        read("kyma.yml", "id: x\nqueries: [{user_query: q, resource: Pod, expectations: [{name: n, statement: s}]}]\n")
            .unwrap_err();
    assert!(error.contains("`queries[0].resource` must be a dictionary"), "{error}");
}
