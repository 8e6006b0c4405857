//! Single sign-on's routes (docs/people.md): whether the platform has it, and the three
//! steps of a sign-in. `/auth/oidc/start` and `/callback` are browser pages (redirects, or a
//! page that says what went wrong); `/auth/oidc/exchange` is the client's JSON call.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use slipway_identity::oidc::{CallbackQuery, Outcome, SignedIn};

use super::error::ApiError;
use super::extract::Fields;
use super::{AppState, json_object};

/// `GET /v1/auth/sso`, relative to `/v1`.
pub fn v1_router() -> Router<AppState> {
    Router::new().route("/auth/sso", get(status))
}

/// The browser routes, at the root.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/oidc/start", get(start))
        .route("/auth/oidc/callback", get(callback))
        .route("/auth/oidc/exchange", post(exchange))
}

async fn status(State(state): State<AppState>) -> Json<Value> {
    Json(match state.sso() {
        Some(sso) => json!({"enabled": true, "issuer": sso.issuer()}),
        None => json!({"enabled": false, "issuer": null}),
    })
}

fn not_configured() -> Response {
    page(
        404,
        "Single sign-on is not set up",
        "This platform was started without --oidc-issuer; sign in with a token or an invite.",
    )
}

async fn start(
    State(state): State<AppState>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let Some(sso) = state.sso() else {
        return not_configured();
    };
    let pairs = query.map(|Query(q)| q).unwrap_or_default();
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    respond(
        sso.start(get("return_to"), get("state"), get("challenge"))
            .await,
    )
}

async fn callback(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    query: Result<Query<CallbackQuery>, QueryRejection>,
) -> Response {
    let Some(sso) = state.sso() else {
        return not_configured();
    };
    let query = query.map(|Query(q)| q).unwrap_or_default();
    let browser = super::cookies::get(&headers, super::cookies::APPROVAL, state.mcp().secure());
    match sso.callback(state.db(), query, browser.as_deref()).await {
        Outcome::Approve {
            page,
            caller,
            scope,
        } => super::oauth::approve_signed_in(&state, &page, &caller, scope).await,
        Outcome::Confirmed { purpose, caller } => {
            super::secret_page::signed_in(&state, &purpose, &caller, browser.as_deref())
        }
        other => respond(other),
    }
}

async fn exchange(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<SignedIn>, ApiError> {
    // The body is checked first: a malformed request is a 400 whether or not SSO is set up.
    let fields = Fields::from_body(json_object(body)?, &["code", "verifier"])?;
    let code = fields.required("code")?;
    let verifier = fields.required("verifier")?;
    let sso = state
        .sso()
        .ok_or_else(|| ApiError::NotFound("this platform has no single sign-on".into()))?;
    let mut tx = state.db().begin_write().await?;
    let signed_in = sso.exchange(&mut tx, &code, &verifier).await?;
    tx.commit().await?;
    tracing::info!(user_id = %signed_in.user_id, "signed in with single sign-on");
    Ok(Json(signed_in))
}

pub(crate) fn respond(outcome: Outcome) -> Response {
    match outcome {
        Outcome::Redirect(to) => (StatusCode::FOUND, [(header::LOCATION, to)]).into_response(),
        Outcome::Page {
            status,
            title,
            message,
        } => page(status, &title, &message),
        // Only a callback approves, and it answers that itself.
        Outcome::Approve { .. } | Outcome::Confirmed { .. } => {
            page(500, "Sign-in failed", "the sign-in went astray")
        }
    }
}

/// A small self-contained page; every text is escaped.
pub(crate) fn page(status: u16, title: &str, message: &str) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t} · Slipway</title>\
         <style>body{{font:16px system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}}</style>\
         </head><body><h1>{t}</h1><p>{m}</p></body></html>",
        t = escape(title),
        m = escape(message)
    );
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
