//! The HTTP channels: a generic webhook (the event as JSON, signed) and a Slack-compatible
//! incoming webhook (`{"text": …}`).
//!
//! The signature: `Slipway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
//! under the channel's secret. The time inside the signed text lets a receiver refuse a
//! replayed request ([`verify`] takes a tolerance); docs/notifications.md shows a receiver.

use std::time::Duration;

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;
use slipway_api::notifications::Notification;

use crate::error::DeliveryError;
use crate::message;

/// How long a receiver has to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The signature header's name.
pub const SIGNATURE_HEADER: &str = "Slipway-Signature";

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        <Hmac<Sha256>>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// The `Slipway-Signature` value of `body` sent at `timestamp` (unix seconds).
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let digest = mac(secret, timestamp, body).finalize().into_bytes();
    format!("t={timestamp},v1={}", hex::encode(digest))
}

/// Whether `header` is a valid signature of `body` under `secret`, made within `tolerance`
/// seconds of `now` (unix seconds). Compared in constant time.
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64, tolerance: i64) -> bool {
    let mut timestamp = None;
    let mut signature = None;
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", v)) => signature = hex::decode(v).ok(),
            _ => {}
        }
    }
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return false;
    };
    (now - timestamp).abs() <= tolerance
        && mac(secret, timestamp, body)
            .verify_slice(&signature)
            .is_ok()
}

/// The host of `url` (what errors name: the URL itself may hold a secret).
pub(crate) fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "the receiver".to_owned())
}

/// POSTs `body` (JSON) to `url` with `headers`; Ok on a 2xx answer.
async fn post(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> Result<(), DeliveryError> {
    let host = host_of(url);
    let mut request = client
        .post(url)
        .timeout(TIMEOUT)
        .header("content-type", "application/json")
        .header("user-agent", "Slipway-Notifications/1");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let answer = request
        .body(body)
        .send()
        .await
        .map_err(|e| failure(&host, &e))?;
    let status = answer.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(DeliveryError::Status {
            host,
            status: status.as_u16(),
        })
    }
}

/// What went wrong, in words without the URL (reqwest's own message quotes it).
fn failure(host: &str, e: &reqwest::Error) -> DeliveryError {
    if e.is_timeout() {
        return DeliveryError::Timeout {
            host: host.to_owned(),
            seconds: TIMEOUT.as_secs(),
        };
    }
    let mut reason = None;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason = Some(s.to_string());
        source = s.source();
    }
    DeliveryError::Connect {
        host: host.to_owned(),
        reason: reason.unwrap_or_else(|| "the request failed".to_owned()),
    }
}

/// Sends the event to a generic webhook, signed.
pub async fn send_signed(
    client: &reqwest::Client,
    url: &str,
    secret: &str,
    delivery_id: &str,
    n: &Notification,
    now: i64,
) -> Result<(), DeliveryError> {
    let body = serde_json::to_vec(n).map_err(|e| DeliveryError::Settings(e.to_string()))?;
    let headers = [
        (SIGNATURE_HEADER, sign(secret, now, &body)),
        ("slipway-event", n.kind.as_str().to_owned()),
        ("slipway-delivery", delivery_id.to_owned()),
    ];
    post(client, url, &headers, body).await
}

/// Sends the event to a Slack-compatible incoming webhook.
pub async fn send_slack(
    client: &reqwest::Client,
    url: &str,
    n: &Notification,
) -> Result<(), DeliveryError> {
    let text = format!("*{}*\n{}", message::subject(n), message::text(n));
    let body = serde_json::to_vec(&serde_json::json!({ "text": text }))
        .map_err(|e| DeliveryError::Settings(e.to_string()))?;
    post(client, url, &[], body).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_for_its_body_secret_and_time() {
        let header = sign("k".repeat(20).as_str(), 1_000, b"{\"a\":1}");
        let key = "k".repeat(20);
        assert!(verify(&key, &header, b"{\"a\":1}", 1_010, 300));
        assert!(
            !verify(&key, &header, b"{\"a\":2}", 1_010, 300),
            "another body"
        );
        assert!(!verify(
            "other-key-0123456789",
            &header,
            b"{\"a\":1}",
            1_010,
            300
        ));
        assert!(!verify(&key, &header, b"{\"a\":1}", 2_000, 300), "too old");
        assert!(!verify(&key, "t=1000", b"{\"a\":1}", 1_000, 300));
    }

    #[test]
    fn an_error_names_the_host_but_not_the_path() {
        assert_eq!(
            host_of("https://hooks.slack.com/services/T/B/secret"),
            "hooks.slack.com"
        );
    }
}
