//! Which CA bundle Dockerfile builds trust (`--build-ca-bundle`), and how a build that failed
//! on certificate verification is recognised from its log.
//!
//! Behind a TLS-inspecting proxy (common in hospitals and large companies) every HTTPS fetch
//! of a `RUN` step sees the proxy's certificate, which only the host's trust store knows. So
//! by default a build trusts the host's system bundle, mounted read-only for the build only
//! (never part of the image); `--build-ca-bundle none` turns that off and a path picks
//! another bundle. The choice is resolved once, at start-up, so a wrong path stops the server
//! rather than every build.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Where Linux distributions keep the system CA bundle, in the order they are tried:
/// Debian and Ubuntu, Fedora and RHEL, openSUSE, Alpine.
pub const SYSTEM_BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The environment variable OpenSSL (and most TLS stacks) read for a CA bundle; when set it
/// names the host's bundle ahead of [`SYSTEM_BUNDLES`].
pub const SSL_CERT_FILE: &str = "SSL_CERT_FILE";

/// Where a build's `RUN` steps find the bundle: the path Debian, Ubuntu and Alpine images
/// read (OpenSSL through `/usr/lib/ssl/cert.pem`, curl, apt, Go). Mounted read-only over the
/// image's own bundle for each `RUN`, so nothing of the host's trust ends up in the image.
pub const CA_TARGET: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Where a build's `RUN` steps find a pip configuration whose `cert` points at
/// [`CA_TARGET`] (pip otherwise trusts only its own bundle). pip reads it before
/// `/etc/pip.conf`, so a configuration the Dockerfile copies there still applies.
pub const PIP_CONF_TARGET: &str = "/etc/xdg/pip/pip.conf";

/// What `--build-ca-bundle` says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BuildCaBundle {
    /// The host's system bundle (the default): `SSL_CERT_FILE` when set, else the first of
    /// [`SYSTEM_BUNDLES`] that exists; none found means builds run without one.
    #[default]
    System,
    /// `none`: builds trust only their image's own roots.
    None,
    /// A bundle the operator names (a proxy's CA appended to the public roots, say).
    File(PathBuf),
}

impl std::str::FromStr for BuildCaBundle {
    type Err = TrustError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "" => Err(TrustError::Empty),
            "none" => Ok(BuildCaBundle::None),
            "system" => Ok(BuildCaBundle::System),
            path => Ok(BuildCaBundle::File(PathBuf::from(path))),
        }
    }
}

/// The bundle builds get, as resolved at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaBundle {
    /// The file on the host.
    pub path: PathBuf,
    /// Whether `--build-ca-bundle FILE` named it (rather than it being the host's, found by
    /// default).
    pub chosen: bool,
}

/// Why `--build-ca-bundle` (or the `SSL_CERT_FILE` its default reads) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// An empty value.
    #[error("--build-ca-bundle must be a file of PEM certificates, system or none, not empty")]
    Empty,
    /// The file named cannot be read.
    #[error("{origin} {}: cannot read it: {source}", .path.display())]
    Unreadable {
        /// `--build-ca-bundle` or `SSL_CERT_FILE`.
        origin: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no PEM certificate.
    #[error(
        "{origin} {}: holds no PEM certificate (-----BEGIN CERTIFICATE-----); give a CA bundle in PEM form, or --build-ca-bundle none",
        .path.display()
    )]
    NotPem {
        /// `--build-ca-bundle` or `SSL_CERT_FILE`.
        origin: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// buildah's `--volume HOST:TARGET:ro` cannot carry a path with a colon.
    #[error("{origin} {}: a path with ':' cannot be mounted into a build; copy the bundle elsewhere", .path.display())]
    Colon {
        /// `--build-ca-bundle` or `SSL_CERT_FILE`.
        origin: &'static str,
        /// The file.
        path: PathBuf,
    },
}

/// The bundle builds get, and, for the default, an `SSL_CERT_FILE` that was passed over.
#[derive(Debug)]
pub struct Resolved {
    /// The bundle, if any.
    pub bundle: Option<CaBundle>,
    /// Why the `SSL_CERT_FILE` the default would have used cannot serve (the usual places
    /// were looked at instead): a warning for the log, not a reason to refuse the start, since
    /// the default is nothing the operator asked for and the server may never build a
    /// Dockerfile.
    pub passed_over: Option<TrustError>,
}

impl BuildCaBundle {
    /// The bundle builds get on this host: reads `SSL_CERT_FILE` and looks at
    /// [`SYSTEM_BUNDLES`] for [`BuildCaBundle::System`]. Only a `--build-ca-bundle FILE`
    /// that cannot serve is an error.
    pub fn resolve(&self) -> Result<Resolved, TrustError> {
        let env = std::env::var_os(SSL_CERT_FILE);
        let candidates: Vec<&Path> = SYSTEM_BUNDLES.iter().map(Path::new).collect();
        self.resolve_with(env.as_deref(), &candidates)
    }

    /// [`BuildCaBundle::resolve`] with the environment variable's value and the candidate
    /// paths as arguments (for tests).
    pub fn resolve_with(
        &self,
        ssl_cert_file: Option<&OsStr>,
        candidates: &[&Path],
    ) -> Result<Resolved, TrustError> {
        let found = |bundle| Resolved {
            bundle,
            passed_over: None,
        };
        match self {
            BuildCaBundle::None => Ok(found(None)),
            BuildCaBundle::File(path) => {
                check(path, "--build-ca-bundle")?;
                Ok(found(Some(CaBundle {
                    path: path.clone(),
                    chosen: true,
                })))
            }
            BuildCaBundle::System => {
                let mut passed_over = None;
                if let Some(path) = ssl_cert_file.filter(|v| !v.is_empty()) {
                    let path = PathBuf::from(path);
                    match check(&path, SSL_CERT_FILE) {
                        Ok(()) => {
                            return Ok(found(Some(CaBundle {
                                path,
                                chosen: false,
                            })));
                        }
                        // Not fatal: a stale SSL_CERT_FILE in a desktop session must not stop
                        // a platform that may never build a Dockerfile. Said as a warning.
                        Err(e) => passed_over = Some(e),
                    }
                }
                let bundle = candidates
                    .iter()
                    .find(|p| check(p, "").is_ok())
                    .map(|p| CaBundle {
                        path: p.to_path_buf(),
                        chosen: false,
                    });
                Ok(Resolved {
                    bundle,
                    passed_over,
                })
            }
        }
    }
}

/// Whether `path` can be mounted and holds at least one PEM certificate.
fn check(path: &Path, origin: &'static str) -> Result<(), TrustError> {
    if path.to_string_lossy().contains(':') {
        return Err(TrustError::Colon {
            origin,
            path: path.to_path_buf(),
        });
    }
    let text = std::fs::read(path).map_err(|source| TrustError::Unreadable {
        origin,
        path: path.to_path_buf(),
        source,
    })?;
    if !text
        .windows(PEM_MARKER.len())
        .any(|w| w == PEM_MARKER.as_bytes())
    {
        return Err(TrustError::NotPem {
            origin,
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

const PEM_MARKER: &str = "-----BEGIN CERTIFICATE-----";

/// What TLS clients print when a certificate does not verify, lower-cased: OpenSSL, Python
/// and pip, curl, Go, Node and npm, apt (GnuTLS), wget, Java.
const VERIFY_MARKERS: &[&str] = &[
    "certificate_verify_failed",
    "certificate verify failed",
    "ssl certificate problem",
    "x509: certificate signed by unknown authority",
    "unable to get local issuer certificate",
    "self_signed_cert_in_chain",
    "unable_to_get_issuer_cert_locally",
    "self-signed certificate in certificate chain",
    "self signed certificate in certificate chain",
    "unable to verify the first certificate",
    "sslcertverificationerror",
    "there was a problem confirming the ssl certificate",
    "certificate verification failed",
    "unable to locally verify the issuer's authority",
    "pkix path building failed",
];

/// The longest excerpt of a matched line an error quotes.
const EXCERPT: usize = 160;

/// The log line that shows a certificate failing verification, trimmed to an excerpt around
/// the match; `None` when `line` shows none.
pub fn verify_failure(line: &str) -> Option<String> {
    let line = line.trim();
    // ASCII lower-casing keeps byte offsets, so a match in `lower` is one in `line`.
    let lower = line.to_ascii_lowercase();
    let (at, marker) = VERIFY_MARKERS
        .iter()
        .filter_map(|m| lower.find(m).map(|at| (at, m.len())))
        .min_by_key(|(at, _)| *at)?;
    Some(excerpt(line, at, marker))
}

/// At most [`EXCERPT`] bytes of `line` around `at..at + len`, with `…` where it was cut.
fn excerpt(line: &str, at: usize, len: usize) -> String {
    if line.len() <= EXCERPT {
        return line.to_owned();
    }
    let room = EXCERPT.saturating_sub(len) / 2;
    let mut start = at.saturating_sub(room);
    let mut end = (at + len + room).min(line.len());
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    while !line.is_char_boundary(end) {
        end += 1;
    }
    format!(
        "{}{}{}",
        if start > 0 { "…" } else { "" },
        &line[start..end],
        if end < line.len() { "…" } else { "" }
    )
}

/// The certificate failure of a build's failed step, read line by line: the last line that
/// shows one (see [`verify_failure`]) since the last `STEP n/m:` line buildah prints, so a
/// failure an earlier step retried past (pip warns, then succeeds) is not taken for the
/// cause.
#[derive(Debug, Default)]
pub struct StepVerifyFailure {
    last: Option<String>,
}

impl StepVerifyFailure {
    /// Reads the next line of the log.
    pub fn line(&mut self, line: &str) {
        if step_start(line) {
            self.last = None;
        } else if let Some(found) = verify_failure(line) {
            self.last = Some(found);
        }
    }

    /// The excerpt of the failure, if the last step showed one.
    pub fn found(self) -> Option<String> {
        self.last
    }
}

/// [`StepVerifyFailure`] over `lines`.
pub fn failed_step_verify_failure<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut scan = StepVerifyFailure::default();
    lines.into_iter().for_each(|l| scan.line(l));
    scan.found()
}

/// Whether `line` starts a Dockerfile step in buildah's output (`STEP 2/3: RUN …`, or
/// `[1/2] STEP 2/3: RUN …` in a multi-stage build).
fn step_start(line: &str) -> bool {
    let line = line.trim_start();
    let line = match line.strip_prefix('[') {
        Some(rest) => rest.split_once("] ").map_or("", |(_, after)| after),
        None => line,
    };
    line.strip_prefix("STEP ")
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(n, _)| {
            n.split_once('/').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            })
        })
}

/// Whether `line` shows a `RUN` step failing to replace the CA bundle the build mounts
/// (`update-ca-certificates`, run when `ca-certificates` is installed, renames a new bundle
/// over it, which a mount point refuses with "Device or resource busy").
pub fn bundle_busy(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.contains("ca-certificates.crt") && lower.contains("resource busy")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_flag_parses_none_system_and_paths() {
        assert_eq!(
            "none".parse::<BuildCaBundle>().unwrap(),
            BuildCaBundle::None
        );
        assert_eq!(
            "system".parse::<BuildCaBundle>().unwrap(),
            BuildCaBundle::System
        );
        assert_eq!(
            "/x/ca.pem".parse::<BuildCaBundle>().unwrap(),
            BuildCaBundle::File("/x/ca.pem".into())
        );
        assert_eq!(BuildCaBundle::default(), BuildCaBundle::System);
        let empty = "".parse::<BuildCaBundle>().unwrap_err().to_string();
        assert!(empty.contains("--build-ca-bundle"), "{empty}");
    }

    #[test]
    fn the_system_bundle_is_ssl_cert_file_else_the_first_usual_place_that_holds_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let debian = dir.path().join("debian.crt");
        let fedora = file(dir.path(), "fedora.crt", PEM);
        let empty = file(dir.path(), "empty.crt", "");
        let custom = file(dir.path(), "custom.pem", PEM);
        let found = |env: Option<&Path>, candidates: &[&Path]| {
            BuildCaBundle::System
                .resolve_with(env.map(Path::as_os_str), candidates)
                .unwrap()
                .bundle
                .map(|b| (b.path, b.chosen))
        };
        // Missing and certificate-less files are passed over.
        assert_eq!(
            found(None, &[&debian, &empty, &fedora]),
            Some((fedora.clone(), false))
        );
        assert_eq!(found(None, &[&debian, &empty]), None);
        // SSL_CERT_FILE comes first; an empty value is unset.
        assert_eq!(
            found(Some(&custom), &[&fedora]),
            Some((custom.clone(), false))
        );
        assert_eq!(
            BuildCaBundle::System
                .resolve_with(Some(OsStr::new("")), &[&fedora])
                .unwrap()
                .bundle
                .map(|b| b.path),
            Some(fedora.clone())
        );
        // A wrong SSL_CERT_FILE does not stop the start: it is passed over, saying why, for
        // the usual places (or none).
        for (wrong, says) in [
            (&debian, "cannot read it"),
            (&empty, "holds no PEM certificate"),
        ] {
            let resolved = BuildCaBundle::System
                .resolve_with(Some(wrong.as_os_str()), &[&fedora])
                .unwrap();
            assert_eq!(resolved.bundle.map(|b| b.path), Some(fedora.clone()));
            let why = resolved.passed_over.unwrap().to_string();
            assert!(
                why.starts_with(&format!("SSL_CERT_FILE {}", wrong.display())),
                "{why}"
            );
            assert!(why.contains(says), "{why}");
        }
        let resolved = BuildCaBundle::System
            .resolve_with(Some(debian.as_os_str()), &[&empty])
            .unwrap();
        assert!(resolved.bundle.is_none() && resolved.passed_over.is_some());
        assert!(
            BuildCaBundle::System
                .resolve_with(Some(custom.as_os_str()), &[])
                .unwrap()
                .passed_over
                .is_none()
        );
        // none and a file ignore the host's bundle.
        assert_eq!(
            BuildCaBundle::None
                .resolve_with(Some(debian.as_os_str()), &[&fedora])
                .unwrap()
                .bundle,
            None
        );
        assert_eq!(
            BuildCaBundle::File(custom.clone())
                .resolve_with(Some(debian.as_os_str()), &[&fedora])
                .unwrap()
                .bundle,
            Some(CaBundle {
                path: custom,
                chosen: true
            })
        );
    }

    #[test]
    fn a_named_bundle_that_cannot_serve_is_an_error_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let text = file(dir.path(), "notes.txt", "not a certificate");
        let colon = file(dir.path(), "a:b.pem", PEM);
        for (path, says) in [
            (missing, "cannot read it"),
            (text, "holds no PEM certificate"),
            (colon, "':'"),
            (dir.path().to_path_buf(), "cannot read it"),
        ] {
            let err = BuildCaBundle::File(path.clone())
                .resolve_with(None, &[])
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("--build-ca-bundle {}", path.display())),
                "{err}"
            );
            assert!(err.contains(says), "{err}");
        }
    }

    #[test]
    fn verification_failures_are_recognised_in_each_tool_s_words() {
        let failures = [
            // pip
            "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate (_ssl.c:1006)'))': /simple/flask/",
            "Could not fetch URL https://pypi.org/simple/flask/: There was a problem confirming the ssl certificate",
            // Python urllib
            "urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in certificate chain (_ssl.c:1006)>",
            // curl
            "curl: (60) SSL certificate problem: unable to get local issuer certificate",
            // Go
            "go: github.com/x/y@v1.0.0: Get \"https://proxy.golang.org/...\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            // npm
            "npm ERR! code SELF_SIGNED_CERT_IN_CHAIN",
            "npm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
            "npm ERR! request to https://registry.npmjs.org/left-pad failed, reason: unable to verify the first certificate",
            // apt (GnuTLS)
            "Err:1 https://deb.example.org bookworm InRelease\n  Certificate verification failed: The certificate is NOT trusted. The certificate issuer is unknown.",
            // wget
            "  Unable to locally verify the issuer's authority.",
            // Java
            "sun.security.validator.ValidatorException: PKIX path building failed",
        ];
        for line in failures {
            assert!(verify_failure(line).is_some(), "not recognised: {line}");
        }
        let others = [
            "ERROR: Could not find a version that satisfies the requirement flask",
            "curl: (6) Could not resolve host: pypi.org",
            "SSL_connect: SSL_ERROR_SYSCALL in connection to pypi.org:443",
            "E: Unable to locate package certificates",
            "Setting up ca-certificates (20230311) ...",
            "",
        ];
        for line in others {
            assert_eq!(verify_failure(line), None, "{line}");
        }
        assert_eq!(failed_step_verify_failure(others), None);
    }

    #[test]
    fn the_failure_quoted_is_the_last_of_the_failed_step() {
        let retried = "WARNING: Retrying (Retry(total=4)) after connection broken by 'SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed'))': /simple/flask/";
        let curl = "curl: (60) SSL certificate problem: unable to get local issuer certificate";
        let go = "tls: failed to verify certificate: x509: certificate signed by unknown authority";
        // An earlier step's retried warning is not the failed step's cause.
        assert_eq!(
            failed_step_verify_failure([
                "STEP 1/3: FROM python:3.12-slim",
                "STEP 2/3: RUN pip install flask",
                retried,
                "Successfully installed flask-3.0.0",
                "[2/2] STEP 3/3: RUN ./fetch.sh",
                "Error: building at STEP \"RUN ./fetch.sh\": exit status 1",
            ]),
            None
        );
        // Within the failed step, the last failure is the cause.
        assert_eq!(
            failed_step_verify_failure([
                "[1/2] STEP 2/4: RUN pip install flask && curl https://x && go mod download",
                retried,
                curl,
                go,
                "Error: building at STEP \"RUN pip install flask\": exit status 1",
            ]),
            Some(verify_failure(go).unwrap())
        );
        // No step line (a log of another tool): the last failure.
        assert_eq!(
            failed_step_verify_failure([curl, retried]),
            verify_failure(retried)
        );
        assert!(!step_start("STEP: nothing"));
        assert!(!step_start("[x] STEPS 1/2: RUN"));
    }

    #[test]
    fn a_long_line_is_quoted_around_the_match_and_a_short_one_whole() {
        let long = format!(
            "  {} [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed {}  ",
            "é".repeat(200),
            "x".repeat(300)
        );
        let quoted = verify_failure(&long).unwrap();
        assert!(quoted.contains("CERTIFICATE_VERIFY_FAILED"), "{quoted}");
        assert!(quoted.starts_with('…') && quoted.ends_with('…'), "{quoted}");
        assert!(quoted.len() <= EXCERPT + 2 * '…'.len_utf8() + 2, "{quoted}");
        assert_eq!(
            verify_failure("  curl: (60) SSL certificate problem: self-signed certificate \n"),
            Some("curl: (60) SSL certificate problem: self-signed certificate".into())
        );
    }

    #[test]
    fn a_run_step_replacing_the_mounted_bundle_is_recognised() {
        // What Debian's update-ca-certificates prints (seen under buildah 1.28).
        assert!(bundle_busy(
            "mv: cannot move '/etc/ssl/certs/ca-certificates.crt.new' to 'ca-certificates.crt': Device or resource busy"
        ));
        assert!(!bundle_busy("Updating certificates in /etc/ssl/certs..."));
        assert!(!bundle_busy(
            "rm: cannot remove '/tmp/x': Device or resource busy"
        ));
    }
}
