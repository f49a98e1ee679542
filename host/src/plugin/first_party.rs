//! The first-party metric plugins: components that ship next to assay (in
//! its `plugins/` folder) and load from their files exactly as a third
//! party's would, rather than being built in. Knowing which key each
//! provides lets an unknown key say which plugin to add.

/// One first-party plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstParty {
    /// Its `[plugins.NAME]` label.
    pub label: &'static str,
    /// Its component, relative to an assay checkout.
    pub path: &'static str,
    /// The keys it provides.
    pub keys: &'static [&'static str],
    /// The grants it needs beyond the default.
    pub grants: &'static [&'static str],
}

/// Every first-party plugin.
pub const FIRST_PARTY_PLUGINS: &[FirstParty] = &[
    FirstParty { label: "rouge", path: "plugins/rouge/rouge.wasm", keys: &["rouge"], grants: &[] },
    FirstParty { label: "meteor", path: "plugins/meteor/meteor.wasm", keys: &["meteor"], grants: &[] },
    FirstParty { label: "bleu", path: "plugins/bleu/bleu.wasm", keys: &["bleu"], grants: &[] },
    FirstParty {
        label: "levenshtein",
        path: "plugins/levenshtein/levenshtein.wasm",
        keys: &["levenshtein"],
        grants: &[],
    },
    FirstParty {
        label: "table-equivalence",
        path: "plugins/table-equivalence/table_equivalence.wasm",
        keys: &["table_equivalence"],
        grants: &[],
    },
    FirstParty {
        label: "similarity",
        path: "plugins/similarity/similarity.wasm",
        keys: &["similarity", "bertscore"],
        grants: &["embeddings"],
    },
    FirstParty {
        label: "promptfoo",
        path: "plugins/promptfoo/promptfoo.wasm",
        keys: &[
            "pf_equals",
            "pf_contains",
            "pf_icontains",
            "pf_contains_any",
            "pf_contains_all",
            "pf_icontains_any",
            "pf_icontains_all",
            "pf_starts_with",
            "pf_regex",
            "pf_is_json",
            "pf_contains_json",
            "pf_is_valid_openai_tools_call",
            "pf_is_valid_openai_function_call",
            "pf_levenshtein",
            "pf_rouge_n",
            "pf_bleu",
            "pf_similar",
            "pf_select_best",
            "pf_llm_rubric",
            "pf_model_graded_closedqa",
            "pf_factuality",
            "pf_g_eval",
            "pf_conversation_relevance",
            "pf_answer_relevance",
            "pf_context_recall",
            "pf_context_relevance",
            "pf_context_faithfulness",
            "pf_latency",
            "pf_cost",
        ],
        grants: &["judge", "embeddings"],
    },
    FirstParty {
        label: "javascript",
        path: "plugins/javascript/javascript.wasm",
        keys: &["pf_javascript", "pf_js_value", "pf_is_sql", "pf_contains_sql"],
        grants: &[],
    },
    FirstParty {
        label: "readability",
        path: "plugins/readability-py/readability.wasm",
        keys: &["readability"],
        grants: &[],
    },
];

/// The first-party plugin providing `key` (as written: any case, `not_`
/// allowed), if one does.
pub fn first_party_for(key: &str) -> Option<&'static FirstParty> {
    let lower = key.to_ascii_lowercase();
    let base = lower.strip_prefix("not_").unwrap_or(&lower);
    FIRST_PARTY_PLUGINS.iter().find(|plugin| plugin.keys.contains(&base))
}

impl FirstParty {
    /// Its entry for `assay.toml`, indented by two spaces.
    pub fn config_entry(&self) -> String {
        let mut entry = format!("  [plugins.{}]\n  path = \"{}\"", self.label, self.path);
        if !self.grants.is_empty() {
            let grants: Vec<String> = self.grants.iter().map(|g| format!("\"{g}\"")).collect();
            entry.push_str(&format!("\n  grants = [{}]", grants.join(", ")));
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_plugin_of_a_key_in_any_form() {
        assert_eq!(first_party_for("NOT_Bertscore").map(|p| p.label), Some("similarity"));
        assert_eq!(first_party_for("keywords"), None);
        assert_eq!(
            first_party_for("similarity").unwrap().config_entry(),
            "  [plugins.similarity]\n  path = \"plugins/similarity/similarity.wasm\"\n  grants = [\"embeddings\"]"
        );
    }

    #[test]
    fn every_first_party_component_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for plugin in FIRST_PARTY_PLUGINS {
            assert!(root.join(plugin.path).is_file(), "{} is missing", plugin.path);
        }
    }
}
