//! Notifications (docs/notifications.md): what happened is written as deliveries in the
//! transaction that records it ([`events::enqueue`]), so an event the platform recorded is
//! never lost; one worker ([`worker`]) sends each to its channel with `slipway_notify`,
//! retries a failure with backoff, and keeps every attempt. A receiver that is down delays
//! only its own deliveries: attempts run side by side, each bounded by its channel's timeout.
//! "Send a test" ([`Notifier::send_test`]) sends at once and answers whether it arrived.

pub mod certs;
pub mod events;
pub mod servers;
pub mod worker;

use std::sync::Arc;

use slipway_api::notifications::Notification;
use slipway_notify::{ChannelConfig, Sender};

use crate::db::Db;
use crate::store::notifications::{self as rows, ChannelRow};
use crate::vault::Vault;

pub use crate::config::Retries;

/// The platform's notification sender: the worker's handle and "send a test". Cheap to clone.
#[derive(Debug, Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Db,
    vault: Vault,
    sender: Sender,
    retries: Retries,
    stop: tokio_util::sync::CancellationToken,
    tracker: tokio_util::task::TaskTracker,
}

impl Notifier {
    /// A notifier over `db`; [`Notifier::start`] starts its worker.
    pub fn new(db: Db, vault: Vault, retries: Retries) -> Self {
        Self {
            inner: Arc::new(Inner {
                db,
                vault,
                sender: Sender::new(),
                retries,
                stop: tokio_util::sync::CancellationToken::new(),
                tracker: tokio_util::task::TaskTracker::new(),
            }),
        }
    }

    /// Starts the worker that sends pending deliveries (those queued while the server was
    /// down first), and the watch that tells of backing servers going down.
    pub fn start(&self) {
        let me = self.clone();
        self.inner
            .tracker
            .spawn(async move { worker::run(&me).await });
        let me = self.clone();
        self.inner
            .tracker
            .spawn(async move { servers::watch(&me).await });
    }

    /// Checks the TLS certificate at `cert` every `every` and tells when it expires soon
    /// (`certificate.expiring`).
    pub fn watch_certificate(&self, cert: std::path::PathBuf, every: std::time::Duration) {
        let me = self.clone();
        self.inner
            .tracker
            .spawn(async move { certs::watch(&me, &cert, every).await });
    }

    /// Stops the worker and waits for the attempts under way.
    pub async fn stop(&self) {
        self.inner.stop.cancel();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }

    /// A channel's settings, opened.
    pub fn open(&self, channel: &ChannelRow) -> Result<ChannelConfig, String> {
        let plain = self
            .inner
            .vault
            .open_channel(&channel.id, &channel.sealed)
            .map_err(|e| format!("cannot open the channel's settings: {e}"))?;
        serde_json::from_slice(&plain).map_err(|_| "the channel's settings are corrupt".to_owned())
    }

    /// Queues a test message for `channel` in the request's transaction `tx` (so a channel
    /// deleted meanwhile cannot take it), for [`Notifier::send_test`] after the commit.
    pub async fn queue_test(
        tx: &mut crate::db::Tx,
        channel: &ChannelRow,
        by: &str,
    ) -> Result<(String, Notification), sqlx::Error> {
        let kind = slipway_api::notifications::EventKind::Test;
        let event = Notification {
            id: events::new_event_id(),
            kind,
            occurred_at: crate::db::rfc3339(crate::db::now_millis()),
            app: None,
            summary: events::summary(kind, None, Some(&format!("sent by {by}"))),
            reason: None,
            test: true,
        };
        let id = events::new_delivery_id();
        let payload = serde_json::to_string(&event).unwrap_or_default();
        // Not due: the worker never takes it; this request sends it.
        rows::insert_delivery(
            tx,
            &id,
            &channel.account_id,
            &channel.id,
            &event.id,
            None,
            &payload,
            None,
        )
        .await?;
        Ok((id, event))
    }

    /// Sends the test [`Notifier::queue_test`] queued, now, and records its one attempt
    /// (never retried): `None` when it arrived, else why not.
    pub async fn send_test(
        &self,
        channel: &ChannelRow,
        delivery_id: &str,
        event: &Notification,
    ) -> Result<Option<String>, sqlx::Error> {
        let error = match self.open(channel) {
            Ok(config) => self
                .inner
                .sender
                .send(&config, delivery_id, event, crate::db::now_millis() / 1000)
                .await
                .err()
                .map(|e| e.to_string()),
            Err(e) => Some(e),
        };
        let outcome = if error.is_none() {
            rows::Outcome::Delivered
        } else {
            rows::Outcome::GaveUp
        };
        let mut tx = self.inner.db.begin_write().await?;
        rows::record_attempt(&mut tx, delivery_id, 1, error.as_deref(), outcome).await?;
        tx.commit().await?;
        Ok(error)
    }
}
