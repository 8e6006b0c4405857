//! Version ordering for OSV `ECOSYSTEM` ranges. npm versions are compared as semver (the
//! `semver` crate) when both parse. Everything else (PyPI, Debian, or npm that does not
//! parse) uses a simple, documented comparison: a Debian epoch (`N:`) first, then the
//! release split on `.`, `-`, `+` and `~` into segments, numeric segments compared as
//! numbers and others as text, a missing segment counting as zero. This is not full PEP 440
//! (pre-releases such as `1.0rc1` sort after `1.0` here); advisories with exact `versions`
//! lists are matched exactly whatever the ecosystem.

use std::cmp::Ordering;

/// Orders `a` and `b` as versions of `ecosystem`.
pub fn compare(ecosystem: &str, a: &str, b: &str) -> Ordering {
    if ecosystem.eq_ignore_ascii_case("npm")
        && let (Ok(x), Ok(y)) = (semver::Version::parse(a), semver::Version::parse(b))
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
}
