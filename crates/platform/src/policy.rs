//! What each role may do to an app: the one place this is decided. Every app endpoint asks
//! [`permits`] (through [`require`]) after it found the caller's role; a caller without a
//! role, or of another account, never gets this far (the app is a 404 to them). The README
//! and `docs/platform.md` print [`MATRIX`]; a test keeps them equal.

use crate::model::Role;

/// Something a caller can do to an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppAction {
    /// Get the app, list it, read its status.
    View,
    /// Read build and runtime logs.
    ReadLogs,
    /// Read a build's scan report.
    ReadScan,
    /// Upload a build context or a prebuilt image; cancel a build.
    Build,
    /// Disable (suspend) and enable the app.
    Suspend,
    /// Delete the app.
    Delete,
    /// List who holds which role.
    ViewPermissions,
    /// Grant and revoke roles (within [`grantable`]).
    ManageRoles,
    /// List the paths (and version numbers) of the app's secrets.
    ListSecrets,
    /// Read app secret values and metadata, and share them.
    ReadSecrets,
    /// Create, update and delete app secrets.
    WriteSecrets,
    /// Subscribe notification channels to the app's events, and end those subscriptions.
    Subscribe,
    /// Add and remove the app's custom domains.
    ManageDomains,
    /// Connect, change and disconnect the app's git source; deploy its branch now.
    ConnectGit,
}

impl AppAction {
    /// How the matrix names the action.
    pub fn describe(self) -> &'static str {
        match self {
            AppAction::View => "get, list, status",
            AppAction::ReadLogs => "read logs",
            AppAction::ReadScan => "read scan reports",
            AppAction::Build => "build, cancel builds",
            AppAction::Suspend => "disable, enable",
            AppAction::Delete => "delete",
            AppAction::ViewPermissions => "list permissions",
            AppAction::ManageRoles => "grant, revoke roles",
            AppAction::ListSecrets => "list app secret paths",
            AppAction::ReadSecrets => "read, share app secrets",
            AppAction::WriteSecrets => "create, update, delete app secrets",
            AppAction::Subscribe => "subscribe channels to its notifications",
            AppAction::ManageDomains => "add, remove custom domains",
            AppAction::ConnectGit => "connect, disconnect a git source",
        }
    }
}

impl AppAction {
    /// Whether the action changes something (a read-only token may not do it).
    pub fn changes(self) -> bool {
        !matches!(
            self,
            AppAction::View
                | AppAction::ReadLogs
                | AppAction::ReadScan
                | AppAction::ViewPermissions
                | AppAction::ListSecrets
                | AppAction::ReadSecrets
        )
    }

    /// Whether the action reaches a secret value (a token made without secrets may not).
    pub fn reaches_secrets(self) -> bool {
        matches!(self, AppAction::ReadSecrets | AppAction::WriteSecrets)
    }
}

/// `Ok` when the caller's token's scope allows `action` (its role is [`require`]'s to
/// check): a read-only token does nothing that [`AppAction::changes`], a token made without
/// secrets nothing that [`AppAction::reaches_secrets`]. Which apps a token reaches is decided
/// where apps are found (`store::apps::get_visible`): another app is not there for it.
pub fn require_scope(
    caller: &crate::model::Caller,
    action: AppAction,
) -> Result<(), slipway_identity::IdentityError> {
    if action.changes() {
        caller.require_writes(action.describe())?;
    }
    if action.reaches_secrets() {
        caller.require_secrets(action.describe())?;
    }
    Ok(())
}

/// Every action, in matrix order.
pub const ACTIONS: [AppAction; 14] = [
    AppAction::View,
    AppAction::ReadLogs,
    AppAction::ReadScan,
    AppAction::Build,
    AppAction::Suspend,
    AppAction::Delete,
    AppAction::ViewPermissions,
    AppAction::ManageRoles,
    AppAction::ListSecrets,
    AppAction::ReadSecrets,
    AppAction::WriteSecrets,
    AppAction::Subscribe,
    AppAction::ManageDomains,
    AppAction::ConnectGit,
];

/// The weakest role that may do `action`.
pub fn minimum_role(action: AppAction) -> Role {
    match action {
        AppAction::View
        | AppAction::ReadLogs
        | AppAction::ReadScan
        | AppAction::ViewPermissions
        | AppAction::ListSecrets => Role::Viewer,
        AppAction::Build
        | AppAction::Suspend
        | AppAction::ManageRoles
        | AppAction::ReadSecrets
        | AppAction::WriteSecrets
        | AppAction::ManageDomains
        | AppAction::ConnectGit => Role::Editor,
        AppAction::Delete | AppAction::Subscribe => Role::Owner,
    }
}

/// Whether `role` may do `action`.
pub fn permits(role: Role, action: AppAction) -> bool {
    role >= minimum_role(action)
}

/// A refusal: the caller's role does not allow the action. The HTTP layer answers it 403
/// (`From<Denied> for ApiError` in `http::error`); this module knows nothing of HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Denied {
    /// What was asked.
    pub action: AppAction,
    /// The weakest role that may do it.
    pub needed: Role,
    /// The caller's role.
    pub role: Role,
}

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let roles = if self.needed == Role::Owner {
            "the owner role"
        } else {
            "the editor or owner role"
        };
        write!(
            f,
            "{} needs {roles} on the app; you are {}",
            self.action.describe(),
            self.role.as_str()
        )
    }
}

impl std::error::Error for Denied {}

/// `Ok` when `role` may do `action`, else the refusal that says which role is needed.
pub fn require(role: Role, action: AppAction) -> Result<(), Denied> {
    if permits(role, action) {
        return Ok(());
    }
    Err(Denied {
        action,
        needed: minimum_role(action),
        role,
    })
}

/// The roles `role` may grant (and revoke): an owner every role, an editor editor and
/// viewer, a viewer none.
pub fn grantable(role: Role) -> &'static [Role] {
    match role {
        Role::Owner => &[Role::Owner, Role::Editor, Role::Viewer],
        Role::Editor => &[Role::Editor, Role::Viewer],
        Role::Viewer => &[],
    }
}

/// The matrix as a Markdown table, as the README prints it.
pub fn matrix_markdown() -> String {
    let mut out = String::from("| action | owner | editor | viewer |\n|---|---|---|---|\n");
    for action in ACTIONS {
        let cell = |r: Role| if permits(r, action) { "yes" } else { "no" };
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            action.describe(),
            cell(Role::Owner),
            cell(Role::Editor),
            cell(Role::Viewer)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grantable_roles_never_exceed_the_granter() {
        for role in [Role::Viewer, Role::Editor, Role::Owner] {
            assert!(grantable(role).iter().all(|g| *g <= role));
        }
        assert_eq!(grantable(Role::Viewer), &[] as &[Role]);
    }

    #[test]
    fn viewers_read_but_never_change_or_see_secret_values() {
        for action in ACTIONS {
            let expected = matches!(
                action,
                AppAction::View
                    | AppAction::ReadLogs
                    | AppAction::ReadScan
                    | AppAction::ViewPermissions
                    | AppAction::ListSecrets
            );
            assert_eq!(permits(Role::Viewer, action), expected, "{action:?}");
            assert!(permits(Role::Owner, action));
        }
        assert!(!permits(Role::Editor, AppAction::Delete));
    }

    #[test]
    fn the_docs_print_this_matrix() {
        let table = matrix_markdown();
        for doc in ["../../README.md", "../../docs/platform.md"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                text.contains(&table),
                "{} must contain the role matrix exactly as policy::matrix_markdown() prints it:\n{table}",
                path.display()
            );
        }
    }
}
