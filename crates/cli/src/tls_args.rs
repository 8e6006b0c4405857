//! `--tls-cert FILE --tls-key FILE`, the same on `platform serve` and `care serve`.

use std::path::PathBuf;

use clap::Args;

/// The HTTPS flags of a server command.
#[derive(Debug, Args)]
pub struct TlsArgs {
    /// Serve HTTPS with this PEM certificate chain (leaf first). Re-read on SIGHUP and when
    /// the file changes, without dropping connections. Needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key (PKCS#8, PKCS#1 or SEC1) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

impl TlsArgs {
    /// The files, when both flags are given (clap refuses one without the other).
    pub fn files(self) -> Option<slipway_server::tls::TlsFiles> {
        Some(slipway_server::tls::TlsFiles {
            cert: self.tls_cert?,
            key: self.tls_key?,
        })
    }
}
