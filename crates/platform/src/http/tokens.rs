//! Personal tokens (docs/people.md): everybody lists, creates and revokes their own.
//!
//! - `GET /v1/tokens` → `{tokens: [{id, name, created_at, expires_at, last_used_at, current}]}`
//! - `POST /v1/tokens {name, expires_in_days}` → 201 `{id, name, token, created_at, expires_at}`
//! - `DELETE /v1/tokens/{id}` → `{id, revoked: true}`

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{delete, get};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};
use slipway_identity::tokens::{self, NewToken, TokenInfo};

use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState, json_object};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tokens", get(list).post(create))
        .route("/tokens/{id}", delete(revoke))
}

/// `GET /v1/tokens`.
#[derive(Debug, Serialize)]
pub struct Tokens {
    /// The caller's tokens, newest first; never a secret.
    pub tokens: Vec<TokenInfo>,
}

async fn list(State(state): State<AppState>, headers: HeaderMap) -> Result<Json<Tokens>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let tokens = tokens::list(&mut tx, &caller).await?;
    tx.commit().await?;
    Ok(Json(Tokens { tokens }))
}

async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<NewToken>), ApiError> {
    let fields = Fields::from_body(json_object(body)?, &["name", "expires_in_days"])?;
    let name = fields.required("name")?;
    let days = fields.integer("expires_in_days")?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let made = tokens::create(&mut tx, &caller, &name, days).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(made)))
}

async fn revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    tokens::revoke(&mut tx, &caller, &id).await?;
    tx.commit().await?;
    Ok(Json(json!({"id": id.trim(), "revoked": true})))
}
