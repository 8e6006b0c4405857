//! A personal API token as `GET /v1/tokens` lists it.

use serde::{Deserialize, Serialize};

/// One of the caller's tokens; never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TokenInfo {
    /// Id (to revoke it).
    pub id: String,
    /// Its name.
    pub name: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// When it stops working; null for tokens made before tokens had lifetimes.
    pub expires_at: Option<String>,
    /// When it was last used (to the minute), or null.
    pub last_used_at: Option<String>,
    /// Whether the request that listed it came with it (the client that asked uses it).
    pub current: bool,
    /// What it may do (tokens made before scopes existed have the full scope).
    #[serde(default)]
    pub scope: TokenScope,
}

/// What a person allowed an assistant (an OAuth client) to do, as they list it; never a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GrantInfo {
    /// Id (to revoke it).
    pub id: String,
    /// The client's name, as it gave it.
    pub client_name: String,
    /// The client's id (an https URL for a client known by its metadata document).
    pub client_id: String,
    /// What it may do.
    pub scope: TokenScope,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// When one of its tokens was last used (to the minute), or null.
    pub last_used_at: Option<String>,
}

/// What a token may do: all of its person's rights (the default), or less. A scope only
/// narrows: a person's role on an app still decides first, and a token never does more than
/// the person could.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TokenScope {
    /// Reads only: no build, deploy, change, sharing or deletion.
    #[serde(default)]
    pub read_only: bool,
    /// The app ids it reaches (other apps are invisible to it, and it cannot make apps or
    /// act on the account); null: every app its person may.
    #[serde(default)]
    pub apps: Option<Vec<String>>,
    /// Whether it may read and write secret values (app, personal and shared secrets,
    /// resource credentials). Secret paths are listed either way.
    #[serde(default = "yes")]
    pub secrets: bool,
}

fn yes() -> bool {
    true
}

impl Default for TokenScope {
    fn default() -> Self {
        Self::FULL
    }
}

impl TokenScope {
    /// Everything its person may do.
    pub const FULL: TokenScope = TokenScope {
        read_only: false,
        apps: None,
        secrets: true,
    };

    /// Whether this is the whole of its person's rights.
    pub fn is_full(&self) -> bool {
        *self == Self::FULL
    }

    /// Whether the token reaches app `app_id`.
    pub fn reaches(&self, app_id: &str) -> bool {
        self.apps
            .as_ref()
            .is_none_or(|apps| apps.iter().any(|a| a == app_id))
    }

    /// Whether every right of `self` is also one of `other`'s: a token may only make tokens
    /// that can do no more than it can.
    pub fn within(&self, other: &TokenScope) -> bool {
        let apps = match (&self.apps, &other.apps) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(mine), Some(theirs)) => mine.iter().all(|a| theirs.contains(a)),
        };
        (self.read_only || !other.read_only) && (!self.secrets || other.secrets) && apps
    }

    /// The scope in words, for lists and audit entries: "full", or e.g.
    /// "read-only, 2 apps, no secrets".
    pub fn describe(&self) -> String {
        if self.is_full() {
            return "full".into();
        }
        let access = if self.read_only {
            "read-only"
        } else {
            "read-write"
        };
        let apps = match &self.apps {
            None => "all apps".to_owned(),
            Some(a) if a.len() == 1 => "1 app".to_owned(),
            Some(a) => format!("{} apps", a.len()),
        };
        let secrets = if self.secrets {
            "secrets"
        } else {
            "no secrets"
        };
        format!("{access}, {apps}, {secrets}")
    }
}

#[cfg(test)]
mod tests {
    use super::TokenScope;

    fn scope(read_only: bool, apps: Option<&[&str]>, secrets: bool) -> TokenScope {
        TokenScope {
            read_only,
            apps: apps.map(|a| a.iter().map(|s| (*s).to_owned()).collect()),
            secrets,
        }
    }

    #[test]
    fn a_scope_is_within_another_only_when_it_asks_for_no_more() {
        let full = TokenScope::FULL;
        let narrow = scope(true, Some(&["a"]), false);
        assert!(narrow.within(&full));
        assert!(!full.within(&narrow));
        assert!(narrow.within(&narrow));
        assert!(!scope(false, Some(&["a"]), false).within(&narrow), "writes");
        assert!(!scope(true, Some(&["a"]), true).within(&narrow), "secrets");
        assert!(
            !scope(true, Some(&["a", "b"]), false).within(&narrow),
            "an app more"
        );
        assert!(!scope(true, None, false).within(&narrow), "every app");
    }

    #[test]
    fn a_missing_field_means_the_persons_whole_right() {
        let read: TokenScope = serde_json::from_str(r#"{"read_only": true}"#).unwrap();
        assert_eq!(read, scope(true, None, true));
        assert!(serde_json::from_str::<TokenScope>("{}").unwrap().is_full());
        assert_eq!(read.describe(), "read-only, all apps, secrets");
        assert_eq!(TokenScope::FULL.describe(), "full");
        assert!(scope(false, Some(&["a"]), true).reaches("a"));
        assert!(!scope(false, Some(&["a"]), true).reaches("b"));
    }
}
