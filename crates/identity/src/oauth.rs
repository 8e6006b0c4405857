//! OAuth 2.1 for assistants (docs/mcp.md): the platform is the authorization server of its own
//! tool server. A client registers (RFC 7591) or names its client ID metadata document; the
//! browser's authorization request (PKCE S256 only) becomes a pending request with a short
//! code; the person approves it where they are signed in already (`slipway grants approve
//! CODE`, the desktop), choosing the scope, so no long-lived token is ever typed into a page;
//! the page then hands the client its authorization code (with `iss`, RFC 9207), which the
//! token endpoint exchanges, once, for an access token bound to the resource and a refresh
//! token that is replaced on every use. Access tokens are personal tokens of the person, with
//! the grant's scope and the grant's id (the platform refuses them anywhere but the resource).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::audit::{self, Action};
use crate::error::IdentityError;
use crate::model::{Caller, TokenScope};
use crate::store::oauth::{self as rows, ClientRow, GrantRow, NewRequest};
use crate::store::tokens::{self as token_rows, NewToken as TokenRow};
use crate::tokens::{TOKEN_PREFIX, actor};
use slipway_server::clock::{now_millis, rfc3339};
use slipway_server::db::Tx;
use slipway_server::token::{Token, hash_token};

/// How long a person has to approve a request.
const REQUEST_MINUTES: i64 = 10;
/// How long an authorization code works once handed out.
const CODE_SECONDS: i64 = 120;
/// How long an access token works.
pub const ACCESS_SECONDS: i64 = 3600;
/// How long a refresh token works unused.
const REFRESH_DAYS: i64 = 30;
/// Prefix of refresh tokens.
const REFRESH_PREFIX: &str = "slwr_";
/// Prefix of authorization codes.
const CODE_PREFIX: &str = "slwc_";
/// The scope words a client may ask for (`scope=read write secrets`).
pub const SCOPES: [&str; 3] = ["read", "write", "secrets"];

/// Why an OAuth request was refused, with the RFC 6749 error code it answers.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// `invalid_request`: a parameter is missing, repeated or malformed.
    #[error("{0}")]
    InvalidRequest(String),
    /// `invalid_client`: no such client, or it may not do this.
    #[error("{0}")]
    InvalidClient(String),
    /// `invalid_grant`: the code or refresh token is unknown, used, expired, or not this
    /// client's, or the PKCE verifier does not match.
    #[error("{0}")]
    InvalidGrant(String),
    /// `unsupported_grant_type`.
    #[error("grant_type must be authorization_code or refresh_token")]
    UnsupportedGrantType,
    /// `invalid_target` (RFC 8707): a resource this server does not issue tokens for.
    #[error("{0}")]
    InvalidTarget(String),
    /// `invalid_scope`.
    #[error("{0}")]
    InvalidScope(String),
    /// `invalid_redirect_uri` / `invalid_client_metadata` (RFC 7591).
    #[error("{0}")]
    InvalidClientMetadata(String),
    /// A refusal of the person's own request (approve, deny, revoke): the API's error.
    #[error(transparent)]
    Identity(#[from] IdentityError),
}

impl OAuthError {
    /// The RFC 6749 / 7591 / 8707 error code.
    pub fn code(&self) -> &'static str {
        match self {
            OAuthError::InvalidRequest(_) => "invalid_request",
            OAuthError::InvalidClient(_) => "invalid_client",
            OAuthError::InvalidGrant(_) => "invalid_grant",
            OAuthError::UnsupportedGrantType => "unsupported_grant_type",
            OAuthError::InvalidTarget(_) => "invalid_target",
            OAuthError::InvalidScope(_) => "invalid_scope",
            OAuthError::InvalidClientMetadata(_) => "invalid_client_metadata",
            OAuthError::Identity(e) => e.code(),
        }
    }
}

impl From<sqlx::Error> for OAuthError {
    fn from(e: sqlx::Error) -> Self {
        OAuthError::Identity(IdentityError::Database(e))
    }
}

/// A client as it registered (or as its metadata document says).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    /// Its id.
    pub client_id: String,
    /// Its name, shown to the person.
    pub client_name: String,
    /// Where it may be sent back to, exactly.
    pub redirect_uris: Vec<String>,
}

/// A redirect URI a client may register: https, or http on a loopback address (a native
/// client's listener, RFC 8252 §7.3); no fragment.
pub fn check_redirect_uri(raw: &str) -> Result<url::Url, OAuthError> {
    let invalid =
        |why: &str| OAuthError::InvalidClientMetadata(format!("redirect_uris: {raw:?} {why}"));
    let url = url::Url::parse(raw).map_err(|_| invalid("is not an absolute URL"))?;
    if url.fragment().is_some() {
        return Err(invalid("has a fragment"));
    }
    let loopback = matches!(
        url.host(),
        Some(url::Host::Domain("localhost"))
            | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
            | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
    );
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(invalid("must be https, or http on a loopback address")),
    }
}

/// Registers a client (RFC 7591), public (no secret: PKCE protects its codes).
pub async fn register(
    tx: &mut Tx,
    name: Option<&str>,
    redirect_uris: &[String],
) -> Result<Client, OAuthError> {
    if redirect_uris.is_empty() || redirect_uris.len() > 10 {
        return Err(OAuthError::InvalidClientMetadata(
            "redirect_uris: give 1 to 10 addresses".into(),
        ));
    }
    for uri in redirect_uris {
        check_redirect_uri(uri)?;
    }
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("an assistant");
    let client = Client {
        client_id: format!("slwcl_{}", uuid::Uuid::new_v4().simple()),
        client_name: name.chars().take(100).collect(),
        redirect_uris: redirect_uris.to_vec(),
    };
    save_client(tx, &client).await?;
    Ok(client)
}

/// Keeps a client read from its metadata document (or registered).
pub async fn save_client(tx: &mut Tx, client: &Client) -> Result<(), OAuthError> {
    rows::insert_client(
        tx,
        &ClientRow {
            id: client.client_id.clone(),
            name: client.client_name.clone(),
            redirect_uris: serde_json::to_string(&client.redirect_uris)
                .expect("a list of strings serialises"),
        },
        now_millis(),
    )
    .await?;
    Ok(())
}

/// The client with this id, if known.
pub async fn client(tx: &mut Tx, id: &str) -> Result<Option<Client>, OAuthError> {
    Ok(rows::client(tx, id).await?.map(|r| Client {
        client_id: r.id,
        client_name: r.name,
        redirect_uris: serde_json::from_str(&r.redirect_uris).unwrap_or_default(),
    }))
}

/// An authorization request's parameters, checked by [`start`].
#[derive(Debug, Clone)]
pub struct Authorize {
    /// `client_id`.
    pub client: Client,
    /// `redirect_uri` (one the client registered; may be left out when it has one only).
    pub redirect_uri: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `code_challenge` (S256).
    pub code_challenge: String,
    /// `resource` (RFC 8707): must be the tool server's address.
    pub resource: String,
    /// `scope`, as words.
    pub scope: Option<String>,
}

/// A request waiting for the person.
#[derive(Debug, Clone)]
pub struct Started {
    /// The page's handle.
    pub page: String,
    /// What the person types to approve.
    pub user_code: String,
}

/// The scope `words` ask for: `read` alone is read-only; `write` adds changes; `secrets`
/// adds secret values. Nothing asked is everything.
pub fn scope_of_words(words: Option<&str>) -> Result<TokenScope, OAuthError> {
    let Some(words) = words.filter(|w| !w.trim().is_empty()) else {
        return Ok(TokenScope::FULL);
    };
    let asked: Vec<&str> = words.split_whitespace().collect();
    if let Some(unknown) = asked.iter().find(|w| !SCOPES.contains(w)) {
        return Err(OAuthError::InvalidScope(format!(
            "scope {unknown:?} is not one of {}",
            SCOPES.join(", ")
        )));
    }
    Ok(TokenScope {
        read_only: !asked.contains(&"write"),
        apps: None,
        secrets: asked.contains(&"secrets"),
    })
}

/// The scope in words (`read write secrets`), for the token answer.
pub fn words_of_scope(scope: &TokenScope) -> String {
    let mut words = vec!["read"];
    if !scope.read_only {
        words.push("write");
    }
    if scope.secrets {
        words.push("secrets");
    }
    words.join(" ")
}

/// Checks an authorization request and keeps it for the person to approve. `resource` is
/// the only resource tokens are issued for.
pub async fn start(
    tx: &mut Tx,
    request: &Authorize,
    resource: &str,
) -> Result<Started, OAuthError> {
    if request.resource.trim_end_matches('/') != resource {
        return Err(OAuthError::InvalidTarget(format!(
            "resource must be {resource}, the only resource this server issues tokens for"
        )));
    }
    let redirect_uri = redirect_of(&request.client, request.redirect_uri.as_deref())?;
    check_challenge(&request.code_challenge)?;
    let asked = scope_of_words(request.scope.as_deref())?;
    let page = uuid::Uuid::new_v4().to_string();
    let now = now_millis();
    let mut user_code = new_user_code()?;
    // A code already pending is drawn again (40 bits: it almost never is).
    while rows::request_by(tx, "r.user_code", &user_code)
        .await?
        .is_some()
    {
        user_code = new_user_code()?;
    }
    rows::insert_request(
        tx,
        &NewRequest {
            id: &page,
            user_code: &user_code,
            client_id: &request.client.client_id,
            redirect_uri: &redirect_uri,
            state: request.state.as_deref(),
            code_challenge: &request.code_challenge,
            resource,
            asked_scope: &serde_json::to_string(&asked).expect("a scope serialises"),
            created_at: now,
            expires_at: now + REQUEST_MINUTES * 60_000,
        },
    )
    .await?;
    Ok(Started { page, user_code })
}

/// The redirect URI a request uses: the one given, if registered; else the only one.
pub fn redirect_of(client: &Client, given: Option<&str>) -> Result<String, OAuthError> {
    match given {
        Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => Ok(uri.to_owned()),
        Some(uri) => Err(OAuthError::InvalidRequest(format!(
            "redirect_uri {uri:?} is not one this client registered"
        ))),
        None if client.redirect_uris.len() == 1 => Ok(client.redirect_uris[0].clone()),
        None => Err(OAuthError::InvalidRequest(
            "redirect_uri is required: this client registered several".into(),
        )),
    }
}

fn check_challenge(challenge: &str) -> Result<(), OAuthError> {
    let ok = challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(OAuthError::InvalidRequest(
            "code_challenge must be BASE64URL(SHA-256(verifier)), 43 characters (code_challenge_method S256)".into(),
        ))
    }
}

/// Eight letters and digits in two groups (`K7QP-3MZD`), without look-alikes.
fn new_user_code() -> Result<String, OAuthError> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| IdentityError::Random(e.to_string()))?;
    let chars: String = bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    Ok(format!("{}-{}", &chars[..4], &chars[4..]))
}

/// A request as the page and the approving person see it.
#[derive(Debug, Clone, Serialize)]
pub struct RequestView {
    /// The code the person types.
    pub user_code: String,
    /// The client's name (as it says: the person decides whether to trust it).
    pub client_name: String,
    /// The client's id (an https URL for a client known by its metadata document).
    pub client_id: String,
    /// Where the browser goes back to.
    pub redirect_uri: String,
    /// What it asks for.
    pub asked: TokenScope,
    /// `pending`, `approved`, `denied` or `expired`.
    pub status: &'static str,
    /// When it stops waiting (RFC 3339).
    pub expires_at: String,
}

fn view(r: &rows::RequestRow, now: i64) -> RequestView {
    let status = if r.denied_at.is_some() {
        "denied"
    } else if r.user_id.is_some() {
        "approved"
    } else if r.expires_at <= now {
        "expired"
    } else {
        "pending"
    };
    RequestView {
        user_code: r.user_code.clone(),
        client_name: r.client_name.clone(),
        client_id: r.client_id.clone(),
        redirect_uri: r.redirect_uri.clone(),
        asked: serde_json::from_str(&r.asked_scope).unwrap_or(TokenScope::FULL),
        status,
        expires_at: rfc3339(r.expires_at),
    }
}

/// What the page shows, or where it sends the browser.
#[derive(Debug, Clone)]
pub enum Page {
    /// Waiting for the person.
    Waiting(RequestView),
    /// Done: send the browser here (the code, or the refusal, with `state` and `iss`).
    Redirect(String),
    /// Gone (unknown, expired, or its code already exchanged).
    Gone,
}

/// The page `page` shows; once approved, the client's redirect with a fresh code (a reload
/// before the exchange replaces it).
pub async fn page(tx: &mut Tx, page: &str, issuer: &str) -> Result<Page, OAuthError> {
    let Some(r) = rows::request_by(tx, "r.id", page).await? else {
        return Ok(Page::Gone);
    };
    let now = now_millis();
    let mut back = url::Url::parse(&r.redirect_uri)
        .map_err(|_| OAuthError::InvalidRequest("the redirect_uri does not parse".into()))?;
    if r.denied_at.is_some() {
        {
            let mut q = back.query_pairs_mut();
            q.append_pair("error", "access_denied");
            q.append_pair("error_description", "the person declined");
            if let Some(state) = &r.state {
                q.append_pair("state", state);
            }
            q.append_pair("iss", issuer);
        }
        return Ok(Page::Redirect(back.into()));
    }
    if r.code_used_at.is_some() {
        return Ok(Page::Gone);
    }
    if r.user_id.is_none() {
        if r.expires_at <= now {
            return Ok(Page::Gone);
        }
        return Ok(Page::Waiting(view(&r, now)));
    }
    let code = Token::generate(CODE_PREFIX).map_err(|e| IdentityError::Random(e.to_string()))?;
    rows::set_code(tx, &r.id, &code.hash(), now + CODE_SECONDS * 1000).await?;
    {
        let mut q = back.query_pairs_mut();
        q.append_pair("code", code.expose());
        if let Some(state) = &r.state {
            q.append_pair("state", state);
        }
        q.append_pair("iss", issuer);
    }
    Ok(Page::Redirect(back.into()))
}

/// The page's choice of scope, while the request waits (the approving person sees it).
pub async fn choose(tx: &mut Tx, page: &str, asked: &TokenScope) -> Result<(), OAuthError> {
    rows::set_asked(
        tx,
        page,
        &serde_json::to_string(asked).expect("a scope serialises"),
    )
    .await?;
    Ok(())
}

async fn pending(tx: &mut Tx, user_code: &str) -> Result<rows::RequestRow, OAuthError> {
    let code = user_code.trim().to_ascii_uppercase();
    let found = rows::request_by(tx, "r.user_code", &code).await?;
    match found {
        Some(r) if view(&r, now_millis()).status == "pending" => Ok(r),
        _ => Err(IdentityError::SignInNotFound(format!(
            "no sign-in request waits with code {code} (it may have expired: start again from the assistant)"
        ))
        .into()),
    }
}

/// A pending request, for the person about to approve it.
pub async fn find(tx: &mut Tx, user_code: &str) -> Result<RequestView, OAuthError> {
    Ok(view(&pending(tx, user_code).await?, now_millis()))
}

/// The pending request whose page is `page` (a person who signed in on that page approves it).
pub async fn find_page(tx: &mut Tx, page: &str) -> Result<RequestView, OAuthError> {
    match rows::request_by(tx, "r.id", page).await? {
        Some(r) if view(&r, now_millis()).status == "pending" => Ok(view(&r, now_millis())),
        _ => Err(IdentityError::SignInNotFound(
            "this sign-in request has ended (answered, or over ten minutes old): start again from the assistant".into(),
        )
        .into()),
    }
}

/// The caller approves the request `user_code`, granting `scope` (within what their own
/// token may do; an assistant's token approves nothing).
pub async fn approve(
    tx: &mut Tx,
    caller: &Caller,
    user_code: &str,
    scope: &TokenScope,
) -> Result<RequestView, OAuthError> {
    if caller.grant.is_some() {
        return Err(IdentityError::InsufficientScope(
            "an assistant's token cannot approve a sign-in; approve with your own".into(),
        )
        .into());
    }
    if scope.apps.as_ref().is_some_and(Vec::is_empty) {
        return Err(IdentityError::invalid(
            "apps",
            "must name at least one app, or be left out for every app",
        )
        .into());
    }
    if !scope.within(&caller.scope) {
        return Err(IdentityError::InsufficientScope(format!(
            "this token may grant at most {}",
            caller.scope.describe()
        ))
        .into());
    }
    let r = pending(tx, user_code).await?;
    let json = serde_json::to_string(scope).expect("a scope serialises");
    if !rows::approve(tx, &r.id, &caller.user_id, &json).await? {
        return Err(
            IdentityError::SignInNotFound("the request was answered meanwhile".into()).into(),
        );
    }
    let me = actor(tx, caller).await?;
    audit::record(
        tx,
        &caller.account_id,
        Some(&me),
        Action::AssistantApproved,
        &r.client_name,
        &format!("scope {}; client {}", scope.describe(), r.client_id),
    )
    .await?;
    let mut v = view(&r, now_millis());
    v.status = "approved";
    Ok(v)
}

/// The caller declines the request `user_code`.
pub async fn deny(tx: &mut Tx, caller: &Caller, user_code: &str) -> Result<(), OAuthError> {
    let r = pending(tx, user_code).await?;
    rows::deny(tx, &r.id, now_millis()).await?;
    let _ = caller;
    Ok(())
}

/// What the token endpoint answers.
#[derive(Debug, Clone, Serialize)]
pub struct Tokens {
    /// The access token.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds it works.
    pub expires_in: i64,
    /// The refresh token (replaced on each use).
    pub refresh_token: String,
    /// The granted scope, in words.
    pub scope: String,
}

/// `grant_type=authorization_code`: the code, once, with its PKCE verifier.
pub async fn exchange(
    tx: &mut Tx,
    client_id: &str,
    code: &str,
    redirect_uri: Option<&str>,
    verifier: &str,
    resource: Option<&str>,
) -> Result<Tokens, OAuthError> {
    let invalid = || OAuthError::InvalidGrant("the code is unknown, used or expired".into());
    let r = rows::request_by(tx, "r.code_hash", &hash_token(code))
        .await?
        .ok_or_else(invalid)?;
    let now = now_millis();
    if r.code_used_at.is_some() || r.expires_at <= now {
        return Err(invalid());
    }
    if r.client_id != client_id {
        return Err(OAuthError::InvalidGrant(
            "the code was issued to another client".into(),
        ));
    }
    if redirect_uri.is_some_and(|u| u != r.redirect_uri) {
        return Err(OAuthError::InvalidGrant(
            "redirect_uri differs from the authorization request's".into(),
        ));
    }
    if resource.is_some_and(|res| res.trim_end_matches('/') != r.resource) {
        return Err(OAuthError::InvalidTarget(format!(
            "resource must be {}",
            r.resource
        )));
    }
    if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != r.code_challenge {
        return Err(OAuthError::InvalidGrant(
            "code_verifier does not match the code_challenge".into(),
        ));
    }
    if !rows::use_code(tx, &r.id, now).await? {
        return Err(invalid());
    }
    let (Some(user_id), Some(scope)) = (r.user_id.clone(), r.scope.clone()) else {
        return Err(invalid());
    };
    let grant = GrantRow {
        id: uuid::Uuid::new_v4().to_string(),
        user_id,
        client_id: r.client_id.clone(),
        client_name: r.client_name.clone(),
        scope,
        resource: r.resource.clone(),
        refresh_expires_at: now + REFRESH_DAYS * 86_400_000,
        created_at: now,
        last_used_at: None,
    };
    let refresh =
        Token::generate(REFRESH_PREFIX).map_err(|e| IdentityError::Random(e.to_string()))?;
    rows::insert_grant(tx, &grant, &refresh.hash()).await?;
    issue_access(tx, &grant, refresh).await
}

/// `grant_type=refresh_token`: a new access token and a new refresh token; the old refresh
/// token stops working.
pub async fn refresh(
    tx: &mut Tx,
    client_id: &str,
    refresh_token: &str,
) -> Result<Tokens, OAuthError> {
    let old = hash_token(refresh_token);
    let invalid = || {
        OAuthError::InvalidGrant(
            "the refresh token is unknown, replaced, revoked or expired".into(),
        )
    };
    let grant = rows::grant_by_refresh(tx, &old)
        .await?
        .ok_or_else(invalid)?;
    let now = now_millis();
    if grant.refresh_expires_at <= now {
        return Err(invalid());
    }
    if grant.client_id != client_id {
        return Err(OAuthError::InvalidGrant(
            "the refresh token was issued to another client".into(),
        ));
    }
    let fresh =
        Token::generate(REFRESH_PREFIX).map_err(|e| IdentityError::Random(e.to_string()))?;
    let expires = now + REFRESH_DAYS * 86_400_000;
    if !rows::rotate_refresh(tx, &grant.id, &old, &fresh.hash(), expires, now).await? {
        return Err(invalid());
    }
    issue_access(tx, &grant, fresh).await
}

async fn issue_access(tx: &mut Tx, grant: &GrantRow, refresh: Token) -> Result<Tokens, OAuthError> {
    let access = Token::generate(TOKEN_PREFIX).map_err(|e| IdentityError::Random(e.to_string()))?;
    let now = now_millis();
    token_rows::insert(
        tx,
        &TokenRow {
            hash: access.hash(),
            id: &uuid::Uuid::new_v4().to_string(),
            user_id: &grant.user_id,
            name: &format!("assistant: {}", grant.client_name),
            created_at: now,
            expires_at: Some(now + ACCESS_SECONDS * 1000),
            scope: Some(grant.scope.clone()),
            grant_id: Some(&grant.id),
        },
    )
    .await?;
    let scope: TokenScope = serde_json::from_str(&grant.scope).unwrap_or(TokenScope::FULL);
    Ok(Tokens {
        access_token: access.expose().to_owned(),
        token_type: "Bearer",
        expires_in: ACCESS_SECONDS,
        refresh_token: refresh.expose().to_owned(),
        scope: words_of_scope(&scope),
    })
}

/// A grant as its person lists it: `slipway-api`'s, the shape clients read.
pub use slipway_api::tokens::GrantInfo;

/// The caller's grants, newest first.
pub async fn grants(tx: &mut Tx, caller: &Caller) -> Result<Vec<GrantInfo>, OAuthError> {
    Ok(rows::grants_of(tx, &caller.user_id)
        .await?
        .into_iter()
        .map(|g| GrantInfo {
            id: g.id,
            client_name: g.client_name,
            client_id: g.client_id,
            scope: serde_json::from_str(&g.scope).unwrap_or(TokenScope::FULL),
            created_at: rfc3339(g.created_at),
            last_used_at: g.last_used_at.map(rfc3339),
        })
        .collect())
}

/// Revokes one of the caller's grants: its tokens stop working at the next request.
pub async fn revoke(tx: &mut Tx, caller: &Caller, id: &str) -> Result<(), OAuthError> {
    if caller.grant.is_some() {
        return Err(IdentityError::InsufficientScope(
            "an assistant's token cannot manage grants; use your own".into(),
        )
        .into());
    }
    let id = id.trim();
    let name = rows::grants_of(tx, &caller.user_id)
        .await?
        .into_iter()
        .find(|g| g.id == id)
        .map(|g| g.client_name)
        .ok_or_else(|| IdentityError::TokenNotFound(id.to_owned()))?;
    rows::delete_grant(tx, &caller.user_id, id).await?;
    let me = actor(tx, caller).await?;
    audit::record(
        tx,
        &caller.account_id,
        Some(&me),
        Action::AssistantRevoked,
        &name,
        "",
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_https_or_loopback() {
        assert!(check_redirect_uri("https://claude.ai/api/mcp/auth_callback").is_ok());
        assert!(check_redirect_uri("http://127.0.0.1:33418/callback").is_ok());
        assert!(check_redirect_uri("http://localhost/cb").is_ok());
        assert!(check_redirect_uri("http://[::1]:9/cb").is_ok());
        assert!(check_redirect_uri("http://example.org/cb").is_err());
        assert!(check_redirect_uri("https://example.org/cb#x").is_err());
        assert!(check_redirect_uri("javascript:alert(1)").is_err());
    }

    #[test]
    fn scope_words_map_both_ways() {
        let read = scope_of_words(Some("read")).unwrap();
        assert!(read.read_only && !read.secrets);
        assert_eq!(words_of_scope(&read), "read");
        assert_eq!(scope_of_words(None).unwrap(), TokenScope::FULL);
        assert_eq!(words_of_scope(&TokenScope::FULL), "read write secrets");
        assert!(matches!(
            scope_of_words(Some("read admin")),
            Err(OAuthError::InvalidScope(_))
        ));
    }

    #[test]
    fn user_codes_are_two_groups_of_four() {
        let code = new_user_code().unwrap();
        assert_eq!(code.len(), 9);
        assert_eq!(&code[4..5], "-");
        assert!(!code.contains('0') && !code.contains('O') && !code.contains('1'));
    }
}
