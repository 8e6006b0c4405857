//! Checking an AWS Signature Version 4 (`Authorization: AWS4-HMAC-SHA256 …`) the way AWS
//! does, for the servers that check none themselves (dynalite): the request is signed with
//! one of the app's secret keys, over the method, path, query, the headers it names and the
//! body, at a time no further than [`MAX_SKEW_SECONDS`] from now.
//!
//! Why here and not a crate: the AWS SDK's signer only signs; no maintained crate verifies.
//! The algorithm is AWS's published one (canonical request, string to sign, derived key).

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::{Digest as _, Sha256};

/// How far a request's `x-amz-date` may be from the clock (AWS allows 15 minutes).
pub(crate) const MAX_SKEW_SECONDS: i64 = 15 * 60;

/// Why a request is refused, in DynamoDB's own error types (what an SDK shows its user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No or malformed `Authorization` header.
    MissingToken,
    /// A key that is not one of the app's.
    UnknownKey,
    /// The signature does not match (a wrong secret, or an altered request).
    BadSignature,
    /// The request's time is too far from now (a replay, or a clock off).
    Expired,
}

impl Refusal {
    /// `(__type, message)` as DynamoDB answers them.
    pub(crate) fn answer(&self) -> (&'static str, &'static str) {
        match self {
            Self::MissingToken => (
                "com.amazon.coral.service#MissingAuthenticationTokenException",
                "Request is missing Authentication Token",
            ),
            Self::UnknownKey => (
                "com.amazon.coral.service#UnrecognizedClientException",
                "The security token included in the request is invalid.",
            ),
            Self::BadSignature => (
                "com.amazon.coral.service#InvalidSignatureException",
                "The request signature we calculated does not match the signature you provided.",
            ),
            Self::Expired => (
                "com.amazon.coral.service#InvalidSignatureException",
                "Signature expired: the request's x-amz-date is more than 15 minutes from now.",
            ),
        }
    }
}

/// The parts of a request a signature covers.
pub(crate) struct Signed<'a> {
    /// `POST`, `GET`, …
    pub method: &'a str,
    /// The path as sent (`/`).
    pub path: &'a str,
    /// The query as sent, without `?`.
    pub query: &'a str,
    /// Every header, names in any case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: &'a [u8],
}

/// The `Authorization` header's parts.
struct Authorization<'a> {
    key_id: &'a str,
    scope: &'a str,
    date: &'a str,
    region: &'a str,
    service: &'a str,
    signed_headers: &'a str,
    signature: &'a str,
}

fn parse_authorization(value: &str) -> Option<Authorization<'_>> {
    let rest = value.strip_prefix("AWS4-HMAC-SHA256")?.trim_start();
    let mut credential = None;
    let mut signed_headers = None;
    let mut signature = None;
    for part in rest.split(',') {
        let (k, v) = part.trim().split_once('=')?;
        match k {
            "Credential" => credential = Some(v),
            "SignedHeaders" => signed_headers = Some(v),
            "Signature" => signature = Some(v),
            _ => {}
        }
    }
    let credential = credential?;
    let (key_id, scope) = credential.split_once('/')?;
    let mut fields = scope.split('/');
    let (date, region, service, terminal) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    );
    if terminal != "aws4_request" || fields.next().is_some() {
        return None;
    }
    Some(Authorization {
        key_id,
        scope,
        date,
        region,
        service,
        signed_headers: signed_headers?,
        signature: signature?,
    })
}

/// Checks `request` against `secret_of(key id)` at `now` (unix seconds).
pub(crate) fn verify(
    request: &Signed<'_>,
    now: i64,
    secret_of: impl Fn(&str) -> Option<String>,
) -> Result<(), Refusal> {
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let auth = header("authorization")
        .and_then(parse_authorization)
        .ok_or(Refusal::MissingToken)?;
    let secret = secret_of(auth.key_id).ok_or(Refusal::UnknownKey)?;
    let amz_date = header("x-amz-date").ok_or(Refusal::MissingToken)?;
    let at = parse_amz_date(amz_date).ok_or(Refusal::BadSignature)?;
    if (now - at).abs() > MAX_SKEW_SECONDS {
        return Err(Refusal::Expired);
    }
    if !amz_date.starts_with(auth.date) {
        return Err(Refusal::BadSignature);
    }
    let body_hash = hex(&Sha256::digest(request.body));
    if header("x-amz-content-sha256").is_some_and(|h| h != body_hash && h != "UNSIGNED-PAYLOAD") {
        return Err(Refusal::BadSignature);
    }
    let mut canonical_headers = String::new();
    for name in auth.signed_headers.split(';') {
        let values: Vec<String> = request
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        if values.is_empty() {
            return Err(Refusal::BadSignature);
        }
        canonical_headers.push_str(&format!("{name}:{}\n", values.join(",")));
    }
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{}\n{body_hash}",
        request.method,
        if request.path.is_empty() {
            "/"
        } else {
            request.path
        },
        canonical_query(request.query),
        auth.signed_headers,
    );
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{}\n{}",
        auth.scope,
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = hmac(format!("AWS4{secret}").as_bytes(), auth.date.as_bytes());
    for part in [auth.region, auth.service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let expected = hex(&hmac(&key, to_sign.as_bytes()));
    // Compared in constant time: the signature is the one secret-derived value sent.
    let matches = expected.len() == auth.signature.len()
        && expected
            .bytes()
            .zip(auth.signature.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if matches {
        Ok(())
    } else {
        Err(Refusal::BadSignature)
    }
}

/// The query's `name=value` pairs sorted (they arrive encoded as the signer encoded them).
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            if p.contains('=') {
                p.to_owned()
            } else {
                format!("{p}=")
            }
        })
        .collect();
    pairs.sort();
    pairs.join("&")
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256>>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `20261128T100000Z` as unix seconds.
fn parse_amz_date(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(4..6)?, n(6..8)?);
    let (hh, mm, ss) = (n(9..11)?, n(11..13)?, n(13..15)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    Some(days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's published example ("GET with a header", from the SigV4 test suite's
    /// `get-vanilla`): key id AKIDEXAMPLE, its secret, 2015-08-30T12:36:00Z.
    fn vanilla(signature: &str) -> Signed<'static> {
        Signed {
            method: "GET",
            path: "/",
            query: "",
            headers: vec![
                ("Host".into(), "example.amazonaws.com".into()),
                ("X-Amz-Date".into(), "20150830T123600Z".into()),
                (
                    "Authorization".into(),
                    format!(
                        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature={signature}"
                    ),
                ),
            ],
            body: b"",
        }
    }

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const GOOD: &str = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";
    const AT: i64 = 1_440_938_160;

    fn secret_of(id: &str) -> Option<String> {
        (id == "AKIDEXAMPLE").then(|| SECRET.to_owned())
    }

    #[test]
    fn aws_published_example_verifies_and_any_change_does_not() {
        assert_eq!(parse_amz_date("20150830T123600Z"), Some(AT));
        assert_eq!(verify(&vanilla(GOOD), AT, secret_of), Ok(()));
        let mut altered = vanilla(GOOD);
        altered.method = "POST";
        assert_eq!(verify(&altered, AT, secret_of), Err(Refusal::BadSignature));
        let mut altered = vanilla(GOOD);
        altered.body = b"{}";
        assert_eq!(verify(&altered, AT, secret_of), Err(Refusal::BadSignature));
        let wrong = GOOD.replace('5', "6");
        assert_eq!(
            verify(&vanilla(&wrong), AT, secret_of),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            verify(&vanilla(GOOD), AT, |_| Some("another secret".into())),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            verify(&vanilla(GOOD), AT, |_| None),
            Err(Refusal::UnknownKey)
        );
        assert_eq!(
            verify(&vanilla(GOOD), AT + 16 * 60, secret_of),
            Err(Refusal::Expired)
        );
        let mut unsigned = vanilla(GOOD);
        unsigned.headers.retain(|(k, _)| k != "Authorization");
        assert_eq!(verify(&unsigned, AT, secret_of), Err(Refusal::MissingToken));
    }
}
