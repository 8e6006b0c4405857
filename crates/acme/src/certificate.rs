//! What a certificate says that the platform shows and schedules by: its names, issuer,
//! serial and validity, and when it is due for renewal.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;

/// A certificate chain's leaf, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// The DNS names it is valid for (its subject alternative names).
    pub names: Vec<String>,
    /// Who issued it: the issuer's common name, else its whole distinguished name.
    pub issuer: String,
    /// The serial number, hex.
    pub serial: String,
    /// Valid from (seconds since the epoch).
    pub not_before: i64,
    /// Valid until (seconds since the epoch).
    pub not_after: i64,
}

/// Why a chain cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the certificate cannot be read: {0}")]
pub struct CertError(pub String);

impl CertInfo {
    /// Reads the first (leaf) certificate of a PEM chain.
    pub fn from_pem(chain_pem: &str) -> Result<Self, CertError> {
        let leaf = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
            .next()
            .ok_or_else(|| CertError("no PEM certificate in the chain".into()))?
            .map_err(|e| CertError(e.to_string()))?;
        Self::from_der(&leaf)
    }

    /// Reads one DER certificate.
    pub fn from_der(der: &[u8]) -> Result<Self, CertError> {
        let (_, cert) = x509_parser::certificate::X509Certificate::from_der(der)
            .map_err(|e| CertError(e.to_string()))?;
        let mut names = Vec::new();
        if let Ok(Some(san)) = cert.subject_alternative_name() {
            for name in &san.value.general_names {
                if let GeneralName::DNSName(n) = name {
                    names.push(n.to_ascii_lowercase());
                }
            }
        }
        let issuer = cert
            .issuer()
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .map_or_else(|| cert.issuer().to_string(), str::to_owned);
        Ok(Self {
            names,
            issuer,
            serial: serial_hex(cert.raw_serial()),
            not_before: cert.validity().not_before.timestamp(),
            not_after: cert.validity().not_after.timestamp(),
        })
    }

    /// Whether the certificate is valid for `name` (an exact name or a one-label wildcard).
    pub fn covers(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.names.iter().any(|n| {
            n == &name
                || n.strip_prefix("*.").is_some_and(|suffix| {
                    name.split_once('.')
                        .is_some_and(|(first, rest)| !first.is_empty() && rest == suffix)
                })
        })
    }

    /// When to renew: a third of the lifetime before it ends (90-day certificates renew at
    /// day 60, as Let's Encrypt advises; short-lived ones keep the same proportion).
    pub fn renew_at(&self) -> i64 {
        let lifetime = (self.not_after - self.not_before).max(0);
        self.not_after - lifetime / 3
    }
}

/// A serial number as hex, without the zero byte DER puts before a high first byte (as
/// `openssl x509 -serial` and browsers show it).
fn serial_hex(raw: &[u8]) -> String {
    let start = raw
        .iter()
        .position(|b| *b != 0)
        .unwrap_or(raw.len().saturating_sub(1));
    raw[start..].iter().map(|b| format!("{b:02x}")).collect()
}

/// Seconds since the epoch, now.
pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// How long to wait before trying again after `failures` failed attempts in a row: one
/// minute, doubling, at most six hours (a CA's rate limits count failures per hour, and a
/// name whose DNS is being fixed should not wait a day).
pub fn backoff(failures: u32) -> Duration {
    let minutes = 1u64 << failures.saturating_sub(1).min(9);
    Duration::from_secs((minutes * 60).min(6 * 3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(names: &[&str]) -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(
            names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>(),
        )
        .unwrap();
        params.not_before = rcgen::date_time_ymd(2026, 1, 1);
        params.not_after = rcgen::date_time_ymd(2026, 4, 1);
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CommonName, "Test Issuer");
        params.distinguished_name = dn;
        params.self_signed(&key).unwrap().pem()
    }

    #[test]
    fn a_chain_is_read_and_renews_a_third_before_the_end() {
        let info =
            CertInfo::from_pem(&cert(&["orders.example.org", "*.apps.example.org"])).unwrap();
        assert_eq!(info.names, ["orders.example.org", "*.apps.example.org"]);
        assert_eq!(info.issuer, "Test Issuer");
        assert!(!info.serial.is_empty() && !info.serial.contains(':'));
        let lifetime = info.not_after - info.not_before;
        assert_eq!(lifetime, 90 * 86_400);
        assert_eq!(info.renew_at(), info.not_after - 30 * 86_400);
        assert!(info.covers("Orders.example.org"));
        assert!(info.covers("shop.apps.example.org"));
        assert!(!info.covers("a.shop.apps.example.org"));
        assert!(!info.covers("apps.example.org"));
        assert!(!info.covers("example.org"));
    }

    #[test]
    fn serials_lose_only_their_leading_zero_bytes() {
        assert_eq!(serial_hex(&[0x00, 0xce, 0x0e]), "ce0e");
        assert_eq!(serial_hex(&[0x01, 0x00]), "0100");
        assert_eq!(serial_hex(&[0x00]), "00");
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(CertInfo::from_pem("not pem").is_err());
        assert!(CertInfo::from_der(b"not der").is_err());
    }

    #[test]
    fn backoff_doubles_from_a_minute_to_six_hours() {
        assert_eq!(backoff(0), Duration::from_secs(60));
        assert_eq!(backoff(1), Duration::from_secs(60));
        assert_eq!(backoff(2), Duration::from_secs(120));
        assert_eq!(backoff(5), Duration::from_secs(960));
        assert_eq!(backoff(30), Duration::from_secs(6 * 3600));
    }
}
