//! `slipway://` links reaching the window: on the command line of a first start (the
//! deep-link plugin's `get_current`) or forwarded by a second start (the single-instance
//! plugin hands its arguments to the deep-link plugin, whose `on_open_url` fires here). The
//! shell only maps: each link is read by the toolkit's grammar (`slipway_toolkit::links`),
//! queued, and the window is told [`LINKS_WAITING`]; the UI takes the queue with
//! [`take_links`] once it listens and at every nudge. Queueing rather than sending the link in
//! the event means a link that arrives before the page listens (a first start, or during a
//! reload after a switch of environment) is neither lost nor followed twice.
//! Links are never logged: an invite link holds a code that is a secret until used.

use std::sync::Mutex;

use serde_json::{Value, json};
use tauri::{AppHandle, Emitter as _, Manager as _, Runtime, State};
use tauri_plugin_deep_link::DeepLinkExt as _;

/// The event the main window gets when links wait in the queue (no payload).
pub const LINKS_WAITING: &str = "links-waiting";

/// The links that arrived and the UI has not taken yet, each already read: the link's
/// meaning (`{"kind": "missing_info", "uuid": …}`, see `slipway_toolkit::links::Link`) or
/// `{"kind": "error", "error": …}` saying what is wrong with it.
#[derive(Default)]
pub struct Links(Mutex<Vec<Value>>);

impl Links {
    fn push(&self, raw: &str) {
        let read = match slipway_toolkit::links::parse(raw) {
            Ok(link) => serde_json::to_value(link)
                .unwrap_or_else(|e| json!({"kind": "error", "error": e.to_string()})),
            Err(e) => json!({"kind": "error", "error": e.to_string()}),
        };
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(read);
    }

    fn take(&self) -> Vec<Value> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// The links waiting for the window, oldest first; taking them empties the queue.
#[tauri::command]
pub fn take_links(links: State<'_, Links>) -> Vec<Value> {
    links.take()
}

/// Queues `raw` for the window and tells it so.
pub fn arrived<R: Runtime>(app: &AppHandle<R>, raw: &str) {
    app.state::<Links>().push(raw);
    // The window may not listen yet: it takes the queue when it starts.
    let _ = app.emit_to("main", LINKS_WAITING, ());
}

/// Queues the link this process was started with, and every link forwarded later.
pub fn listen<R: Runtime>(app: &AppHandle<R>) {
    let deep_link = app.deep_link();
    match deep_link.get_current() {
        Ok(Some(urls)) => {
            for url in urls {
                arrived(app, url.as_str());
            }
        }
        _ => {
            if let Some(raw) = unreadable_link(std::env::args()) {
                arrived(app, &raw);
            }
        }
    }
    let handle = app.clone();
    deep_link.on_open_url(move |event| {
        for url in event.urls() {
            arrived(&handle, url.as_str());
        }
    });
}

/// A sole argument that is meant as a `slipway:` link but is no URL at all. The deep-link
/// plugin passes over it (it takes only arguments that parse as URLs of its schemes), yet
/// the person who clicked it should hear what is wrong rather than see nothing happen.
/// The first item is the program, as in `std::env::args`.
pub fn unreadable_link(args: impl IntoIterator<Item = String>) -> Option<String> {
    let mut args = args.into_iter().skip(1);
    let arg = args.next()?;
    if args.next().is_some() {
        return None;
    }
    let ours = arg
        .trim_start()
        .get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case("slipway:"));
    (ours && tauri::Url::parse(&arg).is_err()).then_some(arg)
}

/// Shows the main window, brings it back from minimised and gives it the focus (a second
/// start means the person wants the window they have).
pub fn bring_to_front<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

#[cfg(test)]
mod tests {
    use super::unreadable_link;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn only_a_sole_slipway_argument_that_is_no_url_is_taken_here() {
        assert_eq!(
            unreadable_link(args(&["slipway-desktop", "slipway://[x/y"])),
            Some("slipway://[x/y".to_owned())
        );
        assert_eq!(
            unreadable_link(args(&["slipway-desktop", "SLIPWAY://care:x/"])),
            Some("SLIPWAY://care:x/".to_owned())
        );
        // A readable link is the deep-link plugin's; other arguments are not links.
        for list in [
            &["slipway-desktop"][..],
            &["slipway-desktop", "slipway://apps/x"],
            &["slipway-desktop", "--automation"],
            &["slipway-desktop", "slipway://[x/y", "more"],
        ] {
            assert_eq!(unreadable_link(args(list)), None, "{list:?}");
        }
    }
}
