//! Health after the switch: a RUNNING deployment's services with an endpoint keep being
//! probed at their `healthPath` ([`crate::config::Liveness`]). A service that fails
//! `failures` probes in a row is restarted by its supervisor (with its back-off; the restart
//! noted in its log); one that is restarted `restarts` times without a healthy probe between
//! is crash-looping: the deployment and the app become FAILED with the reason
//! ([`crash_looped`]), as for a service that keeps exiting. A healthy probe after a restart
//! is noted as the recovery.

use super::*;

/// One watched service: its name, its health path, its instance.
pub(super) struct Watched {
    pub service: String,
    pub health_path: String,
    pub live: Arc<LiveService>,
}

/// The services of `plan` that have an endpoint, among those `started`.
pub(super) fn watched(plan: &Plan, started: &[Started]) -> Vec<Watched> {
    plan.order
        .iter()
        .filter(|spec| !spec.endpoints.is_empty())
        .filter_map(|spec| {
            let live = started
                .iter()
                .find(|s| s.service.request.service == spec.name)?;
            Some(Watched {
                service: spec.name.clone(),
                health_path: spec.health_path.clone(),
                live: Arc::clone(&live.service),
            })
        })
        .collect()
}

/// Watches each service until its deployment is no longer the live one or its supervision
/// ends.
pub(super) fn watch_health(
    inner: &Arc<Inner>,
    slot: &Arc<AppSlot>,
    app_id: &str,
    deployment_id: &str,
    services: Vec<Watched>,
) {
    for watched in services {
        let (inner, slot) = (Arc::clone(inner), Arc::clone(slot));
        let (app_id, deployment_id) = (app_id.to_owned(), deployment_id.to_owned());
        let tracker = inner.tracker.clone();
        tracker.spawn(async move {
            watch_one(&inner, &slot, &app_id, &deployment_id, &watched).await;
        });
    }
}

async fn watch_one(
    inner: &Arc<Inner>,
    slot: &Arc<AppSlot>,
    app_id: &str,
    deployment_id: &str,
    w: &Watched,
) {
    let liveness = inner.liveness;
    let (mut failures, mut restarts) = (0u32, 0u32);
    let mut pause = liveness.interval;
    loop {
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = inner.shutdown.cancelled() => return,
        }
        pause = liveness.interval;
        if w.live.supervised.is_done() || !still_live(slot, deployment_id) {
            return;
        }
        // Between two instances: the supervisor's own crash handling has it.
        if w.live.supervised.snapshot().running_since.is_none() {
            continue;
        }
        if health::probe(&inner.client, w.live.port, &w.health_path).await {
            if restarts > 0 {
                note(&w.live.log, &format!("{} is healthy again", w.service));
                tracing::info!(app_id, deployment_id, service = %w.service, restarts, "service healthy again after restarts");
            }
            (failures, restarts) = (0, 0);
            continue;
        }
        failures += 1;
        if failures < liveness.failures {
            continue;
        }
        failures = 0;
        let failing = format!(
            "its health check GET {} failed {} times in a row",
            w.health_path, liveness.failures
        );
        if restarts >= liveness.restarts {
            let reason = format!(
                "service {} is crash-looping: {failing} again after {restarts} restarts",
                w.service
            );
            crash_looped(inner, slot, app_id, deployment_id, &w.service, &reason).await;
            return;
        }
        restarts += 1;
        tracing::warn!(app_id, deployment_id, service = %w.service, restarts, "health check failing; restarting the service");
        w.live.supervised.restart(format!(
            "{failing} (restart {restarts} of {})",
            liveness.restarts
        ));
        // The new instance gets the start-up allowance, doubled with each restart, before
        // its probes count.
        pause = (liveness.interval * 2u32.saturating_pow(restarts)).min(inner.health_timeout);
    }
}

/// A line in the service's runtime log, between its own output, as the supervisor writes.
fn note(log: &Path, message: &str) {
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(log) {
        let _ = writeln!(f, "==> {message}");
    }
}
