//! What a new domain must satisfy before anything is stored or asked of a CA. Pure: the
//! caller reads what the rules look at (the app's other domains) and applies the answer.

use slipway_acme::{DomainName, NameError};

/// Most domains one app may have (a typo loop in a script cannot fill the CA's rate limits).
pub const MAX_PER_APP: usize = 50;

/// Why a domain is refused. Each names the field and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Not a domain name (field `name`).
    #[error("name: {0}")]
    Name(#[from] NameError),
    /// Under `localhost` or the platform's `--public-domain` (field `name`).
    #[error(
        "name: {name} is under {domain}, which the platform serves itself \
         (apps are already reached there); add a domain of your own"
    )]
    PlatformDomain {
        /// The name.
        name: String,
        /// The platform's domain.
        domain: String,
    },
    /// Both a service and a redirect (field `redirect_to`).
    #[error("redirect_to: a domain either serves a service or redirects, not both")]
    ServiceAndRedirect,
    /// Not a service name (field `service`).
    #[error("service: {0:?} must be a service name (1 to 63 lowercase letters, digits or hyphens)")]
    Service(String),
    /// The redirect target is not a domain name (field `redirect_to`).
    #[error("redirect_to: {0}")]
    RedirectName(NameError),
    /// The redirect target is not another domain of this app (field `redirect_to`).
    #[error(
        "redirect_to: {target} must be another domain of this app that does not itself redirect; add it first"
    )]
    RedirectTarget {
        /// The target as given.
        target: String,
    },
    /// The app has [`MAX_PER_APP`] domains (field `name`).
    #[error("name: an app has at most {MAX_PER_APP} domains; remove one first")]
    TooMany,
}

/// A new domain, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The name.
    pub name: DomainName,
    /// The service, if one was named.
    pub service: Option<String>,
    /// The redirect target (a checked name of the app's).
    pub redirect_to: Option<String>,
}

/// One of the app's existing domains, as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Existing<'a> {
    /// Its name.
    pub name: &'a str,
    /// Whether it redirects.
    pub redirects: bool,
}

/// Checks a new domain of an app against the name rule, the platform's own domains and the
/// app's other domains. A name another app has is the store's unique constraint, not a rule
/// here (the check and the insert must be one step).
pub fn check(
    name: &str,
    service: Option<&str>,
    redirect_to: Option<&str>,
    platform_domains: &[&str],
    app_domains: &[Existing<'_>],
) -> Result<Checked, RuleError> {
    let name = DomainName::parse_exact(name)?;
    if let Some(domain) = platform_domains.iter().find(|d| name.is_within(d)) {
        return Err(RuleError::PlatformDomain {
            name: name.to_string(),
            domain: (*domain).to_owned(),
        });
    }
    if app_domains.len() >= MAX_PER_APP {
        return Err(RuleError::TooMany);
    }
    let service = service.map(str::trim).filter(|s| !s.is_empty());
    let redirect_to = redirect_to.map(str::trim).filter(|s| !s.is_empty());
    if service.is_some() && redirect_to.is_some() {
        return Err(RuleError::ServiceAndRedirect);
    }
    if let Some(service) = service
        && slipway_devfile::dns_label(service, 63).is_err()
    {
        return Err(RuleError::Service(service.to_owned()));
    }
    let redirect_to = match redirect_to {
        None => None,
        Some(target) => {
            let refused = || RuleError::RedirectTarget {
                target: target.to_owned(),
            };
            let target = DomainName::parse_exact(target).map_err(RuleError::RedirectName)?;
            let ok = target != name
                && app_domains
                    .iter()
                    .any(|d| d.name == target.as_str() && !d.redirects);
            if !ok {
                return Err(refused());
            }
            Some(target.to_string())
        }
    };
    Ok(Checked {
        name,
        service: service.map(str::to_owned),
        redirect_to,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLATFORM: &[&str] = &["localhost", "apps.example.org"];

    #[test]
    fn a_plain_domain_and_a_redirect_pass() {
        let c = check("orders.example.org", Some("web"), None, PLATFORM, &[]).unwrap();
        assert_eq!(c.name.as_str(), "orders.example.org");
        assert_eq!(c.service.as_deref(), Some("web"));
        let apex = [Existing {
            name: "example.org",
            redirects: false,
        }];
        let c = check(
            "www.example.org",
            None,
            Some("example.org"),
            PLATFORM,
            &apex,
        )
        .unwrap();
        assert_eq!(c.redirect_to.as_deref(), Some("example.org"));
    }

    #[test]
    fn each_rule_is_named() {
        let www = [Existing {
            name: "www.example.org",
            redirects: true,
        }];
        let cases: Vec<(Result<Checked, RuleError>, &str)> = vec![
            (check("*.example.org", None, None, PLATFORM, &[]), "name:"),
            (
                check("Orders.example.org", None, None, PLATFORM, &[]),
                "lowercase",
            ),
            (
                check("a.example.org", None, Some("B.example.org"), PLATFORM, &[]),
                "redirect_to:",
            ),
            (
                check("shop.localhost", None, None, PLATFORM, &[]),
                "under localhost",
            ),
            (
                check("a.apps.example.org", None, None, PLATFORM, &[]),
                "under apps.example.org",
            ),
            (
                check("apps.example.org", None, None, PLATFORM, &[]),
                "under apps.example.org",
            ),
            (
                check(
                    "a.example.org",
                    Some("web"),
                    Some("b.example.org"),
                    PLATFORM,
                    &[],
                ),
                "not both",
            ),
            (
                check("a.example.org", Some("Web_1"), None, PLATFORM, &[]),
                "service:",
            ),
            (
                check("a.example.org", None, Some("b.example.org"), PLATFORM, &[]),
                "redirect_to:",
            ),
            (
                check("a.example.org", None, Some("a.example.org"), PLATFORM, &[]),
                "redirect_to:",
            ),
            (
                check(
                    "a.example.org",
                    None,
                    Some("www.example.org"),
                    PLATFORM,
                    &www,
                ),
                "redirect_to:",
            ),
        ];
        for (result, want) in cases {
            let e = result.unwrap_err().to_string();
            assert!(e.contains(want), "{e} should say {want}");
        }
        let many: Vec<String> = (0..MAX_PER_APP)
            .map(|i| format!("d{i}.example.org"))
            .collect();
        let existing: Vec<Existing<'_>> = many
            .iter()
            .map(|n| Existing {
                name: n,
                redirects: false,
            })
            .collect();
        assert_eq!(
            check("new.example.org", None, None, PLATFORM, &existing).unwrap_err(),
            RuleError::TooMany
        );
    }
}
