//! Single sign-on with OpenID Connect: the platform is the relying party of the company's
//! provider (authorization code flow with PKCE; discovery; the ID token's signature, issuer,
//! audience, expiry and nonce checked by the `openidconnect` crate; `email_verified`
//! required), and hands the person a platform token through a one-time code that only the
//! client that started the sign-in can redeem (it proves the PKCE verifier of its own).
//!
//! Sign-ins in progress and codes waiting for their client live in memory for minutes: a
//! restart during a sign-in means signing in again, and nothing of them is ever written.

mod admission;
mod client;
mod flow;

pub use flow::{Callback, CallbackQuery, Outcome, SignedIn, Sso};

use url::Url;

/// What `slipway platform serve --public-url … --oidc-*` configures.
#[derive(Clone)]
pub struct OidcConfig {
    /// The platform's address as browsers reach it; the callback is under it.
    pub public_url: Url,
    /// The provider's issuer URL (discovery is under it).
    pub issuer: String,
    /// The client id registered at the provider.
    pub client_id: String,
    /// The client secret (from a file, never a flag).
    pub client_secret: String,
    /// E-mail domains whose verified addresses may join as members without an invite.
    pub allowed_domains: Vec<String>,
    /// The account people joining by domain enter, and whose audit records refusals.
    pub account_id: String,
}

impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("public_url", &self.public_url.as_str())
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("allowed_domains", &self.allowed_domains)
            .finish()
    }
}

impl OidcConfig {
    /// `<public-url>/auth/oidc/callback`, the redirect URI to register at the provider.
    pub fn redirect_url(&self) -> String {
        format!(
            "{}/auth/oidc/callback",
            self.public_url.as_str().trim_end_matches('/')
        )
    }

    /// Parses `--oidc-allowed-domains a.com,b.org`: lower case, no blanks, each a domain.
    pub fn parse_domains(raw: &str) -> Result<Vec<String>, String> {
        raw.split(',')
            .map(|d| d.trim().trim_start_matches('@').to_ascii_lowercase())
            .filter(|d| !d.is_empty())
            .map(|d| {
                if d.contains('.') && !d.contains(char::is_whitespace) && !d.contains('@') {
                    Ok(d)
                } else {
                    Err(format!("{d:?} is not a domain such as example.org"))
                }
            })
            .collect()
    }
}
