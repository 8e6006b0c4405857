//! The rule for a custom domain's name, checked before anything is stored or asked of a CA.
//!
//! Why these rules: a CA refuses a name that is not a fully qualified host name in LDH form
//! (RFC 1123 labels, RFC 5890 A-labels for international names), and Let's Encrypt counts
//! each refused order against the account's rate limits, so the platform refuses first and
//! says which rule broke. Wildcards are refused because HTTP-01, the only challenge the
//! gateway answers, cannot prove them.

use std::fmt;

/// Longest name DNS carries, without the final dot (RFC 1035: 255 octets on the wire).
pub const MAX_NAME: usize = 253;
/// Longest label (RFC 1035).
pub const MAX_LABEL: usize = 63;

/// The rule of [`DomainName::parse_exact`] as a regular expression (with at most
/// [`MAX_NAME`] characters), as the platform's OpenAPI document states it.
pub const PATTERN: &str =
    "^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$";

/// A checked domain name: lowercase ASCII, no trailing dot, at least two labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DomainName(String);

/// Why a name is not a domain the platform can serve. Each says the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Nothing was given.
    #[error("a domain name is required")]
    Empty,
    /// Longer than DNS allows.
    #[error("{name:?} is {len} characters; a domain name has at most {MAX_NAME}")]
    TooLong {
        /// The name as given.
        name: String,
        /// Its length.
        len: usize,
    },
    /// `*.example.org`.
    #[error(
        "{0:?} is a wildcard; certificates are proven over HTTP-01, which cannot prove a \
         wildcard: add each name"
    )]
    Wildcard(String),
    /// An address, not a name.
    #[error("{0:?} is an IP address; a domain must be a DNS name")]
    Address(String),
    /// One label only (`localhost`, `intranet`).
    #[error("{0:?} has one label; a domain needs at least two (for example orders.example.org)")]
    SingleLabel(String),
    /// A label breaks the LDH rule.
    #[error(
        "{name:?}: label {label:?} must be 1 to {MAX_LABEL} letters, digits or hyphens, \
         neither starting nor ending with a hyphen (international names in their xn-- form)"
    )]
    Label {
        /// The name as given.
        name: String,
        /// The label at fault.
        label: String,
    },
    /// The last label starts with a digit, which no top-level domain does (and an IPv4
    /// address does).
    #[error(
        "{0:?}: the last label must start with a letter; no top-level domain starts with a digit"
    )]
    NumericTld(String),
    /// Written otherwise than DNS compares it (capitals, spaces, a final dot).
    #[error("{given:?} must be written as {canonical:?}: lowercase, without spaces or a final dot")]
    NotCanonical {
        /// The name as given.
        given: String,
        /// How to write it.
        canonical: String,
    },
}

impl DomainName {
    /// Checks `input` (surrounding whitespace and one final dot are dropped; letters are
    /// lowered, as DNS compares them).
    pub fn parse(input: &str) -> Result<Self, NameError> {
        let trimmed = input.trim();
        let name = trimmed.strip_suffix('.').unwrap_or(trimmed);
        if name.is_empty() {
            return Err(NameError::Empty);
        }
        let name = name.to_ascii_lowercase();
        if name.len() > MAX_NAME {
            return Err(NameError::TooLong {
                len: name.len(),
                name,
            });
        }
        if name.starts_with("*.") || name == "*" {
            return Err(NameError::Wildcard(name));
        }
        if name.parse::<std::net::IpAddr>().is_ok() || name.starts_with('[') {
            return Err(NameError::Address(name));
        }
        let labels: Vec<&str> = name.split('.').collect();
        for label in &labels {
            let ok = !label.is_empty()
                && label.len() <= MAX_LABEL
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !ok {
                return Err(NameError::Label {
                    label: (*label).to_owned(),
                    name,
                });
            }
        }
        if labels.len() < 2 {
            return Err(NameError::SingleLabel(name));
        }
        if labels
            .last()
            .is_some_and(|tld| !tld.starts_with(|c: char| c.is_ascii_lowercase()))
        {
            return Err(NameError::NumericTld(name));
        }
        Ok(Self(name))
    }

    /// [`DomainName::parse`], refusing a name not already written as DNS compares it: what
    /// an API takes, so the one pattern its document states is the whole rule (clients
    /// normalise what people type before they send it).
    pub fn parse_exact(input: &str) -> Result<Self, NameError> {
        let name = Self::parse(input)?;
        if name.0 != input {
            return Err(NameError::NotCanonical {
                given: input.to_owned(),
                canonical: name.0,
            });
        }
        Ok(name)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this name is `domain` or lies under it (`a.apps.example.org` under
    /// `apps.example.org`).
    pub fn is_within(&self, domain: &str) -> bool {
        let domain = domain.trim_end_matches('.').to_ascii_lowercase();
        self.0 == domain
            || self
                .0
                .strip_suffix(&domain)
                .is_some_and(|rest| rest.ends_with('.'))
    }
}

impl fmt::Display for DomainName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_names_are_lowered_and_lose_the_final_dot() {
        for (given, want) in [
            ("orders.example.org", "orders.example.org"),
            ("Orders.Example.ORG.", "orders.example.org"),
            (" www.shop-1.example.co.uk ", "www.shop-1.example.co.uk"),
            ("xn--bcher-kva.example", "xn--bcher-kva.example"),
            ("a.b", "a.b"),
        ] {
            assert_eq!(DomainName::parse(given).unwrap().as_str(), want, "{given}");
        }
    }

    #[test]
    fn each_broken_rule_is_named() {
        let long = format!("{}.example.org", "a".repeat(64));
        let very_long = format!("{}example.org", "abcdefghi.".repeat(26));
        type Check = fn(&NameError) -> bool;
        let cases: &[(&str, Check)] = &[
            ("", |e| matches!(e, NameError::Empty)),
            (".", |e| matches!(e, NameError::Empty)),
            ("*.example.org", |e| matches!(e, NameError::Wildcard(_))),
            ("192.0.2.1", |e| matches!(e, NameError::Address(_))),
            ("::1", |e| matches!(e, NameError::Address(_))),
            ("localhost", |e| matches!(e, NameError::SingleLabel(_))),
            ("-a.example.org", |e| matches!(e, NameError::Label { .. })),
            ("a-.example.org", |e| matches!(e, NameError::Label { .. })),
            ("a..example.org", |e| matches!(e, NameError::Label { .. })),
            ("sh_op.example.org", |e| {
                matches!(e, NameError::Label { .. })
            }),
            ("bücher.example", |e| matches!(e, NameError::Label { .. })),
            ("https://a.example.org", |e| {
                matches!(e, NameError::Label { .. })
            }),
            (
                &long,
                |e| matches!(e, NameError::Label { label, .. } if label.len() == 64),
            ),
            (&very_long, |e| matches!(e, NameError::TooLong { .. })),
            ("a.example.123", |e| matches!(e, NameError::NumericTld(_))),
            ("a.example.1com", |e| matches!(e, NameError::NumericTld(_))),
        ];
        for (given, check) in cases {
            let e = DomainName::parse(given).unwrap_err();
            assert!(check(&e), "{given:?} gave {e:?}");
            assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn exact_names_are_written_as_dns_compares_them() {
        assert_eq!(
            DomainName::parse_exact("orders.example.org")
                .unwrap()
                .as_str(),
            "orders.example.org"
        );
        for given in [
            "Orders.example.org",
            "orders.example.org.",
            " orders.example.org",
        ] {
            assert!(
                matches!(
                    DomainName::parse_exact(given),
                    Err(NameError::NotCanonical { canonical, .. }) if canonical == "orders.example.org"
                ),
                "{given}"
            );
        }
    }

    /// The pattern the platform's OpenAPI document states for a domain name accepts exactly
    /// what `parse_exact` does.
    #[test]
    fn the_documented_pattern_is_the_rule() {
        let pattern = regex::Regex::new(PATTERN).unwrap();
        let long = format!("{}.example.org", "a".repeat(63));
        let too_long = format!("{}example.org", "abcdefghi.".repeat(25));
        for case in [
            "orders.example.org",
            "a.b",
            "xn--bcher-kva.example",
            "a-1.b-2.c3",
            "1.example.org",
            "Orders.example.org",
            "orders.example.org.",
            "*.example.org",
            "192.0.2.1",
            "::1",
            "localhost",
            "-a.example.org",
            "a-.example.org",
            "a..example.org",
            "a_b.example.org",
            "a.example.1com",
            "a.example.123",
            "",
            " a.example.org",
            &long,
            &too_long,
            "a.b-",
            "a.-b",
        ] {
            let by_pattern = pattern.is_match(case) && case.len() <= MAX_NAME;
            assert_eq!(
                by_pattern,
                DomainName::parse_exact(case).is_ok(),
                "{case:?}"
            );
        }
    }

    #[test]
    fn within_is_by_whole_labels() {
        let name = DomainName::parse("web.shop.apps.example.org").unwrap();
        assert!(name.is_within("apps.example.org"));
        assert!(name.is_within("Apps.Example.org."));
        assert!(name.is_within("web.shop.apps.example.org"));
        assert!(!name.is_within("ps.example.org"));
        assert!(!name.is_within("other.example.org"));
    }
}
