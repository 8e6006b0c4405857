//! Which certificate authorities the toolkit's HTTPS clients trust, and what a refused
//! certificate is called.
//!
//! Servers of a team are often behind a certificate of the company's private CA. The system's
//! trust store does not know it, and turning verification off is not an option. So, on top of
//! the system's roots, every client of the toolkit (the CLI, the MCP server, the desktop)
//! trusts:
//! - the PEM bundle `SLIPWAY_CA_FILE` names, for every server;
//! - the bundle `slipway login --ca-file` saved for an environment, for that environment's
//!   platform and care URLs (the origin must match: another server is not trusted because of
//!   it);
//! - a bundle a command added for its own run ([`add_ca_file`]: `slipway login --ca-file`
//!   before it has saved anything).
//!
//! A certificate that is still refused gives [`describe_send_error`]'s message, which says
//! it is a trust problem and names both ways to fix it, rather than "error sending request".

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use reqwest::blocking::ClientBuilder;

use crate::error::ToolError;

/// The environment variable naming a PEM bundle every client trusts.
pub const ENV_CA_FILE: &str = "SLIPWAY_CA_FILE";

/// Bundles added for this process by [`add_ca_file`].
static ADDED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Reads `path` as a PEM bundle of one or more certificates; the error names `field`.
pub fn read_ca_file(field: &str, path: &Path) -> Result<Vec<reqwest::Certificate>, ToolError> {
    let pem = std::fs::read(path).map_err(|e| {
        ToolError::invalid(field, format!("{}: cannot be read: {e}", path.display()))
    })?;
    let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
        ToolError::invalid(
            field,
            format!("{}: not a PEM certificate bundle: {e}", path.display()),
        )
    })?;
    if certificates.is_empty() {
        return Err(ToolError::invalid(
            field,
            format!(
                "{}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                path.display()
            ),
        ));
    }
    Ok(certificates)
}

/// Trusts `path` in every client this process makes from now on (checked now: an error
/// names `ca_file`). Returns the absolute path, which is what a login saves.
pub fn add_ca_file(path: &Path) -> Result<PathBuf, ToolError> {
    read_ca_file("ca_file", path)?;
    let absolute = std::path::absolute(path).map_err(|e| ToolError::io("resolve", path, &e))?;
    let mut added = ADDED.lock().unwrap_or_else(PoisonError::into_inner);
    if !added.contains(&absolute) {
        added.push(absolute.clone());
    }
    Ok(absolute)
}

/// The bundles a client of `url` trusts besides the system's roots, each with the name its
/// error should carry.
fn ca_files_for(url: &str) -> Vec<(&'static str, PathBuf)> {
    let mut files = Vec::new();
    if let Some(path) = std::env::var_os(ENV_CA_FILE).filter(|p| !p.is_empty()) {
        files.push((ENV_CA_FILE, PathBuf::from(path)));
    }
    for path in ADDED.lock().unwrap_or_else(PoisonError::into_inner).iter() {
        files.push(("ca_file", path.clone()));
    }
    for path in crate::credentials::saved_ca_files(url) {
        files.push(("ca_file", path));
    }
    files
}

/// An HTTP client builder for `url` that trusts the system's roots and the bundles above.
/// A bundle that cannot be read is an error naming where it came from, never silently
/// skipped (the next error would be a confusing refusal).
pub fn client_builder(url: &str) -> Result<ClientBuilder, ToolError> {
    let mut builder = reqwest::blocking::Client::builder();
    for (field, path) in ca_files_for(url) {
        for certificate in read_ca_file(field, &path)? {
            builder = builder.add_root_certificate(certificate);
        }
    }
    Ok(builder)
}

/// True when `error` is a refused server certificate (an unknown CA, a self-signed or
/// expired certificate, a name that does not match).
pub fn is_untrusted_certificate(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(e) = source {
        let text = e.to_string().to_ascii_lowercase();
        if [
            "certificate verify failed",
            "self-signed certificate",
            "self signed certificate",
            "unable to get local issuer certificate",
            "certificate has expired",
            "hostname mismatch",
            "invalid peer certificate",
            "unknownissuer",
        ]
        .iter()
        .any(|marker| text.contains(marker))
        {
            return true;
        }
        source = e.source();
    }
    false
}

/// What to say when sending to `url` failed with `error`: a refused certificate says so
/// and names `SLIPWAY_CA_FILE` and `slipway login --ca-file`; anything else is the error
/// with its causes (reqwest's own text stops at "error sending request").
pub fn describe_send_error(url: &str, error: &reqwest::Error) -> String {
    if is_untrusted_certificate(error) {
        let mut cause = String::new();
        let mut source = std::error::Error::source(error);
        while let Some(e) = source {
            cause = e.to_string();
            source = e.source();
        }
        return format!(
            "the TLS certificate of {url} is not trusted ({cause}); if the server uses a \
             private certificate authority, point {ENV_CA_FILE} at its PEM file or sign in with \
             `slipway login --ca-file FILE`"
        );
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<Chain>>);
    impl std::fmt::Display for Chain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Chain {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|c| c as _)
        }
    }

    #[test]
    fn a_refused_certificate_is_recognised_anywhere_in_the_chain() {
        let openssl = Chain(
            "error sending request",
            Some(Box::new(Chain(
                "error:0A000086:SSL routines:tls_post_process_server_certificate:certificate verify failed:../ssl/statem/statem_clnt.c:1889: (self-signed certificate in certificate chain)",
                None,
            ))),
        );
        assert!(is_untrusted_certificate(&openssl));
        let refused = Chain(
            "error sending request",
            Some(Box::new(Chain("Connection refused (os error 111)", None))),
        );
        assert!(!is_untrusted_certificate(&refused));
    }

    #[test]
    fn a_ca_file_that_is_not_pem_is_refused_with_its_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "hello\n").unwrap();
        let e = add_ca_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("ca_file") && e.contains("no PEM certificate"),
            "{e}"
        );
        let e = add_ca_file(&dir.path().join("missing.pem"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be read"), "{e}");
    }
}
