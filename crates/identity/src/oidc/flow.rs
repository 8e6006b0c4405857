//! The three steps of a sign-in: `start` (the client's loopback address and PKCE challenge
//! in, a redirect to the provider out), `callback` (the provider's code in, the person
//! admitted or refused, a redirect back to the client), and `exchange` (the client's one-time
//! code and PKCE verifier in, a platform token out).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, OAuth2TokenResponse,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
};
use serde::Serialize;
use sha2::{Digest, Sha256};
use url::Url;

use super::OidcConfig;
use super::admission::{self, Identity};
use super::client::Http;
use crate::audit::{self, Action};
use crate::error::IdentityError;
use crate::model::{Caller, TokenScope};
use crate::people::person_ref;
use crate::store::people as people_rows;
use crate::tokens;
use slipway_server::db::{Db, Tx};
use slipway_server::token::{Token, hash_token};

/// How long a sign-in may take at the provider.
const LOGIN_TTL: Duration = Duration::from_secs(10 * 60);
/// How long the client has to redeem its one-time code.
const HANDOFF_TTL: Duration = Duration::from_secs(2 * 60);
/// How long provider metadata and keys are reused before discovery runs again.
const METADATA_TTL: Duration = Duration::from_secs(60 * 60);
/// Most sign-ins in progress at once (older ones are dropped first), so a flood of starts
/// cannot grow memory without end.
const MAX_PENDING: usize = 10_000;
/// How long a token made by a sign-in lasts.
pub const SSO_TOKEN_DAYS: i64 = 30;

struct Pending {
    nonce: Nonce,
    pkce: PkceCodeVerifier,
    to: Destination,
    at: Instant,
}

/// Where a finished sign-in goes.
enum Destination {
    /// Back to a Slipway client on loopback (`slipway login --sso`, the desktop), which
    /// redeems a one-time code with its PKCE verifier.
    Client {
        return_to: Url,
        client_state: String,
        client_challenge: String,
    },
    /// To an assistant's authorization request (its page id), which the person approves by
    /// signing in: with the scope they chose on the page as they left it (not whatever the
    /// request says when they come back), and only in the browser that left (the SHA-256 of
    /// a key that browser holds in a cookie), so that nobody can send a victim's signed-in
    /// browser through an approval someone else started.
    Approval {
        page: String,
        scope: TokenScope,
        browser: String,
    },
    /// To a page that acts for a person only once they show, in this browser, that they are
    /// that person (a secret's page); `purpose` is the caller's to read back.
    Confirm { purpose: String, browser: String },
}

impl Destination {
    /// The SHA-256 of the key the browser that started must bring back, if this sign-in is
    /// bound to one.
    fn browser(&self) -> Option<&str> {
        match self {
            Destination::Approval { browser, .. } | Destination::Confirm { browser, .. } => {
                Some(browser)
            }
            Destination::Client { .. } => None,
        }
    }
}

struct Handoff {
    user_id: String,
    challenge: String,
    at: Instant,
}

/// Where a sign-in ends for `to` with `pairs` (an error, or a client's code): back to the
/// client on loopback, or a page the person reads.
fn back(to: &Destination, pairs: &[(&str, &str)]) -> Outcome {
    match to {
        Destination::Client {
            return_to,
            client_state,
            ..
        } => {
            let mut url = return_to.clone();
            url.query_pairs_mut()
                .extend_pairs(pairs)
                .append_pair("state", client_state);
            Outcome::Redirect(url.to_string())
        }
        // No client waits on loopback: the person reads what happened here.
        Destination::Approval { .. } | Destination::Confirm { .. } => {
            let why = pairs
                .iter()
                .find(|(k, _)| *k == "error_description")
                .map_or("the sign-in failed", |(_, v)| *v);
            let then = if matches!(to, Destination::Approval { .. }) {
                " The assistant was not connected."
            } else {
                ""
            };
            page(403, "You were not signed in", format!("{why}.{then}"))
        }
    }
}

/// The provider's answer at the callback.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct CallbackQuery {
    /// Our CSRF state.
    pub state: Option<String>,
    /// The authorization code.
    pub code: Option<String>,
    /// The provider's error code, when it refused.
    pub error: Option<String>,
    /// Its description.
    pub error_description: Option<String>,
}

/// What the browser is answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// 302 to this address.
    Redirect(String),
    /// The person signed in to approve the assistant's request `page`: approving it is the
    /// caller's (it knows the apps the request names); `caller` is the person, with every
    /// right of theirs.
    Approve {
        /// The request's page id.
        page: String,
        /// Who signed in.
        caller: Caller,
        /// What they chose on the page (app names as typed).
        scope: TokenScope,
    },
    /// The person showed who they are for `purpose` ([`Sso::start_confirmation`]); what
    /// follows is the caller's.
    Confirmed {
        /// What the sign-in was started for.
        purpose: String,
        /// Who signed in.
        caller: Caller,
    },
    /// A page saying what went wrong.
    Page {
        /// HTTP status.
        status: u16,
        /// Its heading.
        title: String,
        /// What happened and what to do.
        message: String,
    },
}

/// The callback's result, so the caller can log it without the person's data.
pub type Callback = Outcome;

/// A finished sign-in: the person and their new token (the only copy in clear).
#[derive(Debug, Clone, Serialize)]
pub struct SignedIn {
    /// UUID.
    pub user_id: String,
    /// E-mail.
    pub email: String,
    /// Name.
    pub name: String,
    /// The token.
    #[serde(serialize_with = "crate::tokens::expose")]
    pub token: Token,
    /// When it stops working.
    pub expires_at: Option<String>,
}

/// The relying party.
pub struct Sso {
    config: OidcConfig,
    http: Http,
    metadata: tokio::sync::Mutex<Option<(CoreProviderMetadata, Instant)>>,
    logins: Mutex<HashMap<String, Pending>>,
    handoffs: Mutex<HashMap<String, Handoff>>,
}

impl std::fmt::Debug for Sso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sso")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn page(status: u16, title: &str, message: impl Into<String>) -> Outcome {
    Outcome::Page {
        status,
        title: title.to_owned(),
        message: message.into(),
    }
}

fn bad_start(message: &str) -> Outcome {
    page(400, "This sign-in link is not valid", message)
}

impl Sso {
    /// A relying party for `config`; the provider is first asked at the first sign-in, so a
    /// provider that is down does not keep the platform from starting.
    pub fn new(config: OidcConfig) -> Result<Self, String> {
        IssuerUrl::new(config.issuer.clone()).map_err(|e| format!("--oidc-issuer: {e}"))?;
        RedirectUrl::new(config.redirect_url()).map_err(|e| format!("--public-url: {e}"))?;
        Ok(Self {
            http: Http::new()?,
            config,
            metadata: tokio::sync::Mutex::new(None),
            logins: Mutex::new(HashMap::new()),
            handoffs: Mutex::new(HashMap::new()),
        })
    }

    /// The provider's issuer URL.
    pub fn issuer(&self) -> &str {
        &self.config.issuer
    }

    /// The provider's metadata and keys, discovered now or reused; `fresh` forces discovery
    /// (after an ID token failed to verify: the provider may have rotated its keys).
    async fn metadata(&self, fresh: bool) -> Result<CoreProviderMetadata, String> {
        let mut cached = self.metadata.lock().await;
        if !fresh
            && let Some((m, at)) = cached.as_ref()
            && at.elapsed() < METADATA_TTL
        {
            return Ok(m.clone());
        }
        let issuer = IssuerUrl::new(self.config.issuer.clone()).map_err(|e| e.to_string())?;
        let found = CoreProviderMetadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| describe(&e))?;
        *cached = Some((found.clone(), Instant::now()));
        Ok(found)
    }

    fn client(
        &self,
        metadata: CoreProviderMetadata,
    ) -> Result<
        CoreClient<
            openidconnect::EndpointSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointMaybeSet,
            openidconnect::EndpointMaybeSet,
        >,
        String,
    > {
        let redirect = RedirectUrl::new(self.config.redirect_url()).map_err(|e| e.to_string())?;
        Ok(CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            Some(ClientSecret::new(self.config.client_secret.clone())),
        )
        .set_redirect_uri(redirect))
    }

    /// `GET /auth/oidc/start`: checks the client's loopback address, state and PKCE
    /// challenge, and sends the browser to the provider.
    pub async fn start(
        &self,
        return_to: Option<&str>,
        state: Option<&str>,
        challenge: Option<&str>,
    ) -> Outcome {
        let return_to = match return_to.map(Url::parse) {
            Some(Ok(url)) if is_loopback(&url) => url,
            _ => {
                return bad_start(
                    "return_to must be an http address on 127.0.0.1, [::1] or localhost (the Slipway client's own); start the sign-in from slipway login --sso or the desktop app",
                );
            }
        };
        let Some(state) = state.filter(|s| (8..=200).contains(&s.len())) else {
            return bad_start("state must be 8 to 200 characters");
        };
        let Some(challenge) = challenge.filter(|c| is_s256_challenge(c)) else {
            return bad_start(
                "challenge must be the base64url SHA-256 of the client's PKCE verifier (43 characters)",
            );
        };
        self.begin(Destination::Client {
            return_to,
            client_state: state.to_owned(),
            client_challenge: challenge.to_owned(),
        })
        .await
    }

    /// Sends the browser to the provider so that the person approves the assistant's request
    /// `page` with `scope` by signing in (the page's "Sign in with single sign-on"); the
    /// callback must come with `browser_key`, the key this browser was given in a cookie. The
    /// page id is checked when the sign-in comes back.
    pub async fn start_approval(
        &self,
        page: &str,
        scope: TokenScope,
        browser_key: &str,
    ) -> Outcome {
        self.begin(Destination::Approval {
            page: page.to_owned(),
            scope,
            browser: hash_token(browser_key),
        })
        .await
    }

    /// Sends the browser to the provider so that the person shows who they are, for
    /// `purpose` (kept here, handed back by the callback as [`Outcome::Confirmed`]); the
    /// callback must come with `browser_key`, as for [`Sso::start_approval`].
    pub async fn start_confirmation(&self, purpose: &str, browser_key: &str) -> Outcome {
        self.begin(Destination::Confirm {
            purpose: purpose.to_owned(),
            browser: hash_token(browser_key),
        })
        .await
    }

    /// The redirect to the provider, remembering where the sign-in goes after.
    async fn begin(&self, to: Destination) -> Outcome {
        let metadata = match self.metadata(false).await {
            Ok(m) => m,
            Err(e) => return unreachable_provider(&self.config.issuer, &e),
        };
        let client = match self.client(metadata) {
            Ok(c) => c,
            Err(e) => return page(500, "Single sign-on is misconfigured", e),
        };
        let (pkce_challenge, pkce) = PkceCodeChallenge::new_random_sha256();
        let (url, csrf, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".into()))
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(pkce_challenge)
            .url();
        let mut logins = self.logins.lock().unwrap_or_else(|p| p.into_inner());
        logins.retain(|_, p| p.at.elapsed() < LOGIN_TTL);
        if logins.len() >= MAX_PENDING
            && let Some(oldest) = logins
                .iter()
                .min_by_key(|(_, p)| p.at)
                .map(|(k, _)| k.clone())
        {
            logins.remove(&oldest);
        }
        logins.insert(
            csrf.secret().clone(),
            Pending {
                nonce,
                pkce,
                to,
                at: Instant::now(),
            },
        );
        Outcome::Redirect(url.to_string())
    }

    /// `GET /auth/oidc/callback`: redeems the provider's code, verifies the ID token, admits
    /// or refuses the person, and sends the browser back to the client that started.
    ///
    /// `browser_key` is the key the browser's cookie holds (an approval must come back to the
    /// browser that started it; a client's sign-in is bound by its PKCE verifier instead).
    pub async fn callback(
        &self,
        db: &Db,
        query: CallbackQuery,
        browser_key: Option<&str>,
    ) -> Callback {
        let pending = query.state.as_deref().and_then(|s| {
            let mut logins = self.logins.lock().unwrap_or_else(|p| p.into_inner());
            logins.remove(s).filter(|p| p.at.elapsed() < LOGIN_TTL)
        });
        let Some(pending) = pending else {
            return page(
                400,
                "This sign-in has expired",
                "The sign-in was started more than ten minutes ago, was already finished, or the platform restarted meanwhile. Start it again from Slipway.",
            );
        };
        if let Some(browser) = pending.to.browser()
            && browser_key.map(hash_token).as_deref() != Some(browser)
        {
            return page(
                403,
                "This sign-in was started elsewhere",
                "It did not begin in this browser, so it approves nothing. If you meant to connect an assistant, start again from the assistant.",
            );
        }
        let back = |pairs: &[(&str, &str)]| back(&pending.to, pairs);
        if let Some(error) = query.error.as_deref() {
            let why = query.error_description.as_deref().unwrap_or(error);
            let text = format!("the identity provider did not sign you in: {why}");
            return back(&[("error", "access_denied"), ("error_description", &text)]);
        }
        let Some(code) = query.code else {
            return back(&[
                ("error", "server_error"),
                (
                    "error_description",
                    "the identity provider answered without a code",
                ),
            ]);
        };
        let who = match self.verified_identity(code, &pending).await {
            Ok(who) => who,
            Err(e) => {
                tracing::warn!(error = %e, "a single sign-on answer failed verification");
                let text = format!("the identity provider's answer could not be verified: {e}");
                return back(&[("error", "server_error"), ("error_description", &text)]);
            }
        };
        match self.admit(db, &who).await {
            Ok(Ok(caller)) => match &pending.to {
                Destination::Approval { page, scope, .. } => Outcome::Approve {
                    page: page.clone(),
                    caller,
                    scope: scope.clone(),
                },
                Destination::Confirm { purpose, .. } => Outcome::Confirmed {
                    purpose: purpose.clone(),
                    caller,
                },
                Destination::Client {
                    client_challenge, ..
                } => match self.hand_off(caller.user_id, client_challenge) {
                    Ok(code) => back(&[("code", code.expose())]),
                    Err(e) => page(500, "Sign-in failed", e),
                },
            },
            Ok(Err(reason)) => back(&[("error", "access_denied"), ("error_description", &reason)]),
            Err(e) => {
                tracing::error!(error = %e, "single sign-on could not record a sign-in");
                back(&[
                    ("error", "server_error"),
                    (
                        "error_description",
                        "the platform failed to record the sign-in; try again",
                    ),
                ])
            }
        }
    }

    /// A one-time code the client redeems, with the verifier of `challenge`, for `user_id`'s
    /// token.
    fn hand_off(&self, user_id: String, challenge: &str) -> Result<Token, String> {
        let code = Token::generate("slwc_").map_err(|e| e.to_string())?;
        let mut handoffs = self.handoffs.lock().unwrap_or_else(|p| p.into_inner());
        handoffs.retain(|_, h| h.at.elapsed() < HANDOFF_TTL);
        handoffs.insert(
            code.hash(),
            Handoff {
                user_id,
                challenge: challenge.to_owned(),
                at: Instant::now(),
            },
        );
        Ok(code)
    }

    /// Redeems the provider's code and checks the ID token (rediscovering once when it does
    /// not verify: the provider may have rotated its signing keys).
    async fn verified_identity(&self, code: String, pending: &Pending) -> Result<Identity, String> {
        let metadata = self.metadata(false).await?;
        let client = self.client(metadata)?;
        let answer = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|e| e.to_string())?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce.secret().clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| describe(&e))?;
        let id_token = answer
            .id_token()
            .ok_or("the provider's answer has no ID token")?;
        let claims = match id_token.claims(&client.id_token_verifier(), &pending.nonce) {
            Ok(c) => c.clone(),
            Err(_) => {
                let client = self.client(self.metadata(true).await?)?;
                id_token
                    .claims(&client.id_token_verifier(), &pending.nonce)
                    .map_err(|e| describe(&e))?
                    .clone()
            }
        };
        let name_of = |n: Option<&openidconnect::LocalizedClaim<openidconnect::EndUserName>>| {
            n.and_then(|n| n.get(None)).map(|n| n.to_string())
        };
        let mut who = Identity {
            issuer: self.config.issuer.clone(),
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified(),
            name: name_of(claims.name()),
        };
        // Some providers put the e-mail only in userinfo for the code flow (the spec allows
        // it); ask there, for the same subject, when the ID token has none.
        if who.email.is_none()
            && let Ok(request) = client.user_info(
                answer.access_token().clone(),
                Some(claims.subject().clone()),
            )
        {
            let info: openidconnect::core::CoreUserInfoClaims = request
                .request_async(&self.http)
                .await
                .map_err(|e| format!("reading userinfo: {}", describe(&e)))?;
            who.email = info.email().map(|e| e.to_string());
            who.email_verified = info.email_verified();
            who.name = who.name.or_else(|| name_of(info.name()));
        }
        Ok(who)
    }

    /// Admits or refuses `who` and records it; `Ok(Ok(the person))` when admitted.
    async fn admit(
        &self,
        db: &Db,
        who: &Identity,
    ) -> Result<Result<Caller, String>, IdentityError> {
        let mut tx = db.begin_write().await?;
        let decided = admission::admit(
            &mut tx,
            who,
            &self.config.allowed_domains,
            &self.config.account_id,
        )
        .await;
        let decided = match decided {
            Ok(d) => d,
            Err(IdentityError::AlreadyMember(email)) => Err(format!(
                "{email} already has a Slipway account; sign in with it"
            )),
            Err(e) => return Err(e),
        };
        let subject = who.email.clone().unwrap_or_else(|| "(no e-mail)".into());
        let result = match decided {
            Ok(admitted) => {
                let me = person_ref(&admitted.person);
                audit::record(
                    &mut tx,
                    &admitted.person.account_id,
                    Some(&me),
                    Action::SsoSignedIn,
                    &admitted.person.email,
                    &admitted.how,
                )
                .await?;
                Ok(Caller {
                    user_id: admitted.person.id,
                    account_id: admitted.person.account_id,
                    role: admitted.person.role,
                    token_id: String::new(),
                    scope: slipway_api::TokenScope::FULL,
                    grant: None,
                })
            }
            Err(reason) => {
                // A refusal creates nothing: only its audit entry is kept.
                tx.rollback().await?;
                tx = db.begin_write().await?;
                audit::record(
                    &mut tx,
                    &self.config.account_id,
                    None,
                    Action::SsoRefused,
                    &subject,
                    &reason,
                )
                .await?;
                Err(reason)
            }
        };
        tx.commit().await?;
        Ok(result)
    }

    /// `POST /auth/oidc/exchange`: the client's one-time code and PKCE verifier for a token.
    /// The code is spent by the first try, right or wrong.
    pub async fn exchange(
        &self,
        tx: &mut Tx,
        code: &str,
        verifier: &str,
    ) -> Result<SignedIn, IdentityError> {
        let handoff = {
            let mut handoffs = self.handoffs.lock().unwrap_or_else(|p| p.into_inner());
            handoffs.remove(&Token::from_string(code.trim().to_owned()).hash())
        };
        let handoff = handoff.filter(|h| h.at.elapsed() < HANDOFF_TTL).ok_or_else(|| {
            IdentityError::invalid(
                "code",
                "is not a sign-in code of this platform, or it was used or is over two minutes old; sign in again",
            )
        })?;
        let proof = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.trim().as_bytes()));
        if proof != handoff.challenge {
            return Err(IdentityError::invalid(
                "verifier",
                "does not match the challenge the sign-in started with",
            ));
        }
        let person = people_rows::find_by_id(tx, &handoff.user_id)
            .await?
            .filter(|p| p.removed_at.is_none())
            .ok_or(IdentityError::Unauthenticated)?;
        let made = tokens::issue_recorded(tx, &person, "SSO sign-in", SSO_TOKEN_DAYS).await?;
        Ok(SignedIn {
            user_id: person.id,
            email: person.email,
            name: person.name,
            token: made.token,
            expires_at: made.expires_at,
        })
    }
}

fn unreachable_provider(issuer: &str, e: &str) -> Outcome {
    page(
        502,
        "The identity provider cannot be reached",
        format!(
            "Slipway could not read the provider's configuration at {issuer}: {e}. Try again later, or tell the platform's operator."
        ),
    )
}

/// Whether `url` is an http address on this machine's loopback.
fn is_loopback(url: &Url) -> bool {
    url.scheme() == "http"
        && match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d == "localhost",
            None => false,
        }
}

/// Whether `c` looks like base64url(SHA-256(…)) without padding.
fn is_s256_challenge(c: &str) -> bool {
    c.len() == 43
        && c.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// An error and its causes in one line.
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http_addresses_may_receive_codes() {
        for ok in [
            "http://127.0.0.1:4312/callback",
            "http://[::1]:80/cb",
            "http://localhost:9/x",
        ] {
            assert!(is_loopback(&Url::parse(ok).unwrap()), "{ok}");
        }
        for bad in [
            "https://127.0.0.1/cb",
            "http://evil.example/cb",
            "http://127.0.0.1.evil.example/cb",
            "http://10.0.0.1/cb",
        ] {
            assert!(!is_loopback(&Url::parse(bad).unwrap()), "{bad}");
        }
    }

    #[test]
    fn challenges_are_s256_shaped() {
        let proof = URL_SAFE_NO_PAD.encode(Sha256::digest(b"verifier"));
        assert!(is_s256_challenge(&proof));
        assert!(!is_s256_challenge("short"));
        assert!(!is_s256_challenge(&format!("{}=", &proof[..42])));
    }
}
