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
/// `role`, and `revocable`: whether the caller may take that role away, with `revoke_note`
/// saying why not), plus the caller's `your_role` and `grantable_roles`, so a client decides
/// nothing itself.
pub fn list_app_permissions(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let body = client
        .json(Method::GET, &format!("/v1/apps/{id}/permissions"), None)?
        .body;
    // Without the grantable roles (an older platform), nothing is offered for revocation.
    let grantable = client
        .json(Method::GET, &format!("/v1/apps/{id}/grantable-roles"), None)
        .map(|a| a.body)
        .unwrap_or(Value::Null);
    let roles: Vec<&str> = grantable["roles"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Ok(json!({
        "success": true,
        "app_id": id,
        "users": with_revocable(&body["users"], &roles),
        "your_role": grantable["your_role"],
        "grantable_roles": roles,
    }))
}

/// Marks each permission entry with whether the caller may revoke it: only roles the caller
/// may grant, and never the app's last owner (the platform refuses both).
fn with_revocable(users: &Value, grantable: &[&str]) -> Value {
    let list = users.as_array().cloned().unwrap_or_default();
    let owners = list.iter().filter(|u| u["role"] == "owner").count();
    let marked = list
        .into_iter()
        .map(|mut u| {
            let role = u["role"].as_str().unwrap_or_default().to_owned();
            let note = if role == "owner" && owners == 1 {
                Some("an app always keeps at least one owner")
            } else if !grantable.contains(&role.as_str()) {
                Some("your role on this app cannot change this role")
            } else {
                None
            };
            if let Some(obj) = u.as_object_mut() {
                obj.insert("revocable".into(), Value::Bool(note.is_none()));
                if let Some(n) = note {
                    obj.insert("revoke_note".into(), Value::String(n.into()));
                }
            }
            u
        })
        .collect();
    Value::Array(marked)
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

/// `list_account_users`: the members of the caller's account, as the spec's tool gives them
/// (`id`, `email`, `name`); the platform's list also carries account roles and activity, which
/// the People commands show and this tool's contract does not name.
pub fn list_account_users(client: &Client, _args: &AccountArgs) -> Result<Value, ToolError> {
    let body = client.json(Method::GET, "/v1/account/users", None)?.body;
    let users: Vec<Value> = body["users"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| json!({"id": u["id"], "email": u["email"], "name": u["name"]}))
        .collect();
    Ok(json!({"success": true, "users": users}))
}

/// Who the client's token belongs to: `{id, email, name, account_id}` (not a spec tool; a
/// desktop sign-in checks a token with it and the header shows it).
pub fn whoami(client: &Client) -> Result<Value, ToolError> {
    Ok(client.json(Method::GET, "/v1/account/me", None)?.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_owner_and_roles_beyond_the_callers_are_not_revocable() {
        let users = json!([
            {"user_id": "a", "role": "owner"},
            {"user_id": "b", "role": "editor"},
            {"user_id": "c", "role": "viewer"},
        ]);
        let marked = with_revocable(&users, &["editor", "viewer"]);
        let flags: Vec<bool> = marked
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["revocable"].as_bool().unwrap())
            .collect();
        assert_eq!(flags, [false, true, true]);
        assert!(marked[0]["revoke_note"].as_str().unwrap().contains("owner"));
        let two_owners = json!([{"role": "owner"}, {"role": "owner"}]);
        let marked = with_revocable(&two_owners, &["owner", "editor", "viewer"]);
        assert_eq!(marked[1]["revocable"], true);
        let marked = with_revocable(&two_owners, &["editor", "viewer"]);
        assert_eq!(marked[1]["revocable"], false);
    }
}
