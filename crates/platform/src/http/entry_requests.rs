//! Secrets the person types, never the assistant (docs/mcp.md, "A secret's value"): a tool
//! server's `create_secret` or `update_secret` without `data` asks for an entry request here;
//! the person types the value on the page it names ([`super::secret_page`]); the tool's next
//! call reads the outcome. The value goes from the person's browser to the vault and nowhere
//! else: not through the model, the assistant's client or a log.
//!
//! - `POST /v1/secrets/entry-requests` → 201: the request and its page's address
//! - `GET /v1/secrets/entry-requests/{id}` → waiting, written (with the secret) or declined
//!
//! Checked when asked (so a call that could never succeed is refused before the person types
//! anything) and again when the value is saved, as the token that asked: a grant revoked in
//! between writes nothing. Requests live in the process's memory for ten minutes: a restart
//! loses only the waiting ones (the page then says the link has ended); what was saved is in
//! the vault.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Map, Value};
use slipway_server::clock::now_millis;
use slipway_server::token::{Token, hash_token};

use super::error::ApiError;
use super::extract::Fields;
use super::secrets::{SecretInfo, Target};
use super::{Access, AppState, json_object};
use crate::db::rfc3339;
use crate::store::secrets;
use crate::vault::access::{Op, authorize};
use crate::vault::payload::Part;

/// How long the page takes a value.
pub(crate) const TTL: Duration = Duration::from_secs(600);
/// How long the outcome stays readable after the page closes.
const KEPT: Duration = Duration::from_secs(600);
/// Waiting requests one person may have at once (each is a page someone could type into).
const MAX_WAITING: usize = 20;

/// The routes of this module, relative to `/v1`.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/secrets/entry-requests", post(ask))
        .route("/secrets/entry-requests/{id}", get(show).delete(cancel))
}

/// What the person's value becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Operation {
    /// Version 1 of a new secret.
    Create,
    /// The next version of an existing one.
    Update,
}

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// The page waits for the person.
    Waiting,
    /// The person saved a value: `secret` is what was written.
    Written,
    /// The person declined, or saving failed for good (`message` says why).
    Declined,
}

/// A request as its asker reads it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EntryRequestView {
    /// The request's id (its asker reads the outcome with it).
    pub(crate) id: String,
    /// Where it stands.
    pub(crate) status: Status,
    /// What the value becomes.
    pub(crate) operation: Operation,
    /// `user`, `app` or `shared`.
    pub(crate) secret_type: &'static str,
    /// The app of an app secret, else null.
    pub(crate) app_id: Option<String>,
    /// The path.
    pub(crate) secret_path: String,
    /// The page where the person types the value, while it waits; else null.
    pub(crate) url: Option<String>,
    /// RFC 3339: when the page stops taking a value.
    pub(crate) expires_at: String,
    /// The secret as written, once it is.
    pub(crate) secret: Option<SecretInfo>,
    /// Why it was declined, in words.
    pub(crate) message: Option<String>,
}

/// One request, as the platform keeps it.
#[derive(Debug, Clone)]
pub(crate) struct EntryRequest {
    pub(crate) view: EntryRequestView,
    /// SHA-256 of the page's key (the address holds the key; memory holds only this).
    page_hash: String,
    /// SHA-256 of the token that asked: the value is saved as that token, if it still works.
    pub(crate) token_hash: String,
    /// The person who asked (through their assistant).
    pub(crate) user_id: String,
    /// The secret.
    pub(crate) target: Target,
    /// Metadata the call gave, written with the value.
    pub(crate) metadata: Option<Map<String, Value>>,
    /// The assistant's name, as its client gave it, for the page.
    pub(crate) client: Option<String>,
    /// When the page stops taking a value.
    ends: Instant,
    /// A post of the page is saving its value (other posts wait for the outcome).
    saving: bool,
    /// With single sign-on: the SHA-256 of the key of the browser where the person signed in
    /// as themselves for this page (only that browser may type the value).
    pub(crate) browser: Option<String>,
}

impl EntryRequest {
    /// Whether the page still takes a value.
    pub(crate) fn open(&self) -> bool {
        self.view.status == Status::Waiting && !self.saving && Instant::now() < self.ends
    }

    /// Whether it waited and nobody typed in time.
    fn lapsed(&self) -> bool {
        self.view.status == Status::Waiting && !self.saving && Instant::now() >= self.ends
    }
}

/// Why a request could not be declined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// A value is being saved.
    Saving,
    /// A value was saved.
    Written,
    /// It ended already (declined, or forgotten).
    Ended,
}

/// The requests of this process. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryRequests(Arc<Mutex<HashMap<String, EntryRequest>>>);

impl EntryRequests {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, EntryRequest>> {
        // A panic elsewhere cannot leave this map half-changed: every change is one insert.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Forgets what no one can read any more.
    fn prune(map: &mut HashMap<String, EntryRequest>) {
        let now = Instant::now();
        map.retain(|_, r| now < r.ends + KEPT);
    }

    /// Keeps `request`, unless its person has too many waiting.
    fn insert(&self, request: EntryRequest) -> Result<(), ApiError> {
        let mut map = self.lock();
        Self::prune(&mut map);
        let waiting = map
            .values()
            .filter(|r| r.user_id == request.user_id && r.open())
            .count();
        if waiting >= MAX_WAITING {
            return Err(ApiError::FailedPrecondition(format!(
                "{MAX_WAITING} secrets already wait for you to type them; type or decline those first (each page works for ten minutes)"
            )));
        }
        map.insert(request.view.id.clone(), request);
        Ok(())
    }

    /// Request `id`, if the token whose hash is `token_hash` asked for it and it is still
    /// kept (another token of the same person, a read-only one say, does not see its page).
    fn of(&self, id: &str, token_hash: &str) -> Option<EntryRequest> {
        let mut map = self.lock();
        Self::prune(&mut map);
        map.get(id).filter(|r| r.token_hash == token_hash).cloned()
    }

    /// The request whose page key is `key`.
    pub(crate) fn by_page(&self, key: &str) -> Option<EntryRequest> {
        let hash = hash_token(key);
        let mut map = self.lock();
        Self::prune(&mut map);
        map.values().find(|r| r.page_hash == hash).cloned()
    }

    /// Ends request `id`, which its saver [`Self::take`]s, with what saving it did.
    pub(crate) fn finish(
        &self,
        id: &str,
        status: Status,
        secret: Option<SecretInfo>,
        message: Option<String>,
    ) {
        if let Some(r) = self.lock().get_mut(id)
            && r.view.status == Status::Waiting
        {
            r.saving = false;
            r.view.status = status;
            r.view.url = None;
            r.view.secret = secret;
            r.view.message = message;
        }
    }

    /// Declines request `id` if its page still takes a value; else says where it stands (a
    /// value being saved is never declined under its saver).
    pub(crate) fn decline(&self, id: &str, message: &str) -> Result<(), Standing> {
        let mut map = self.lock();
        let Some(r) = map.get_mut(id) else {
            return Err(Standing::Ended);
        };
        if r.saving {
            return Err(Standing::Saving);
        }
        match r.view.status {
            Status::Waiting => {
                r.view.status = Status::Declined;
                r.view.url = None;
                r.view.message = Some(message.to_owned());
                Ok(())
            }
            Status::Written => Err(Standing::Written),
            Status::Declined => Err(Standing::Ended),
        }
    }

    /// Takes request `id` for saving: only one post of its page saves (the others find it
    /// taken and wait for the outcome).
    pub(crate) fn take(&self, id: &str) -> bool {
        let mut map = self.lock();
        match map.get_mut(id) {
            Some(r) if r.open() => {
                // Closed to other posts; `finish` or `release` says how it ended.
                r.saving = true;
                true
            }
            _ => false,
        }
    }

    /// Binds request `id`'s page to the browser whose key hashes to `browser`, where its
    /// person just signed in.
    pub(crate) fn signed_in(&self, id: &str, browser: String) {
        if let Some(r) = self.lock().get_mut(id) {
            r.browser = Some(browser);
        }
    }

    /// Gives request `id` back to its page after a value it refused (the person corrects it).
    pub(crate) fn release(&self, id: &str) {
        if let Some(r) = self.lock().get_mut(id) {
            r.saving = false;
        }
    }
}

/// The fields of `POST /v1/secrets/entry-requests`.
const ASK_FIELDS: &[&str] = &[
    "operation",
    "secret_type",
    "app_id",
    "secret_path",
    "metadata",
    "client",
];

/// `POST /v1/secrets/entry-requests`: a page where the person types a secret's value → 201.
async fn ask(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    // A write transaction: the checks below lock the app as a secret's write does.
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let fields = Fields::from_body(json_object(body)?, ASK_FIELDS)?;
    let operation = match fields.string("operation")?.as_deref() {
        Some("create") => Operation::Create,
        Some("update") => Operation::Update,
        None => return Err(ApiError::invalid("operation", "is required")),
        Some(_) => return Err(ApiError::invalid("operation", "must be create or update")),
    };
    let target = Target::read(&fields, "secret_type", "secret_path")?;
    let metadata = fields.object("metadata", Part::Metadata)?;
    let client = fields
        .string("client")?
        .map(|c| c.chars().filter(|c| !c.is_control()).take(100).collect());
    // What the value will need, checked now: the person types nothing for a call that fails.
    match operation {
        Operation::Create => {
            let ns = target.namespace(&mut tx, &caller, Op::Create).await?;
            if secrets::find(&mut tx, ns.scope.as_str(), &ns.owner_id, &target.path)
                .await?
                .is_some()
            {
                return Err(super::secrets::taken(&target.path));
            }
        }
        Operation::Update => {
            let (ns, row) = target.find(&mut tx, &caller, Op::Change).await?;
            authorize(&caller, &ns, Op::Change, Some(&row))?;
        }
    }
    tx.commit().await?;
    let key = Token::generate("").map_err(|e| ApiError::Internal(e.to_string()))?;
    let key = key.expose().to_owned();
    // In the query string, which request logs never record (they record the path).
    let url = format!("{}/secrets/enter?page={key}", state.mcp().base(&headers));
    let expires_at = rfc3339(now_millis() + TTL.as_millis() as i64);
    let view = EntryRequestView {
        id: uuid::Uuid::new_v4().to_string(),
        status: Status::Waiting,
        operation,
        secret_type: target.scope.as_str(),
        app_id: target.app_id.clone(),
        secret_path: target.path.clone(),
        url: Some(url),
        expires_at,
        secret: None,
        message: None,
    };
    let token = super::bearer(&headers)?;
    state.entry_requests().insert(EntryRequest {
        view: view.clone(),
        page_hash: hash_token(&key),
        token_hash: token.hash(),
        user_id: caller.user_id.clone(),
        target,
        metadata,
        client,
        ends: Instant::now() + TTL,
        saving: false,
        browser: None,
    })?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// `GET /v1/secrets/entry-requests/{id}`: where the caller's request stands.
async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<EntryRequestView>, ApiError> {
    let (tx, _) = state.begin_as(&headers, Access::Read).await?;
    drop(tx);
    let request = state
        .entry_requests()
        .of(&id, &super::bearer(&headers)?.hash())
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "no secret entry request {id:?} of yours: it ended over ten minutes ago, the platform restarted, or it never was"
            ))
        })?;
    let mut view = request.view.clone();
    if request.lapsed() {
        view.status = Status::Declined;
        view.url = None;
        view.message = Some("nobody typed a value in time; ask again".into());
    }
    Ok(Json(view))
}

/// `DELETE /v1/secrets/entry-requests/{id}`: the person declined in the assistant; the page
/// takes no value any more → 204 (409 when the value was saved already).
async fn cancel(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let (tx, _) = state.begin_as(&headers, Access::Read).await?;
    drop(tx);
    let requests = state.entry_requests();
    let token_hash = super::bearer(&headers)?.hash();
    if requests.of(&id, &token_hash).is_none() {
        return Err(ApiError::NotFound(format!(
            "no secret entry request {id:?} of yours"
        )));
    }
    match requests.decline(&id, "the person declined in the assistant") {
        Ok(()) | Err(Standing::Ended) => Ok(StatusCode::NO_CONTENT),
        Err(Standing::Saving) => Err(ApiError::FailedPrecondition(
            "the person is saving the value on the page just now; read the request again".into(),
        )),
        Err(Standing::Written) => Err(ApiError::FailedPrecondition(
            "the person saved the value already; delete_secret removes it".into(),
        )),
    }
}
