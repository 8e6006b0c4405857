//! The app sharing tools: list_grantable_roles, list_app_permissions, grant_app_role,
//! revoke_app_role, list_account_users. Use them only when the user asks to view, grant or
//! revoke access (the spec's rule; the MCP instructions say so too).

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Client;
use super::apps::{AppIdArgs, uuid_arg};
use crate::error::ToolError;

/// A role on an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppRole {
    /// Everything, including delete and granting owner.
    Owner,
    /// Build, suspend, secrets; grants editor and viewer.
    Editor,
    /// Read only.
    Viewer,
}

impl AppRole {
    fn as_str(self) -> &'static str {
        match self {
            AppRole::Owner => "owner",
            AppRole::Editor => "editor",
            AppRole::Viewer => "viewer",
        }
    }
}

/// Arguments of `grant_app_role` and `revoke_app_role`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleArgs {
    /// App UUID.
    pub app_id: String,
    /// owner, editor or viewer.
    pub role: AppRole,
    /// The user's UUID or the e-mail of an account member (see list_account_users).
    pub user_id: String,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// Arguments of `list_account_users`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountArgs {
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// `list_grantable_roles`: the roles the caller may grant on the app.
pub fn list_grantable_roles(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let body = client
        .json(Method::GET, &format!("/v1/apps/{id}/grantable-roles"), None)?
        .body;
    Ok(json!({
        "success": true,
        "app_id": id,
        "your_role": body["your_role"],
        "roles": body["roles"],
    }))
}

/// `list_app_permissions`: every user with a role on the app (`user_id`, `email`, `name`,
/// `role`).
pub fn list_app_permissions(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let body = client
        .json(Method::GET, &format!("/v1/apps/{id}/permissions"), None)?
        .body;
    Ok(json!({"success": true, "app_id": id, "users": body["users"]}))
}

fn role_change(client: &Client, args: &RoleArgs, path: &str) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let user = args.user_id.trim();
    if user.is_empty() {
        return Err(ToolError::invalid(
            "user_id",
            "must be a user UUID or the e-mail of an account member",
        ));
    }
    let body = json!({"user_id": user, "role": args.role.as_str()});
    let answer = client
        .json(Method::POST, &format!("/v1/apps/{id}/{path}"), Some(&body))?
        .body;
    Ok(json!({
        "success": true,
        "message": answer["message"],
        "app_id": id,
        "user_id": answer["user_id"],
        "email": answer["email"],
        "role": answer["role"],
    }))
}

/// `grant_app_role`: gives an account member a role on the app (replacing their earlier one).
pub fn grant_app_role(client: &Client, args: &RoleArgs) -> Result<Value, ToolError> {
    role_change(client, args, "permissions")
}

/// `revoke_app_role`: takes a role away; the app's last owner is never removed.
pub fn revoke_app_role(client: &Client, args: &RoleArgs) -> Result<Value, ToolError> {
    role_change(client, args, "permissions/revoke")
}

/// `list_account_users`: the members of the caller's account (`id`, `email`, `name`).
pub fn list_account_users(client: &Client, _args: &AccountArgs) -> Result<Value, ToolError> {
    let body = client.json(Method::GET, "/v1/account/users", None)?.body;
    Ok(json!({"success": true, "users": body["users"]}))
}
