//! The app-name rule and the DNS-label rule, defined once and used by every crate.

use std::fmt;

/// Longest app name the platform accepts; app names become DNS labels in service URLs.
pub const APP_NAME_MAX: usize = 63;

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
}

impl AppName {
    /// Checks `raw` against the app-name rule: 1-63 characters, lowercase letters, digits and
    /// hyphens, starting with a letter, ending with a letter or digit, no `--`.
    pub fn parse(raw: &str) -> Result<Self, AppNameError> {
        let count = raw.chars().count();
        if count == 0 {
            return Err(AppNameError::Empty);
        }
        if count > APP_NAME_MAX {
            return Err(AppNameError::TooLong(count));
        }
        if let Some(bad) = raw
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            return Err(AppNameError::BadCharacter(bad));
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

/// Checks the devfile's name rule for components, endpoints, commands and resources: a
/// lowercase RFC 1123 label of at most `max` characters. Returns the broken rule, if any.
pub fn dns_label_problem(raw: &str, max: usize) -> Option<String> {
    let count = raw.chars().count();
    if count == 0 {
        return Some("must not be empty".into());
    }
    if count > max {
        return Some(format!(
            "is {count} characters long; at most {max} are allowed"
        ));
    }
    if let Some(bad) = raw
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(format!(
            "may contain only lowercase letters, digits and hyphens; found {bad:?}"
        ));
    }
    if raw.starts_with('-') || raw.ends_with('-') {
        return Some("must start and end with a lowercase letter or digit".into());
    }
    None
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
        let cases: [(&str, AppNameError); 7] = [
            ("", AppNameError::Empty),
            (&"a".repeat(64), AppNameError::TooLong(64)),
            ("MyApp", AppNameError::BadCharacter('M')),
            ("my_app", AppNameError::BadCharacter('_')),
            ("1app", AppNameError::BadStart('1')),
            ("app-", AppNameError::TrailingHyphen),
            ("my--app", AppNameError::DoubleHyphen),
        ];
        for (raw, want) in cases {
            assert_eq!(AppName::parse(raw), Err(want), "{raw:?}");
        }
    }

    #[test]
    fn dns_label_rules() {
        assert_eq!(dns_label_problem("http", 15), None);
        assert!(
            dns_label_problem("a-very-long-endpoint", 15)
                .unwrap()
                .contains("at most 15")
        );
        assert!(dns_label_problem("Http", 15).unwrap().contains("lowercase"));
        assert!(
            dns_label_problem("-x", 15)
                .unwrap()
                .contains("start and end")
        );
    }
}
