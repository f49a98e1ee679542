//! Every HTTP client assay makes, built in one place ([`client`]): TLS is
//! rustls with the usual roots (plus a connection's CA file), connecting
//! has a deadline, reading may have one, redirects follow one policy per
//! caller. And what every HTTP caller shares: a body read up to a cap
//! ([`read_up_to`]) and an error's whole chain without URLs' userinfo
//! ([`error_chain`]). Agents, the judge and embeddings backends, an
//! OpenSearch cluster's setup and plugin downloads by URL come through
//! here (an OCI registry's client is `oci-client`'s own).

use crate::credentials::redact_urls;
use futures_util::StreamExt;
use std::path::Path;
use std::time::Duration;

/// How long connecting may take when the caller does not say.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of an error response's body is read, for its preview.
pub(crate) const PREVIEW_BYTES: usize = 64 << 10;

/// What a caller decides about its client; the rest is decided here.
pub(crate) struct ClientOptions<'a> {
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long a whole request may take (`None`: the caller bounds it).
    pub timeout: Option<Duration>,
    /// How long the body may stay silent (`None`: the caller bounds it).
    pub read_timeout: Option<Duration>,
    /// A PEM file of CA certificates to trust besides the usual roots.
    pub ca_file: Option<&'a Path>,
    /// Where redirects may go (`None`: reqwest's default, ten hops).
    pub redirect: Option<reqwest::redirect::Policy>,
    /// What the client is for, in its build error (`the judge's`).
    pub purpose: &'a str,
}

impl Default for ClientOptions<'_> {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: CONNECT_TIMEOUT,
            timeout: None,
            read_timeout: None,
            ca_file: None,
            redirect: None,
            purpose: "the",
        }
    }
}

/// An HTTP client as `options` ask.
pub(crate) fn client(options: ClientOptions<'_>) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder().connect_timeout(options.connect_timeout).use_rustls_tls();
    if let Some(timeout) = options.timeout {
        builder = builder.timeout(timeout);
    }
    if let Some(timeout) = options.read_timeout {
        builder = builder.read_timeout(timeout);
    }
    if let Some(policy) = options.redirect {
        builder = builder.redirect(policy);
    }
    if let Some(path) = options.ca_file {
        let pem = std::fs::read(path).map_err(|e| format!("cannot read the CA file `{}`: {e}", path.display()))?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("the CA file `{}` is not PEM certificates: {e}", path.display()))?;
        if certificates.is_empty() {
            return Err(format!("the CA file `{}` holds no PEM certificate", path.display()));
        }
        for certificate in certificates {
            builder = builder.add_root_certificate(certificate);
        }
    }
    builder.build().map_err(|e| format!("cannot build {} HTTP client: {e}", options.purpose))
}

/// At most `cap` bytes of a response's body, and whether it had more (the
/// rest is never read): a server cannot make assay buffer more than it
/// chose to, whatever its `content-length` says or omits.
pub(crate) async fn read_up_to(response: reqwest::Response, cap: usize) -> Result<(Vec<u8>, bool), reqwest::Error> {
    if response.content_length().is_some_and(|length| length > cap as u64) {
        return Ok((Vec::new(), true));
    }
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > cap {
            body.extend_from_slice(&chunk[..cap - body.len()]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// An error and its sources, joined: reqwest's own message is too vague.
/// URLs in it lose their userinfo (reqwest moves it into a header before
/// sending, but an error may still quote the URL it was given).
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    redact_urls(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_that_is_missing_or_holds_no_certificate_is_named() {
        let missing = client(ClientOptions { ca_file: Some(Path::new("/nonexistent/ca.pem")), ..Default::default() });
        assert!(missing.unwrap_err().contains("cannot read the CA file `/nonexistent/ca.pem`"));
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let none = client(ClientOptions { ca_file: Some(&empty), ..Default::default() }).unwrap_err();
        assert!(none.contains("holds no PEM certificate"), "{none}");
    }

    #[test]
    fn an_error_chain_joins_its_causes_and_hides_userinfo() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "request to http://user:secret@host/x failed")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let error = Outer(std::io::Error::other("connection refused"));
        let chain = error_chain(&error);
        assert!(chain.ends_with(": connection refused") && !chain.contains("secret"), "{chain}");
    }
}
