//! `/v1/secrets…`: the vault over HTTP. Paths and scopes travel in the body or the query
//! string, never in the URL path, so no client or proxy normalises `a/../b` into something
//! else before the path rules see it (and request logs, which record the URL path only,
//! never see them).
//!
//! Who may do what, checked on every call:
//! - `user` secrets: only the user they belong to (they live in that user's namespace; to
//!   anyone else they do not exist);
//! - `app` secrets: owners and editors of the app read and write them; viewers may only list
//!   their paths and version numbers; anyone else gets the app's 404;
//! - `shared` secrets: every account member lists, reads and creates them; changing or
//!   deleting one needs the member who created it or the account's owner.
//!
//! Every call that names a well-formed target is recorded in the audit trail with its
//! outcome; requests refused as malformed (400) reach no secret and are not.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::{Map, Value};

use super::apps::{app_not_found, parse_app_id};
use super::error::ApiError;
use super::{Access, AppState, json_object};
use crate::db::{Tx, rfc3339};
use crate::model::Caller;
use crate::model::Role;
use crate::pagination::parse_page_size;
use crate::policy::{self, AppAction};
use crate::store::secrets::{self, SecretRow};
use crate::store::{accounts, apps, audit, is_unique_violation};
use crate::vault::payload::{self, Part};
use crate::vault::{self, Content};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/secrets", get(list).post(create))
        .route(
            "/secrets/entry",
            get(get_one).put(update).delete(delete_one),
        )
        .route("/secrets/share", post(share))
        .route("/secrets/audit", get(audit_trail))
}

/// A secret's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    User,
    App,
    Shared,
}

impl Scope {
    /// Every scope (the OpenAPI document's `secret_type` values).
    pub(crate) const ALL: [Scope; 3] = [Scope::User, Scope::App, Scope::Shared];

    fn parse(field: &str, raw: &str) -> Result<Self, ApiError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == raw)
            .ok_or_else(|| ApiError::invalid(field, "must be one of user, app, shared"))
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::App => "app",
            Scope::Shared => "shared",
        }
    }
}

/// The request's fields, from a JSON body or a query string, with unknown ones refused.
struct Fields {
    map: Map<String, Value>,
}

impl Fields {
    fn from_body(map: Map<String, Value>, allowed: &[&str]) -> Result<Self, ApiError> {
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ApiError::invalid(
                unknown,
                format!("unknown field; allowed fields are {}", allowed.join(", ")),
            ));
        }
        Ok(Self { map })
    }

    fn from_query(
        query: Result<Query<Vec<(String, String)>>, QueryRejection>,
        allowed: &[&str],
    ) -> Result<Self, ApiError> {
        let Query(pairs) = query
            .map_err(|_| ApiError::InvalidBody("the query string could not be read".into()))?;
        let mut map = Map::new();
        for (key, value) in pairs {
            if !allowed.contains(&key.as_str()) {
                return Err(ApiError::invalid(
                    &key,
                    format!(
                        "unknown query parameter; allowed are {}",
                        allowed.join(", ")
                    ),
                ));
            }
            if map.insert(key.clone(), Value::String(value)).is_some() {
                return Err(ApiError::invalid(&key, "must be given at most once"));
            }
        }
        Ok(Self { map })
    }

    fn string(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::invalid(name, "must be a string")),
        }
    }

    fn required(&self, name: &str) -> Result<String, ApiError> {
        self.string(name)?
            .ok_or_else(|| ApiError::invalid(name, "is required"))
    }

    fn path(&self, name: &str) -> Result<String, ApiError> {
        let raw = self.required(name)?;
        vault::path::check(&raw).map_err(|rule| ApiError::invalid(name, rule))?;
        Ok(raw)
    }

    fn scope(&self, name: &str) -> Result<Scope, ApiError> {
        Scope::parse(name, &self.required(name)?)
    }

    /// `app_id`: required with scope `app`, refused with the others.
    fn app_id(&self, scope: Scope, scope_field: &str) -> Result<Option<String>, ApiError> {
        match (scope, self.string("app_id")?) {
            (Scope::App, None) => Err(ApiError::invalid(
                "app_id",
                format!("is required when {scope_field} is app"),
            )),
            (Scope::App, Some(raw)) => parse_app_id(&raw).map(Some),
            (_, None) => Ok(None),
            (_, Some(_)) => Err(ApiError::invalid(
                "app_id",
                format!("is only used when {scope_field} is app"),
            )),
        }
    }

    fn object(&self, name: &str, part: Part) -> Result<Option<Map<String, Value>>, ApiError> {
        match self.map.get(name) {
            None | Some(Value::Null) if part == Part::Metadata => Ok(None),
            None | Some(Value::Null) => Err(ApiError::invalid(name, "is required")),
            Some(v) => payload::check(part, v)
                .map(Some)
                .map_err(|rule| ApiError::invalid(name, rule)),
        }
    }

    fn boolean(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(ApiError::invalid(name, "must be true or false")),
        }
    }
}

/// Whose namespace a request acts in.
#[derive(Debug, Clone)]
struct Namespace {
    scope: Scope,
    owner_id: String,
    app_id: Option<String>,
    /// The caller's role on the app (scope `app`).
    role: Option<Role>,
}

/// What a request does to a secret, for the permission check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    List,
    Read,
    Create,
    Change,
}

async fn namespace(
    tx: &mut Tx,
    caller: &Caller,
    scope: Scope,
    app_id: Option<&str>,
) -> Result<Namespace, ApiError> {
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
                .ok_or_else(|| app_not_found(id))?;
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
async fn authorize(
    tx: &mut Tx,
    caller: &Caller,
    ns: &Namespace,
    op: Op,
    secret: Option<&SecretRow>,
) -> Result<(), ApiError> {
    match ns.scope {
        Scope::User => Ok(()),
        Scope::App => {
            let action = match op {
                Op::List => AppAction::ListSecrets,
                Op::Read => AppAction::ReadSecrets,
                Op::Create | Op::Change => AppAction::WriteSecrets,
            };
            policy::require(ns.role.unwrap_or(Role::Viewer), action)
        }
        Scope::Shared => {
            // Reading and creating are open to every member; a change is checked once the
            // secret is found.
            let Some(secret) = secret.filter(|_| op == Op::Change) else {
                return Ok(());
            };
            if secret.created_by == caller.user_id
                || accounts::is_account_owner(tx, &caller.user_id).await?
            {
                Ok(())
            } else {
                Err(ApiError::PermissionDenied(
                    "changing or deleting a shared secret needs the member who created it or \
                     the account's owner"
                        .into(),
                ))
            }
        }
    }
}

fn missing(ns: &Namespace, path: &str) -> ApiError {
    let place = match ns.scope {
        Scope::User => "your user secrets".to_owned(),
        Scope::Shared => "the account's shared secrets".to_owned(),
        Scope::App => format!(
            "the secrets of app {}",
            ns.app_id.as_deref().unwrap_or_default()
        ),
    };
    ApiError::NotFound(format!("no secret at path {path:?} in {place}"))
}

/// A secret without its value, as create, update and list return it.
#[derive(Debug, Serialize)]
pub struct SecretInfo {
    /// `user`, `app` or `shared`.
    pub secret_type: &'static str,
    /// The app of an app secret, else null.
    pub app_id: Option<String>,
    /// The path.
    pub secret_path: String,
    /// The latest version.
    pub version: i64,
    /// RFC 3339: when version 1 was written.
    pub created_at: String,
    /// RFC 3339: when the latest version was written.
    pub updated_at: String,
}

fn info(ns: &Namespace, row: &SecretRow) -> SecretInfo {
    SecretInfo {
        secret_type: ns.scope.as_str(),
        app_id: ns.app_id.clone(),
        secret_path: row.path.clone(),
        version: row.current_version,
        created_at: rfc3339(row.created_at),
        updated_at: rfc3339(row.updated_at),
    }
}

/// A secret with one version's value, as `GET /v1/secrets/entry` returns it.
#[derive(Debug, Serialize)]
pub struct SecretValue {
    /// `user`, `app` or `shared`.
    pub secret_type: &'static str,
    /// The app of an app secret, else null.
    pub app_id: Option<String>,
    /// The path.
    pub secret_path: String,
    /// The version returned.
    pub version: i64,
    /// The latest version.
    pub latest_version: i64,
    /// The versions still kept, oldest first.
    pub versions: Vec<i64>,
    /// The key–value pairs.
    pub data: Map<String, Value>,
    /// Metadata key–value pairs (empty when none).
    pub metadata: Map<String, Value>,
    /// RFC 3339: when version 1 was written.
    pub created_at: String,
    /// RFC 3339: when the latest version was written.
    pub updated_at: String,
    /// RFC 3339: when the returned version was written.
    pub version_created_at: String,
}

/// One page of `GET /v1/secrets`.
#[derive(Debug, Serialize)]
pub struct SecretPage {
    /// Secrets in path order.
    pub secrets: Vec<SecretInfo>,
    /// Pass as `next_token` for the next page; null on the last.
    pub next_token: Option<String>,
}

/// An audit entry under construction: filled in as the request is understood.
struct Pending {
    entry: audit::Entry,
}

impl Pending {
    fn new(caller: &Caller, action: &'static str, scope: Scope) -> Self {
        Self {
            entry: audit::Entry {
                account_id: caller.account_id.clone(),
                user_id: caller.user_id.clone(),
                action,
                scope: scope.as_str().to_owned(),
                app_id: None,
                path: None,
                version: None,
                outcome: "success".into(),
            },
        }
    }

    fn at(mut self, app_id: Option<&String>, path: Option<&str>) -> Self {
        self.entry.app_id = app_id.cloned();
        self.entry.path = path.map(str::to_owned);
        self
    }
}

/// Ends an audited request: on success records the entry in the request's transaction and
/// commits; on failure rolls back and records the failure on its own.
async fn finish<T>(
    state: &AppState,
    mut tx: Tx,
    mut pending: Pending,
    outcome: Result<(T, Option<i64>), ApiError>,
) -> Result<T, ApiError> {
    match outcome {
        Ok((value, version)) => {
            pending.entry.version = version;
            audit::record(&mut tx, &pending.entry).await?;
            tx.commit().await?;
            Ok(value)
        }
        Err(e) => {
            drop(tx);
            pending.entry.outcome = e.body().error.code.to_owned();
            let recorded = async {
                let mut tx = state.db().begin_write().await?;
                audit::record(&mut tx, &pending.entry).await?;
                tx.commit().await
            }
            .await;
            if let Err(err) = recorded {
                tracing::error!(error = %err, "cannot record a failed secret operation in the audit trail");
            }
            Err(e)
        }
    }
}

fn seal_error(e: vault::keys::SealError) -> ApiError {
    ApiError::Internal(e.to_string())
}

pub(crate) const CREATE_FIELDS: &[&str] =
    &["secret_type", "app_id", "secret_path", "data", "metadata"];

/// `POST /v1/secrets`: creates version 1 at a free path → 201.
async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_body(json_object(body)?, CREATE_FIELDS)?;
    let scope = fields.scope("secret_type")?;
    let app_id = fields.app_id(scope, "secret_type")?;
    let path = fields.path("secret_path")?;
    let content = Content {
        data: fields.object("data", Part::Data)?.unwrap_or_default(),
        metadata: fields
            .object("metadata", Part::Metadata)?
            .unwrap_or_default(),
    };
    let pending = Pending::new(&caller, "create", scope).at(app_id.as_ref(), Some(&path));
    let outcome = async {
        let ns = namespace(&mut tx, &caller, scope, app_id.as_deref()).await?;
        authorize(&mut tx, &caller, &ns, Op::Create, None).await?;
        let row = create_in(&state, &mut tx, &caller, &ns, &path, &content).await?;
        Ok((info(&ns, &row), Some(1)))
    }
    .await;
    let view = finish(&state, tx, pending, outcome).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// Inserts a secret at version 1; 409 when the path is taken.
async fn create_in(
    state: &AppState,
    tx: &mut Tx,
    caller: &Caller,
    ns: &Namespace,
    path: &str,
    content: &Content,
) -> Result<SecretRow, ApiError> {
    if secrets::find(tx, ns.scope.as_str(), &ns.owner_id, path)
        .await?
        .is_some()
    {
        return Err(taken(path));
    }
    let row = match secrets::insert(
        tx,
        &caller.account_id,
        ns.scope.as_str(),
        &ns.owner_id,
        path,
        &caller.user_id,
    )
    .await
    {
        Err(e) if is_unique_violation(&e) => return Err(taken(path)),
        other => other?,
    };
    let sealed = state
        .vault()
        .seal(&row.id, 1, content)
        .map_err(seal_error)?;
    secrets::insert_version(tx, &row.id, 1, &sealed, &caller.user_id).await?;
    Ok(row)
}

fn taken(path: &str) -> ApiError {
    ApiError::AlreadyExists {
        field: "secret_path".into(),
        message: format!(
            "a secret already exists at path {path:?}; use update_secret to add a version"
        ),
    }
}

/// `PUT /v1/secrets/entry`: a new version with new data (and new metadata, or the previous
/// metadata when none is given).
async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<SecretInfo>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_body(json_object(body)?, CREATE_FIELDS)?;
    let scope = fields.scope("secret_type")?;
    let app_id = fields.app_id(scope, "secret_type")?;
    let path = fields.path("secret_path")?;
    let data = fields.object("data", Part::Data)?.unwrap_or_default();
    let metadata = fields.object("metadata", Part::Metadata)?;
    let pending = Pending::new(&caller, "update", scope).at(app_id.as_ref(), Some(&path));
    let outcome = async {
        let ns = namespace(&mut tx, &caller, scope, app_id.as_deref()).await?;
        authorize(&mut tx, &caller, &ns, Op::Change, None).await?;
        let row = secrets::find(&mut tx, scope.as_str(), &ns.owner_id, &path)
            .await?
            .ok_or_else(|| missing(&ns, &path))?;
        authorize(&mut tx, &caller, &ns, Op::Change, Some(&row)).await?;
        // The number first: it locks the row, so the metadata kept below is that of the
        // version right before this one, even under concurrent updates.
        let version = secrets::next_version(&mut tx, &row.id)
            .await?
            .ok_or_else(|| missing(&ns, &path))?;
        let metadata = match metadata {
            Some(m) => m,
            None => {
                let previous = secrets::version(&mut tx, &row.id, version - 1)
                    .await?
                    .ok_or_else(|| ApiError::Internal("previous version missing".into()))?;
                state
                    .vault()
                    .open_content(&row.id, previous.version, &previous.sealed)
                    .map_err(seal_error)?
                    .metadata
            }
        };
        let sealed = state
            .vault()
            .seal(&row.id, version, &Content { data, metadata })
            .map_err(seal_error)?;
        secrets::insert_version(&mut tx, &row.id, version, &sealed, &caller.user_id).await?;
        secrets::prune(&mut tx, &row.id, version).await?;
        let row = secrets::find(&mut tx, scope.as_str(), &ns.owner_id, &path)
            .await?
            .ok_or_else(|| missing(&ns, &path))?;
        Ok((info(&ns, &row), Some(version)))
    }
    .await;
    finish(&state, tx, pending, outcome).await.map(Json)
}

pub(crate) const TARGET_FIELDS: &[&str] = &["secret_type", "app_id", "secret_path", "version"];

/// `GET /v1/secrets/entry?secret_type=&app_id=&secret_path=&version=`: the latest version,
/// or `version`.
async fn get_one(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<SecretValue>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_query(query, TARGET_FIELDS)?;
    let scope = fields.scope("secret_type")?;
    let app_id = fields.app_id(scope, "secret_type")?;
    let path = fields.path("secret_path")?;
    let wanted = match fields.string("version")? {
        None => None,
        Some(raw) => match raw.parse::<i64>() {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                return Err(ApiError::invalid(
                    "version",
                    "must be a whole number from 1",
                ));
            }
        },
    };
    let pending = Pending::new(&caller, "get", scope).at(app_id.as_ref(), Some(&path));
    let outcome = async {
        let ns = namespace(&mut tx, &caller, scope, app_id.as_deref()).await?;
        authorize(&mut tx, &caller, &ns, Op::Read, None).await?;
        let row = secrets::find(&mut tx, scope.as_str(), &ns.owner_id, &path)
            .await?
            .ok_or_else(|| missing(&ns, &path))?;
        let versions = secrets::version_numbers(&mut tx, &row.id).await?;
        let number = wanted.unwrap_or(row.current_version);
        let version = secrets::version(&mut tx, &row.id, number)
            .await?
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "secret {path:?} has no version {number}; versions kept: {}",
                    versions
                        .iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        let content = state
            .vault()
            .open_content(&row.id, version.version, &version.sealed)
            .map_err(seal_error)?;
        let view = SecretValue {
            secret_type: scope.as_str(),
            app_id: ns.app_id.clone(),
            secret_path: row.path.clone(),
            version: version.version,
            latest_version: row.current_version,
            versions,
            data: content.data,
            metadata: content.metadata,
            created_at: rfc3339(row.created_at),
            updated_at: rfc3339(row.updated_at),
            version_created_at: rfc3339(version.created_at),
        };
        Ok((view, Some(number)))
    }
    .await;
    finish(&state, tx, pending, outcome).await.map(Json)
}

/// `DELETE /v1/secrets/entry?secret_type=&app_id=&secret_path=`: removes every version → 204.
async fn delete_one(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<StatusCode, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_query(query, &TARGET_FIELDS[..3])?;
    let scope = fields.scope("secret_type")?;
    let app_id = fields.app_id(scope, "secret_type")?;
    let path = fields.path("secret_path")?;
    let pending = Pending::new(&caller, "delete", scope).at(app_id.as_ref(), Some(&path));
    let outcome = async {
        let ns = namespace(&mut tx, &caller, scope, app_id.as_deref()).await?;
        authorize(&mut tx, &caller, &ns, Op::Change, None).await?;
        let row = secrets::find(&mut tx, scope.as_str(), &ns.owner_id, &path)
            .await?
            .ok_or_else(|| missing(&ns, &path))?;
        authorize(&mut tx, &caller, &ns, Op::Change, Some(&row)).await?;
        secrets::lock(&mut tx, &row.id).await?;
        secrets::delete(&mut tx, &row.id).await?;
        Ok(((), Some(row.current_version)))
    }
    .await;
    finish(&state, tx, pending, outcome).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) const LIST_FIELDS: &[&str] =
    &["secret_type", "app_id", "prefix", "next_token", "page_size"];

fn decode_token(raw: &str) -> Result<String, ApiError> {
    let invalid = || ApiError::invalid("next_token", "is not a token returned by list_secrets");
    let bytes = URL_SAFE_NO_PAD.decode(raw).map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let path = text.strip_prefix("1.").ok_or_else(invalid)?;
    vault::path::check(path).map_err(|_| invalid())?;
    Ok(path.to_owned())
}

/// `GET /v1/secrets?secret_type=&app_id=&prefix=&next_token=&page_size=`: paths in path
/// order, `page_size` (default 20, at most 100) at a time.
async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<SecretPage>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_query(query, LIST_FIELDS)?;
    let scope = fields.scope("secret_type")?;
    let app_id = fields.app_id(scope, "secret_type")?;
    let prefix = fields.string("prefix")?.unwrap_or_default();
    vault::path::check_prefix(&prefix).map_err(|rule| ApiError::invalid("prefix", rule))?;
    let after = match fields.string("next_token")? {
        None => String::new(),
        Some(t) if t.is_empty() => String::new(),
        Some(t) => decode_token(&t)?,
    };
    let page_size = parse_page_size(fields.string("page_size")?.as_deref())
        .map_err(|e| ApiError::invalid("page_size", e.to_string()))?;
    let pending = Pending::new(&caller, "list", scope).at(app_id.as_ref(), Some(&prefix));
    let outcome = async {
        let ns = namespace(&mut tx, &caller, scope, app_id.as_deref()).await?;
        authorize(&mut tx, &caller, &ns, Op::List, None).await?;
        let mut rows = secrets::list(
            &mut tx,
            scope.as_str(),
            &ns.owner_id,
            &prefix,
            &after,
            page_size + 1,
        )
        .await?;
        let more = rows.len() > page_size as usize;
        rows.truncate(page_size as usize);
        let next_token = if more {
            rows.last()
                .map(|r| URL_SAFE_NO_PAD.encode(format!("1.{}", r.path)))
        } else {
            None
        };
        let page = SecretPage {
            secrets: rows.iter().map(|r| info(&ns, r)).collect(),
            next_token,
        };
        Ok((page, None))
    }
    .await;
    finish(&state, tx, pending, outcome).await.map(Json)
}

pub(crate) const SHARE_FIELDS: &[&str] = &[
    "from_secret_type",
    "from_secret_path",
    "app_id",
    "to_shared_path",
    "copy_metadata",
];

/// `POST /v1/secrets/share`: copies the latest version of a secret the caller may read into
/// the shared namespace at `to_shared_path` (version 1 there) → 201. The source is unchanged;
/// an existing destination is a 409, never overwritten.
async fn share(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_body(json_object(body)?, SHARE_FIELDS)?;
    let scope = fields.scope("from_secret_type")?;
    let app_id = fields.app_id(scope, "from_secret_type")?;
    let from = fields.path("from_secret_path")?;
    let to = fields.path("to_shared_path")?;
    let copy_metadata = fields.boolean("copy_metadata", true)?;
    let pending = Pending::new(&caller, "share", scope).at(app_id.as_ref(), Some(&from));
    let outcome = async {
        let source = namespace(&mut tx, &caller, scope, app_id.as_deref()).await?;
        authorize(&mut tx, &caller, &source, Op::Read, None).await?;
        let row = secrets::find(&mut tx, scope.as_str(), &source.owner_id, &from)
            .await?
            .ok_or_else(|| missing(&source, &from))?;
        let latest = secrets::version(&mut tx, &row.id, row.current_version)
            .await?
            .ok_or_else(|| ApiError::Internal("latest version missing".into()))?;
        let mut content = state
            .vault()
            .open_content(&row.id, latest.version, &latest.sealed)
            .map_err(seal_error)?;
        if !copy_metadata {
            content.metadata = Map::new();
        }
        let dest = namespace(&mut tx, &caller, Scope::Shared, None).await?;
        let created = create_in(&state, &mut tx, &caller, &dest, &to, &content)
            .await
            .map_err(|e| match e {
                ApiError::AlreadyExists { .. } => ApiError::AlreadyExists {
                    field: "to_shared_path".into(),
                    message: format!(
                        "a shared secret already exists at {to:?}; sharing never overwrites, \
                         choose another to_shared_path"
                    ),
                },
                other => other,
            })?;
        let mut copy = Pending::new(&caller, "create", Scope::Shared).at(None, Some(&to));
        copy.entry.version = Some(1);
        audit::record(&mut tx, &copy.entry).await?;
        Ok((info(&dest, &created), Some(latest.version)))
    }
    .await;
    let view = finish(&state, tx, pending, outcome).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// One page of the audit trail.
#[derive(Debug, Serialize)]
pub struct AuditPage {
    /// Entries, newest first.
    pub entries: Vec<audit::View>,
    /// Pass as `next_token` for older entries; null on the last page.
    pub next_token: Option<String>,
}

/// The query parameters of `GET /v1/secrets/audit`.
pub(crate) const AUDIT_FIELDS: &[&str] = &["next_token", "page_size"];

/// `GET /v1/secrets/audit?next_token=&page_size=`: the secret audit trail, newest first. A
/// member sees their own entries; the account's owner also sees everyone's entries on shared
/// secrets and on the secrets of apps it holds a role on (the deployer's included), never
/// another member's user secrets.
async fn audit_trail(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<AuditPage>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let fields = Fields::from_query(query, AUDIT_FIELDS)?;
    let page_size = parse_page_size(fields.string("page_size")?.as_deref())
        .map_err(|e| ApiError::invalid("page_size", e.to_string()))?;
    let before = match fields.string("next_token")? {
        None => None,
        Some(t) if t.is_empty() => None,
        Some(t) => Some(
            crate::pagination::Cursor::decode(&t)
                .map(|c| (c.created_at, c.id))
                .map_err(|e| ApiError::invalid("next_token", e.to_string()))?,
        ),
    };
    let owner = accounts::is_account_owner(&mut tx, &caller.user_id).await?;
    let mut entries = audit::list(
        &mut tx,
        &caller.account_id,
        &caller.user_id,
        owner,
        before,
        page_size + 1,
    )
    .await?;
    tx.commit().await?;
    let more = entries.len() > page_size as usize;
    entries.truncate(page_size as usize);
    let next_token = if more {
        entries.last().map(|e| {
            crate::pagination::Cursor {
                created_at: e.at_millis,
                id: e.id.clone(),
            }
            .encode()
        })
    } else {
        None
    };
    Ok(Json(AuditPage {
        entries,
        next_token,
    }))
}
