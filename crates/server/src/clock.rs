//! The one clock of both servers. Times are stored as integers (portable across SQLite and
//! PostgreSQL); the platform stores milliseconds, the care service whole seconds, both read
//! from here so the two cannot drift apart in how they read the time.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the system clock is before it).
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Whole seconds since the Unix epoch, the same reading as [`now_millis`] truncated.
pub fn now_seconds() -> i64 {
    now_millis() / 1000
}

/// An epoch-millisecond time as RFC 3339 in UTC, for example `2026-05-01T12:00:00.123Z`;
/// empty when the value is out of range.
pub fn rfc3339(millis: i64) -> String {
    let nanos = i128::from(millis) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_render_as_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339(i64::MAX), "");
    }

    #[test]
    fn seconds_and_millis_agree() {
        let (s, ms) = (now_seconds(), now_millis());
        assert!(ms / 1000 - s <= 1, "{s} s vs {ms} ms");
        assert!(s > 1_700_000_000);
    }
}
