//! The bearer token: read from a file or a variable, or generated at start
//! (and then saved in a file only the user may read), never shown by
//! accident (its `Debug` hides it), and compared in constant time with what
//! each request sends in `Authorization: Bearer TOKEN`. promptfoo's webhook assertion
//! sends no headers of one's choosing, so its endpoint also takes the token
//! as `?token=`.

use crate::errors::ServeError;
use crate::serve::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::path::Path;
use std::sync::Arc;

/// The shortest token accepted: a guessable one protects nothing.
pub const MIN_TOKEN_CHARS: usize = 16;

/// A bearer token.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// `text` without surrounding whitespace as a token, if it is one: at
    /// least [`MIN_TOKEN_CHARS`] visible ASCII characters. `source_name`
    /// says where it came from, for the error.
    pub fn new(text: &str, source_name: &str) -> Result<Token, ServeError> {
        let token = text.trim();
        let fail =
            |message: &str| ServeError::Token { source_name: source_name.to_owned(), message: message.to_owned() };
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(fail("a token is printable ASCII with no spaces inside"));
        }
        if token.len() < MIN_TOKEN_CHARS {
            return Err(fail(&format!(
                "it is shorter than {MIN_TOKEN_CHARS} characters; use a random one, e.g. `openssl rand -hex 32`"
            )));
        }
        Ok(Token(token.to_owned()))
    }

    /// A new random token: 32 bytes from the system's randomness, as 64
    /// hex digits.
    pub fn generate() -> Token {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the system has randomness");
        Token(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The token's text, for the one place that shows it on purpose (the
    /// line `assay serve` prints when it generated the token).
    pub fn reveal(&self) -> &str {
        &self.0
    }

    /// Writes the token to `path` as its only line, readable by the user
    /// alone (0600, never through a planted link; see `private_files`),
    /// creating the missing folders (0700).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            crate::private_files::create_dir(dir)?;
        }
        crate::private_files::write(path, format!("{}\n", self.0).as_bytes())
    }

    /// The token in `path` (its only line).
    pub fn read(path: &Path) -> Result<Token, ServeError> {
        let source_name = format!("`{}`", path.display());
        let text = std::fs::read_to_string(path)
            .map_err(|e| ServeError::Token { source_name: source_name.clone(), message: e.to_string() })?;
        Token::new(&text, &source_name)
    }

    /// Whether `offered` is the token, in time that does not depend on
    /// where they differ.
    pub fn matches(&self, offered: &[u8]) -> bool {
        let expected = self.0.as_bytes();
        if offered.len() != expected.len() {
            return false;
        }
        let difference = expected.iter().zip(offered).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(difference) == 0
    }
}

/// The path whose document anyone may read.
const OPEN_PATH: &str = "/v1/openapi.json";
/// The path that may carry the token as `?token=`.
const QUERY_TOKEN_PATH: &str = "/v1/promptfoo/webhook";

/// Lets a request through when the server has no token, or the request
/// carries it; answers 401 otherwise.
pub async fn require_token(State(token): State<Option<Arc<Token>>>, request: Request, next: Next) -> Response {
    let Some(token) = token else { return next.run(request).await };
    if request.uri().path() == OPEN_PATH || offered(&request).is_some_and(|offered| token.matches(offered)) {
        return next.run(request).await;
    }
    let mut response = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "authenticate: this server needs its bearer token, as `Authorization: Bearer TOKEN`",
    )
    .into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The token a request offers, if any.
fn offered(request: &Request) -> Option<&[u8]> {
    let from_header =
        request.headers().get(header::AUTHORIZATION).and_then(|value| value.as_bytes().strip_prefix(b"Bearer "));
    if from_header.is_some() || request.uri().path() != QUERY_TOKEN_PATH {
        return from_header;
    }
    request.uri().query()?.split('&').find_map(|pair| pair.strip_prefix("token=")).map(str::as_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_long_printable_and_hidden() {
        let token = Token::new("  0123456789abcdef\n", "ASSAY_SERVE_TOKEN").unwrap();
        assert!(token.matches(b"0123456789abcdef"));
        assert!(!token.matches(b"0123456789abcdeF"));
        assert!(!token.matches(b"0123456789abcde"));
        assert_eq!(format!("{token:?}"), "Token(..)");
        let short = Token::new("secret", "`t.txt`").unwrap_err().to_string();
        assert!(short.contains("`t.txt`") && short.contains("shorter than 16") && !short.contains("secret"));
        assert!(Token::new("0123456789 abcdef", "x").is_err());
    }

    #[test]
    fn a_generated_token_is_random_valid_and_saved_for_the_user_alone() {
        let (a, b) = (Token::generate(), Token::generate());
        assert_ne!(a, b);
        assert_eq!(a.reveal().len(), 64);
        assert_eq!(Token::new(a.reveal(), "generated").unwrap(), a);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep").join("serve-token");
        a.save(&path).unwrap();
        assert_eq!(Token::read(&path).unwrap(), a);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // Saved again (a restart), it replaces the old one.
        b.save(&path).unwrap();
        assert_eq!(Token::read(&path).unwrap(), b);
    }
}
