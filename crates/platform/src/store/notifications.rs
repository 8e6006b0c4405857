//! `notify_channel`, `notify_subscription`, `notify_delivery`, `notify_attempt`: an
//! account's notification channels, who hears what, and each delivery with its attempts
//! (migration 0009).

use sqlx::Row;

use crate::db::{Tx, now_millis};
use crate::model::Sealed;

/// A channel as stored (its settings sealed).
#[derive(Debug, Clone)]
pub struct ChannelRow {
    /// `chn_…`.
    pub id: String,
    /// Its account.
    pub account_id: String,
    /// Unique in the account.
    pub name: String,
    /// webhook, slack, email.
    pub kind: String,
    /// Where it delivers, without secrets.
    pub target: String,
    /// The sealed settings.
    pub sealed: Sealed,
    /// Epoch ms.
    pub created_at: i64,
    /// Whether its newest delivery failed (`None` before any, or while it is pending).
    pub last_failed: Option<bool>,
}

macro_rules! channel_select {
    ($rest:literal) => {
        concat!(
            "SELECT c.id, c.account_id, c.name, c.kind, c.target, c.key_id, c.nonce, \
             c.ciphertext, c.created_at, \
             (SELECT d.status FROM notify_delivery d WHERE d.channel_id = c.id \
              AND d.status <> 'pending' ORDER BY d.created_at DESC, d.id DESC LIMIT 1) \
             FROM notify_channel c ",
            $rest
        )
    };
}

fn channel(r: &sqlx::any::AnyRow) -> Result<ChannelRow, sqlx::Error> {
    let last: Option<String> = r.try_get(9)?;
    Ok(ChannelRow {
        id: r.try_get(0)?,
        account_id: r.try_get(1)?,
        name: r.try_get(2)?,
        kind: r.try_get(3)?,
        target: r.try_get(4)?,
        sealed: super::sealed(r, 5)?,
        created_at: r.try_get(8)?,
        last_failed: last.map(|s| s == FAILED),
    })
}

/// Being sent or waiting for its next attempt.
pub const PENDING: &str = "pending";
/// A receiver took it.
pub const DELIVERED: &str = "delivered";
/// Every attempt failed.
pub const FAILED: &str = "failed";

/// Stores a new channel; `false` when the account has one of that name.
pub async fn insert_channel(tx: &mut Tx, row: &ChannelRow, by: &str) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO notify_channel (id, account_id, name, kind, target, key_id, nonce, \
         ciphertext, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (account_id, name) DO NOTHING",
    )
    .bind(row.id.clone())
    .bind(row.account_id.clone())
    .bind(row.name.clone())
    .bind(row.kind.clone())
    .bind(row.target.clone())
    .bind(row.sealed.key_id.clone())
    .bind(row.sealed.nonce.clone())
    .bind(row.sealed.ciphertext.clone())
    .bind(by.to_owned())
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The account's channels, by name.
pub async fn channels(tx: &mut Tx, account_id: &str) -> Result<Vec<ChannelRow>, sqlx::Error> {
    let rows = sqlx::query(channel_select!("WHERE c.account_id = $1 ORDER BY c.name"))
        .bind(account_id.to_owned())
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(channel).collect()
}

/// The account's channel whose id or name is `ident`.
pub async fn find_channel(
    tx: &mut Tx,
    account_id: &str,
    ident: &str,
) -> Result<Option<ChannelRow>, sqlx::Error> {
    let row = sqlx::query(channel_select!(
        "WHERE c.account_id = $1 AND (c.id = $2 OR c.name = $2)"
    ))
    .bind(account_id.to_owned())
    .bind(ident.trim().to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    row.as_ref().map(channel).transpose()
}

/// The channel `id` of any account (the delivery worker's read).
pub async fn channel_by_id(tx: &mut Tx, id: &str) -> Result<Option<ChannelRow>, sqlx::Error> {
    let row = sqlx::query(channel_select!("WHERE c.id = $1"))
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(channel).transpose()
}

/// Deletes a channel with its subscriptions, deliveries and their attempts.
pub async fn delete_channel(tx: &mut Tx, id: &str) -> Result<(), sqlx::Error> {
    for sql in [
        "DELETE FROM notify_attempt WHERE delivery_id IN \
         (SELECT id FROM notify_delivery WHERE channel_id = $1)",
        "DELETE FROM notify_delivery WHERE channel_id = $1",
        "DELETE FROM notify_subscription WHERE channel_id = $1",
        "DELETE FROM notify_channel WHERE id = $1",
    ] {
        sqlx::query(sql)
            .bind(id.to_owned())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Every channel's id and sealed settings (key rotation).
pub async fn all_sealed(tx: &mut Tx) -> Result<Vec<(String, Sealed)>, sqlx::Error> {
    let rows = sqlx::query("SELECT id, key_id, nonce, ciphertext FROM notify_channel ORDER BY id")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, super::sealed(r, 1)?)))
        .collect()
}

/// Replaces a channel's sealed settings (key rotation).
pub async fn reseal(tx: &mut Tx, id: &str, sealed: &Sealed) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE notify_channel SET key_id = $1, nonce = $2, ciphertext = $3 WHERE id = $4")
        .bind(sealed.key_id.clone())
        .bind(sealed.nonce.clone())
        .bind(sealed.ciphertext.clone())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The master key ids channels were sealed with.
pub async fn key_ids_in_use(tx: &mut Tx) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT DISTINCT key_id FROM notify_channel")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}

/// A subscription, with its channel's and app's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionRow {
    /// `sub_…`.
    pub id: String,
    /// Its account.
    pub account_id: String,
    /// The channel.
    pub channel_id: String,
    /// The channel's name.
    pub channel_name: String,
    /// The app, or `None` for the whole account.
    pub app_id: Option<String>,
    /// The app's name.
    pub app_name: Option<String>,
    /// The event names.
    pub events: Vec<String>,
    /// Epoch ms.
    pub created_at: i64,
}

macro_rules! subscription_select {
    ($rest:literal) => {
        concat!(
            "SELECT s.id, s.account_id, s.channel_id, c.name, s.app_id, a.name, s.events, \
             s.created_at FROM notify_subscription s \
             JOIN notify_channel c ON c.id = s.channel_id \
             LEFT JOIN app a ON a.id = s.app_id ",
            $rest
        )
    };
}

fn subscription(r: &sqlx::any::AnyRow) -> Result<SubscriptionRow, sqlx::Error> {
    let events: String = r.try_get(6)?;
    Ok(SubscriptionRow {
        id: r.try_get(0)?,
        account_id: r.try_get(1)?,
        channel_id: r.try_get(2)?,
        channel_name: r.try_get(3)?,
        app_id: r.try_get(4)?,
        app_name: r.try_get(5)?,
        events: events.split(',').map(str::to_owned).collect(),
        created_at: r.try_get(7)?,
    })
}

/// Stores a subscription.
pub async fn insert_subscription(
    tx: &mut Tx,
    row: &SubscriptionRow,
    by: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO notify_subscription (id, account_id, channel_id, app_id, events, \
         created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(row.id.clone())
    .bind(row.account_id.clone())
    .bind(row.channel_id.clone())
    .bind(row.app_id.clone())
    .bind(row.events.join(","))
    .bind(by.to_owned())
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The account's subscriptions, newest first.
pub async fn subscriptions(
    tx: &mut Tx,
    account_id: &str,
) -> Result<Vec<SubscriptionRow>, sqlx::Error> {
    let rows = sqlx::query(subscription_select!(
        "WHERE s.account_id = $1 ORDER BY s.created_at DESC, s.id DESC"
    ))
    .bind(account_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(subscription).collect()
}

/// The account's subscription `id`.
pub async fn find_subscription(
    tx: &mut Tx,
    account_id: &str,
    id: &str,
) -> Result<Option<SubscriptionRow>, sqlx::Error> {
    let row = sqlx::query(subscription_select!(
        "WHERE s.account_id = $1 AND s.id = $2"
    ))
    .bind(account_id.to_owned())
    .bind(id.trim().to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    row.as_ref().map(subscription).transpose()
}

/// Deletes a subscription.
pub async fn delete_subscription(tx: &mut Tx, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM notify_subscription WHERE id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Forgets the subscriptions to a deleted app (its deliveries stay, as history).
pub async fn delete_for_app(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM notify_subscription WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The channels (with their account) that hear `event` about `app_id` of `account_id`: the
/// app's own subscriptions and the account's whole-account ones. With no account (a
/// platform event), every whole-account subscription of every account.
pub async fn listeners(
    tx: &mut Tx,
    account_id: Option<&str>,
    app_id: Option<&str>,
    event: &str,
) -> Result<Vec<(String, String)>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT channel_id, account_id, events FROM notify_subscription \
         WHERE (CAST($1 AS TEXT) IS NULL OR account_id = $1) AND (app_id IS NULL OR app_id = $2) \
         ORDER BY channel_id",
    )
    .bind(account_id.map(str::to_owned))
    .bind(app_id.map(str::to_owned))
    .fetch_all(&mut **tx)
    .await?;
    let mut out: Vec<(String, String)> = Vec::new();
    for r in &rows {
        let (channel, account, events): (String, String, String) =
            (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        if events.split(',').any(|e| e == event) && !out.iter().any(|(c, _)| *c == channel) {
            out.push((channel, account));
        }
    }
    Ok(out)
}

/// A delivery as the worker and the lists read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    /// `dlv_…`.
    pub id: String,
    /// Its account.
    pub account_id: String,
    /// The channel.
    pub channel_id: String,
    /// The channel's name.
    pub channel_name: String,
    /// The app the event is about.
    pub app_id: Option<String>,
    /// The event (JSON).
    pub payload: String,
    /// pending, delivered, failed.
    pub status: String,
    /// Attempts made.
    pub attempts: i64,
    /// Epoch ms, while pending.
    pub next_attempt_at: Option<i64>,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub delivered_at: Option<i64>,
}

macro_rules! delivery_select {
    ($rest:literal) => {
        concat!(
            "SELECT d.id, d.account_id, d.channel_id, c.name, d.app_id, d.payload, d.status, \
             d.attempts, d.next_attempt_at, d.created_at, d.delivered_at \
             FROM notify_delivery d JOIN notify_channel c ON c.id = d.channel_id ",
            $rest
        )
    };
}

fn delivery(r: &sqlx::any::AnyRow) -> Result<DeliveryRow, sqlx::Error> {
    Ok(DeliveryRow {
        id: r.try_get(0)?,
        account_id: r.try_get(1)?,
        channel_id: r.try_get(2)?,
        channel_name: r.try_get(3)?,
        app_id: r.try_get(4)?,
        payload: r.try_get(5)?,
        status: r.try_get(6)?,
        attempts: r.try_get(7)?,
        next_attempt_at: r.try_get(8)?,
        created_at: r.try_get(9)?,
        delivered_at: r.try_get(10)?,
    })
}

/// Queues one event for one channel, due at `due_at` (epoch ms; `None` leaves it to the
/// caller, as "send a test" does, and the worker never takes it). A channel deleted
/// meanwhile gets nothing, rather than failing the write the event belongs to.
#[allow(clippy::too_many_arguments)]
pub async fn insert_delivery(
    tx: &mut Tx,
    id: &str,
    account_id: &str,
    channel_id: &str,
    event_id: &str,
    app_id: Option<&str>,
    payload: &str,
    due_at: Option<i64>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO notify_delivery (id, account_id, channel_id, event_id, app_id, payload, \
         status, attempts, next_attempt_at, created_at) \
         SELECT $1, $2, $3, $4, $5, $6, $7, 0, $8, $9 \
         WHERE EXISTS (SELECT 1 FROM notify_channel WHERE id = $3)",
    )
    .bind(id.to_owned())
    .bind(account_id.to_owned())
    .bind(channel_id.to_owned())
    .bind(event_id.to_owned())
    .bind(app_id.map(str::to_owned))
    .bind(payload.to_owned())
    .bind(PENDING.to_owned())
    .bind(due_at)
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The pending deliveries due at `now`, oldest first, each leased until `lease_until` (so a
/// slow attempt is not started twice, and one cut short by a crash is tried again).
pub async fn claim_due(
    tx: &mut Tx,
    now: i64,
    lease_until: i64,
    limit: i64,
) -> Result<Vec<DeliveryRow>, sqlx::Error> {
    let rows = sqlx::query(delivery_select!(
        "WHERE d.status = $1 AND d.next_attempt_at <= $2 \
         ORDER BY d.next_attempt_at, d.id LIMIT $3"
    ))
    .bind(PENDING.to_owned())
    .bind(now)
    .bind(limit)
    .fetch_all(&mut **tx)
    .await?;
    let due: Vec<DeliveryRow> = rows.iter().map(delivery).collect::<Result<_, _>>()?;
    for d in &due {
        sqlx::query("UPDATE notify_delivery SET next_attempt_at = $1 WHERE id = $2")
            .bind(lease_until)
            .bind(d.id.clone())
            .execute(&mut **tx)
            .await?;
    }
    Ok(due)
}

/// How an attempt ended: delivered, to be retried at a time, or given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver took it.
    Delivered,
    /// Failed; tried again at this epoch ms.
    RetryAt(i64),
    /// Failed for the last time.
    GaveUp,
}

/// Records attempt number `attempt` of delivery `id` and what follows; `false` (nothing
/// written) when the delivery is gone (its channel was deleted meanwhile).
pub async fn record_attempt(
    tx: &mut Tx,
    id: &str,
    attempt: i64,
    error: Option<&str>,
    outcome: Outcome,
) -> Result<bool, sqlx::Error> {
    let now = now_millis();
    let (status, next, delivered) = match outcome {
        Outcome::Delivered => (DELIVERED, None, Some(now)),
        Outcome::RetryAt(at) => (PENDING, Some(at), None),
        Outcome::GaveUp => (FAILED, None, None),
    };
    let updated = sqlx::query(
        "UPDATE notify_delivery SET status = $1, attempts = $2, next_attempt_at = $3, \
         delivered_at = $4 WHERE id = $5",
    )
    .bind(status.to_owned())
    .bind(attempt)
    .bind(next)
    .bind(delivered)
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    if updated.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query(
        "INSERT INTO notify_attempt (delivery_id, attempt, at, error) VALUES ($1, $2, $3, $4)",
    )
    .bind(id.to_owned())
    .bind(attempt)
    .bind(now)
    .bind(error.map(str::to_owned))
    .execute(&mut **tx)
    .await?;
    Ok(true)
}

/// The account's newest deliveries (of one channel, or about one app, when given).
pub async fn deliveries(
    tx: &mut Tx,
    account_id: &str,
    channel_id: Option<&str>,
    app_id: Option<&str>,
    limit: i64,
) -> Result<Vec<DeliveryRow>, sqlx::Error> {
    let rows = sqlx::query(delivery_select!(
        "WHERE d.account_id = $1 AND (CAST($2 AS TEXT) IS NULL OR d.channel_id = $2) \
         AND (CAST($3 AS TEXT) IS NULL OR d.app_id = $3) ORDER BY d.created_at DESC, d.id DESC LIMIT $4"
    ))
    .bind(account_id.to_owned())
    .bind(channel_id.map(str::to_owned))
    .bind(app_id.map(str::to_owned))
    .bind(limit)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(delivery).collect()
}

/// One attempt: its number, when (epoch ms) and why it failed.
pub type AttemptRow = (i64, i64, Option<String>);

/// The attempts of a delivery, oldest first.
pub async fn attempts(tx: &mut Tx, delivery_id: &str) -> Result<Vec<AttemptRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT attempt, at, error FROM notify_attempt WHERE delivery_id = $1 ORDER BY attempt",
    )
    .bind(delivery_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect()
}
