//! Credentials assay holds but never shows: the userinfo of a URL
//! (`http://user:password@host/`, or a token as the user name, which HTTP
//! clients send as basic authentication) and API keys. Every URL that
//! reaches a message, a report or `Debug` output goes through
//! [`redact_urls`]; structs holding an API key print it as [`REDACTED`].

use std::borrow::Cow;

/// What a credential is shown as.
pub const REDACTED: &str = "[redacted]";

/// `text` with the userinfo of every URL in it replaced by [`REDACTED`]:
/// `http://user:s3cret@host:8080/x` becomes `http://[redacted]@host:8080/x`.
/// A URL's authority ends at the first `/`, `?`, `#`, whitespace, quote or
/// bracket after its `://`; an `@` inside it ends the userinfo. The rest of
/// the text is kept as it is.
pub fn redact_urls(text: &str) -> Cow<'_, str> {
    let mut redacted = String::new();
    let mut kept = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let start = search + found + 3;
        let authority_len = text[start..]
            .find(|c: char| "/?#\"'`<>()[]{}".contains(c) || c.is_whitespace())
            .unwrap_or(text.len() - start);
        let authority = &text[start..start + authority_len];
        if let Some(at) = authority.rfind('@') {
            redacted.push_str(&text[kept..start]);
            redacted.push_str(REDACTED);
            kept = start + at;
        }
        search = start + authority_len;
    }
    if kept == 0 {
        return Cow::Borrowed(text);
    }
    redacted.push_str(&text[kept..]);
    Cow::Owned(redacted)
}

/// An API key as `Debug` shows it: `Some("[redacted]")`, or `None`.
pub(crate) fn debug_key(key: &Option<String>) -> Option<&'static str> {
    key.as_ref().map(|_| REDACTED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_userinfo_of_every_url_is_redacted_and_nothing_else() {
        assert_eq!(redact_urls("http://user:s3cret@127.0.0.1:9/v1"), "http://[redacted]@127.0.0.1:9/v1");
        assert_eq!(redact_urls("https://tok3n@host"), "https://[redacted]@host");
        assert_eq!(
            redact_urls("agent at http://a:b@h/x?q=c@d failed; see `https://e:f@g`"),
            "agent at http://[redacted]@h/x?q=c@d failed; see `https://[redacted]@g`"
        );
        // An `@` in a password (unencoded) still ends in the last one.
        assert_eq!(redact_urls("http://u:p@ss@h/"), "http://[redacted]@h/");
        for kept in ["http://localhost:8080/api/v1/echo", "no url at all", "mailto:a@b", "x://", "http://h/@scope/pkg"]
        {
            assert!(matches!(redact_urls(kept), Cow::Borrowed(_)), "{kept}");
        }
    }
}
