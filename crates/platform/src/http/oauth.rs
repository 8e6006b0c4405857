//! OAuth 2.1 for assistants: the platform as the authorization server of `/mcp` (the rules are
//! `slipway_identity::oauth`; docs/mcp.md).
//!
//! - `GET /.well-known/oauth-authorization-server` (RFC 8414)
//! - `POST /oauth/register` (RFC 7591: public clients, PKCE)
//! - `GET /oauth/authorize` → 302 to the request's page `GET /oauth/authorize/{page}`, where the
//!   person picks the access and reads the code to approve; once approved there, the page
//!   sends the browser back with the code, `state` and `iss` (RFC 9207)
//! - `POST /oauth/token` (`authorization_code` with `code_verifier`, `refresh_token`)
//! - `GET /v1/oauth/requests/{code}`, `POST /v1/oauth/requests/{code}/approve|deny`: the signed-in
//!   person's side (`slipway grants approve CODE`)
//! - `GET /v1/grants`, `DELETE /v1/grants/{id}`: what they allowed, and revoking it

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Form, Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use slipway_api::{GrantInfo, TokenScope};
use slipway_identity::oauth::{self, Authorize, OAuthError, Page};

use super::error::ApiError;
use super::extract::Fields;
use super::sso::{escape, page};
use super::{Access, AppState, cookies, json_object};

/// The OAuth routes outside `/v1`.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/oauth/register", post(register))
        .route("/oauth/authorize", get(authorize))
        .route("/oauth/authorize/{page}", get(show).post(choose))
        .route("/oauth/token", post(token))
}

/// The person's side, relative to `/v1`.
pub(crate) fn v1_router() -> Router<AppState> {
    Router::new()
        .route("/oauth/requests/{code}", get(find))
        .route("/oauth/requests/{code}/approve", post(approve))
        .route("/oauth/requests/{code}/deny", post(deny))
        .route("/grants", get(list_grants))
        .route("/grants/{id}", delete(revoke_grant))
}

/// The issuer: the platform's base address.
fn issuer(state: &AppState, headers: &HeaderMap) -> String {
    state.mcp().base(headers)
}

/// The one resource tokens are issued for.
fn resource(state: &AppState, headers: &HeaderMap) -> String {
    format!("{}/mcp", issuer(state, headers))
}

/// The authorization server's metadata (RFC 8414).
pub(crate) fn server_metadata(issuer: &str) -> Value {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/oauth/authorize"),
        "token_endpoint": format!("{issuer}/oauth/token"),
        "registration_endpoint": format!("{issuer}/oauth/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": oauth::SCOPES,
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
        "service_documentation": format!("{issuer}/v1/openapi.json"),
    })
}

async fn metadata(State(state): State<AppState>, headers: HeaderMap) -> Response {
    (
        [(header::CACHE_CONTROL, "max-age=3600")],
        Json(server_metadata(&issuer(&state, &headers))),
    )
        .into_response()
}

/// An OAuth error answer: `{error, error_description}`.
fn oauth_error(e: &OAuthError) -> Response {
    let status = match e {
        OAuthError::InvalidClient(_) => StatusCode::UNAUTHORIZED,
        OAuthError::Identity(i) => {
            StatusCode::from_u16(i.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        }
        _ => StatusCode::BAD_REQUEST,
    };
    if let OAuthError::Identity(slipway_identity::IdentityError::Database(db)) = e {
        tracing::error!(error = %slipway_server::sql_error::loggable(db), "an OAuth request failed");
    }
    let description = if status.is_server_error() {
        "the server failed; try again".to_owned()
    } else {
        e.to_string()
    };
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        Json(json!({"error": e.code(), "error_description": description})),
    )
        .into_response()
}

/// `POST /oauth/register`.
async fn register(State(state): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    let map = match json_object(body) {
        Ok(map) => map,
        Err(e) => return e.into_response(),
    };
    let uris: Vec<String> = match map.get("redirect_uris") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => {
            return oauth_error(&OAuthError::InvalidClientMetadata(
                "redirect_uris: a list of addresses is required".into(),
            ));
        }
    };
    if let Some(method) = map
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        && method != "none"
    {
        return oauth_error(&OAuthError::InvalidClientMetadata(
            "token_endpoint_auth_method: only public clients (none) are registered; PKCE protects their codes".into(),
        ));
    }
    let name = map.get("client_name").and_then(Value::as_str);
    let outcome = async {
        let mut tx = state.db().begin_write().await?;
        let client = oauth::register(&mut tx, name, &uris).await?;
        tx.commit().await?;
        Ok::<_, OAuthError>(client)
    }
    .await;
    match outcome {
        Ok(client) => (
            StatusCode::CREATED,
            [(header::CACHE_CONTROL, "no-store")],
            Json(json!({
                "client_id": client.client_id,
                "client_name": client.client_name,
                "redirect_uris": client.redirect_uris,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "client_id_issued_at": slipway_server::clock::now_millis() / 1000,
            })),
        )
            .into_response(),
        Err(e) => oauth_error(&e),
    }
}

#[derive(Debug, Deserialize)]
struct AuthorizeQuery {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    state: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    scope: Option<String>,
    resource: Option<String>,
}

/// `GET /oauth/authorize`: a request no client can be sent back for is a page; one with a
/// known client and redirect is kept, and the browser goes to its page.
async fn authorize(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<AuthorizeQuery>,
) -> Response {
    let refused = |message: &str| page(400, "This sign-in link does not work", message);
    let Some(client_id) = q.client_id.as_deref() else {
        return refused("client_id is missing: start again from the assistant.");
    };
    let client = match known_client(&state, client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => return refused("The assistant is not registered here: start again from it."),
        Err(e) => return refused(&e.to_string()),
    };
    let redirect = match oauth::redirect_of(&client, q.redirect_uri.as_deref()) {
        Ok(uri) => uri,
        Err(e) => return refused(&e.to_string()),
    };
    // From here on, errors go back to the client (RFC 6749 §4.1.2.1).
    let back = |code: &str, description: &str| {
        let mut url = url::Url::parse(&redirect).expect("a registered redirect parses");
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("error", code);
            pairs.append_pair("error_description", description);
            if let Some(s) = &q.state {
                pairs.append_pair("state", s);
            }
            pairs.append_pair("iss", &issuer(&state, &headers));
        }
        (StatusCode::FOUND, [(header::LOCATION, url.to_string())]).into_response()
    };
    if q.response_type.as_deref() != Some("code") {
        return back("unsupported_response_type", "response_type must be code");
    }
    if q.code_challenge_method.as_deref() != Some("S256") {
        return back(
            "invalid_request",
            "code_challenge_method must be S256 (PKCE)",
        );
    }
    let request = Authorize {
        client,
        redirect_uri: Some(redirect.clone()),
        state: q.state.clone(),
        code_challenge: q.code_challenge.clone().unwrap_or_default(),
        resource: q
            .resource
            .clone()
            .unwrap_or_else(|| resource(&state, &headers)),
        scope: q.scope.clone(),
    };
    let outcome = async {
        let mut tx = state.db().begin_write().await?;
        let started = oauth::start(&mut tx, &request, &resource(&state, &headers)).await?;
        tx.commit().await?;
        Ok::<_, OAuthError>(started)
    }
    .await;
    match outcome {
        Ok(started) => (
            StatusCode::FOUND,
            [(
                header::LOCATION,
                format!("/oauth/authorize/{}", started.page),
            )],
        )
            .into_response(),
        Err(e) => back(e.code(), &e.to_string()),
    }
}

/// The client `id`: registered here, or (an https URL) read from its metadata document.
async fn known_client(state: &AppState, id: &str) -> Result<Option<oauth::Client>, OAuthError> {
    let mut tx = state.db().begin_read().await?;
    let found = oauth::client(&mut tx, id).await?;
    tx.commit().await?;
    if found.is_some() || !id.starts_with("https://") {
        return Ok(found);
    }
    let client = metadata_document(id).await?;
    let mut tx = state.db().begin_write().await?;
    oauth::save_client(&mut tx, &client).await?;
    tx.commit().await?;
    Ok(Some(client))
}

/// A client ID metadata document: JSON at the client id's https address, naming the same
/// client id, its name and its redirect URIs.
async fn metadata_document(url: &str) -> Result<oauth::Client, OAuthError> {
    let invalid = |why: String| {
        OAuthError::InvalidClient(format!("the client's metadata document at {url}: {why}"))
    };
    let response = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| invalid(e.to_string()))?
        .get(url)
        .send()
        .await
        .map_err(|e| invalid(e.to_string()))?;
    if !response.status().is_success() {
        return Err(invalid(format!("answered {}", response.status())));
    }
    let bytes = response.bytes().await.map_err(|e| invalid(e.to_string()))?;
    if bytes.len() > 64 * 1024 {
        return Err(invalid("is over 64 KiB".into()));
    }
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    if doc.get("client_id").and_then(Value::as_str) != Some(url) {
        return Err(invalid("its client_id is not its own address".into()));
    }
    let uris: Vec<String> = doc
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if uris.is_empty() {
        return Err(invalid("it names no redirect_uris".into()));
    }
    for uri in &uris {
        oauth::check_redirect_uri(uri)?;
    }
    Ok(oauth::Client {
        client_id: url.to_owned(),
        client_name: doc
            .get("client_name")
            .and_then(Value::as_str)
            .unwrap_or(url)
            .chars()
            .take(100)
            .collect(),
        redirect_uris: uris,
    })
}

/// `GET /oauth/authorize/{page}`: the waiting page, or the way back to the client.
async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(page_id): Path<String>,
) -> Response {
    let outcome = async {
        let mut tx = state.db().begin_write().await?;
        let shown = oauth::page(&mut tx, &page_id, &issuer(&state, &headers)).await?;
        tx.commit().await?;
        Ok::<_, OAuthError>(shown)
    }
    .await;
    match outcome {
        Ok(Page::Redirect(to)) => (
            StatusCode::FOUND,
            [
                (header::LOCATION, to),
                (header::CACHE_CONTROL, "no-store".into()),
            ],
        )
            .into_response(),
        Ok(Page::Gone) => page(
            410,
            "This sign-in has ended",
            "It was used, declined or not approved in time. Start again from the assistant.",
        ),
        Ok(Page::Waiting(view)) => {
            let secure = state.mcp().secure();
            let key =
                cookies::get(&headers, cookies::FORM, secure).unwrap_or_else(cookies::new_key);
            let mut shown = waiting(&page_id, &view, &key, state.sso().is_some());
            // The form's key, which a post of the form must repeat: another site cannot make
            // a browser send this `SameSite=Strict` cookie with its own post.
            shown.headers_mut().append(
                header::SET_COOKIE,
                cookies::set(cookies::FORM, &key, secure, true, 900),
            );
            shown
        }
        Err(e) => page(400, "This sign-in does not work", &e.to_string()),
    }
}

/// The waiting page: what asks, for what, and how to approve it: by signing in with single
/// sign-on where the platform has it, or where the person is signed in already (the code). It
/// looks every 3 seconds whether the request was answered elsewhere, and then reloads (without
/// script, the whole page reloads, as the form's choice is kept by the server once posted).
fn waiting(page_id: &str, view: &oauth::RequestView, key: &str, sso: bool) -> Response {
    let asked = &view.asked;
    let checked = |on: bool| if on { " checked" } else { "" };
    let apps = asked
        .apps
        .as_ref()
        .map(|a| a.join(", "))
        .unwrap_or_default();
    let redirect_host = url::Url::parse(&view.redirect_uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<noscript><meta http-equiv=\"refresh\" content=\"3\"></noscript><title>Connect {client} · Slipway</title>\
<style>body{{font:16px system-ui,sans-serif;max-width:38em;margin:3em auto;padding:0 1em}}\
code,.code{{font:600 1.4em ui-monospace,monospace;letter-spacing:.1em}}fieldset{{margin:1em 0}}</style>\
</head><body><main><h1>Connect {client} to Slipway</h1>\
<p><strong>{client}</strong> (it will return to <strong>{host}</strong>) asks to use Slipway's tools as you.</p>\
<h2>Approve it where you are signed in</h2>\
<p>Your code: <span class=\"code\" id=\"user-code\" data-code=\"{code}\">{code}</span></p>\
<p>In a terminal: <code>slipway grants approve {code}</code>. This page continues by itself \
once you approve or decline; the code works until {expires}.</p>\
<form method=\"post\" action=\"/oauth/authorize/{page}\"><h2>Choose what it may do</h2>\
<fieldset><legend>Access</legend>\
<label><input type=\"radio\" name=\"access\" value=\"read\"{ro}> Read only</label><br>\
<label><input type=\"radio\" name=\"access\" value=\"write\"{rw}> Read and change (build, deploy, delete)</label>\
</fieldset><fieldset><legend>Secrets</legend>\
<label><input type=\"checkbox\" name=\"secrets\" value=\"on\"{sec}> Read and write secret values</label>\
</fieldset><p><label for=\"apps\">Only these apps (names, comma-separated; empty: all your apps)</label><br>\
<input id=\"apps\" name=\"apps\" value=\"{apps}\" size=\"40\"></p>\
<input type=\"hidden\" name=\"key\" value=\"{key}\">{sso}\
<p><button type=\"submit\">Ask for this access</button> (then approve it with the code)</p></form>\
<script>setInterval(async()=>{{try{{const r=await fetch(location.href,{{method:'HEAD',redirect:'manual',cache:'no-store'}});\
if(r.type==='opaqueredirect'||r.status===410)location.reload()}}catch(e){{}}}},3000)</script></main></body></html>",
        client = escape(&view.client_name),
        host = escape(&redirect_host),
        code = escape(&view.user_code),
        expires = escape(&view.expires_at),
        page = escape(page_id),
        ro = checked(asked.read_only),
        rw = checked(!asked.read_only),
        sec = checked(asked.secrets),
        apps = escape(&apps),
        key = escape(key),
        sso = if sso {
            "<p><button type=\"submit\" name=\"then\" value=\"sso\">Sign in with single sign-on and allow this</button></p>"
        } else {
            ""
        },
    );
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
            (header::CACHE_CONTROL, "no-store".to_owned()),
            // Never inside another site's frame, where a click could be stolen.
            (
                header::CONTENT_SECURITY_POLICY,
                "frame-ancestors 'none'".to_owned(),
            ),
            (header::X_FRAME_OPTIONS, "DENY".to_owned()),
        ],
        body,
    )
        .into_response()
}

#[derive(Debug, Deserialize)]
struct Choice {
    access: Option<String>,
    secrets: Option<String>,
    apps: Option<String>,
    /// `sso`: sign in with single sign-on next, which approves the choice.
    then: Option<String>,
    /// The page's form key (its cookie's, [`cookies::FORM`]).
    key: Option<String>,
}

/// `POST /oauth/authorize/{page}`: the page's choice, shown to whoever approves; with
/// `then=sso`, the person signs in next and that approves it.
async fn choose(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(page_id): Path<String>,
    Form(choice): Form<Choice>,
) -> Response {
    let secure = state.mcp().secure();
    let sso = match choice.then.as_deref() {
        Some("sso") => {
            let Some(sso) = state.sso() else {
                return page(
                    404,
                    "Single sign-on is not set up",
                    "Approve this request with its code instead.",
                );
            };
            if cookies::get(&headers, cookies::FORM, secure)
                .is_none_or(|k| Some(&k) != choice.key.as_ref())
            {
                return page(
                    403,
                    "Open the sign-in page again",
                    "This form was not sent from the page this browser was shown. Start again from the assistant.",
                );
            }
            Some(sso)
        }
        _ => None,
    };
    let apps: Vec<String> = choice
        .apps
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .take(100)
        .collect();
    let asked = TokenScope {
        read_only: choice.access.as_deref() != Some("write"),
        apps: (!apps.is_empty()).then_some(apps),
        secrets: choice.secrets.as_deref() == Some("on"),
    };
    let outcome = async {
        let mut tx = state.db().begin_write().await?;
        oauth::choose(&mut tx, &page_id, &asked).await?;
        tx.commit().await?;
        Ok::<_, OAuthError>(())
    }
    .await;
    match outcome {
        Ok(()) => match sso {
            Some(sso) => {
                // The sign-in approves what was chosen here, and only when it comes back to
                // this browser (the key in its cookie; `Lax`, so the provider's redirect back
                // carries it).
                let browser = cookies::new_key();
                let mut answer =
                    super::sso::respond(sso.start_approval(&page_id, asked, &browser).await);
                if answer.status() == StatusCode::FOUND {
                    *answer.status_mut() = StatusCode::SEE_OTHER;
                    answer.headers_mut().append(
                        header::SET_COOKIE,
                        cookies::set(cookies::APPROVAL, &browser, secure, false, 600),
                    );
                }
                answer
            }
            None => (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, format!("/oauth/authorize/{page_id}"))],
            )
                .into_response(),
        },
        Err(e) => page(400, "This sign-in does not work", &e.to_string()),
    }
}

/// A person signed in with single sign-on on the request `page_id`'s page: they approve
/// `chosen`, the scope they chose there as they left (its app names are theirs to see), and
/// the browser goes back to the page, which sends it on to the assistant with the code.
pub(crate) async fn approve_signed_in(
    state: &AppState,
    page_id: &str,
    caller: &crate::model::Caller,
    chosen: TokenScope,
) -> Response {
    let outcome = async {
        let mut tx = state.db().begin_write().await?;
        let request = oauth::find_page(&mut tx, page_id)
            .await
            .map_err(from_oauth)?;
        let apps = match chosen.apps {
            None => None,
            Some(named) => Some(super::tokens::app_ids(&mut tx, caller, &named).await?),
        };
        let scope = TokenScope { apps, ..chosen };
        oauth::approve(&mut tx, caller, &request.user_code, &scope)
            .await
            .map_err(from_oauth)?;
        tx.commit().await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match outcome {
        Ok(()) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, format!("/oauth/authorize/{page_id}"))],
        )
            .into_response(),
        Err(e) => {
            if e.status().is_server_error() {
                tracing::error!(error = %super::error::loggable(&e), "a single sign-on approval failed");
            }
            page(
                e.status().as_u16(),
                "The assistant was not connected",
                &e.body().error.message,
            )
        }
    }
}

#[derive(Debug, Deserialize)]
struct TokenForm {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    resource: Option<String>,
}

/// `POST /oauth/token`.
async fn token(State(state): State<AppState>, Form(form): Form<TokenForm>) -> Response {
    let required = |value: Option<String>, name: &str| {
        value
            .filter(|v| !v.is_empty())
            .ok_or_else(|| OAuthError::InvalidRequest(format!("{name} is required")))
    };
    let outcome = async {
        let client_id = required(form.client_id.clone(), "client_id")?;
        let mut tx = state.db().begin_write().await?;
        let tokens = match form.grant_type.as_deref() {
            Some("authorization_code") => {
                let code = required(form.code.clone(), "code")?;
                let verifier = required(form.code_verifier.clone(), "code_verifier")?;
                oauth::exchange(
                    &mut tx,
                    &client_id,
                    &code,
                    form.redirect_uri.as_deref(),
                    &verifier,
                    form.resource.as_deref(),
                )
                .await?
            }
            Some("refresh_token") => {
                let refresh = required(form.refresh_token.clone(), "refresh_token")?;
                oauth::refresh(&mut tx, &client_id, &refresh).await?
            }
            _ => return Err(OAuthError::UnsupportedGrantType),
        };
        tx.commit().await?;
        Ok(tokens)
    }
    .await;
    match outcome {
        Ok(tokens) => (
            [
                (header::CACHE_CONTROL, "no-store"),
                (header::PRAGMA, "no-cache"),
            ],
            Json(tokens),
        )
            .into_response(),
        Err(e) => oauth_error(&e),
    }
}

/// `GET /v1/oauth/requests/{code}`.
async fn find(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(code): Path<String>,
) -> Result<Json<oauth::RequestView>, ApiError> {
    let (mut tx, _caller) = state.begin_as(&headers, Access::Read).await?;
    let view = oauth::find(&mut tx, &code).await.map_err(from_oauth)?;
    tx.commit().await?;
    Ok(Json(view))
}

/// `POST /v1/oauth/requests/{code}/approve {read_only?, apps?, secrets?}`: the page's choice
/// when a field is left out.
async fn approve(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(code): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<oauth::RequestView>, ApiError> {
    let fields = Fields::from_body(json_object(body)?, &["read_only", "apps", "secrets"])?;
    let apps = fields.strings("apps", 100)?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let asked = oauth::find(&mut tx, &code).await.map_err(from_oauth)?.asked;
    let apps = match apps.or(asked.apps) {
        None => None,
        Some(named) => Some(super::tokens::app_ids(&mut tx, &caller, &named).await?),
    };
    let scope = TokenScope {
        read_only: fields.boolean("read_only", asked.read_only)?,
        apps,
        secrets: fields.boolean("secrets", asked.secrets)?,
    };
    let view = oauth::approve(&mut tx, &caller, &code, &scope)
        .await
        .map_err(from_oauth)?;
    tx.commit().await?;
    Ok(Json(view))
}

/// `POST /v1/oauth/requests/{code}/deny`.
async fn deny(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(code): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    oauth::deny(&mut tx, &caller, &code)
        .await
        .map_err(from_oauth)?;
    tx.commit().await?;
    Ok(Json(
        json!({"user_code": code.trim().to_ascii_uppercase(), "denied": true}),
    ))
}

/// `GET /v1/grants`.
#[derive(Debug, serde::Serialize)]
struct Grants {
    grants: Vec<GrantInfo>,
}

async fn list_grants(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Grants>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let grants = oauth::grants(&mut tx, &caller).await.map_err(from_oauth)?;
    tx.commit().await?;
    Ok(Json(Grants { grants }))
}

/// `DELETE /v1/grants/{id}`.
async fn revoke_grant(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    oauth::revoke(&mut tx, &caller, &id)
        .await
        .map_err(from_oauth)?;
    tx.commit().await?;
    Ok(Json(json!({"id": id.trim(), "revoked": true})))
}

/// The person's side answers with the API's errors.
fn from_oauth(e: OAuthError) -> ApiError {
    match e {
        OAuthError::Identity(e) => e.into(),
        other => ApiError::invalid("user_code", other.to_string()),
    }
}
