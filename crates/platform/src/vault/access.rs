//! Who may do what to secrets, decided here for every call (the HTTP layer only maps the
//! answer):
//! - `user` secrets: only the user they belong to (they live in that user's namespace; to
//!   anyone else they do not exist);
//! - `app` secrets: owners and editors of the app read and write them; viewers may only list
//!   their paths and version numbers; anyone else gets the app's 404;
//! - `shared` secrets: every account member lists, reads and creates them; changing or
//!   deleting one needs the member who created it or the account's owner.

use crate::db::Tx;
use crate::model::{Caller, Role};
use crate::policy::{self, AppAction, Denied};
use crate::store::apps;
use crate::store::secrets::SecretRow;

/// Why a secret operation is refused.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// The app does not exist or the caller cannot see it (404, like every app endpoint).
    #[error("no app with id {0}")]
    NoApp(String),
    /// No secret at the path in the namespace (404).
    #[error("{0}")]
    NoSecret(String),
    /// The caller's role on the app does not allow it (403).
    #[error(transparent)]
    Denied(#[from] Denied),
    /// A shared secret changed by someone other than its creator or the account owner (403).
    #[error(
        "changing or deleting a shared secret needs the member who created it or the account's owner"
    )]
    NotCreator,
    /// The request's token's scope does not reach it (403 `insufficient_scope`).
    #[error(transparent)]
    Scope(#[from] slipway_identity::IdentityError),
    /// The database failed.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// A secret's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The caller's own secrets.
    User,
    /// An app's secrets.
    App,
    /// The account's shared secrets.
    Shared,
}

impl Scope {
    /// Every scope (the OpenAPI document's `secret_type` values).
    pub const ALL: [Scope; 3] = [Scope::User, Scope::App, Scope::Shared];

    /// The scope a `secret_type` value names.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    /// The `secret_type` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::App => "app",
            Scope::Shared => "shared",
        }
    }
}

/// Whose namespace a request acts in.
#[derive(Debug, Clone)]
pub struct Namespace {
    /// The scope.
    pub scope: Scope,
    /// Whose secrets: the user, the app or the account.
    pub owner_id: String,
    /// The app (scope `app`).
    pub app_id: Option<String>,
    /// The caller's role on the app (scope `app`).
    pub role: Option<Role>,
}

/// What a request does to a secret, for the permission check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// List paths and versions.
    List,
    /// Read a value.
    Read,
    /// Create a secret.
    Create,
    /// Update, delete or share one.
    Change,
}

/// The namespace `scope` names for `caller` (for scope `app`, the app must be visible to
/// the caller; its resource is locked so no secret outlives a concurrent delete).
pub async fn namespace(
    tx: &mut Tx,
    caller: &Caller,
    scope: Scope,
    app_id: Option<&str>,
) -> Result<Namespace, AccessError> {
    Ok(match scope {
        Scope::User => Namespace {
            scope,
            owner_id: caller.user_id.clone(),
            app_id: None,
            role: None,
        },
        Scope::Shared => Namespace {
            scope,
            owner_id: caller.account_id.clone(),
            app_id: None,
            role: None,
        },
        Scope::App => {
            let id = app_id.unwrap_or_default();
            // Serialises with a delete of the app, so no secret outlives its app.
            crate::store::access::lock_resource(tx, id).await?;
            let (_, role) = apps::get_visible(tx, caller, id)
                .await?
                .ok_or_else(|| AccessError::NoApp(id.to_owned()))?;
            Namespace {
                scope,
                owner_id: id.to_owned(),
                app_id: Some(id.to_owned()),
                role: Some(role),
            }
        }
    })
}

/// Checks the caller may do `op` in `ns` (on `secret` when it exists).
pub fn authorize(
    caller: &Caller,
    ns: &Namespace,
    op: Op,
    secret: Option<&SecretRow>,
) -> Result<(), AccessError> {
    if ns.scope != Scope::App {
        // A token limited to apps reaches none of a person's own or the account's secrets.
        caller.require_account_wide("personal and shared secrets")?;
        if op != Op::List {
            caller.require_secrets("a personal or shared secret")?;
        }
        if matches!(op, Op::Create | Op::Change) {
            caller.require_writes("changing a secret")?;
        }
    }
    match ns.scope {
        Scope::User => Ok(()),
        Scope::App => {
            let action = match op {
                Op::List => AppAction::ListSecrets,
                Op::Read => AppAction::ReadSecrets,
                Op::Create | Op::Change => AppAction::WriteSecrets,
            };
            policy::require(ns.role.unwrap_or(Role::Viewer), action)?;
            Ok(policy::require_scope(caller, action)?)
        }
        Scope::Shared => {
            // Reading and creating are open to every member; a change is checked once the
            // secret is found.
            let Some(secret) = secret.filter(|_| op == Op::Change) else {
                return Ok(());
            };
            if secret.created_by == caller.user_id || caller.is_admin() {
                Ok(())
            } else {
                Err(AccessError::NotCreator)
            }
        }
    }
}

/// The answer for a path that holds no secret in `ns`, naming the namespace.
pub fn missing(ns: &Namespace, path: &str) -> AccessError {
    let place = match ns.scope {
        Scope::User => "your user secrets".to_owned(),
        Scope::Shared => "the account's shared secrets".to_owned(),
        Scope::App => format!(
            "the secrets of app {}",
            ns.app_id.as_deref().unwrap_or_default()
        ),
    };
    AccessError::NoSecret(format!("no secret at path {path:?} in {place}"))
}
