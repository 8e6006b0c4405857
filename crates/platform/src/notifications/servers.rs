//! Backing servers that go down: every exit the services' supervisor sees
//! ([`slipway_services::exits`]) becomes a `service.down` event for each app it concerns (the
//! resource's app, the table server's app, or every app with a resource on a shared server).
//! The server is restarted with backoff meanwhile; one that keeps dying is told at most once
//! per [`QUIET`] per app, so a channel is not flooded while it crash-loops.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use slipway_api::notifications::EventKind;
use slipway_services::{ServerExit, Serves};
use tokio::sync::broadcast::error::RecvError;

use super::{Notifier, events};
use crate::store::resources;

/// The least time between two `service.down` events of one server for one app.
pub const QUIET: Duration = Duration::from_secs(600);

/// Runs until the notifier stops.
pub(super) async fn watch(notifier: &Notifier) {
    let inner = &notifier.inner;
    let mut exits = slipway_services::exits();
    let mut told: HashMap<(String, String), Instant> = HashMap::new();
    loop {
        let exit = tokio::select! {
            exit = exits.recv() => exit,
            () = inner.stop.cancelled() => return,
        };
        match exit {
            Ok(exit) => tell(notifier, &exit, &mut told).await,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "backing server exits came faster than they were told"
                );
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// The apps `exit` concerns in this platform's database, and what the server is to them.
async fn concerned(
    notifier: &Notifier,
    exit: &ServerExit,
) -> Result<Vec<(String, String)>, sqlx::Error> {
    Ok(match &exit.serves {
        Serves::Resource(key) => vec![(key.app_id.clone(), format!("{} {}", key.kind, key.name))],
        Serves::App(app_id) => vec![(app_id.clone(), "key-value table".to_owned())],
        Serves::Shared { engines } => {
            let mut tx = notifier.inner.db.begin_read().await?;
            let apps = resources::apps_with_engines(&mut tx, engines).await?;
            tx.commit().await?;
            let what = engines.first().copied().unwrap_or("shared").to_owned();
            apps.into_iter().map(|a| (a, what.clone())).collect()
        }
    })
}

async fn tell(
    notifier: &Notifier,
    exit: &ServerExit,
    told: &mut HashMap<(String, String), Instant>,
) {
    let apps = match concerned(notifier, exit).await {
        Ok(apps) => apps,
        Err(e) => {
            tracing::warn!(server = %exit.server, error = %e, "cannot tell who a backing server's exit concerns");
            return;
        }
    };
    let reason = format!(
        "the {} server ended ({}); the platform restarts it with backoff",
        exit.server, exit.status
    );
    for (app_id, what) in apps {
        let key = (app_id.clone(), exit.server.clone());
        if told.get(&key).is_some_and(|at| at.elapsed() < QUIET) {
            continue;
        }
        told.insert(key, Instant::now());
        events::enqueue_now(
            &notifier.inner.db,
            EventKind::ServiceDown,
            Some(&app_id),
            Some(&what),
            Some(&reason),
        )
        .await;
    }
}
