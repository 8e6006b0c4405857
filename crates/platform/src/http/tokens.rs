//! Personal tokens (docs/people.md): everybody lists, creates and revokes their own.
//!
//! - `GET /v1/tokens` → `{tokens: [{id, name, created_at, expires_at, last_used_at, current}]}`
//! - `POST /v1/tokens {name, expires_in_days, read_only, apps, secrets}` → 201
//!   `{id, name, token, created_at, expires_at, scope}`: `apps` are names or ids of apps the
//!   caller sees; a token made with a narrower token asks for no more than it has
//! - `DELETE /v1/tokens/{id}` → `{id, revoked: true}`

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{delete, get};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};
use slipway_api::TokenScope;
use slipway_identity::tokens::{self, NewToken, TokenInfo};

use crate::store::apps;

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
    let fields = Fields::from_body(
        json_object(body)?,
        &["name", "expires_in_days", "read_only", "apps", "secrets"],
    )?;
    let name = fields.required("name")?;
    let days = fields.integer("expires_in_days")?;
    let read_only = fields.boolean("read_only", false)?;
    let secrets = fields.boolean("secrets", true)?;
    let apps = fields.strings("apps", MAX_SCOPED_APPS)?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let apps = match apps {
        None => None,
        Some(named) => Some(app_ids(&mut tx, &caller, &named).await?),
    };
    let scope = TokenScope {
        read_only,
        apps,
        secrets,
    };
    let made = tokens::create(&mut tx, &caller, &name, days, &scope).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(made)))
}

/// How many apps one token may be limited to.
const MAX_SCOPED_APPS: usize = 100;

/// The ids of the apps `named` (by id or by name), each one the caller can see; the first
/// that is not is a 400 on `apps`. Ids are what is kept: a renamed app stays in the scope.
pub(crate) async fn app_ids(
    tx: &mut crate::db::Tx,
    caller: &crate::model::Caller,
    named: &[String],
) -> Result<Vec<String>, ApiError> {
    let mut ids: Vec<String> = Vec::new();
    for raw in named {
        let raw = raw.trim();
        let id = match uuid::Uuid::parse_str(raw) {
            Ok(id) => Some(id.to_string()),
            Err(_) => apps::id_by_name(tx, raw).await?,
        };
        let visible = match &id {
            Some(id) => apps::get_visible(tx, caller, id).await?.is_some(),
            None => false,
        };
        match id {
            Some(id) if visible => {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            _ => {
                return Err(ApiError::invalid(
                    "apps",
                    format!("{raw:?} is not an app you can see (give app names or ids)"),
                ));
            }
        }
    }
    Ok(ids)
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
