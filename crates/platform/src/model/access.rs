//! Who is asking and what they may hold: the authenticated caller, roles on an app's
//! resource, and a user's role in its account.

/// The authenticated person of a request and their account role: identity's own types.
pub use slipway_identity::{AccountRole, Caller};

/// A role on a resource, weakest first so `Ord` ranks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// May read the app.
    Viewer,
    /// May read and change the app.
    Editor,
    /// May do everything, including deleting the app and granting roles.
    Owner,
}

impl Role {
    /// The stored and displayed name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Owner => "owner",
        }
    }

    /// The role a stored name stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "viewer" => Some(Role::Viewer),
            "editor" => Some(Role::Editor),
            "owner" => Some(Role::Owner),
            _ => None,
        }
    }
}
