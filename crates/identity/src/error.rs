//! Every way an identity operation can be refused. The platform maps each to a status and a
//! stable code ([`IdentityError::code`]); the messages name the rule and never hold a token or
//! an invite code.

/// An identity refusal or fault.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// 400: `field` breaks the rule `message` names.
    #[error("{field}: {message}")]
    Invalid {
        /// The request field.
        field: &'static str,
        /// The rule.
        message: String,
    },
    /// 401: no such token (or it was revoked, or its person removed).
    #[error("the token is not known here")]
    Unauthenticated,
    /// 401: the token's lifetime is over.
    #[error("the token expired at {0}; create a new one (slipway tokens create) or sign in again")]
    TokenExpired(String),
    /// 401: an assistant's token, issued for the tool server, used anywhere else.
    #[error("this token was issued to an assistant for {0} and works only there")]
    WrongAudience(String),
    /// 403: only an admin of the account may do this.
    #[error("only an admin of the account may {0}")]
    AdminOnly(&'static str),
    /// 403: the request's token was made with a narrower scope than this needs (the person
    /// may well be allowed; a token with the scope would be).
    #[error("this token's scope does not allow it: {0}")]
    InsufficientScope(String),
    /// 404: no person of the caller's account has this id or e-mail.
    #[error("no person of this account is {0}")]
    PersonNotFound(String),
    /// 404: no pending invite has this id, or no invite has this code.
    #[error("{0}")]
    InviteNotFound(String),
    /// 404: no assistant's sign-in waits with this code.
    #[error("{0}")]
    SignInNotFound(String),
    /// 404: the caller has no token with this id.
    #[error("you have no token with id {0}")]
    TokenNotFound(String),
    /// 409: the account would be left without an admin.
    #[error("{0} is the account's last admin; make someone else an admin first")]
    LastAdmin(String),
    /// 409: an admin asked to remove themselves (their apps would pass to nobody).
    #[error("you cannot remove yourself; ask another admin of the account")]
    RemoveSelf,
    /// 409: the e-mail belongs to a person already.
    #[error("{0} is already a member of a Slipway account")]
    AlreadyMember(String),
    /// 410: the invite was used, revoked, or ran out.
    #[error("{message}")]
    InviteEnded {
        /// `invite_used`, `invite_revoked` or `invite_expired`.
        code: &'static str,
        /// What happened to it, and what to do.
        message: String,
    },
    /// The operating system had no randomness to give.
    #[error("no randomness from the operating system: {0}")]
    Random(String),
    /// A database fault.
    #[error("database error")]
    Database(#[from] sqlx::Error),
}

impl IdentityError {
    /// A 400 on one field.
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field,
            message: message.into(),
        }
    }

    /// The stable error code clients may branch on.
    pub fn code(&self) -> &'static str {
        match self {
            IdentityError::Invalid { .. } => "invalid_argument",
            IdentityError::Unauthenticated => "unauthenticated",
            IdentityError::TokenExpired(_) => "token_expired",
            IdentityError::AdminOnly(_) => "admin_only",
            IdentityError::PersonNotFound(_) => "user_not_found",
            IdentityError::InviteNotFound(_) => "invite_not_found",
            IdentityError::TokenNotFound(_) => "token_not_found",
            IdentityError::SignInNotFound(_) => "sign_in_not_found",
            IdentityError::InsufficientScope(_) => "insufficient_scope",
            IdentityError::WrongAudience(_) => "invalid_token",
            IdentityError::LastAdmin(_) => "last_admin",
            IdentityError::AlreadyMember(_) => "already_member",
            IdentityError::RemoveSelf => "cannot_remove_self",
            IdentityError::InviteEnded { code, .. } => code,
            IdentityError::Random(_) | IdentityError::Database(_) => "internal",
        }
    }

    /// The HTTP status that fits.
    pub fn status(&self) -> u16 {
        match self {
            IdentityError::Invalid { .. } => 400,
            IdentityError::Unauthenticated
            | IdentityError::TokenExpired(_)
            | IdentityError::WrongAudience(_) => 401,
            IdentityError::AdminOnly(_) | IdentityError::InsufficientScope(_) => 403,
            IdentityError::PersonNotFound(_)
            | IdentityError::InviteNotFound(_)
            | IdentityError::TokenNotFound(_)
            | IdentityError::SignInNotFound(_) => 404,
            IdentityError::LastAdmin(_)
            | IdentityError::AlreadyMember(_)
            | IdentityError::RemoveSelf => 409,
            IdentityError::InviteEnded { .. } => 410,
            IdentityError::Random(_) | IdentityError::Database(_) => 500,
        }
    }

    /// The field at fault: a 400's, and the taken `email` of a 409.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            IdentityError::Invalid { field, .. } => Some(field),
            IdentityError::AlreadyMember(_) => Some("email"),
            _ => None,
        }
    }
}
