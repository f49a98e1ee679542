//! What a `[plugins.NAME]` of a community plugin, or `assay plugin add REF`,
//! names: an OCI reference or a URL, parsed and checked before anything is
//! asked of the network.

use crate::errors::FetchError;
use oci_client::Reference;

/// Where a community plugin comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginReference {
    /// A component in an OCI registry, by tag, digest or both
    /// (`ghcr.io/acme/rouge:1.2.0@sha256:…`: the digest wins).
    Oci(Reference),
    /// A `.wasm` file at an https URL (plain http only on this machine).
    Url(reqwest::Url),
}

impl PluginReference {
    /// Parses `text`: a URL when it starts with `https://` or `http://`, an
    /// OCI reference otherwise (an `oci://` prefix is allowed). A reference
    /// must name its registry: `acme/rouge:1` would silently mean Docker Hub.
    pub fn parse(text: &str) -> Result<PluginReference, FetchError> {
        let bad = |message: String| FetchError::BadReference { reference: text.to_owned(), message };
        if text.starts_with("https://") || text.starts_with("http://") {
            let url = reqwest::Url::parse(text).map_err(|e| bad(e.to_string()))?;
            if url.scheme() == "http" && !is_this_machine(url.host_str().unwrap_or_default()) {
                return Err(bad("plain http is for servers on this machine only: use https".into()));
            }
            return Ok(PluginReference::Url(url));
        }
        let oci = text.strip_prefix("oci://").unwrap_or(text);
        let first = oci.split('/').next().unwrap_or_default();
        let names_registry = oci.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
        if !names_registry {
            return Err(bad("it names no registry (write it in full, e.g. `ghcr.io/acme/rouge:1.2.0`)".into()));
        }
        let reference: Reference = oci.parse().map_err(|e: oci_client::ParseError| bad(e.to_string()))?;
        if let Some(digest) = reference.digest()
            && !is_sha256_digest(digest)
        {
            return Err(bad(format!("`{digest}` is not a sha256 digest (sha256: and 64 lowercase hex digits)")));
        }
        Ok(PluginReference::Oci(reference))
    }

    /// The reference as written into assay.toml and messages.
    pub fn to_text(&self) -> String {
        match self {
            PluginReference::Oci(reference) => reference.whole(),
            PluginReference::Url(url) => url.to_string(),
        }
    }
}

/// Whether `host` (of a URL, or a registry's `host:port`) is this machine,
/// where plain http is allowed.
pub(crate) fn is_this_machine(host: &str) -> bool {
    let host = host.strip_prefix('[').and_then(|h| h.split_once(']')).map(|(h, _)| h).unwrap_or(host);
    let name = match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    name == "localhost" || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `sha256:` and 64 lowercase hex digits.
pub(crate) fn is_sha256_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(is_sha256_hex)
}

/// 64 lowercase hex digits.
pub(crate) fn is_sha256_hex(hex: &str) -> bool {
    hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_names_its_registry_and_plain_http_stays_on_this_machine() {
        let oci = PluginReference::parse("ghcr.io/acme/rouge:1.2.0").unwrap();
        assert_eq!(oci.to_text(), "ghcr.io/acme/rouge:1.2.0");
        let local = PluginReference::parse("oci://127.0.0.1:5000/acme/rouge:1").unwrap();
        assert_eq!(local.to_text(), "127.0.0.1:5000/acme/rouge:1");
        let pinned = format!("localhost:5000/acme/rouge:1@sha256:{}", "a".repeat(64));
        assert_eq!(PluginReference::parse(&pinned).unwrap().to_text(), pinned);
        for (text, says) in [
            ("acme/rouge:1", "names no registry"),
            ("rouge", "names no registry"),
            ("http://example.com/rouge.wasm", "plain http is for servers on this machine"),
            ("ghcr.io/acme/rouge@sha256:abc", "is not"),
        ] {
            let error = PluginReference::parse(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
            assert!(error.contains("Consider an OCI reference"), "{error}");
        }
        assert!(matches!(PluginReference::parse("http://127.0.0.1:8080/r.wasm"), Ok(PluginReference::Url(_))));
        assert!(matches!(PluginReference::parse("https://example.com/r.wasm"), Ok(PluginReference::Url(_))));
    }

    #[test]
    fn this_machine_is_loopback_and_localhost_only() {
        for host in ["localhost", "localhost:5000", "127.0.0.1", "127.0.0.1:5000", "[::1]:5000", "::1"] {
            assert!(is_this_machine(host), "{host}");
        }
        for host in ["ghcr.io", "localhost.example.com", "10.0.0.1:5000", "example.com:80"] {
            assert!(!is_this_machine(host), "{host}");
        }
    }
}
