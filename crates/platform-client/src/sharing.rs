//! The app sharing tools: list_grantable_roles, list_app_permissions, grant_app_role,
//! revoke_app_role, list_account_users. Use them only when the user asks to view, grant or
//! revoke access (the spec's rule; the MCP instructions say so too).

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::apps::{AppIdArgs, uuid_arg};
use crate::client::Client;
use crate::error::ToolError;
use crate::one_call::OneCall;
use crate::people::Me;

/// A role on an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// How the tools and the platform spell it.
    pub fn as_str(self) -> &'static str {
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

/// `list_grantable_roles`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GrantableRoles {
    /// The app.
    pub app_id: String,
    /// The caller's own role on it.
    pub your_role: AppRole,
    /// The roles the caller may grant, strongest first.
    pub roles: Vec<AppRole>,
}

/// The platform's answer to `GET …/grantable-roles`.
#[derive(Debug, Deserialize)]
struct Grantable {
    your_role: AppRole,
    roles: Vec<AppRole>,
}

/// One grant as the platform lists it.
#[derive(Debug, Clone, Deserialize)]
struct Grant {
    user_id: String,
    email: String,
    name: String,
    role: AppRole,
}

/// The platform's answer to `GET …/permissions`.
#[derive(Debug, Deserialize)]
struct Grants {
    users: Vec<Grant>,
}

/// Someone's role on an app, and whether the caller may take it away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Permission {
    /// The user's UUID.
    pub user_id: String,
    /// Their e-mail.
    pub email: String,
    /// Their display name.
    pub name: String,
    /// Their role on the app.
    pub role: AppRole,
    /// Whether the caller may revoke this role.
    pub revocable: bool,
    /// Why not, when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoke_note: Option<String>,
}

/// `list_app_permissions`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppPermissions {
    /// The app.
    pub app_id: String,
    /// Every role on it, strongest first.
    pub users: Vec<Permission>,
    /// The caller's own role (null when the platform could not say).
    pub your_role: Option<AppRole>,
    /// The roles the caller may grant (none when the platform could not say).
    pub grantable_roles: Vec<AppRole>,
}

/// `grant_app_role`'s and `revoke_app_role`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoleChange {
    /// What happened, in words.
    pub message: String,
    /// The app.
    pub app_id: String,
    /// The user concerned.
    pub user_id: String,
    /// Their e-mail.
    pub email: String,
    /// Their role on the app afterwards (null when they hold none).
    pub role: Option<AppRole>,
}

/// The platform's answer to a grant or a revoke.
#[derive(Debug, Deserialize)]
struct Changed {
    message: String,
    user_id: String,
    email: String,
    role: Option<AppRole>,
}

/// A member of the caller's account as `list_account_users` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AccountUser {
    /// Their UUID (a `user_id` for grant_app_role).
    pub id: String,
    /// Their e-mail (also accepted as a `user_id`).
    pub email: String,
    /// Their display name.
    pub name: String,
}

/// `list_account_users`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AccountUsers {
    /// The account's members.
    pub users: Vec<AccountUser>,
}

/// `list_grantable_roles`: the roles the caller may grant on the app.
pub fn list_grantable_roles(args: &AppIdArgs) -> Result<OneCall<GrantableRoles>, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let path = format!("/v1/apps/{id}/grantable-roles");
    Ok(
        OneCall::<Grantable>::new(Method::GET, path, None).map(move |answer| GrantableRoles {
            app_id: id,
            your_role: answer.your_role,
            roles: answer.roles,
        }),
    )
}

/// `list_app_permissions`: every user with a role on the app (`user_id`, `email`, `name`,
/// `role`, and `revocable`: whether the caller may take that role away, with `revoke_note`
/// saying why not), plus the caller's `your_role` and `grantable_roles`, so a client decides
/// nothing itself.
pub fn list_app_permissions(
    client: &Client,
    args: &AppIdArgs,
) -> Result<AppPermissions, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let grants: Grants = client.typed(Method::GET, &format!("/v1/apps/{id}/permissions"), None)?;
    // Without the grantable roles (an older platform), nothing is offered for revocation.
    let grantable = client
        .typed::<Grantable>(Method::GET, &format!("/v1/apps/{id}/grantable-roles"), None)
        .ok();
    let roles = grantable
        .as_ref()
        .map(|g| g.roles.clone())
        .unwrap_or_default();
    Ok(AppPermissions {
        app_id: id,
        users: with_revocable(grants.users, &roles),
        your_role: grantable.map(|g| g.your_role),
        grantable_roles: roles,
    })
}

/// Marks each grant with whether the caller may revoke it: only roles the caller may grant,
/// and never the app's last owner (the platform refuses both).
fn with_revocable(grants: Vec<Grant>, grantable: &[AppRole]) -> Vec<Permission> {
    let owners = grants.iter().filter(|g| g.role == AppRole::Owner).count();
    grants
        .into_iter()
        .map(|g| {
            let note = if g.role == AppRole::Owner && owners == 1 {
                Some("an app always keeps at least one owner")
            } else if !grantable.contains(&g.role) {
                Some("your role on this app cannot change this role")
            } else {
                None
            };
            Permission {
                user_id: g.user_id,
                email: g.email,
                name: g.name,
                role: g.role,
                revocable: note.is_none(),
                revoke_note: note.map(str::to_owned),
            }
        })
        .collect()
}

fn role_change(client: &Client, args: &RoleArgs, path: &str) -> Result<RoleChange, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let user = args.user_id.trim();
    if user.is_empty() {
        return Err(ToolError::invalid(
            "user_id",
            "must be a user UUID or the e-mail of an account member",
        ));
    }
    let body = json!({"user_id": user, "role": args.role.as_str()});
    let answer: Changed =
        client.typed(Method::POST, &format!("/v1/apps/{id}/{path}"), Some(&body))?;
    Ok(RoleChange {
        message: answer.message,
        app_id: id,
        user_id: answer.user_id,
        email: answer.email,
        role: answer.role,
    })
}

/// `grant_app_role`: gives an account member a role on the app (replacing their earlier one).
pub fn grant_app_role(client: &Client, args: &RoleArgs) -> Result<RoleChange, ToolError> {
    role_change(client, args, "permissions")
}

/// `revoke_app_role`: takes a role away; the app's last owner is never removed.
pub fn revoke_app_role(client: &Client, args: &RoleArgs) -> Result<RoleChange, ToolError> {
    role_change(client, args, "permissions/revoke")
}

/// `list_account_users`: the members of the caller's account, as the spec's tool gives them
/// (`id`, `email`, `name`); the platform's list also carries account roles and activity, which
/// the People commands show and this tool's contract does not name.
pub fn list_account_users(_args: &AccountArgs) -> Result<OneCall<AccountUsers>, ToolError> {
    Ok(OneCall::new(Method::GET, "/v1/account/users".into(), None))
}

/// Who the client's token belongs to (not a spec tool; a desktop sign-in checks a token with
/// it and the header shows it).
pub fn whoami(client: &Client) -> Result<Me, ToolError> {
    client.typed(Method::GET, "/v1/account/me", None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(user: &str, role: AppRole) -> Grant {
        Grant {
            user_id: user.into(),
            email: format!("{user}@example.org"),
            name: user.into(),
            role,
        }
    }

    #[test]
    fn the_last_owner_and_roles_beyond_the_callers_are_not_revocable() {
        let grants = vec![
            grant("a", AppRole::Owner),
            grant("b", AppRole::Editor),
            grant("c", AppRole::Viewer),
        ];
        let marked = with_revocable(grants, &[AppRole::Editor, AppRole::Viewer]);
        let flags: Vec<bool> = marked.iter().map(|p| p.revocable).collect();
        assert_eq!(flags, [false, true, true]);
        assert!(marked[0].revoke_note.as_deref().unwrap().contains("owner"));
        assert_eq!(marked[1].revoke_note, None);
        let two_owners = vec![grant("a", AppRole::Owner), grant("b", AppRole::Owner)];
        let marked = with_revocable(two_owners.clone(), &[AppRole::Owner, AppRole::Editor]);
        assert!(marked[1].revocable);
        let marked = with_revocable(two_owners, &[AppRole::Editor, AppRole::Viewer]);
        assert!(!marked[1].revocable);
    }

    #[test]
    fn a_permission_without_a_note_shows_none() {
        let shown = serde_json::to_value(with_revocable(
            vec![grant("b", AppRole::Editor)],
            &[AppRole::Editor],
        ))
        .unwrap();
        assert_eq!(
            shown,
            json!([{"user_id": "b", "email": "b@example.org", "name": "b", "role": "editor", "revocable": true}])
        );
    }
}
