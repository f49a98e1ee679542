use super::*;
use assay_plugin_sdk::Capability;
use serde_json::json;

fn ask(answer: &'static str) -> Result<Verdict, String> {
    judge::set_native(Box::new(move |prompt| {
        assert!(prompt.contains("ACCEPTANCE CRITERIA:\nnames the band\n\nTEXT:\nThe Beatles"), "{prompt}");
        Ok(answer.to_owned())
    }));
    Gist::evaluate("gist", &Actual::text("The Beatles"), &json!("names the band"))
}

#[test]
fn pass_only_when_the_judge_says_pass_and_not_fail() {
    assert!(ask("pass").unwrap().pass);
    assert!(ask("PASS.").unwrap().pass);
    assert!(ask("It passes the criteria").unwrap().pass);
    assert!(!ask("fail").unwrap().pass);
    assert!(!ask("Failed: no band named").unwrap().pass);
}

#[test]
fn an_equivocal_answer_is_an_error_quoting_it() {
    assert_eq!(
        ask("pass or fail, hard to say").unwrap_err(),
        "the judge's answer is equivocal: \"pass or fail, hard to say\""
    );
    assert_eq!(ask("maybe").unwrap_err(), "the judge's answer is equivocal: \"maybe\"");
}

fn fail_with(error: CapabilityError) -> String {
    judge::set_native(Box::new(move |_| Err(error.clone())));
    Gist::evaluate("gist", &Actual::text("x"), &json!("y")).unwrap_err()
}

#[test]
fn without_a_judge_it_says_how_to_configure_one() {
    let error = fail_with(CapabilityError::NotConfigured(Capability::Judge));
    assert_eq!(error, "gist needs a judge: set [judge] in assay.toml or ASSAY_JUDGE_URL");
}

#[test]
fn it_decides_by_the_kind_of_failure_never_by_the_wording() {
    // A backend failure worded like a missing judge is still a failure.
    let error = fail_with(CapabilityError::Failed("no judge is configured, says the backend".into()));
    assert_eq!(error, "gist could not ask the judge: no judge is configured, says the backend");
    let error = fail_with(CapabilityError::Failed("the judge budget of 1 request for this run is spent".into()));
    assert_eq!(error, "gist could not ask the judge: the judge budget of 1 request for this run is spent");
    let error = fail_with(CapabilityError::NotGranted(Capability::Judge));
    assert!(error.starts_with("gist could not ask the judge: the judge capability is not granted"), "{error}");
}

#[test]
fn criteria_must_be_a_string() {
    assert_eq!(
        Gist::evaluate("gist", &Actual::text("x"), &json!(5)).unwrap_err(),
        "gist needs the acceptance criteria as a string"
    );
}
