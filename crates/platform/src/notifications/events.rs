//! Queuing an event: one delivery per channel that hears it, written in the caller's
//! transaction (the one that records what happened), due at once.

use slipway_api::notifications::{EventApp, EventKind, Notification};

use crate::db::{Db, Tx, now_millis, rfc3339};
use crate::store::{apps, notifications as rows};

/// A new event id.
pub fn new_event_id() -> String {
    format!("evt_{}", uuid::Uuid::new_v4().simple())
}

/// A new delivery id.
pub fn new_delivery_id() -> String {
    format!("dlv_{}", uuid::Uuid::new_v4().simple())
}

/// The part of a platform reason a message may carry: its first line, without the log lines
/// the platform appends for people reading the app's status (a log line may hold anything an
/// app printed, patient data included), at most 300 characters.
pub fn headline(reason: &str) -> String {
    let first = reason.lines().next().unwrap_or("");
    let first = first
        .split("; last log lines")
        .next()
        .unwrap_or(first)
        .trim();
    let mut out: String = first.chars().take(300).collect();
    if first.chars().count() > 300 {
        out.push('…');
    }
    out
}

/// The one sentence an event says: about `app` (its name), `subject` being the job, the
/// server or the time left that the kind names.
pub fn summary(kind: EventKind, app: Option<&str>, subject: Option<&str>) -> String {
    let app = app.unwrap_or("an app");
    let subject = subject.unwrap_or("?");
    match kind {
        EventKind::DeploymentFailed => format!("A deployment of {app} failed"),
        EventKind::DeploymentRecovered => format!("{app} is running again"),
        EventKind::CrashLooping => format!("{app} keeps failing and has stopped (FAILED)"),
        EventKind::JobFailed => format!("Job {subject} of {app} failed"),
        EventKind::JobMissed => {
            format!("Job {subject} of {app} was missed while the platform was down")
        }
        EventKind::BackupFailed => "A platform backup failed".to_owned(),
        EventKind::CertificateExpiring => {
            format!("The platform's TLS certificate expires in {subject}")
        }
        EventKind::ServiceDown => format!("The {subject} server of {app} went down"),
        EventKind::Test => format!("A test message from Slipway ({subject})"),
    }
}

/// Queues `kind` about `app_id` (or about the platform, with `None`) for every channel that
/// hears it; returns how many deliveries were queued. `subject` fills the [`summary`];
/// `reason` goes through [`headline`].
pub async fn enqueue(
    tx: &mut Tx,
    kind: EventKind,
    app_id: Option<&str>,
    subject: Option<&str>,
    reason: Option<&str>,
) -> Result<usize, sqlx::Error> {
    let (account, app) = match app_id {
        Some(id) => {
            let Some((name, account)) = apps::name_and_account(tx, id).await? else {
                return Ok(0);
            };
            (
                Some(account),
                Some(EventApp {
                    id: id.to_owned(),
                    name,
                }),
            )
        }
        None => (None, None),
    };
    let listeners = rows::listeners(tx, account.as_deref(), app_id, kind.as_str()).await?;
    if listeners.is_empty() {
        return Ok(0);
    }
    let event = Notification {
        id: new_event_id(),
        kind,
        occurred_at: rfc3339(now_millis()),
        summary: summary(kind, app.as_ref().map(|a| a.name.as_str()), subject),
        app,
        reason: reason.map(headline).filter(|r| !r.is_empty()),
        test: false,
    };
    let payload = serde_json::to_string(&event).unwrap_or_default();
    for (channel_id, account_id) in &listeners {
        rows::insert_delivery(
            tx,
            &new_delivery_id(),
            account_id,
            channel_id,
            &event.id,
            app_id,
            &payload,
            Some(now_millis()),
        )
        .await?;
    }
    Ok(listeners.len())
}

/// [`enqueue`] in a transaction of its own, for an event no other write records; how many
/// deliveries were queued. A failure is logged and queues none (the event is then lost, as
/// the write it would have joined would be).
pub async fn enqueue_now(
    db: &Db,
    kind: EventKind,
    app_id: Option<&str>,
    subject: Option<&str>,
    reason: Option<&str>,
) -> usize {
    let done = async {
        let mut tx = db.begin_write().await?;
        let queued = enqueue(&mut tx, kind, app_id, subject, reason).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(queued)
    }
    .await;
    done.unwrap_or_else(|e| {
        tracing::error!(event = %kind, error = %e, "cannot queue a notification");
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headline_leaves_the_log_lines_out() {
        assert_eq!(
            headline(
                "service web exited 3 times while starting (last: exit code 1); last log lines:\npatient 123"
            ),
            "service web exited 3 times while starting (last: exit code 1)"
        );
        assert_eq!(headline("one\ntwo"), "one");
        assert_eq!(headline(&"x".repeat(400)).chars().count(), 301);
    }
}
