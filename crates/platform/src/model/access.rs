//! Who is asking and what they may hold: the authenticated caller, roles on an app's
//! resource, and a user's role in its account.

/// The authenticated user of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The user's UUID.
    pub user_id: String,
    /// The account the user belongs to; nothing of another account is ever visible.
    pub account_id: String,
}

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

/// Role of a user inside its account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountRole {
    /// The user the account was created with.
    Owner,
    /// Any user added later.
    Member,
}

impl AccountRole {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AccountRole::Owner => "owner",
            AccountRole::Member => "member",
        }
    }
}
