//! What `${VAR}` in a test case (or scenario) file may read: the
//! environment as the user allows it, never all of it. A case file is
//! input, often written by someone else; the environment holds the user's
//! credentials.
//!
//! - A variable is *visible* when its name starts with [`CASE_ENV_PREFIX`]
//!   (`ASSAY_CASE_`), or when the user allows it by name (`[cases]
//!   allow_env` in `assay.toml`, `--allow-env NAME`). For a server's
//!   clients, only by name ([`CaseEnv::named_only`]).
//! - A *protected* variable, one that holds a configured API key (the
//!   judge's or the embeddings backend's), is visible only when allowed by
//!   name: the prefix is not enough.
//! - `${VAR}` of a variable that is not visible is an error saying how to
//!   allow it; `${?VAR}` of one reads as unset, exactly as if the variable
//!   did not exist (so a file cannot probe which variables are set).
//!
//! The values of visible variables whose names look secret
//! ([`looks_secret`]), and of every protected variable whether visible or
//! not, are the run's secrets: reports replace them (see
//! [`crate::report::Redactor`]).

use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// Variables with this prefix are visible to case files without being
/// allowed by name (unless they hold a configured API key).
pub const CASE_ENV_PREFIX: &str = "ASSAY_CASE_";

/// The parts of a variable's name that make its value a secret, matched
/// anywhere in the name, ignoring case.
pub const SECRET_NAME_PARTS: &[&str] =
    &["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"];

/// Whether a variable's name says it holds a secret: it contains one of
/// [`SECRET_NAME_PARTS`] (`OPENAI_API_KEY`, `GITHUB_TOKEN`,
/// `ASSAY_CASE_DB_PASSWORD`, `X_AUTH_HEADER`).
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}

/// The environment a case file sees: a snapshot of the variables it may
/// read, the policy that chose them, and the secrets reports must hide.
///
/// Its `Debug` shows names, never values.
#[derive(Clone, Default)]
pub struct CaseEnv {
    /// The visible variables that are set, with their values.
    visible: HashMap<String, String>,
    /// Names allowed explicitly.
    allowed: BTreeSet<String>,
    /// Names that hold configured API keys.
    protected: BTreeSet<String>,
    /// Values reports must hide.
    secrets: Vec<String>,
    /// Only the names in `allowed` are visible: the prefix is not enough.
    named_only: bool,
}

/// What `${NAME}` finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// A visible variable, and its value.
    Value(&'a str),
    /// A visible variable that is not set.
    Unset,
    /// A variable case files may not read.
    NotAllowed {
        /// Whether it holds a configured API key (and so needs allowing by
        /// name even with the prefix).
        protected: bool,
    },
}

impl CaseEnv {
    /// An environment with no variables at all: every `${VAR}` is unset or
    /// refused.
    pub fn empty() -> CaseEnv {
        CaseEnv::default()
    }

    /// The environment `vars` (name, value pairs, e.g. a snapshot of the
    /// process's) as a case file may see it: `ASSAY_CASE_*` and the names
    /// in `allow` visible, the names in `protected` (the variables holding
    /// configured API keys) visible only if also in `allow`.
    pub fn new<N, V>(
        vars: impl IntoIterator<Item = (N, V)>,
        allow: impl IntoIterator<Item = impl Into<String>>,
        protected: impl IntoIterator<Item = impl Into<String>>,
    ) -> CaseEnv
    where
        N: Into<String>,
        V: Into<String>,
    {
        let mut env = CaseEnv {
            allowed: allow.into_iter().map(Into::into).collect(),
            protected: protected.into_iter().map(Into::into).collect(),
            ..CaseEnv::default()
        };
        let mut secrets = BTreeSet::new();
        for (name, value) in vars {
            let (name, value) = (name.into(), value.into());
            let visible = env.is_visible(&name);
            if env.protected.contains(&name) || (visible && looks_secret(&name)) {
                secrets.insert(value.clone());
            }
            if visible {
                env.visible.insert(name, value);
            }
        }
        env.secrets = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        env
    }

    /// The process environment as a case file may see it (see
    /// [`CaseEnv::new`]). Variables whose name or value is not UTF-8 are
    /// left out, as if unset.
    pub fn from_process(
        allow: impl IntoIterator<Item = impl Into<String>>,
        protected: impl IntoIterator<Item = impl Into<String>>,
    ) -> CaseEnv {
        let vars =
            std::env::vars_os().filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)));
        CaseEnv::new(vars, allow, protected)
    }

    /// The same environment with only the variables allowed by name
    /// visible, for case files a server's clients send or name: the
    /// `ASSAY_CASE_` prefix no longer suffices. The secrets stay (a report
    /// hides more, never less).
    pub fn named_only(mut self) -> CaseEnv {
        self.named_only = true;
        let allowed = &self.allowed;
        self.visible.retain(|name, _| allowed.contains(name));
        self
    }

    /// The prefix of the variables case files may read without naming them
    /// ([`CASE_ENV_PREFIX`]), or `""` when only named ones are visible.
    pub fn unasked_prefix(&self) -> &'static str {
        if self.named_only { "" } else { CASE_ENV_PREFIX }
    }

    /// Whether case files may read the variable `name`.
    pub fn is_visible(&self, name: &str) -> bool {
        self.allowed.contains(name)
            || (!self.named_only && name.starts_with(CASE_ENV_PREFIX) && !self.protected.contains(name))
    }

    /// What `${name}` finds.
    pub fn lookup(&self, name: &str) -> Lookup<'_> {
        if !self.is_visible(name) {
            return Lookup::NotAllowed { protected: self.protected.contains(name) };
        }
        match self.visible.get(name) {
            Some(value) => Lookup::Value(value),
            None => Lookup::Unset,
        }
    }

    /// The values reports must hide: those of visible variables whose
    /// names look secret and of every protected variable, each once, none
    /// empty.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }
}

impl fmt::Debug for CaseEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut visible: Vec<&String> = self.visible.keys().collect();
        visible.sort();
        f.debug_struct("CaseEnv")
            .field("visible", &visible)
            .field("allowed", &self.allowed)
            .field("protected", &self.protected)
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> CaseEnv {
        CaseEnv::new(
            [
                ("ASSAY_CASE_NAME", "Ada"),
                ("ASSAY_CASE_TOKEN", "tok-123456"),
                ("OPENAI_API_KEY", "sk-openai-secret"),
                ("HOME", "/home/ada"),
                ("ASSAY_JUDGE_API_KEY", "sk-judge-secret"),
                ("ASSAY_CASE_JUDGE_KEY", "sk-case-judge"),
            ],
            ["OPENAI_API_KEY"],
            ["ASSAY_JUDGE_API_KEY", "ASSAY_CASE_JUDGE_KEY"],
        )
    }

    #[test]
    fn the_prefix_and_the_allowlist_are_visible_and_nothing_else() {
        let env = env();
        assert_eq!(env.lookup("ASSAY_CASE_NAME"), Lookup::Value("Ada"));
        assert_eq!(env.lookup("ASSAY_CASE_UNSET"), Lookup::Unset);
        assert_eq!(env.lookup("OPENAI_API_KEY"), Lookup::Value("sk-openai-secret"));
        assert_eq!(env.lookup("HOME"), Lookup::NotAllowed { protected: false });
        assert_eq!(env.lookup("NOT_SET_AT_ALL"), Lookup::NotAllowed { protected: false });
    }

    #[test]
    fn named_only_the_prefix_is_not_enough_and_secrets_stay() {
        let env = env().named_only();
        assert_eq!(env.lookup("ASSAY_CASE_NAME"), Lookup::NotAllowed { protected: false });
        assert_eq!(env.lookup("ASSAY_CASE_TOKEN"), Lookup::NotAllowed { protected: false });
        assert_eq!(env.lookup("OPENAI_API_KEY"), Lookup::Value("sk-openai-secret"));
        assert_eq!(env.secrets().len(), 4);
    }

    #[test]
    fn api_keys_need_their_name_even_with_the_prefix() {
        let env = env();
        assert_eq!(env.lookup("ASSAY_JUDGE_API_KEY"), Lookup::NotAllowed { protected: true });
        assert_eq!(env.lookup("ASSAY_CASE_JUDGE_KEY"), Lookup::NotAllowed { protected: true });
        let allowed =
            CaseEnv::new([("ASSAY_JUDGE_API_KEY", "sk-judge")], ["ASSAY_JUDGE_API_KEY"], ["ASSAY_JUDGE_API_KEY"]);
        assert_eq!(allowed.lookup("ASSAY_JUDGE_API_KEY"), Lookup::Value("sk-judge"));
    }

    #[test]
    fn secrets_are_visible_secret_looking_values_and_every_api_key() {
        let mut secrets = env().secrets().to_vec();
        secrets.sort();
        assert_eq!(secrets, ["sk-case-judge", "sk-judge-secret", "sk-openai-secret", "tok-123456"]);
    }

    #[test]
    fn debug_shows_names_not_values() {
        let text = format!("{:?}", env());
        assert!(text.contains("OPENAI_API_KEY"), "{text}");
        assert!(!text.contains("sk-openai-secret") && !text.contains("Ada"), "{text}");
    }

    #[test]
    fn secret_looking_names() {
        for name in ["OPENAI_API_KEY", "github_token", "DB_PASSWORD", "X_AUTH", "ASSAY_CASE_SECRET_SAUCE"] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["HOME", "ASSAY_CASE_NAME", "PATH", "ASSAY_CASE_URL"] {
            assert!(!looks_secret(name), "{name}");
        }
    }
}
