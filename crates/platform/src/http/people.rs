//! The account's people, invites and audit (docs/people.md): the platform's routes over
//! `slipway_identity`. Removing a person is the one place the two meet: identity revokes
//! their tokens and hides them, the platform takes their app roles away and hands the apps
//! they alone owned to the admin who removed them, in one transaction.
//!
//! - `GET /v1/account/users`, `GET /v1/account/me` (anyone)
//! - `PATCH|DELETE /v1/account/users/{id}` (admins)
//! - `GET|POST /v1/account/invites`, `DELETE /v1/account/invites/{id}` (admins)
//! - `POST /v1/invites/accept` (no token)
//! - `GET /v1/account/audit` (admins)
//! - `POST /v1/account/audit/tool-calls` (anyone: a tool call of their own `slipway mcp`)

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, patch, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};
use slipway_identity::{Person, audit, invites, people};

use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState, json_object};
use crate::model::Role;
use crate::store::access;

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/account/users", get(list_people))
        .route(
            "/account/users/{id}",
            patch(change_role).delete(remove_person),
        )
        .route("/account/me", get(me))
        .route("/account/invites", get(list_invites).post(invite))
        .route(
            "/account/invites/{id}",
            axum::routing::delete(revoke_invite),
        )
        .route("/invites/accept", post(accept))
        .route("/account/audit", get(read_audit))
        .route("/account/audit/tool-calls", post(report_tool_call))
}

/// `GET /v1/account/users`.
#[derive(Debug, Serialize)]
pub struct People {
    /// The account's people, by e-mail.
    pub users: Vec<Person>,
}

async fn list_people(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<People>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let users = people::list(&mut tx, &caller.account_id).await?;
    tx.commit().await?;
    Ok(Json(People { users }))
}

/// `GET /v1/account/me`: who the token belongs to, with their account role (the desktop
/// shows the People view to admins only; a sign-in checks the token with it).
async fn me(State(state): State<AppState>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let person = people::me(&mut tx, &caller).await?;
    tx.commit().await?;
    Ok(Json(json!({
        "id": person.id,
        "email": person.email,
        "name": person.name,
        "role": person.role,
        "account_id": caller.account_id,
        "joined_at": person.joined_at,
    })))
}

async fn change_role(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Person>, ApiError> {
    let fields = Fields::from_body(json_object(body)?, &["role"])?;
    let role = fields.required("role")?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    caller.require_account_wide("the account's people")?;
    let person = people::set_role(&mut tx, &caller, &id, &role).await?;
    tx.commit().await?;
    Ok(Json(person))
}

/// `DELETE /v1/account/users/{id}`.
#[derive(Debug, Serialize)]
pub struct Removed {
    /// Who was removed.
    pub removed: Person,
    /// The apps they alone owned, now owned by the caller.
    pub transferred_apps: Vec<people::TransferredApp>,
}

async fn remove_person(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Removed>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    caller.require_account_wide("the account's people")?;
    let person = people::removal(&mut tx, &caller, &id).await?;
    // Every app they own is locked before the owners are counted, in one order, so a
    // concurrent revoke of a co-owner cannot leave an app with no owner at all.
    for resource in access::owned(&mut tx, &person.id).await? {
        access::lock_resource(&mut tx, &resource).await?;
    }
    let mut transferred = Vec::new();
    for app in access::solely_owned(&mut tx, &person.id).await? {
        access::set_role(&mut tx, &app.app_id, &caller.user_id, Role::Owner).await?;
        transferred.push(people::TransferredApp {
            app_id: app.app_id,
            name: app.name,
        });
    }
    access::revoke_all(&mut tx, &person.id).await?;
    people::remove(&mut tx, &caller, &person, &transferred).await?;
    tx.commit().await?;
    tracing::info!(user_id = %person.id, apps = transferred.len(), "person removed");
    Ok(Json(Removed {
        removed: person,
        transferred_apps: transferred,
    }))
}

async fn invite(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<invites::NewInvite>), ApiError> {
    let fields = Fields::from_body(json_object(body)?, &["email", "role", "expires_in_days"])?;
    let email = fields.required("email")?;
    let role = fields.string("role")?;
    let days = fields.integer("expires_in_days")?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    caller.require_account_wide("the account's people")?;
    let made = invites::create(&mut tx, &caller, &email, role.as_deref(), days).await?;
    tx.commit().await?;
    tracing::info!(invite_id = %made.invite.id, "invite created");
    Ok((StatusCode::CREATED, Json(made)))
}

/// `GET /v1/account/invites`.
#[derive(Debug, Serialize)]
pub struct Invites {
    /// Pending invites, newest first.
    pub invites: Vec<invites::Invite>,
}

async fn list_invites(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Invites>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    caller.require_account_wide("the account's invites")?;
    let invites = invites::list(&mut tx, &caller).await?;
    tx.commit().await?;
    Ok(Json(Invites { invites }))
}

async fn revoke_invite(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    caller.require_account_wide("the account's invites")?;
    invites::revoke(&mut tx, &caller, &id).await?;
    tx.commit().await?;
    Ok(Json(json!({"id": id.trim(), "revoked": true})))
}

async fn accept(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<invites::Joined>), ApiError> {
    let fields = Fields::from_body(json_object(body)?, &["code", "name"])?;
    let code = fields.required("code")?;
    let name = fields.string("name")?;
    let mut tx = state.db().begin_write().await?;
    let joined = invites::accept(&mut tx, &code, name.as_deref()).await?;
    tx.commit().await?;
    tracing::info!(user_id = %joined.user_id, "invite accepted");
    Ok((StatusCode::CREATED, Json(joined)))
}

async fn read_audit(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<audit::Page>, ApiError> {
    let fields = Fields::from_query(query, &["limit", "page_token"])?;
    let limit = fields.integer("limit")?;
    let page_token = fields.string("page_token")?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    caller.require_account_wide("the account's audit")?;
    let page = audit::page(&mut tx, &caller, limit, page_token.as_deref()).await?;
    tx.commit().await?;
    Ok(Json(page))
}

/// A tool's or an error code's name: what `slipway mcp` reports, checked before it is kept.
fn is_word(raw: &str) -> bool {
    (1..=64).contains(&raw.len())
        && raw.starts_with(|c: char| c.is_ascii_lowercase())
        && raw
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `POST /v1/account/audit/tool-calls {tool, app_id?, client?, error?}`: the caller's own
/// `slipway mcp` (the tool server on their machine) reports a tool call it ran with their
/// token, so that the account's audit holds every assistant's calls, remote (`/mcp` records
/// its own) and local alike. Any token may report, a read-only one too (a report is a
/// record of what was done, not a change); what it says is the caller's own word.
async fn report_tool_call(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, ApiError> {
    let fields = Fields::from_body(json_object(body)?, &["tool", "app_id", "client", "error"])?;
    let tool = fields.required("tool")?;
    if !is_word(&tool) {
        return Err(ApiError::invalid(
            "tool",
            "must be a tool's name: 1-64 lower-case letters, digits and underscores, starting with a letter",
        ));
    }
    let app_id = fields
        .string("app_id")?
        .map(|raw| super::apps::parse_app_id(&raw))
        .transpose()?;
    let client = fields.string("client")?;
    if let Some(name) = &client
        && (name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control))
    {
        return Err(ApiError::invalid(
            "client",
            "must be 1-100 characters without control characters",
        ));
    }
    let error = fields.string("error")?;
    if error.as_deref().is_some_and(|e| !is_word(e)) {
        return Err(ApiError::invalid(
            "error",
            "must be an error code: 1-64 lower-case letters, digits and underscores, starting with a letter",
        ));
    }
    let (tx, caller) = state.begin_as(&headers, Access::Read).await?;
    tx.commit().await?;
    let done = slipway_identity::tokens::Done {
        caller,
        action: audit::Action::ToolCalled,
        subject: tool,
        detail: format!(
            "app {}; client {} (slipway mcp); {}",
            app_id.as_deref().unwrap_or("none"),
            client.as_deref().unwrap_or("unnamed"),
            error.as_deref().unwrap_or("success"),
        ),
    };
    slipway_identity::tokens::record(state.db(), &[done]).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::is_word;

    #[test]
    fn tool_names_and_error_codes_are_words() {
        assert!(is_word("get_app_status"));
        assert!(is_word("permission_denied"));
        assert!(!is_word(""));
        assert!(!is_word("Get"));
        assert!(!is_word("_x"));
        assert!(!is_word("rm -rf"));
        assert!(!is_word(&"a".repeat(65)));
    }
}
