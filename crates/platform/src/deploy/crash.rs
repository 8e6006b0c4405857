//! Crash handling of a RUNNING deployment: when the supervisor gives up on a service that
//! keeps crashing, the deployment and its app become FAILED with the log lines that say why.

use super::*;

/// Watches the services of a deployment that just became RUNNING: when the supervisor gives
/// up on one, [`crash_looped`] fails the deployment. A watcher whose service is stopped (a
/// replacement, a disable, a shutdown) ends without doing anything.
pub(super) fn watch_crashes(
    inner: &Arc<Inner>,
    slot: &Arc<AppSlot>,
    app_id: &str,
    deployment_id: &str,
    watchers: Vec<(String, supervisor::Watcher)>,
) {
    for (service, watcher) in watchers {
        let (task_inner, slot) = (Arc::clone(inner), Arc::clone(slot));
        let (app_id, deployment_id) = (app_id.to_owned(), deployment_id.to_owned());
        inner.tracker.spawn(async move {
            let inner = task_inner;
            if let Some(reason) = watcher.gave_up().await {
                crash_looped(&inner, &slot, &app_id, &deployment_id, &service, &reason).await;
            }
        });
    }
}

/// A service of the RUNNING deployment `deployment_id` kept crashing: unless that deployment
/// was replaced meanwhile, its other services are stopped, its routes removed, the
/// deployment and the app become FAILED with `reason` and the last lines of the service's
/// log, and the service `failed`. The app stays FAILED (not restarted at the next server
/// start) until a new build or an enable deploys it again.
pub(super) async fn crash_looped(
    inner: &Arc<Inner>,
    slot: &AppSlot,
    app_id: &str,
    deployment_id: &str,
    service: &str,
    reason: &str,
) {
    let _guard = slot.lock.lock().await;
    let live = slot.live.lock().ok().and_then(|mut live| {
        if live
            .as_ref()
            .is_some_and(|l| l.deployment_id == deployment_id)
        {
            live.take()
        } else {
            None
        }
    });
    let Some(live) = live else {
        return;
    };
    if let Ok(mut routes) = inner.routes.write() {
        routes.remove(&live.app_name);
    }
    stop_live(inner, live, true).await;
    let log = log_path(&inner.data_dir, deployment_id, service);
    let headline = format!("service {service}: {reason}");
    let reason = format!(
        "{reason} after the deployment was RUNNING; last log lines:\n{}",
        tail(&log, 10)
    );
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        deployments::set_service_status(&mut tx, deployment_id, service, ServiceStatus::Failed)
            .await?;
        deployments::finish(
            &mut tx,
            deployment_id,
            DeploymentStatus::Failed,
            Some(&reason),
        )
        .await?;
        apps::set_status(&mut tx, app_id, AppStatus::Failed, None).await?;
        events::enqueue(
            &mut tx,
            EventKind::CrashLooping,
            Some(app_id),
            None,
            Some(&headline),
        )
        .await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = recorded {
        tracing::error!(app_id, error = %e, "cannot record a crash-looping deployment");
    }
    tracing::warn!(app_id, deployment_id, service, %reason, "deployment FAILED");
}
