//! What a message says: a subject and a plain text written from the event alone, so no
//! channel can say more than the event holds (no secret, no log line, no app data).

use slipway_api::notifications::Notification;

/// The subject (an e-mail's, a chat message's first line).
pub fn subject(n: &Notification) -> String {
    let test = if n.test { " (test)" } else { "" };
    format!("[Slipway]{test} {}", n.summary)
}

/// The plain text: what happened, why, to which app, when, and the event's id.
pub fn text(n: &Notification) -> String {
    let mut lines = vec![n.summary.clone()];
    if let Some(reason) = &n.reason {
        lines.push(format!("Reason: {reason}"));
    }
    if let Some(app) = &n.app {
        lines.push(format!(
            "App: {} (see `slipway why {}` or the desktop's app page)",
            app.name, app.name
        ));
    }
    lines.push(format!("When: {}", n.occurred_at));
    lines.push(format!("Event: {} ({})", n.kind, n.id));
    if n.test {
        lines.push("This is a test message: the channel works.".to_owned());
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use slipway_api::notifications::{EventApp, EventKind};

    #[test]
    fn a_message_names_the_app_the_reason_and_the_event() {
        let n = Notification {
            id: "evt_1".into(),
            kind: EventKind::JobFailed,
            occurred_at: "2026-11-28T10:00:00Z".into(),
            app: Some(EventApp {
                id: "a".into(),
                name: "shop".into(),
            }),
            summary: "Job nightly of shop failed".into(),
            reason: Some("exit code 3".into()),
            test: false,
        };
        assert_eq!(subject(&n), "[Slipway] Job nightly of shop failed");
        let body = text(&n);
        for part in ["Reason: exit code 3", "App: shop", "job.failed (evt_1)"] {
            assert!(body.contains(part), "{body}");
        }
        assert!(!body.contains("test message"));
    }
}
