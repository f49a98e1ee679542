//! The planner's rules, one test per rule, on responses written as HOCON
//! the way a user would.

use super::*;
use serde_json::json;

/// The stock keys plus `gist`, as a registry with the judge plugin would have.
struct Keys;

impl KeySet for Keys {
    fn has_key(&self, key: &str) -> bool {
        ["value", "less", "greater", "keywords", "gist"].contains(&key)
    }

    fn suggest(&self, key: &str) -> Option<String> {
        let all = ["value", "less", "greater", "keywords", "gist", "not_value", "not_keywords"];
        crate::suggest::nearest(key, all)
    }
}

fn response(hocon: &str) -> Map<String, Value> {
    let config = hocon::parse(hocon).unwrap();
    config.deserialize().unwrap()
}

fn plan(hocon: &str) -> Result<Vec<Check>, CaseErrorKind> {
    plan_response(&response(hocon), "interactions[0].response", &Keys, &KeyLines::NONE)
}

/// (target, key as written, expected) of each check.
fn summary(checks: &[Check]) -> Vec<(String, String, Value)> {
    checks.iter().map(|c| (c.target.to_string(), c.display_key(), c.expected.clone())).collect()
}

#[test]
fn text_tests_split_lists_into_one_check_each() {
    let checks = plan(r#"text { keywords: ["Beatles", "Liverpool"], not_keywords: "Stones" }"#).unwrap();
    assert_eq!(
        summary(&checks),
        [
            ("text".into(), "keywords".into(), json!("Beatles")),
            ("text".into(), "keywords".into(), json!("Liverpool")),
            ("text".into(), "not_keywords".into(), json!("Stones")),
        ]
    );
    assert!(checks[2].negated);
    assert_eq!(checks[2].key, "keywords");
    assert_eq!(checks[0].expected_json, "\"Beatles\"");
}

#[test]
fn sly_data_first_level_keys_are_data_even_when_named_like_matchers() {
    let checks = plan(r#"sly_data { value { value: 5 }, equals { value: [19481.0] } }"#).unwrap();
    assert_eq!(
        summary(&checks),
        [
            ("sly_data.value".into(), "value".into(), json!(5)),
            ("sly_data.equals".into(), "value".into(), json!(19481.0)),
        ]
    );
}

#[test]
fn deeper_keys_nest_until_a_matcher_name() {
    let checks = plan(
        r#"structure { answer { keywords: "Beatles" }, band { members { lead { value: "John" } }, not_value: null } }"#,
    )
    .unwrap();
    assert_eq!(
        summary(&checks),
        [
            ("structure.answer".into(), "keywords".into(), json!("Beatles")),
            ("structure.band.members.lead".into(), "value".into(), json!("John")),
            ("structure.band".into(), "not_value".into(), json!(null)),
        ]
    );
    assert_eq!(checks[1].target, Target::Structure(vec!["band".into(), "members".into(), "lead".into()]));
}

#[test]
fn matcher_names_are_case_insensitive_data_keys_are_not() {
    let checks = plan(r#"text { VALUE: "x", Not_Keywords: "y" }, sly_data { Equals { Value: 1 } }"#).unwrap();
    assert_eq!(
        summary(&checks),
        [
            ("text".into(), "value".into(), json!("x")),
            ("text".into(), "not_keywords".into(), json!("y")),
            ("sly_data.Equals".into(), "value".into(), json!(1)),
        ]
    );
}

#[test]
fn a_dictionary_value_is_one_check_with_parameters() {
    let checks = plan(r#"text { gist { criteria: "a greeting", model: "small" } }"#).unwrap();
    assert_eq!(summary(&checks), [("text".into(), "gist".into(), json!({"criteria": "a greeting", "model": "small"}))]);
}

#[test]
fn a_nested_list_compares_with_a_list() {
    let checks = plan(r#"sly_data { pair { value: [[1, 2]] } }"#).unwrap();
    assert_eq!(summary(&checks), [("sly_data.pair".into(), "value".into(), json!([1, 2]))]);
}

#[test]
fn an_empty_response_plans_no_checks() {
    assert_eq!(plan("").unwrap(), []);
}

#[test]
fn unknown_text_test_suggests_the_nearest_key() {
    let error = plan(r#"text { keywordz: "Beatles" }"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown matcher key `keywordz` at `interactions[0].response.text.keywordz` (did you mean `keywords`?)\n\nConsider `assay plugins` to list the keys, or adding the plugin that provides it to assay.toml"
    );
}

#[test]
fn a_misspelled_test_under_sly_data_is_a_data_key_without_tests() {
    let error = plan(r#"sly_data { equals { valeu: 5 } }"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid `interactions[0].response.sly_data.equals.valeu`: it is the number 5: as a test, no loaded plugin provides `valeu` (did you mean `value`?); as a data key, it would hold a dictionary of tests, e.g. valeu { value: 5 }\n\nConsider loading the plugin that provides `valeu`: `--plugin PATH.wasm`, or in assay.toml `[plugins.NAME]` with `path = \"PATH.wasm\"` (`assay plugins` lists the keys loaded now)"
    );
}

#[test]
fn unknown_response_parts_are_errors() {
    let error = plan(r#"structur { answer { keywords: "x" } }"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown response part `structur` at `interactions[0].response.structur` (did you mean `structure`?); the known ones are text, sly_data, structure"
    );
}

#[test]
fn a_text_block_must_be_a_dictionary() {
    let error = plan(r#"text: "Beatles""#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`interactions[0].response.text` must be a dictionary of tests, e.g. { keywords: \"Beatles\" }, but it is the string \"Beatles\""
    );
}

#[test]
fn an_empty_expected_list_is_an_error() {
    let error = plan(r#"text { keywords: [] }"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid `interactions[0].response.text.keywords`: the list is empty, so it checks nothing; give at least one expected value"
    );
}

#[test]
fn a_data_key_that_holds_no_test_is_an_error_naming_its_path() {
    assert_eq!(
        plan("sly_data { a { valeu {} } }").unwrap_err().to_string(),
        "invalid `interactions[0].response.sly_data.a.valeu`: the data key `valeu` holds no test, so it checks nothing (did you mean the test `value`?)\n\nConsider a test for it, e.g. valeu { value: 5 }"
    );
    assert_eq!(
        plan("structure { answer {} }").unwrap_err().to_string(),
        "invalid `interactions[0].response.structure.answer`: the data key `answer` holds no test, so it checks nothing\n\nConsider a test for it, e.g. answer { value: 5 }"
    );
    // One empty key among planned ones is still an error.
    let error = plan("sly_data { a { value: 1 }, b { c {} } }").unwrap_err().to_string();
    assert!(error.starts_with("invalid `interactions[0].response.sly_data.b.c`"), "{error}");
}

#[test]
fn an_empty_part_is_an_error() {
    for part in ["text", "sly_data", "structure"] {
        let error = plan(&format!("{part} {{}}")).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("invalid `interactions[0].response.{part}`: it is empty, so it checks nothing")),
            "{error}"
        );
    }
}

#[test]
fn a_case_names_only_built_in_or_configured_connections() {
    let case = |connections: &str| {
        let text = format!("agent = echo, connections = {connections}, interactions = [{{ text = hi }}]");
        crate::formats::parse_case(&text, "c", std::path::Path::new("c.hocon"), &crate::case::CaseEnv::empty()).unwrap()
    };
    assert!(plan_case(&case("[direct, http]"), &Keys).is_ok());
    assert_eq!(
        plan_case(&case("[htp]"), &Keys).unwrap_err().to_string(),
        "unknown connection `htp` at `connections` (did you mean `http`?); the known ones are direct, http, https, grpc (and any [connections.NAME] of assay.toml)"
    );
    /// Keys, and a configured connection `gpt`.
    struct WithGpt;
    impl KeySet for WithGpt {
        fn has_key(&self, key: &str) -> bool {
            Keys.has_key(key)
        }
        fn suggest(&self, key: &str) -> Option<String> {
            Keys.suggest(key)
        }
        fn connection_names(&self) -> Vec<String> {
            vec!["gpt".into()]
        }
    }
    assert!(plan_case(&case("[direct, gpt]"), &WithGpt).is_ok());
    assert_eq!(
        plan_case(&case("[direct, gtp]"), &WithGpt).unwrap_err().to_string(),
        "unknown connection `gtp` at `connections[1]` (did you mean `gpt`?); the known ones are direct, http, https, grpc, gpt (and any [connections.NAME] of assay.toml)"
    );
}
