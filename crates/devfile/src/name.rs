//! The app-name rule and the DNS-label rule, defined once and used by every crate.

use std::fmt;

/// Longest app name the platform accepts; app names become DNS labels in service URLs.
pub const APP_NAME_MAX: usize = 63;

/// Put before a derived app name that would start with a digit, since app names start with a
/// letter (`3d-viewer` becomes `app-3d-viewer`).
const DERIVED_DIGIT_PREFIX: &str = "app-";

/// An app name that satisfies the platform's naming rule.
///
/// App names end up in host names (`<service>.<app>.localhost`), resource ids and file
/// paths, so the rule is the DNS-label rule plus "starts with a letter" and "no `--`".
/// Parsing once into this type means no later layer has to re-check it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AppName(String);

/// Why a string is not a valid app name; the message names the rule that was broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppNameError {
    /// The name is empty.
    #[error("app name must not be empty (1-63 characters)")]
    Empty,
    /// The name is longer than 63 characters.
    #[error("app name is {0} characters long; at most 63 are allowed")]
    TooLong(usize),
    /// The name has a character outside `a-z`, `0-9`, `-`.
    #[error("app name may contain only lowercase letters, digits and hyphens; found {0:?}")]
    BadCharacter(char),
    /// The name does not start with a lowercase letter.
    #[error("app name must start with a lowercase letter; it starts with {0:?}")]
    BadStart(char),
    /// The name ends with a hyphen.
    #[error("app name must end with a letter or digit, not a hyphen")]
    TrailingHyphen,
    /// The name contains `--`.
    #[error("app name must not contain consecutive hyphens (\"--\")")]
    DoubleHyphen,
    /// [`AppName::derive`] found no ASCII letter or digit to make an app name of.
    #[error("an app name needs at least one ASCII letter or digit, and there is none")]
    NothingToDerive,
}

/// Why a string is not a lowercase RFC 1123 label of the allowed length (the devfile rule for
/// component names, endpoint names, command ids and resource names).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DnsLabelError {
    /// The label is empty.
    #[error("must not be empty")]
    Empty,
    /// The label is longer than its limit.
    #[error("is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// Its length in characters.
        len: usize,
        /// The limit it broke.
        max: usize,
    },
    /// The label has a character outside `a-z`, `0-9`, `-`.
    #[error("may contain only lowercase letters, digits and hyphens; found {0:?}")]
    BadCharacter(char),
    /// The label starts or ends with a hyphen.
    #[error("must start and end with a lowercase letter or digit")]
    HyphenAtEdge,
}

/// Checks `raw` against the DNS-label rule: 1 to `max` characters, lowercase letters, digits
/// and hyphens, starting and ending with a letter or digit. The one copy of that rule: the
/// app-name rule is built on it.
pub fn dns_label(raw: &str, max: usize) -> Result<(), DnsLabelError> {
    let len = raw.chars().count();
    if len == 0 {
        return Err(DnsLabelError::Empty);
    }
    if len > max {
        return Err(DnsLabelError::TooLong { len, max });
    }
    if let Some(bad) = raw.chars().find(|c| !is_label_char(*c)) {
        return Err(DnsLabelError::BadCharacter(bad));
    }
    if raw.starts_with('-') || raw.ends_with('-') {
        return Err(DnsLabelError::HyphenAtEdge);
    }
    Ok(())
}

/// A character a DNS label may hold.
fn is_label_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
}

impl AppName {
    /// Checks `raw` against the app-name rule: a DNS label of 1-63 characters that starts
    /// with a letter and has no `--`.
    pub fn parse(raw: &str) -> Result<Self, AppNameError> {
        match dns_label(raw, APP_NAME_MAX) {
            Err(DnsLabelError::Empty) => return Err(AppNameError::Empty),
            Err(DnsLabelError::TooLong { len, .. }) => return Err(AppNameError::TooLong(len)),
            Err(DnsLabelError::BadCharacter(bad)) => return Err(AppNameError::BadCharacter(bad)),
            // A hyphen at either edge is reported below, as the app-name rule words it.
            Err(DnsLabelError::HyphenAtEdge) | Ok(()) => {}
        }
        let first = raw.chars().next().unwrap_or('-');
        if !first.is_ascii_lowercase() {
            return Err(AppNameError::BadStart(first));
        }
        if raw.ends_with('-') {
            return Err(AppNameError::TrailingHyphen);
        }
        if raw.contains("--") {
            return Err(AppNameError::DoubleHyphen);
        }
        Ok(Self(raw.to_owned()))
    }

    /// The app name the platform uses for a devfile's `metadata.name`, which the devfile
    /// schema lets be any string: ASCII letters lowercased, every run of other characters
    /// turned into one `-`, hyphens trimmed from both ends, `app-` put before a leading digit,
    /// and cut to 63 characters. A name that already is an app name comes back unchanged.
    /// Fails only when `raw` has no ASCII letter or digit.
    pub fn derive(raw: &str) -> Result<Self, AppNameError> {
        let mut name = String::with_capacity(raw.len());
        for c in raw.chars().map(|c| c.to_ascii_lowercase()) {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                name.push(c);
            } else if !name.is_empty() && !name.ends_with('-') {
                name.push('-');
            }
        }
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            name.insert_str(0, DERIVED_DIGIT_PREFIX);
        }
        // Only ASCII is left, so a byte length is a character count.
        name.truncate(APP_NAME_MAX);
        let name = name.trim_end_matches('-');
        if name.is_empty() {
            return Err(AppNameError::NothingToDerive);
        }
        Self::parse(name)
    }

    /// The validated name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AppName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_names() {
        for ok in ["a", "my-app", "app2", "a1-b2-c3", &"a".repeat(63)] {
            assert!(AppName::parse(ok).is_ok(), "{ok} should be valid");
        }
    }

    #[test]
    fn rejects_each_rule() {
        let cases: [(&str, AppNameError); 9] = [
            ("", AppNameError::Empty),
            (&"a".repeat(64), AppNameError::TooLong(64)),
            ("MyApp", AppNameError::BadCharacter('M')),
            ("my_app", AppNameError::BadCharacter('_')),
            ("1app", AppNameError::BadStart('1')),
            ("-app", AppNameError::BadStart('-')),
            ("1app-", AppNameError::BadStart('1')),
            ("app-", AppNameError::TrailingHyphen),
            ("my--app", AppNameError::DoubleHyphen),
        ];
        for (raw, want) in cases {
            assert_eq!(AppName::parse(raw), Err(want), "{raw:?}");
        }
    }

    #[test]
    fn derives_an_app_name_from_any_devfile_name() {
        let long = format!("{}-tail", "a".repeat(62));
        let cases = [
            ("shop", "shop"),
            ("My Shop", "my-shop"),
            ("my--shop", "my-shop"),
            ("  Orders_API (v2)!", "orders-api-v2"),
            ("café-bar", "caf-bar"),
            ("3d-viewer", "app-3d-viewer"),
            ("-x-", "x"),
            (long.as_str(), &"a".repeat(62)),
        ];
        for (raw, want) in cases {
            let derived = AppName::derive(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"));
            assert_eq!(derived.as_str(), want, "{raw:?}");
        }
        assert_eq!(
            AppName::derive(&"A".repeat(70)).map(|n| n.as_str().len()),
            Ok(APP_NAME_MAX)
        );
        for nothing in ["", "---", "日本語", " "] {
            assert_eq!(
                AppName::derive(nothing),
                Err(AppNameError::NothingToDerive),
                "{nothing:?}"
            );
        }
    }

    #[test]
    fn dns_label_rules() {
        assert_eq!(dns_label("http", 15), Ok(()));
        assert_eq!(
            dns_label("a-very-long-endpoint", 15),
            Err(DnsLabelError::TooLong { len: 20, max: 15 })
        );
        assert_eq!(dns_label("", 15), Err(DnsLabelError::Empty));
        assert_eq!(dns_label("Http", 15), Err(DnsLabelError::BadCharacter('H')));
        assert_eq!(dns_label("-x", 15), Err(DnsLabelError::HyphenAtEdge));
        assert_eq!(dns_label("x-", 15), Err(DnsLabelError::HyphenAtEdge));
        assert_eq!(
            dns_label("1a", 15),
            Ok(()),
            "a label may start with a digit"
        );
    }
}
