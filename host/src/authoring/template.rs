//! The files of a new plugin crate: its `Cargo.toml` (a crate of its own,
//! building a `cdylib` for the component and an `rlib` for native tests)
//! and a `src/lib.rs` with a working matcher and its unit tests.

/// `Cargo.toml` of the crate `name`, depending on the SDK as `sdk` says
/// (a TOML value: `"0.1"` or `{ path = "…" }`).
pub(super) fn cargo_toml(name: &str, sdk: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
# cdylib: the component; rlib: native unit tests.
crate-type = ["cdylib", "rlib"]

[dependencies]
assay-plugin-sdk = {sdk}
serde_json = "1"

# `assay plugin build` writes the component here.
[package.metadata.assay]
component = "{name}.wasm"

[profile.release]
opt-level = "s"
lto = true
codegen-units = 1

# A crate of its own, even when created inside another workspace.
[workspace]
"#
    )
}

/// `src/lib.rs`: the matcher `key` of the plugin `name`, and its tests.
pub(super) fn lib_rs(name: &str, key: &str) -> String {
    format!(
        r#"//! `{key}`: passes when the response mentions every word of the expected
//! phrase, in any case and any order. Replace it with your own check; the
//! SDK's docs (`cargo doc --open`) and README explain every type.

use assay_plugin_sdk::{{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher}};

/// The matcher.
pub struct Plugin;

impl Matcher for Plugin {{
    fn describe() -> PluginInfo {{
        PluginInfo::new("{name}", env!("CARGO_PKG_VERSION"))
            .matcher("{key}", "the text mentions every word of the expected phrase, in any case")
    }}

    fn evaluate(_key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {{
        // `Err` means "cannot evaluate": an error verdict, never negated.
        let text = actual.as_str().ok_or_else(|| format!("{key} needs a string, found {{}}", actual.describe()))?;
        let phrase = expected.as_str().ok_or("{key} needs the expected phrase as a string")?;
        let words: Vec<String> = text.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase).collect();
        let missing: Vec<&str> =
            phrase.split_whitespace().filter(|w| !words.contains(&w.to_lowercase())).collect();
        // Messages state facts: the host negates the verdict for `not_{key}`.
        Ok(if missing.is_empty() {{
            Verdict::new(true, format!("the text mentions every word of {{phrase:?}}"))
        }} else {{
            Verdict::new(false, format!("the text does not mention {{}}", missing.join(", ")))
        }})
    }}
}}

export_matcher!(Plugin);

#[cfg(test)]
mod tests {{
    use super::*;

    fn check(text: &str, phrase: &str) -> Verdict {{
        Plugin::evaluate("{key}", &Actual::text(text), &phrase.into()).unwrap()
    }}

    #[test]
    fn passes_when_every_word_is_mentioned() {{
        assert!(check("The Beatles came from Liverpool.", "liverpool beatles").pass);
        let verdict = check("The Beatles came from Liverpool.", "beatles london");
        assert!(!verdict.pass);
        assert_eq!(verdict.message, "the text does not mention london");
    }}

    #[test]
    fn a_number_is_not_a_text() {{
        let error = Plugin::evaluate("{key}", &Actual::value(5.into()), &"x".into()).unwrap_err();
        assert_eq!(error, "{key} needs a string, found the number 5");
    }}
}}
"#
    )
}
