//! Notifications over HTTP (docs/notifications.md): the events there are, the account's
//! channels (admins add, delete and test them; everyone lists them, to subscribe), the
//! subscriptions (an app's owners subscribe to its events; admins to the whole account's),
//! and the deliveries with their attempts.
//!
//! - `GET /v1/notifications/events`
//! - `GET|POST /v1/account/notifications/channels`, `DELETE …/channels/{channel}`,
//!   `POST …/channels/{channel}/test`
//! - `GET|POST /v1/account/notifications/subscriptions`, `DELETE …/subscriptions/{id}`
//! - `GET /v1/account/notifications/deliveries?channel=&app_id=&limit=`

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::Value;
use slipway_api::notifications::{
    Attempt, Channel, ChannelList, Delivery, DeliveryList, EventKind, NewChannel, Subscription,
    SubscriptionList, TestResult,
};
use slipway_identity::people::require_admin;

use super::apps::authorized_app;
use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState, json_object};
use crate::db::{Tx, now_millis, rfc3339};
use crate::model::Caller;
use crate::policy::AppAction;
use crate::store::notifications::{self as rows, ChannelRow, DeliveryRow, SubscriptionRow};

/// Deliveries listed unless `limit` says otherwise, and at most.
const DELIVERIES_LISTED: i64 = 50;
const DELIVERIES_MAX: i64 = 500;

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/notifications/events", get(list_events))
        .route(
            "/account/notifications/channels",
            get(list_channels).post(add_channel),
        )
        .route(
            "/account/notifications/channels/{channel}",
            axum::routing::delete(delete_channel),
        )
        .route(
            "/account/notifications/channels/{channel}/test",
            post(test_channel),
        )
        .route(
            "/account/notifications/subscriptions",
            get(list_subscriptions).post(subscribe),
        )
        .route(
            "/account/notifications/subscriptions/{id}",
            axum::routing::delete(unsubscribe),
        )
        .route("/account/notifications/deliveries", get(list_deliveries))
}

/// One event in `GET /v1/notifications/events`.
#[derive(Debug, Serialize)]
pub struct EventInfo {
    /// Its name.
    pub name: &'static str,
    /// What it means.
    pub description: &'static str,
    /// Whether it is about one app (else only whole-account subscriptions hear it).
    pub about_an_app: bool,
}

/// `GET /v1/notifications/events`.
#[derive(Debug, Serialize)]
pub struct EventList {
    /// Every event a subscription can name.
    pub events: Vec<EventInfo>,
}

async fn list_events(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<EventList>, ApiError> {
    let (tx, _caller) = state.begin_as(&headers, Access::Read).await?;
    tx.commit().await?;
    Ok(Json(EventList {
        events: subscribable()
            .map(|k| EventInfo {
                name: k.as_str(),
                description: k.describe(),
                about_an_app: k.is_about_an_app(),
            })
            .collect(),
    }))
}

/// The events a subscription may name ("test" is only sent by "send a test").
fn subscribable() -> impl Iterator<Item = EventKind> {
    EventKind::ALL.into_iter().filter(|k| *k != EventKind::Test)
}

fn channel_view(r: ChannelRow) -> Channel {
    Channel {
        id: r.id,
        name: r.name,
        kind: r.kind,
        target: r.target,
        created_at: rfc3339(r.created_at),
        last_delivery_failed: r.last_failed,
    }
}

async fn list_channels(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<ChannelList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    caller.require_account_wide("the account's notification channels")?;
    let channels = rows::channels(&mut tx, &caller.account_id).await?;
    tx.commit().await?;
    Ok(Json(ChannelList {
        channels: channels.into_iter().map(channel_view).collect(),
    }))
}

/// The fields a new channel takes: its name and kind, and the notify crate's settings.
fn channel_fields() -> Vec<&'static str> {
    ["name", "kind"]
        .into_iter()
        .chain(slipway_notify::channel::SETTINGS.iter().copied())
        .collect()
}

/// A channel's name ([`slipway_notify::channel::NAME_PATTERN`]).
fn channel_name(raw: &str) -> Result<String, ApiError> {
    if !slipway_notify::channel::valid_name(raw) {
        return Err(ApiError::invalid(
            "name",
            "must be a letter or digit, then letters, digits, '.', '_' or '-', 64 at most",
        ));
    }
    Ok(raw.to_owned())
}

/// A field that is a list of strings (`to`, `events`); absent is empty.
fn strings(map: &serde_json::Map<String, Value>, name: &str) -> Result<Vec<String>, ApiError> {
    let list = || ApiError::invalid(name, "must be a list of strings");
    match map.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(list))
            .collect(),
        Some(_) => Err(list()),
    }
}

fn new_secret() -> String {
    crate::vault::random_secret("whsec_")
}

async fn add_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<NewChannel>), ApiError> {
    let map = json_object(body)?;
    let fields = Fields::from_body(map.clone(), &channel_fields())?;
    let name = channel_name(&fields.required("name")?)?;
    let draft = slipway_notify::Draft {
        kind: fields.required("kind")?,
        url: fields.string("url")?,
        secret: fields.string("secret")?,
        host: fields.string("host")?,
        port: fields.integer("port")?,
        username: fields.string("username")?,
        password: fields.string("password")?,
        from: fields.string("from")?,
        to: strings(&map, "to")?,
        ca_certificate: fields.string("ca_certificate")?,
    };
    let made_secret = draft.kind == "webhook" && draft.secret.is_none();
    let config = draft
        .check(new_secret)
        .map_err(|e| ApiError::invalid(e.field, e.rule))?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    caller.require_account_wide("the account's notification channels")?;
    require_admin(&mut tx, &caller, "manage notification channels").await?;
    let id = format!("chn_{}", uuid::Uuid::new_v4().simple());
    let plain = serde_json::to_vec(&config).map_err(|e| ApiError::Internal(e.to_string()))?;
    let sealed = state
        .vault()
        .seal_channel(&id, &plain)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let row = ChannelRow {
        id,
        account_id: caller.account_id.clone(),
        name,
        kind: config.kind().to_owned(),
        target: config.target(),
        sealed,
        created_at: now_millis(),
        last_failed: None,
    };
    if !rows::insert_channel(&mut tx, &row, &caller.user_id).await? {
        return Err(ApiError::AlreadyExists {
            field: "name".into(),
            message: format!("the account has a channel called {:?}", row.name),
        });
    }
    tx.commit().await?;
    tracing::info!(channel_id = %row.id, kind = %row.kind, "notification channel added");
    let signing_secret = match (&config, made_secret) {
        (slipway_notify::ChannelConfig::Webhook { secret, .. }, true) => Some(secret.clone()),
        _ => None,
    };
    Ok((
        StatusCode::CREATED,
        Json(NewChannel {
            channel: channel_view(row),
            signing_secret,
        }),
    ))
}

/// The caller's account's channel `ident` (its id or name), or 404.
async fn channel(tx: &mut Tx, caller: &Caller, ident: &str) -> Result<ChannelRow, ApiError> {
    rows::find_channel(tx, &caller.account_id, ident)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no notification channel {:?}", ident.trim())))
}

async fn delete_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(ident): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    caller.require_account_wide("the account's notification channels")?;
    require_admin(&mut tx, &caller, "manage notification channels").await?;
    let found = channel(&mut tx, &caller, &ident).await?;
    rows::delete_channel(&mut tx, &found.id).await?;
    tx.commit().await?;
    tracing::info!(channel_id = %found.id, "notification channel deleted");
    Ok(Json(
        serde_json::json!({"id": found.id, "name": found.name, "deleted": true}),
    ))
}

async fn test_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(ident): Path<String>,
) -> Result<Json<TestResult>, ApiError> {
    let notifier = state.notifier()?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    caller.require_account_wide("the account's notification channels")?;
    require_admin(&mut tx, &caller, "test notification channels").await?;
    let found = channel(&mut tx, &caller, &ident).await?;
    let who = slipway_identity::people::me(&mut tx, &caller).await?;
    let (delivery_id, event) =
        crate::notifications::Notifier::queue_test(&mut tx, &found, &who.email).await?;
    tx.commit().await?;
    // The request's transaction is over before the receiver is called: a slow receiver holds
    // no database lock.
    let error = notifier.send_test(&found, &delivery_id, &event).await?;
    Ok(Json(TestResult {
        delivered: error.is_none(),
        error,
    }))
}

fn subscription_view(r: SubscriptionRow) -> Subscription {
    Subscription {
        id: r.id,
        channel_id: r.channel_id,
        channel_name: r.channel_name,
        app_id: r.app_id,
        app_name: r.app_name,
        events: r
            .events
            .iter()
            .filter_map(|e| EventKind::parse(e))
            .collect(),
        created_at: rfc3339(r.created_at),
    }
}

/// Whether the caller may see (or change) a subscription: an admin any; others those of the
/// apps they can view (or own, to change).
async fn may(
    tx: &mut Tx,
    caller: &Caller,
    app_id: Option<&str>,
    action: AppAction,
) -> Result<bool, ApiError> {
    // A token limited to some apps sees only their subscriptions, an admin's too.
    let account_wide = caller.scope.apps.is_none();
    if account_wide
        && caller.is_admin()
        && slipway_identity::people::is_admin(tx, &caller.user_id).await?
    {
        return Ok(true);
    }
    Ok(match app_id {
        Some(id) => authorized_app(tx, caller, id, action).await.is_ok(),
        None => account_wide && action == AppAction::View,
    })
}

async fn list_subscriptions(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<SubscriptionList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let mut shown = Vec::new();
    for s in rows::subscriptions(&mut tx, &caller.account_id).await? {
        if may(&mut tx, &caller, s.app_id.as_deref(), AppAction::View).await? {
            shown.push(subscription_view(s));
        }
    }
    tx.commit().await?;
    Ok(Json(SubscriptionList {
        subscriptions: shown,
    }))
}

async fn subscribe(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Subscription>), ApiError> {
    let map = json_object(body)?;
    let fields = Fields::from_body(map.clone(), &["channel", "app_id", "events"])?;
    let channel_ident = fields.required("channel")?;
    let app_raw = fields.string("app_id")?;
    let names = strings(&map, "events")?;
    let events = parse_events(&names, app_raw.is_some())?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let app = match &app_raw {
        Some(raw) => Some(
            authorized_app(&mut tx, &caller, raw, AppAction::Subscribe)
                .await?
                .0,
        ),
        None => {
            require_admin(
                &mut tx,
                &caller,
                "subscribe the whole account to notifications",
            )
            .await?;
            None
        }
    };
    let found = channel(&mut tx, &caller, &channel_ident).await?;
    let row = SubscriptionRow {
        id: format!("sub_{}", uuid::Uuid::new_v4().simple()),
        account_id: caller.account_id.clone(),
        channel_id: found.id,
        channel_name: found.name,
        app_id: app.as_ref().map(|a| a.id.clone()),
        app_name: app.map(|a| a.name),
        events: events.iter().map(|e| e.as_str().to_owned()).collect(),
        created_at: now_millis(),
    };
    rows::insert_subscription(&mut tx, &row, &caller.user_id).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(subscription_view(row))))
}

/// The named events (`all` for every one that fits): an app's subscription takes the events
/// about an app; the whole account's takes every one.
fn parse_events(names: &[String], for_an_app: bool) -> Result<Vec<EventKind>, ApiError> {
    if names.is_empty() {
        return Err(ApiError::invalid(
            "events",
            "is required: a list of event names, or \"all\"",
        ));
    }
    let fits = |k: &EventKind| !for_an_app || k.is_about_an_app();
    if names.iter().any(|n| n == "all") {
        return Ok(subscribable().filter(fits).collect());
    }
    let mut out = Vec::new();
    for name in names {
        let kind = EventKind::parse(name)
            .filter(|k| *k != EventKind::Test)
            .ok_or_else(|| {
                let known: Vec<&str> = subscribable().map(EventKind::as_str).collect();
                ApiError::invalid(
                    "events",
                    format!(
                        "{name:?} is not an event; events are all, {}",
                        known.join(", ")
                    ),
                )
            })?;
        if !fits(&kind) {
            return Err(ApiError::invalid(
                "events",
                format!(
                    "{name} is about the platform, not an app: subscribe the whole account to it"
                ),
            ));
        }
        if !out.contains(&kind) {
            out.push(kind);
        }
    }
    Ok(out)
}

async fn unsubscribe(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let found = rows::find_subscription(&mut tx, &caller.account_id, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no subscription {:?}", id.trim())))?;
    match &found.app_id {
        Some(app_id) => {
            authorized_app(&mut tx, &caller, app_id, AppAction::Subscribe).await?;
        }
        None => require_admin(&mut tx, &caller, "end whole-account subscriptions").await?,
    }
    rows::delete_subscription(&mut tx, &found.id).await?;
    tx.commit().await?;
    Ok(Json(serde_json::json!({"id": found.id, "deleted": true})))
}

fn delivery_view(r: DeliveryRow, attempts: Vec<rows::AttemptRow>) -> Result<Delivery, ApiError> {
    let event = serde_json::from_str(&r.payload)
        .map_err(|_| ApiError::Internal(format!("delivery {} holds a corrupt event", r.id)))?;
    Ok(Delivery {
        id: r.id,
        channel_id: r.channel_id,
        channel_name: r.channel_name,
        event,
        next_attempt_at: (r.status == rows::PENDING)
            .then_some(r.next_attempt_at)
            .flatten()
            .map(rfc3339),
        status: r.status,
        attempts: attempts
            .into_iter()
            .map(|(attempt, at, error)| Attempt {
                attempt,
                at: rfc3339(at),
                error,
            })
            .collect(),
        delivered_at: r.delivered_at.map(rfc3339),
    })
}

async fn list_deliveries(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<DeliveryList>, ApiError> {
    let fields = Fields::from_query(query, &["channel", "app_id", "limit"])?;
    let limit = fields.integer("limit")?.unwrap_or(DELIVERIES_LISTED);
    if !(1..=DELIVERIES_MAX).contains(&limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("must be 1 to {DELIVERIES_MAX}"),
        ));
    }
    let channel_ident = fields.string("channel")?;
    let app_raw = fields.string("app_id")?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    if app_raw.is_none() {
        caller.require_account_wide("the deliveries of every app")?;
    }
    let app_id = match &app_raw {
        Some(raw) => Some(
            authorized_app(&mut tx, &caller, raw, AppAction::View)
                .await?
                .0
                .id,
        ),
        None => {
            require_admin(
                &mut tx,
                &caller,
                "read every notification delivery (give app_id for one app's)",
            )
            .await?;
            None
        }
    };
    let channel_id = match &channel_ident {
        Some(ident) => Some(channel(&mut tx, &caller, ident).await?.id),
        None => None,
    };
    let found = rows::deliveries(
        &mut tx,
        &caller.account_id,
        channel_id.as_deref(),
        app_id.as_deref(),
        limit,
    )
    .await?;
    let mut deliveries = Vec::with_capacity(found.len());
    for d in found {
        let attempts = rows::attempts(&mut tx, &d.id).await?;
        deliveries.push(delivery_view(d, attempts)?);
    }
    tx.commit().await?;
    Ok(Json(DeliveryList { deliveries }))
}
