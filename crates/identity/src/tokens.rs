//! Personal tokens: who a request's bearer token belongs to, and each person's own list of
//! tokens with names, lifetimes and last use. A revoked token (or one of a removed person) is
//! unknown at once; an expired one is refused with the moment it expired.

use serde::Serialize;

use crate::audit::{self, Action};
use crate::error::IdentityError;
use crate::model::{Caller, PersonRef, TokenScope};
use crate::rules::{self, Days, TOKEN_DAYS};
use crate::store::audit as audit_rows;
use crate::store::people as people_rows;
use crate::store::tokens::{self as rows, NewToken as Row};
use slipway_server::clock::{now_millis, rfc3339};
use slipway_server::db::{Db, Tx};
use slipway_server::token::Token;

/// A token as its owner lists it (never the secret): `slipway-api`'s, the shape the
/// platform's clients read.
pub use slipway_api::TokenInfo;

/// Prefix of every platform token (a leaked one is recognisable in a secret scanner).
pub const TOKEN_PREFIX: &str = "slw_";

/// How stale a recorded last use may get before a request records a new one: last use is
/// kept to the minute so that reading requests do not each become a write.
const TOUCH_EVERY_MS: i64 = 60_000;

/// What a token's scope allows, asked by every operation it narrows (the platform's app
/// endpoints through its policy, the account-wide ones at their start).
impl Caller {
    /// `Ok` unless the token is read-only; `what` says what was asked ("build").
    pub fn require_writes(&self, what: &str) -> Result<(), IdentityError> {
        if self.scope.read_only {
            return Err(IdentityError::InsufficientScope(format!(
                "it is read-only, and {what} changes something; use a read-write token"
            )));
        }
        Ok(())
    }

    /// `Ok` unless the token is kept from secret values.
    pub fn require_secrets(&self, what: &str) -> Result<(), IdentityError> {
        if !self.scope.secrets {
            return Err(IdentityError::InsufficientScope(format!(
                "it was made without secrets, and {what} reaches a secret value; use a token made with secrets"
            )));
        }
        Ok(())
    }

    /// `Ok` unless the token is limited to some apps: what is not one app's (making apps, the
    /// account's people, channels, audit, personal and shared secrets, other tokens) is
    /// beyond it.
    pub fn require_account_wide(&self, what: &str) -> Result<(), IdentityError> {
        if self.scope.apps.is_some() {
            return Err(IdentityError::InsufficientScope(format!(
                "it is limited to some apps, and {what} is not one app's; use a token for every app"
            )));
        }
        Ok(())
    }
}

/// The caller a token stands for, and the last-use record to write after the request (kept
/// out of the request's own transaction, which may only read).
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// Who is asking.
    pub caller: Caller,
    /// Set when the token's recorded last use is over a minute old.
    pub touch: Option<Touch>,
}

/// A last use to record ([`touch`]).
#[derive(Debug, Clone)]
pub struct Touch {
    token_id: String,
    user_id: String,
    at: i64,
}

/// The person `token` belongs to. Unknown, revoked and removed-person tokens are
/// [`IdentityError::Unauthenticated`]; one past its lifetime [`IdentityError::TokenExpired`].
pub async fn authenticate(tx: &mut Tx, token: &Token) -> Result<Authenticated, IdentityError> {
    authenticate_hash(tx, &token.hash()).await
}

/// [`authenticate`] by the token's hash: for what acts later on a request's behalf (a secret
/// typed on the platform's page for an assistant's call), which keeps the hash, never the
/// token, and so loses its rights when the token is revoked or expires.
pub async fn authenticate_hash(tx: &mut Tx, hash: &str) -> Result<Authenticated, IdentityError> {
    checked(rows::lookup(tx, hash).await?)
}

/// [`authenticate`] as a read of its own. On a SQLite file it runs on the native read
/// connection, on the calling thread: one indexed statement, where the pool would hand it to
/// its connection's thread and back (the tool server does this before every call).
pub async fn authenticate_alone(db: &Db, token: &Token) -> Result<Authenticated, IdentityError> {
    let hash = token.hash();
    if let Some(native) = db.native() {
        return checked(native.read_one(|conn| rows::lookup_native(conn, &hash))?);
    }
    let mut tx = db.begin_single_read().await?;
    let found = rows::lookup(&mut tx, &hash).await?;
    tx.commit().await?;
    checked(found)
}

/// The caller a looked-up token makes, if it is there and not expired.
fn checked(found: Option<rows::Found>) -> Result<Authenticated, IdentityError> {
    let found = found.ok_or(IdentityError::Unauthenticated)?;
    let now = now_millis();
    if let Some(expires_at) = found.expires_at
        && expires_at <= now
    {
        return Err(IdentityError::TokenExpired(rfc3339(expires_at)));
    }
    let touch = found
        .last_used_at
        .is_none_or(|at| now - at >= TOUCH_EVERY_MS)
        .then(|| Touch {
            token_id: found.token_id.clone(),
            user_id: found.user_id.clone(),
            at: now,
        });
    Ok(Authenticated {
        caller: Caller {
            role: found.role(),
            user_id: found.user_id,
            account_id: found.account_id,
            token_id: found.token_id,
            scope: stored_scope(found.scope.as_deref()),
            grant: found.grant_id,
        },
        touch,
    })
}

/// Records a token's use and its person's activity, in a transaction of its own. A failure
/// is logged and dropped: it loses a "last used" figure, never a request.
pub async fn touch(db: &Db, touch: Touch) {
    let done = async {
        let mut tx = db.begin_write().await?;
        rows::touch(&mut tx, &touch.token_id, touch.at).await?;
        people_rows::touch(&mut tx, &touch.user_id, touch.at).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = done {
        tracing::warn!(error = %slipway_server::sql_error::loggable(&e), "could not record a token's last use");
    }
}

/// The caller's own tokens, newest first.
pub async fn list(tx: &mut Tx, caller: &Caller) -> Result<Vec<TokenInfo>, IdentityError> {
    Ok(rows::list_for(tx, &caller.user_id)
        .await?
        .into_iter()
        .map(|r| TokenInfo {
            current: r.id == caller.token_id,
            id: r.id,
            name: r.name,
            created_at: rfc3339(r.created_at),
            expires_at: r.expires_at.map(rfc3339),
            last_used_at: r.last_used_at.map(rfc3339),
            scope: stored_scope(r.scope.as_deref()),
        })
        .collect())
}

/// A stored scope: NULL is the person's whole right; a value that does not parse (never
/// written by this code) is read as nothing at all, so a damaged row grants less, not more.
fn stored_scope(raw: Option<&str>) -> TokenScope {
    match raw {
        None => TokenScope::FULL,
        Some(json) => serde_json::from_str(json).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "a token's stored scope does not parse; it reads nothing");
            TokenScope {
                read_only: true,
                apps: Some(Vec::new()),
                secrets: false,
            }
        }),
    }
}

/// The scope as stored: NULL for the whole right.
fn scope_to_store(scope: &TokenScope) -> Option<String> {
    (!scope.is_full()).then(|| serde_json::to_string(scope).expect("a scope serialises"))
}

/// A token just made: the only time it exists in clear.
#[derive(Debug, Clone, Serialize)]
pub struct NewToken {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// The bearer token in clear.
    #[serde(serialize_with = "expose")]
    pub token: Token,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// When it stops working (null: never; only the bootstrap token and `user add`).
    pub expires_at: Option<String>,
    /// What it may do.
    pub scope: TokenScope,
}

pub(crate) fn expose<S: serde::Serializer>(token: &Token, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(token.expose())
}

/// Makes a token for `user_id` lasting `days` (`None`: no end).
pub(crate) async fn issue(
    tx: &mut Tx,
    user_id: &str,
    name: &str,
    days: Option<i64>,
    scope: &TokenScope,
) -> Result<NewToken, IdentityError> {
    let token = Token::generate(TOKEN_PREFIX).map_err(|e| IdentityError::Random(e.to_string()))?;
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_millis();
    let expires_at = days.map(|d| now + Days::millis(d));
    rows::insert(
        tx,
        &Row {
            hash: token.hash(),
            id: &id,
            user_id,
            name,
            created_at: now,
            expires_at,
            scope: scope_to_store(scope),
            grant_id: None,
        },
    )
    .await?;
    Ok(NewToken {
        id,
        name: name.to_owned(),
        token,
        created_at: rfc3339(now),
        expires_at: expires_at.map(rfc3339),
        scope: scope.clone(),
    })
}

/// Makes a token lasting `days` for a person who just joined or signed in, and records it.
pub(crate) async fn issue_recorded(
    tx: &mut Tx,
    person: &crate::store::people::PersonRow,
    name: &str,
    days: i64,
) -> Result<NewToken, IdentityError> {
    let made = issue(tx, &person.id, name, Some(days), &TokenScope::FULL).await?;
    let me = PersonRef {
        id: person.id.clone(),
        email: person.email.clone(),
    };
    let until = made.expires_at.clone().unwrap_or_default();
    audit::record(
        tx,
        &person.account_id,
        Some(&me),
        Action::TokenCreated,
        name,
        &format!("expires {until}"),
    )
    .await?;
    Ok(made)
}

/// Makes a token without an end for `user_id`: the bootstrap token and
/// `slipway platform user add`, which an operator hands over by hand.
pub async fn issue_unlimited(
    tx: &mut Tx,
    user_id: &str,
    name: &str,
) -> Result<NewToken, IdentityError> {
    issue(tx, user_id, name, None, &TokenScope::FULL).await
}

/// `POST /v1/tokens`: a new token of the caller's.
pub async fn create(
    tx: &mut Tx,
    caller: &Caller,
    name: &str,
    days: Option<i64>,
    scope: &TokenScope,
) -> Result<NewToken, IdentityError> {
    let name = rules::parse_token_name(name)?;
    let days = TOKEN_DAYS.check(days)?;
    if scope.apps.as_ref().is_some_and(Vec::is_empty) {
        return Err(IdentityError::invalid(
            "apps",
            "must name at least one app, or be left out for every app",
        ));
    }
    if !scope.within(&caller.scope) {
        return Err(IdentityError::InsufficientScope(format!(
            "a token can be given only what the token making it may do ({}), and this one asks for more ({})",
            caller.scope.describe(),
            scope.describe()
        )));
    }
    let made = issue(tx, &caller.user_id, &name, Some(days), scope).await?;
    let actor = actor(tx, caller).await?;
    let until = made.expires_at.clone().unwrap_or_default();
    audit::record(
        tx,
        &caller.account_id,
        Some(&actor),
        Action::TokenCreated,
        &name,
        &format!("expires {until}; scope {}", scope.describe()),
    )
    .await?;
    Ok(made)
}

/// `DELETE /v1/tokens/{id}`: revokes one of the caller's tokens; it is refused from the next
/// request on.
pub async fn revoke(tx: &mut Tx, caller: &Caller, id: &str) -> Result<(), IdentityError> {
    let id = id.trim();
    if id != caller.token_id && !caller.scope.is_full() {
        return Err(IdentityError::InsufficientScope(
            "a token of narrower scope may revoke only itself, not its person's other tokens"
                .into(),
        ));
    }
    let name = rows::name_of(tx, &caller.user_id, id)
        .await?
        .ok_or_else(|| IdentityError::TokenNotFound(id.to_owned()))?;
    rows::delete(tx, &caller.user_id, id).await?;
    let actor = actor(tx, caller).await?;
    audit::record(
        tx,
        &caller.account_id,
        Some(&actor),
        Action::TokenRevoked,
        &name,
        if id == caller.token_id {
            "the token of the request that revoked it"
        } else {
            ""
        },
    )
    .await?;
    Ok(())
}

/// One audit entry of something a caller did that is not a change of its own, such as an
/// assistant's tool call (kept whatever the call's outcome).
#[derive(Debug, Clone)]
pub struct Done {
    /// Who.
    pub caller: Caller,
    /// What.
    pub action: Action,
    /// What it concerned.
    pub subject: String,
    /// How.
    pub detail: String,
}

/// Records `entries` in one write of their own (many callers' entries at once: the cost of a
/// commit is shared; on a SQLite file, one job of the native writer's group commit). A caller no longer there is left out, as its request was
/// refused.
pub async fn record(db: &Db, entries: &[Done]) -> Result<(), IdentityError> {
    if let Some(native) = db.native() {
        // One job on the native writer for the batch, each entry one cached statement that
        // names its person as it inserts: a tool call's entry is the tool server's one write.
        let rows = audit::rows_naming_caller(entries.iter().map(|done| audit::CallerEntry {
            caller: &done.caller,
            action: done.action,
            subject: &done.subject,
            detail: &done.detail,
        }));
        return native
            .write(move |conn| {
                for row in &rows {
                    audit_rows::insert_naming_actor_native(conn, row)?;
                }
                Ok::<_, sqlx::Error>(())
            })
            .await
            .map_err(|e| IdentityError::Database(e.into()))?
            .map_err(IdentityError::Database);
    }
    let mut tx = db.begin_write().await?;
    // A batch is mostly one person's calls: each is looked up once.
    let mut actors: std::collections::HashMap<&str, Option<PersonRef>> =
        std::collections::HashMap::new();
    let mut found = Vec::with_capacity(entries.len());
    for done in entries {
        let actor = match actors.get(done.caller.user_id.as_str()) {
            Some(known) => known.clone(),
            None => {
                let found = match actor(&mut tx, &done.caller).await {
                    Ok(actor) => Some(actor),
                    Err(IdentityError::Unauthenticated) => None,
                    Err(e) => return Err(e),
                };
                actors.insert(&done.caller.user_id, found.clone());
                found
            }
        };
        if let Some(actor) = actor {
            found.push((done, actor));
        }
    }
    let rows: Vec<audit::NewEntry<'_>> = found
        .iter()
        .map(|(done, actor)| audit::NewEntry {
            account_id: &done.caller.account_id,
            actor,
            action: done.action,
            subject: &done.subject,
            detail: &done.detail,
        })
        .collect();
    audit::record_many(&mut tx, &rows).await?;
    tx.commit().await?;
    Ok(())
}

/// The caller as an audit entry names them.
pub(crate) async fn actor(tx: &mut Tx, caller: &Caller) -> Result<PersonRef, IdentityError> {
    let row = people_rows::find_by_id(tx, &caller.user_id)
        .await?
        .ok_or(IdentityError::Unauthenticated)?;
    Ok(PersonRef {
        id: row.id,
        email: row.email,
    })
}
