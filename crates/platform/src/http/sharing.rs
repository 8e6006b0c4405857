//! App sharing: who holds which role on an app's access-control resource, and changing it.
//!
//! - `GET /v1/apps/{app_id}/grantable-roles`: the roles the caller may grant
//!   ([`policy::grantable`]: owner → owner, editor, viewer; editor → editor, viewer;
//!   viewer → none).
//! - `GET /v1/apps/{app_id}/permissions`: every grant (`user_id`, `email`, `name`, `role`).
//! - `POST /v1/apps/{app_id}/permissions` `{"user_id", "role"}`: gives a member of the
//!   account that role (their one role on the app; an earlier one is replaced).
//! - `POST /v1/apps/{app_id}/permissions/revoke` `{"user_id", "role"}`: takes it away.
//!
//! (The account's people, `GET /v1/account/users` and `/v1/account/me`, are in
//! [`super::people`].)
//!
//! `user_id` is a user UUID or an e-mail address of an account member. A caller may grant or
//! revoke only roles in its grantable set, may not change or revoke the role of a user who
//! ranks above the best role it may grant, and the last owner of an app can never be
//! removed or demoted (409).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

use super::apps::{authorized_app, parse_app_id};
use super::error::ApiError;
use super::{Access, AppState, json_object};
use crate::db::Tx;
use crate::model::Caller;
use crate::model::Role;
use crate::policy::{self, AppAction};
use crate::store::access::{self, Permission};
use crate::store::accounts::{self, Member};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/grantable-roles", get(grantable_roles))
        .route("/apps/{app_id}/permissions", get(permissions).post(grant))
        .route("/apps/{app_id}/permissions/revoke", post(revoke))
}

/// `GET …/grantable-roles`.
#[derive(Debug, Serialize)]
pub struct GrantableRoles {
    /// The caller's own role on the app.
    pub your_role: &'static str,
    /// Roles the caller may grant, strongest first.
    pub roles: Vec<&'static str>,
}

/// `GET …/permissions`.
#[derive(Debug, Serialize)]
pub struct Permissions {
    /// Every grant, strongest role first.
    pub users: Vec<Permission>,
}

/// The answer to a grant or revoke.
#[derive(Debug, Serialize)]
pub struct RoleChange {
    /// What happened, in words.
    pub message: String,
    /// The user concerned.
    pub user_id: String,
    /// Their e-mail.
    pub email: String,
    /// Their role on the app afterwards (null when they hold none).
    pub role: Option<&'static str>,
}

async fn grantable_roles(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<GrantableRoles>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (_, role) = authorized_app(&mut tx, &caller, &app_id, AppAction::ViewPermissions).await?;
    tx.commit().await?;
    Ok(Json(GrantableRoles {
        your_role: role.as_str(),
        roles: policy::grantable(role).iter().map(|r| r.as_str()).collect(),
    }))
}

async fn permissions(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<Permissions>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ViewPermissions).await?;
    let users = access::list_grants(&mut tx, &app.id).await?;
    tx.commit().await?;
    Ok(Json(Permissions { users }))
}

/// A checked grant or revoke request.
struct RoleRequest {
    member: Member,
    role: Role,
}

async fn role_request(
    tx: &mut Tx,
    caller: &Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<RoleRequest, ApiError> {
    let body = json_object(body)?;
    if let Some(unknown) = body
        .keys()
        .find(|k| !["user_id", "role"].contains(&k.as_str()))
    {
        return Err(ApiError::invalid(
            unknown,
            "unknown field; allowed fields are user_id, role",
        ));
    }
    let text = |name: &str| match body.get(name) {
        None | Some(serde_json::Value::Null) => Err(ApiError::invalid(name, "is required")),
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        Some(serde_json::Value::String(_)) => Err(ApiError::invalid(name, "must not be blank")),
        Some(_) => Err(ApiError::invalid(name, "must be a string")),
    };
    let role_name = text("role")?;
    let role = Role::parse(&role_name)
        .ok_or_else(|| ApiError::invalid("role", "must be one of owner, editor, viewer"))?;
    let ident = text("user_id")?;
    let member = accounts::find_member(tx, &caller.account_id, &ident)
        .await?
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "no member of your account has the id or e-mail {ident:?}; \
                 list_account_users shows who can be given a role"
            ))
        })?;
    Ok(RoleRequest { member, role })
}

/// Whether a role change gives a role or takes it away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RoleVerb {
    /// `POST …/permissions`.
    Grant,
    /// `POST …/permissions/revoke`.
    Revoke,
}

impl RoleVerb {
    /// The verb as refusals say it.
    fn as_str(self) -> &'static str {
        match self {
            RoleVerb::Grant => "grant",
            RoleVerb::Revoke => "revoke",
        }
    }
}

/// Checks the caller (holding `mine`) may grant or revoke `role` for a user now holding
/// `theirs`.
fn check_rank(
    mine: Role,
    role: Role,
    theirs: Option<Role>,
    verb: RoleVerb,
) -> Result<(), ApiError> {
    let verb = verb.as_str();
    let allowed = policy::grantable(mine);
    if !allowed.contains(&role) {
        let can = if allowed.is_empty() {
            "none".to_owned()
        } else {
            allowed
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(ApiError::PermissionDenied(format!(
            "as {} of this app you cannot {verb} the {} role; roles you may {verb}: {can}",
            mine.as_str(),
            role.as_str()
        )));
    }
    let ceiling = allowed.iter().max().copied().unwrap_or(Role::Viewer);
    if let Some(theirs) = theirs
        && theirs > ceiling
    {
        return Err(ApiError::PermissionDenied(format!(
            "this user is {} of the app, which ranks above what you may grant ({}); \
             only an owner can change their role",
            theirs.as_str(),
            ceiling.as_str()
        )));
    }
    Ok(())
}

fn last_owner(email: &str) -> ApiError {
    ApiError::FailedPrecondition(format!(
        "{email} is the app's last owner; grant the owner role to someone else first — an app \
         always keeps at least one owner"
    ))
}

/// A grant or revoke that passed every check, inside its transaction.
struct Change {
    tx: Tx,
    caller: Caller,
    app: crate::store::apps::AppRecord,
    req: RoleRequest,
    /// The target's role before the change.
    theirs: Option<Role>,
}

/// The checks grant and revoke share: the app is visible (404), the body is valid (400), the
/// caller may manage roles (403) and may `verb` this role for this user (403).
async fn begin_change(
    state: &AppState,
    headers: &HeaderMap,
    app_id: &str,
    body: Result<Bytes, BytesRejection>,
    verb: RoleVerb,
) -> Result<Change, ApiError> {
    let (mut tx, caller) = state.begin_as(headers, Access::Write).await?;
    // Role changes of one app run one at a time (PostgreSQL row lock; SQLite's write lock is
    // already exclusive), so two owners removing each other at once cannot leave none.
    access::lock_resource(&mut tx, &parse_app_id(app_id)?).await?;
    let (app, mine) = authorized_app(&mut tx, &caller, app_id, AppAction::ViewPermissions).await?;
    let req = role_request(&mut tx, &caller, body).await?;
    policy::require(mine, AppAction::ManageRoles)?;
    policy::require_scope(&caller, AppAction::ManageRoles)?;
    let theirs = access::role_of(&mut tx, &app.id, &req.member.id, &caller.account_id).await?;
    check_rank(mine, req.role, theirs, verb)?;
    Ok(Change {
        tx,
        caller,
        app,
        req,
        theirs,
    })
}

/// `POST …/permissions`.
async fn grant(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<RoleChange>, ApiError> {
    change_role(&state, &headers, &app_id, body, RoleVerb::Grant).await
}

/// `POST …/permissions/revoke`.
async fn revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<RoleChange>, ApiError> {
    change_role(&state, &headers, &app_id, body, RoleVerb::Revoke).await
}

/// A grant or revoke: the checks both share ([`begin_change`]), then the change itself.
async fn change_role(
    state: &AppState,
    headers: &HeaderMap,
    app_id: &str,
    body: Result<Bytes, BytesRejection>,
    verb: RoleVerb,
) -> Result<Json<RoleChange>, ApiError> {
    let change = begin_change(state, headers, app_id, body, verb).await?;
    match verb {
        RoleVerb::Grant => grant_role(change).await,
        RoleVerb::Revoke => revoke_role(change).await,
    }
    .map(Json)
}

/// Gives the member the role (replacing the one they held), unless they hold it already.
async fn grant_role(change: Change) -> Result<RoleChange, ApiError> {
    let Change {
        mut tx,
        app,
        req,
        theirs,
        ..
    } = change;
    let message = if theirs == Some(req.role) {
        format!(
            "{} already has the {} role on {}",
            req.member.email,
            req.role.as_str(),
            app.name
        )
    } else {
        if theirs == Some(Role::Owner) && access::owner_count(&mut tx, &app.id).await? <= 1 {
            return Err(last_owner(&req.member.email));
        }
        access::set_role(&mut tx, &app.id, &req.member.id, req.role).await?;
        match theirs {
            Some(old) => format!(
                "{} is now {} of {} (was {})",
                req.member.email,
                req.role.as_str(),
                app.name,
                old.as_str()
            ),
            None => format!(
                "granted the {} role on {} to {}",
                req.role.as_str(),
                app.name,
                req.member.email
            ),
        }
    };
    tx.commit().await?;
    tracing::info!(app_id = %app.id, user_id = %req.member.id, role = req.role.as_str(), "role granted");
    Ok(RoleChange {
        message,
        user_id: req.member.id,
        email: req.member.email,
        role: Some(req.role.as_str()),
    })
}

/// Takes the role away from the member; never from the app's last owner.
async fn revoke_role(change: Change) -> Result<RoleChange, ApiError> {
    let Change {
        mut tx,
        caller,
        app,
        req,
        theirs,
    } = change;
    if req.role == Role::Owner
        && access::owner_count(&mut tx, &app.id).await? <= 1
        && theirs == Some(Role::Owner)
    {
        return Err(last_owner(&req.member.email));
    }
    if !access::revoke(&mut tx, &app.id, &req.member.id, req.role).await? {
        return Err(ApiError::NotFound(format!(
            "{} does not hold the {} role on {}",
            req.member.email,
            req.role.as_str(),
            app.name
        )));
    }
    let after = access::role_of(&mut tx, &app.id, &req.member.id, &caller.account_id).await?;
    tx.commit().await?;
    tracing::info!(app_id = %app.id, user_id = %req.member.id, role = req.role.as_str(), "role revoked");
    Ok(RoleChange {
        message: format!(
            "revoked the {} role on {} from {}",
            req.role.as_str(),
            app.name,
            req.member.email
        ),
        user_id: req.member.id,
        email: req.member.email,
        role: after.map(Role::as_str),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_bound_what_a_caller_may_change() {
        use Role::{Editor, Owner, Viewer};
        assert!(check_rank(Owner, Owner, Some(Owner), RoleVerb::Grant).is_ok());
        assert!(check_rank(Editor, Editor, Some(Viewer), RoleVerb::Grant).is_ok());
        assert!(check_rank(Editor, Owner, None, RoleVerb::Grant).is_err());
        assert!(check_rank(Editor, Viewer, Some(Owner), RoleVerb::Grant).is_err());
        assert!(check_rank(Editor, Editor, Some(Owner), RoleVerb::Revoke).is_err());
        assert!(check_rank(Viewer, Viewer, None, RoleVerb::Grant).is_err());
    }
}
