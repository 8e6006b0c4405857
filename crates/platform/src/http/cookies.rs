//! The two cookies of the assistants' sign-in pages (docs/mcp.md): the request page's form
//! key, and the key that binds a single sign-on approval to the browser that started it.
//! Over HTTPS each is a `__Host-` cookie (`Secure`, `Path=/`, no `Domain`), which the apps the
//! platform serves on its subdomains cannot set for it ("cookie tossing").

use axum::http::{HeaderMap, HeaderValue, header};

/// The form key of a request's page (see `oauth::choose`).
pub(crate) const FORM: &str = "slipway_oauth_form";
/// The key of a single sign-on approval in progress (see `oauth::choose` and `sso::callback`).
pub(crate) const APPROVAL: &str = "slipway_sso_approval";

/// A cookie's name: `__Host-` and the base over HTTPS, the base alone over plain HTTP (on
/// loopback, where a `Secure` cookie would not be kept).
fn full_name(base: &str, secure: bool) -> String {
    if secure {
        format!("__Host-{base}")
    } else {
        base.to_owned()
    }
}

/// A new random key (128 bits, hex).
pub(crate) fn new_key() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The `Set-Cookie` value of `base` = `value` for `max_age` seconds; `strict` keeps it from
/// every cross-site request (else `Lax`: sent when another site, such as the identity
/// provider, sends the browser back here).
pub(crate) fn set(
    base: &str,
    value: &str,
    secure: bool,
    strict: bool,
    max_age: u32,
) -> HeaderValue {
    let same_site = if strict { "Strict" } else { "Lax" };
    let secure_flag = if secure { "; Secure" } else { "" };
    let text = format!(
        "{}={value}; Path=/; HttpOnly; SameSite={same_site}; Max-Age={max_age}{secure_flag}",
        full_name(base, secure)
    );
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The key the browser holds in cookie `base` (a 32-digit hex key; anything else is none).
pub(crate) fn get(headers: &HeaderMap, base: &str, secure: bool) -> Option<String> {
    let name = full_name(base, secure);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, value)| {
            *n == name && value.len() == 32 && value.bytes().all(|b| b.is_ascii_hexdigit())
        })
        .map(|(_, value)| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_cookies_are_host_cookies() {
        let set_secure = set(FORM, "ab", true, true, 60);
        assert_eq!(
            set_secure.to_str().unwrap(),
            "__Host-slipway_oauth_form=ab; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure"
        );
        let key = new_key();
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("other=1; __Host-{APPROVAL}={key}")).unwrap(),
        );
        assert_eq!(get(&headers, APPROVAL, true), Some(key.clone()));
        // Without the prefix (set by anyone on a parent domain), it is not the platform's.
        assert_eq!(get(&headers, APPROVAL, false), None);
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("slipway_sso_approval=not-a-key"),
        );
        assert_eq!(get(&headers, APPROVAL, false), None);
    }
}
