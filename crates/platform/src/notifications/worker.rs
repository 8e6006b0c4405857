//! The delivery worker: every second (and at start, for what was queued while the server was
//! down) it takes the due deliveries, leases them, and sends each in a task of its own, so a
//! receiver that hangs holds up nothing but its own delivery. A failed attempt is retried
//! after [`super::Retries::after`]; the last failed one fails the delivery for good.

use std::time::Duration;

use slipway_api::notifications::Notification;

use super::Notifier;
use crate::db::now_millis;
use crate::store::notifications::{self as rows, DeliveryRow, Outcome};

/// How often due deliveries are looked for.
const POLL: Duration = Duration::from_secs(1);
/// Deliveries taken per look.
const BATCH: i64 = 32;
/// How long a taken delivery is left to its attempt before another look may take it again
/// (longer than any channel's timeout).
const LEASE: Duration = Duration::from_secs(120);

/// Runs until the notifier stops.
pub(super) async fn run(notifier: &Notifier) {
    let inner = &notifier.inner;
    loop {
        match take_due(notifier).await {
            Ok(due) => {
                for delivery in due {
                    let me = notifier.clone();
                    inner
                        .tracker
                        .spawn(async move { attempt(&me, delivery).await });
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the pending notifications"),
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = inner.stop.cancelled() => return,
        }
    }
}

async fn take_due(notifier: &Notifier) -> Result<Vec<DeliveryRow>, sqlx::Error> {
    let now = now_millis();
    let lease = now + i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX);
    let mut tx = notifier.inner.db.begin_write().await?;
    let due = rows::claim_due(&mut tx, now, lease, BATCH).await?;
    tx.commit().await?;
    Ok(due)
}

/// One attempt at `delivery`, recorded with what follows it.
async fn attempt(notifier: &Notifier, delivery: DeliveryRow) {
    let inner = &notifier.inner;
    let number = delivery.attempts + 1;
    let error = send(notifier, &delivery).await.err();
    let outcome = match &error {
        None => Outcome::Delivered,
        Some(_) if number >= i64::from(inner.retries.attempts) => Outcome::GaveUp,
        Some(_) => {
            let wait = inner
                .retries
                .after(u32::try_from(number).unwrap_or(u32::MAX));
            Outcome::RetryAt(now_millis() + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX))
        }
    };
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        rows::record_attempt(&mut tx, &delivery.id, number, error.as_deref(), outcome).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = recorded {
        tracing::error!(delivery_id = %delivery.id, error = %e, "cannot record a notification attempt");
    }
    match (&error, outcome) {
        (None, _) => {
            tracing::info!(delivery_id = %delivery.id, channel_id = %delivery.channel_id, attempt = number, "notification delivered")
        }
        (Some(why), Outcome::GaveUp) => {
            tracing::warn!(delivery_id = %delivery.id, channel_id = %delivery.channel_id, attempt = number, error = %why, "notification failed for good")
        }
        (Some(why), _) => {
            tracing::warn!(delivery_id = %delivery.id, channel_id = %delivery.channel_id, attempt = number, error = %why, "notification failed; it will be retried")
        }
    }
}

async fn send(notifier: &Notifier, delivery: &DeliveryRow) -> Result<(), String> {
    let channel = {
        let mut tx = notifier
            .inner
            .db
            .begin_read()
            .await
            .map_err(|e| e.to_string())?;
        let channel = rows::channel_by_id(&mut tx, &delivery.channel_id)
            .await
            .map_err(|e| e.to_string())?;
        tx.commit().await.map_err(|e| e.to_string())?;
        channel.ok_or("the channel was deleted")?
    };
    let config = notifier.open(&channel)?;
    let event: Notification =
        serde_json::from_str(&delivery.payload).map_err(|_| "the queued event is corrupt")?;
    notifier
        .inner
        .sender
        .send(&config, &delivery.id, &event, now_millis() / 1000)
        .await
        .map_err(|e| e.to_string())
}
