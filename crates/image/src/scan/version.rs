//! Version ordering for OSV `ECOSYSTEM` ranges. npm versions are compared as semver (the
//! `semver` crate) and PyPI versions by the full PEP 440 ordering (the `pep440_rs` crate:
//! epochs `1!`, pre-releases `a`/`b`/`rc`, post and dev releases, local versions `+…`, and
//! the spellings PEP 440 normalises such as `1.0-RC1`), each when both versions parse.
//! Everything else (Debian, or a version its ecosystem's rules cannot parse) uses a simple,
//! documented comparison: a Debian epoch (`N:`) first, then the release split on `.`, `-`,
//! `+` and `~` into segments, numeric segments compared as numbers and others as text, a
//! missing segment counting as zero. Advisories with exact `versions` lists are matched
//! exactly whatever the ecosystem.

use std::cmp::Ordering;
use std::str::FromStr as _;

/// Orders `a` and `b` as versions of `ecosystem`.
pub fn compare(ecosystem: &str, a: &str, b: &str) -> Ordering {
    if ecosystem.eq_ignore_ascii_case("npm")
        && let (Ok(x), Ok(y)) = (semver::Version::parse(a), semver::Version::parse(b))
    {
        return x.cmp(&y);
    }
    if ecosystem.eq_ignore_ascii_case("PyPI")
        && let (Ok(x), Ok(y)) = (
            pep440_rs::Version::from_str(a.trim()),
            pep440_rs::Version::from_str(b.trim()),
        )
    {
        return x.cmp(&y);
    }
    dotted(a, b)
}

fn split_epoch(v: &str) -> (u64, &str) {
    match v.split_once(':') {
        Some((e, rest)) if e.bytes().all(|b| b.is_ascii_digit()) => (e.parse().unwrap_or(0), rest),
        _ => (0, v),
    }
}

fn segments(v: &str) -> Vec<&str> {
    v.trim_start_matches(['v', 'V'])
        .split(['.', '-', '+', '~'])
        .filter(|s| !s.is_empty())
        .collect()
}

fn dotted(a: &str, b: &str) -> Ordering {
    let ((ea, ra), (eb, rb)) = (split_epoch(a.trim()), split_epoch(b.trim()));
    if ea != eb {
        return ea.cmp(&eb);
    }
    let (sa, sb) = (segments(ra), segments(rb));
    for i in 0..sa.len().max(sb.len()) {
        let x = sa.get(i).copied().unwrap_or("0");
        let y = sb.get(i).copied().unwrap_or("0");
        let order = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(p), Ok(q)) => p.cmp(&q),
            _ => x.cmp(y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_numerically_with_epochs_and_semver_for_npm() {
        let table = [
            ("PyPI", "1.10.0", "1.9.3", Ordering::Greater),
            ("PyPI", "2.0", "2.0.0", Ordering::Equal),
            ("PyPI", "0.165.0", "0.170", Ordering::Less),
            ("Debian", "1:1.0", "2.0", Ordering::Greater),
            ("npm", "1.0.0-alpha", "1.0.0", Ordering::Less),
            ("npm", "4.17.21", "4.17.3", Ordering::Greater),
        ];
        for (eco, a, b, want) in table {
            assert_eq!(compare(eco, a, b), want, "{eco} {a} vs {b}");
        }
    }

    /// The ordering examples of PEP 440 ("Summary of permitted suffixes and relative
    /// ordering", and the epoch and local version sections), each strictly below the next.
    #[test]
    fn pypi_versions_follow_the_pep_440_ordering_examples() {
        let ascending = [
            "1.dev0",
            "1.0.dev456",
            "1.0a1",
            "1.0a2.dev456",
            "1.0a12.dev456",
            "1.0a12",
            "1.0b1.dev456",
            "1.0b2",
            "1.0b2.post345.dev456",
            "1.0b2.post345",
            "1.0rc1.dev456",
            "1.0rc1",
            "1.0",
            "1.0+abc.5",
            "1.0+abc.7",
            "1.0+5",
            "1.0.post456.dev34",
            "1.0.post456",
            "1.0.15",
            "1.1.dev1",
            "2013.10",
            "2014.04",
            "1!1.0",
            "1!1.1",
            "2!0.1",
        ];
        for pair in ascending.windows(2) {
            assert_eq!(
                compare("PyPI", pair[0], pair[1]),
                Ordering::Less,
                "{} < {}",
                pair[0],
                pair[1]
            );
            assert_eq!(compare("PyPI", pair[1], pair[0]), Ordering::Greater);
        }
        // The issue's own example, and the spellings PEP 440 normalises.
        assert_eq!(compare("PyPI", "1.0rc1", "1.0"), Ordering::Less);
        assert_eq!(compare("PyPI", "1.0", "1.0.post1"), Ordering::Less);
        for (a, b) in [
            ("1.0", "1.0.0"),
            ("1.0-RC1", "1.0rc1"),
            ("1.0c1", "1.0rc1"),
            ("1.0alpha1", "1.0a1"),
            ("1.0-1", "1.0.post1"),
            ("v1.0", "1.0"),
            ("0!1.0", "1.0"),
        ] {
            assert_eq!(compare("PyPI", a, b), Ordering::Equal, "{a} == {b}");
        }
        // A version PEP 440 cannot parse still orders by the simple comparison.
        assert_eq!(compare("PyPI", "1.0-foo-bar", "2.0"), Ordering::Less);
    }
}
