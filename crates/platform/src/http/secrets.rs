//! `/v1/secrets…`: the vault over HTTP. Paths and scopes travel in the body or the query
//! string, never in the URL path, so no client or proxy normalises `a/../b` into something
//! else before the path rules see it (and request logs, which record the URL path only,
//! never see them).
//!
//! Who may do what is decided in `vault::access` on every call; the audit entry is built in
//! `vault::audit`; request fields are read by `http::extract`.
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

use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState, json_object};
use crate::db::{Tx, rfc3339};
use crate::model::Caller;
use crate::pagination::{cut_page, next_page, parse_page_size};
use crate::store::secrets::{self, SecretRow};
use crate::store::{audit, is_unique_violation};
use crate::vault::access::{Namespace, Op, Scope, authorize, missing, namespace};
use crate::vault::audit::Pending;
use crate::vault::payload::Part;
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

/// Which secret a view shows: the fields every view of a secret starts with.
#[derive(Debug, Clone, Serialize)]
pub struct SecretName {
    /// `user`, `app` or `shared`.
    pub secret_type: &'static str,
    /// The app of an app secret, else null.
    pub app_id: Option<String>,
    /// The path.
    pub secret_path: String,
}

impl SecretName {
    fn of(ns: &Namespace, row: &SecretRow) -> Self {
        Self {
            secret_type: ns.scope.as_str(),
            app_id: ns.app_id.clone(),
            secret_path: row.path.clone(),
        }
    }
}

/// When a secret was written.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    /// RFC 3339: when version 1 was written.
    pub created_at: String,
    /// RFC 3339: when the latest version was written.
    pub updated_at: String,
}

impl Written {
    fn of(row: &SecretRow) -> Self {
        Self {
            created_at: rfc3339(row.created_at),
            updated_at: rfc3339(row.updated_at),
        }
    }
}

/// A secret without its value, as create, update and list return it.
#[derive(Debug, Clone, Serialize)]
pub struct SecretInfo {
    /// Which secret.
    #[serde(flatten)]
    pub name: SecretName,
    /// The latest version.
    pub version: i64,
    /// When it was written.
    #[serde(flatten)]
    pub written: Written,
}

fn info(ns: &Namespace, row: &SecretRow) -> SecretInfo {
    SecretInfo {
        name: SecretName::of(ns, row),
        version: row.current_version,
        written: Written::of(row),
    }
}

/// A secret with one version's value, as `GET /v1/secrets/entry` returns it.
#[derive(Debug, Serialize)]
pub struct SecretValue {
    /// Which secret.
    #[serde(flatten)]
    pub name: SecretName,
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
    /// When it was written.
    #[serde(flatten)]
    pub written: Written,
    /// RFC 3339: when the returned version was written.
    pub version_created_at: String,
}

/// The secret a request names, from its fields.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) scope: Scope,
    /// The app, for an app secret.
    pub(crate) app_id: Option<String>,
    pub(crate) path: String,
}

impl Target {
    /// Reads the scope from `type_field`, then `app_id`, then the path from `path_field`
    /// (the first refused one is the 400).
    pub(crate) fn read(
        fields: &Fields,
        type_field: &str,
        path_field: &str,
    ) -> Result<Self, ApiError> {
        let scope = fields.scope(type_field)?;
        let app_id = fields.app_id(scope, type_field)?;
        let path = fields.path(path_field)?;
        Ok(Self {
            scope,
            app_id,
            path,
        })
    }

    /// The audit entry of `action` on this secret.
    fn pending(&self, caller: &Caller, action: &'static str) -> Pending {
        Pending::new(caller, action, self.scope).at(self.app_id.as_ref(), Some(&self.path))
    }

    /// Its namespace, once the caller may `op` there.
    pub(crate) async fn namespace(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        op: Op,
    ) -> Result<Namespace, ApiError> {
        let ns = namespace(tx, caller, self.scope, self.app_id.as_deref()).await?;
        authorize(caller, &ns, op, None)?;
        Ok(ns)
    }

    /// The secret and its namespace, once the caller may `op` there; 404 when there is no
    /// secret at the path.
    pub(crate) async fn find(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        op: Op,
    ) -> Result<(Namespace, SecretRow), ApiError> {
        let ns = self.namespace(tx, caller, op).await?;
        let row = secrets::find(tx, self.scope.as_str(), &ns.owner_id, &self.path)
            .await?
            .ok_or_else(|| missing(&ns, &self.path))?;
        Ok((ns, row))
    }
}

/// One page of `GET /v1/secrets`.
#[derive(Debug, Serialize)]
pub struct SecretPage {
    /// Secrets in path order.
    pub secrets: Vec<SecretInfo>,
    /// Pass as `next_token` for the next page; null on the last.
    pub next_token: Option<String>,
}

/// Ends an audited request: on success records the entry in the request's transaction and
/// commits; on failure rolls back and records the failure on its own.
async fn finish<T>(
    state: &AppState,
    mut tx: Tx,
    pending: Pending,
    outcome: Result<(T, Option<i64>), ApiError>,
) -> Result<T, ApiError> {
    match outcome {
        Ok((value, version)) => {
            vault::audit::record_success(&mut tx, pending, version).await?;
            tx.commit().await?;
            Ok(value)
        }
        Err(e) => {
            drop(tx);
            vault::audit::record_failure(state.db(), pending, e.body().error.code).await;
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
    let (tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_body(json_object(body)?, CREATE_FIELDS)?;
    let target = Target::read(&fields, "secret_type", "secret_path")?;
    let content = Content {
        data: fields.object("data", Part::Data)?.unwrap_or_default(),
        metadata: fields
            .object("metadata", Part::Metadata)?
            .unwrap_or_default(),
    };
    let view = create_with(&state, tx, &caller, &target, &content).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// Creates `target` at version 1 in `tx` as `caller`, audited, and commits.
pub(crate) async fn create_with(
    state: &AppState,
    mut tx: Tx,
    caller: &Caller,
    target: &Target,
    content: &Content,
) -> Result<SecretInfo, ApiError> {
    let pending = target.pending(caller, "create");
    let outcome = async {
        let ns = target.namespace(&mut tx, caller, Op::Create).await?;
        let row = create_in(state, &mut tx, caller, &ns, &target.path, content).await?;
        Ok((info(&ns, &row), Some(1)))
    }
    .await;
    finish(state, tx, pending, outcome).await
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

pub(crate) fn taken(path: &str) -> ApiError {
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
    let (tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_body(json_object(body)?, CREATE_FIELDS)?;
    let target = Target::read(&fields, "secret_type", "secret_path")?;
    let data = fields.object("data", Part::Data)?.unwrap_or_default();
    let metadata = fields.object("metadata", Part::Metadata)?;
    update_with(&state, tx, &caller, &target, data, metadata)
        .await
        .map(Json)
}

/// Writes `data` as `target`'s next version in `tx` as `caller` (with `metadata`, or the
/// previous version's when none), audited, and commits.
pub(crate) async fn update_with(
    state: &AppState,
    mut tx: Tx,
    caller: &Caller,
    target: &Target,
    data: Map<String, Value>,
    metadata: Option<Map<String, Value>>,
) -> Result<SecretInfo, ApiError> {
    let pending = target.pending(caller, "update");
    let outcome = async {
        let (ns, row) = target.find(&mut tx, caller, Op::Change).await?;
        authorize(caller, &ns, Op::Change, Some(&row))?;
        let path = &target.path;
        // The number first: it locks the row, so the metadata kept below is that of the
        // version right before this one, even under concurrent updates.
        let version = secrets::next_version(&mut tx, &row.id)
            .await?
            .ok_or_else(|| missing(&ns, path))?;
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
        let row = secrets::find(&mut tx, target.scope.as_str(), &ns.owner_id, path)
            .await?
            .ok_or_else(|| missing(&ns, path))?;
        Ok((info(&ns, &row), Some(version)))
    }
    .await;
    finish(state, tx, pending, outcome).await
}

pub(crate) const TARGET_FIELDS: &[&str] = &["secret_type", "app_id", "secret_path", "version"];

/// `GET /v1/secrets/entry?secret_type=&app_id=&secret_path=&version=`: the latest version,
/// or `version`.
async fn get_one(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<SecretValue>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::AuditedRead).await?;
    let fields = Fields::from_query(query, TARGET_FIELDS)?;
    let target = Target::read(&fields, "secret_type", "secret_path")?;
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
    let pending = target.pending(&caller, "get");
    let outcome = async {
        let (ns, row) = target.find(&mut tx, &caller, Op::Read).await?;
        let path = &target.path;
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
            name: SecretName::of(&ns, &row),
            version: version.version,
            latest_version: row.current_version,
            versions,
            data: content.data,
            metadata: content.metadata,
            written: Written::of(&row),
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
    let target = Target::read(&fields, "secret_type", "secret_path")?;
    let pending = target.pending(&caller, "delete");
    let outcome = async {
        let (ns, row) = target.find(&mut tx, &caller, Op::Change).await?;
        authorize(&caller, &ns, Op::Change, Some(&row))?;
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
    let (mut tx, caller) = state.begin_as(&headers, Access::AuditedRead).await?;
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
        authorize(&caller, &ns, Op::List, None)?;
        let mut rows = secrets::list(
            &mut tx,
            scope.as_str(),
            &ns.owner_id,
            &prefix,
            &after,
            page_size + 1,
        )
        .await?;
        let next_token =
            cut_page(&mut rows, page_size).map(|r| URL_SAFE_NO_PAD.encode(format!("1.{}", r.path)));
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
    let from = Target::read(&fields, "from_secret_type", "from_secret_path")?;
    let to = fields.path("to_shared_path")?;
    let copy_metadata = fields.boolean("copy_metadata", true)?;
    let pending = from.pending(&caller, "share");
    let outcome = async {
        let (_, row) = from.find(&mut tx, &caller, Op::Read).await?;
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
    let owner = caller.is_admin();
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
    let next_token = next_page(&mut entries, page_size, |e| (e.at_millis, e.id.clone()));
    Ok(Json(AuditPage {
        entries,
        next_token,
    }))
}
