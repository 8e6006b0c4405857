//! URLs compared by their server: a CA saved for an environment is trusted for that
//! environment's origins only, and an environment's new URL on another server is a new
//! environment. A leaf, so the token store and the trust rules can both use it.

/// The scheme, host and port of `url`, for comparing two URLs' servers.
pub(crate) fn origin(url: &str) -> Option<(String, String, u16)> {
    let url = reqwest::Url::parse(url).ok()?;
    Some((
        url.scheme().to_owned(),
        url.host_str()?.to_ascii_lowercase(),
        url.port_or_known_default()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert_eq!(
            origin("https://Example.org/v1"),
            Some(("https".into(), "example.org".into(), 443))
        );
        assert_eq!(
            origin("http://127.0.0.1:8700"),
            Some(("http".into(), "127.0.0.1".into(), 8700))
        );
        assert_eq!(origin("not a url"), None);
    }
}
