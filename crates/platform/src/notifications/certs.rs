//! The platform's TLS certificate running out: checked at start and then every
//! [`crate::PlatformConfig::certificate_check`]; within [`WARN_WITHIN`] of its end (or past
//! it) `certificate.expiring` is told to whole-account subscriptions, at most once per
//! [`AGAIN_AFTER`], so a certificate nobody renews keeps being told, daily, until it is (the
//! server reloads a renewed file by itself: docs/tls.md).

use std::path::Path;
use std::time::{Duration, Instant};

use slipway_api::notifications::EventKind;

use super::{Notifier, events};

/// How long before the end a certificate is told about.
pub const WARN_WITHIN: Duration = Duration::from_secs(14 * 24 * 3600);
/// The least time between two tellings.
pub const AGAIN_AFTER: Duration = Duration::from_secs(24 * 3600);

/// When the first certificate of the PEM file `path` ends (unix seconds), or why it cannot be
/// read.
pub fn not_after(path: &Path) -> Result<i64, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (_, pem) = x509_parser::pem::parse_x509_pem(&bytes)
        .map_err(|e| format!("{} holds no PEM certificate: {e}", path.display()))?;
    let cert = pem
        .parse_x509()
        .map_err(|e| format!("{} holds no readable certificate: {e}", path.display()))?;
    Ok(cert.validity().not_after.timestamp())
}

/// The time left, in words, to the nearest day (the summary says "expires in …").
fn time_left(seconds: i64) -> String {
    const DAY: i64 = 24 * 3600;
    match seconds {
        s if s <= 0 => "no time: it has expired".to_owned(),
        s if s < DAY / 2 => "less than a day".to_owned(),
        s if s < DAY + DAY / 2 => "1 day".to_owned(),
        s => format!("{} days", (s + DAY / 2) / DAY),
    }
}

/// Runs until the notifier stops.
pub(super) async fn watch(notifier: &Notifier, cert: &Path, every: Duration) {
    let mut told: Option<Instant> = None;
    loop {
        if told.is_none_or(|at| at.elapsed() >= AGAIN_AFTER) && check(notifier, cert).await {
            told = Some(Instant::now());
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = notifier.inner.stop.cancelled() => return,
        }
    }
}

/// Tells when the certificate ends within [`WARN_WITHIN`]; whether something was queued.
async fn check(notifier: &Notifier, cert: &Path) -> bool {
    let end = match not_after(cert) {
        Ok(end) => end,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the TLS certificate's expiry");
            return false;
        }
    };
    let left = end - crate::db::now_millis() / 1000;
    if left > i64::try_from(WARN_WITHIN.as_secs()).unwrap_or(i64::MAX) {
        return false;
    }
    let reason = format!(
        "{} is valid until {}; renew it (the server reloads the file by itself)",
        cert.file_name().unwrap_or_default().to_string_lossy(),
        crate::db::rfc3339(end * 1000)
    );
    events::enqueue_now(
        &notifier.inner.db,
        EventKind::CertificateExpiring,
        None,
        Some(&time_left(left)),
        Some(&reason),
    )
    .await
        > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_reads_as_words() {
        assert_eq!(time_left(-5), "no time: it has expired");
        assert_eq!(time_left(3600), "less than a day");
        assert_eq!(time_left(30 * 3600), "1 day");
        assert_eq!(time_left(5 * 24 * 3600 - 1), "5 days");
        assert_eq!(time_left(5 * 24 * 3600 + 10), "5 days");
    }
}
