//! The care staff's worklist: thin commands over the toolkit's worklist client (who am I, a
//! page of requests, one request, claim, release) and the live subscription to the care
//! service's events. Each event goes to the window as [`TASK_EVENT`]; the stream's state
//! (open, dropped and retried, ended) as [`STREAM_EVENT`].
//!
//! A request that arrives open (`requested`), was not seen before and was made lately (not an
//! old one released: `Task::is_recent`), while the window is not focused, is announced by an
//! OS notification through the notification plugin: the program's name and "New request",
//! never a patient's name. The announcement (which asks the service for the program) runs on
//! a thread of its own, so events are not held up. A click on it (the plugin reports the
//! notification's `default` action on Linux, over D-Bus) brings the window to the front and
//! opens the request as a `slipway://care/missing-info/<uuid>` link would.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use slipway_care_client::worklist::{Me, Pacing, Page, Query, Signal, Status, Task, TaskEvent};
use slipway_care_client::{Client, Endpoint, Failure};
use tauri::{AppHandle, Emitter as _, Manager as _, Runtime, State};
use tauri_plugin_notification::NotificationExt as _;

use super::care::Care;
use super::selection::Selection;

/// The window's event for each change of a request (payload: the toolkit's `TaskEvent`).
pub const TASK_EVENT: &str = "care-task";
/// The window's event for the subscription's state (payload: [`StreamState`]).
pub const STREAM_EVENT: &str = "care-events";

/// The subscription's state, for the window's "live" line.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StreamState {
    /// Open; when not `resumed`, changes may have been missed and a list should be loaded again.
    Live {
        /// Whether the stream continues after the last event seen.
        resumed: bool,
    },
    /// Dropped; retried after `retry_in_ms`.
    Retrying {
        /// Why it dropped.
        message: String,
        /// When the next attempt is made.
        retry_in_ms: u64,
    },
    /// Over: retrying cannot help (an unknown token, a service without events).
    Ended {
        /// Why.
        message: String,
    },
}

/// The running subscription and what it remembers.
#[derive(Default)]
pub struct Worklist {
    running: Mutex<Option<Running>>,
    /// Requests the window has seen (listed, or in an event): only others are announced.
    seen: Arc<Mutex<HashSet<String>>>,
    /// The request each shown notification is about, by its id.
    notified: Arc<Mutex<HashMap<i32, String>>>,
    next_id: Arc<AtomicI32>,
}

struct Running {
    endpoint: Endpoint,
    stop: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
    /// The last state sent, for a window that asks again (a reload) while it runs.
    last: Arc<Mutex<Option<StreamState>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Worklist {
    fn saw<'a>(&self, uuids: impl IntoIterator<Item = &'a str>) {
        lock(&self.seen).extend(uuids.into_iter().map(str::to_owned));
    }

    /// Stops the subscription and forgets what it saw and announced: on exit, and when the
    /// window switches environment or signs out (the old service's events, notifications and
    /// their clicks are no longer the window's; a quiet or unreachable service would otherwise
    /// be retried with its token until its next event).
    pub fn shutdown(&self) {
        if let Some(r) = lock(&self.running).take() {
            r.stop.store(true, Ordering::Relaxed);
        }
        lock(&self.seen).clear();
        lock(&self.notified).clear();
    }
}

/// The state to send a window that asks to follow a subscription already running: the last
/// one sent, except that an open stream is sent as not resumed, since the window (reloaded)
/// did not listen while it loaded its lists and should load them again.
fn state_for_new_listener(last: Option<&StreamState>) -> Option<StreamState> {
    match last? {
        StreamState::Live { .. } => Some(StreamState::Live { resumed: false }),
        other => Some(other.clone()),
    }
}

/// Sends `state` to the window, remembered as the last, under one lock so a window that asks
/// meanwhile gets the states in order.
fn send_state<R: Runtime>(
    app: &AppHandle<R>,
    last: &Mutex<Option<StreamState>>,
    state: StreamState,
) {
    let mut last = lock(last);
    let _ = app.emit_to("main", STREAM_EVENT, &state);
    *last = Some(state);
}

async fn with_staff<T: Send + 'static>(
    care: &Arc<Care>,
    work: impl FnOnce(Client) -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    let care = Arc::clone(care);
    tauri::async_runtime::spawn_blocking(move || work(care.staff_client()?))
        .await
        .map_err(|e| Failure::unavailable(format!("the care call stopped unexpectedly: {e}")))?
}

/// Who the staff token belongs to.
#[tauri::command]
pub async fn care_me(care: State<'_, Arc<Care>>) -> Result<Me, Failure> {
    with_staff(&care, |c| c.me()).await
}

/// A page of requests: by status (FHIR codes) and holder, or the page a `next` link names;
/// `total` asks the service to count every match.
#[tauri::command]
pub async fn care_worklist(
    care: State<'_, Arc<Care>>,
    worklist: State<'_, Worklist>,
    statuses: Vec<String>,
    owner: Option<String>,
    next: Option<String>,
    count: Option<u32>,
    total: Option<bool>,
) -> Result<Page, Failure> {
    let query = Query {
        statuses: statuses
            .iter()
            .map(|s| Status::parse(s))
            .collect::<Result<_, _>>()?,
        owner: owner.filter(|o| !o.is_empty()),
        count,
        next: next.filter(|n| !n.is_empty()),
        total: total.unwrap_or(false),
    };
    let page = with_staff(&care, move |c| c.tasks(&query)).await?;
    worklist.saw(page.tasks.iter().map(|t| t.uuid.as_str()));
    Ok(page)
}

/// One request.
#[tauri::command]
pub async fn care_task(care: State<'_, Arc<Care>>, uuid: String) -> Result<Task, Failure> {
    with_staff(&care, move |c| c.task(&uuid)).await
}

/// Claims a request for the signed-in user (a 409 says who holds it).
#[tauri::command]
pub async fn care_claim(care: State<'_, Arc<Care>>, uuid: String) -> Result<Task, Failure> {
    with_staff(&care, move |c| c.claim(&uuid)).await
}

/// Releases a request the signed-in user holds.
#[tauri::command]
pub async fn care_release(care: State<'_, Arc<Care>>, uuid: String) -> Result<Task, Failure> {
    with_staff(&care, move |c| c.release(&uuid)).await
}

/// Starts following the care service's events for the window, unless that subscription runs
/// already (a window that reloads asks again: it is sent the stream's state again); a
/// different service (another environment) replaces it. A switch of environment stops it
/// ([`Worklist::shutdown`]); should a signal still come, or the window have switched without
/// it, the subscription ends there, unshown and unannounced.
#[tauri::command]
pub async fn care_watch_events<R: Runtime>(
    app: AppHandle<R>,
    care: State<'_, Arc<Care>>,
    worklist: State<'_, Worklist>,
) -> Result<(), Failure> {
    let client = with_staff(&care, Ok).await?;
    let mut running = lock(&worklist.running);
    if let Some(r) = running.as_ref()
        && r.endpoint == *client.endpoint()
        && !r.ended.load(Ordering::Relaxed)
    {
        let last = lock(&r.last);
        if let Some(state) = state_for_new_listener(last.as_ref()) {
            let _ = app.emit_to("main", STREAM_EVENT, &state);
        }
        return Ok(());
    }
    if let Some(old) = running.take() {
        old.stop.store(true, Ordering::Relaxed);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let ended = Arc::new(AtomicBool::new(false));
    let last = Arc::new(Mutex::new(None));
    *running = Some(Running {
        endpoint: client.endpoint().clone(),
        stop: Arc::clone(&stop),
        ended: Arc::clone(&ended),
        last: Arc::clone(&last),
    });
    // The environment it follows: after a switch its events are no longer the window's.
    let environment = app.state::<Arc<Selection>>().current();
    let seen = Arc::clone(&worklist.seen);
    let announce = Announcer {
        notified: Arc::clone(&worklist.notified),
        next_id: Arc::clone(&worklist.next_id),
    };
    std::thread::Builder::new()
        .name("care-events".into())
        .spawn(move || {
            let outcome = client.watch(None, Pacing::default(), &stop, |signal| {
                // Stopped, or another environment's window now: nothing more is the window's.
                if stop.load(Ordering::Relaxed)
                    || app.state::<Arc<Selection>>().current() != environment
                {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                match signal {
                    Signal::Task(event) => {
                        let new = remember(&mut lock(&seen), &event);
                        if new && event.status == Status::Requested.as_str() {
                            announce.new_request(&app, &client, &event);
                        }
                        let _ = app.emit_to("main", TASK_EVENT, &event);
                    }
                    Signal::Connected { resumed } => {
                        send_state(&app, &last, StreamState::Live { resumed });
                    }
                    Signal::Lost {
                        message,
                        retry_in_ms,
                    } => send_state(
                        &app,
                        &last,
                        StreamState::Retrying {
                            message,
                            retry_in_ms,
                        },
                    ),
                }
            });
            ended.store(true, Ordering::Relaxed);
            if let Err(failure) = outcome
                && !stop.load(Ordering::Relaxed)
            {
                send_state(
                    &app,
                    &last,
                    StreamState::Ended {
                        message: failure.message,
                    },
                );
            }
        })
        .map_err(|e| {
            Failure::unavailable(format!("the event subscription could not start: {e}"))
        })?;
    Ok(())
}

/// Notes `event`'s request as seen; whether it was not seen before. A request that has ended
/// is forgotten (nothing more is announced about it), so the set holds the live ones.
fn remember(seen: &mut HashSet<String>, event: &TaskEvent) -> bool {
    let ended = [
        Status::Completed,
        Status::Cancelled,
        Status::Failed,
        Status::EnteredInError,
    ]
    .iter()
    .any(|s| s.as_str() == event.status);
    if ended {
        seen.remove(&event.uuid);
        false
    } else {
        seen.insert(event.uuid.clone())
    }
}

/// How many notifications' clicks are remembered (older ones open nothing).
const CLICKABLE: i32 = 100;

/// Shows the OS notifications of new requests.
struct Announcer {
    notified: Arc<Mutex<HashMap<i32, String>>>,
    next_id: Arc<AtomicI32>,
}

/// The notification's text: the program and "New request", nothing about the patient.
fn notification_text(program: Option<&str>) -> (String, String) {
    let body = match program {
        Some(p) => format!("{p}: a missing-information request is open"),
        None => "A missing-information request is open".to_owned(),
    };
    ("New request".to_owned(), body)
}

impl Announcer {
    /// Announces `event`'s request, on a thread of its own, unless the window has the focus
    /// (the list shows it then) or the request is not a new one.
    fn new_request<R: Runtime>(&self, app: &AppHandle<R>, client: &Client, event: &TaskEvent) {
        let focused = app
            .get_webview_window("main")
            .and_then(|w| w.is_focused().ok())
            .unwrap_or(false);
        if focused {
            return;
        }
        let (app, client, uuid) = (app.clone(), client.clone(), event.uuid.clone());
        let announcer = Announcer {
            notified: Arc::clone(&self.notified),
            next_id: Arc::clone(&self.next_id),
        };
        let spawned = std::thread::Builder::new()
            .name("care-announce".into())
            .spawn(move || announcer.show(&app, &client, uuid));
        if let Err(e) = spawned {
            eprintln!("slipway: a new care request could not be announced: {e}");
        }
    }

    fn show<R: Runtime>(&self, app: &AppHandle<R>, client: &Client, uuid: String) {
        // The program's name comes from the request itself (the event does not carry it).
        let task = client.task(&uuid).ok();
        if task
            .as_ref()
            .is_some_and(|t| !t.is_recent(std::time::SystemTime::now()))
        {
            return;
        }
        let program = task.and_then(|t| t.program);
        let (title, body) = notification_text(program.as_deref());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        {
            let mut notified = lock(&self.notified);
            notified.retain(|&older, _| older > id - CLICKABLE);
            notified.insert(id, uuid);
        }
        if let Err(e) = app
            .notification()
            .builder()
            .id(id)
            .title(title)
            .body(body)
            .show()
        {
            eprintln!("slipway: a new care request could not be announced: {e}");
        }
    }
}

/// Opens the request of a notification that is clicked: the window comes to the front and
/// follows `slipway://care/missing-info/<uuid>`, as if that link had been opened.
pub fn open_on_click<R: Runtime>(app: &AppHandle<R>) {
    let handle = app.clone();
    let registered = app.notification().on_action(move |performed| {
        if performed.action_id() != "tap" && performed.action_id() != "default" {
            return;
        }
        let Some(id) = performed.notification().map(|n| n.id()) else {
            return;
        };
        let worklist = handle.state::<Worklist>();
        let uuid = lock(&worklist.notified).get(&id).cloned();
        if let Some(uuid) = uuid {
            super::links::arrived(&handle, &format!("slipway://care/missing-info/{uuid}"));
            super::links::bring_to_front(&handle);
        }
    });
    if let Err(e) = registered {
        eprintln!("slipway: clicks on notifications will not open requests: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_that_asks_again_gets_the_stream_state_and_reloads_its_lists() {
        assert!(state_for_new_listener(None).is_none());
        assert!(matches!(
            state_for_new_listener(Some(&StreamState::Live { resumed: true })),
            Some(StreamState::Live { resumed: false })
        ));
        let retrying = StreamState::Retrying {
            message: "down".into(),
            retry_in_ms: 4000,
        };
        assert!(matches!(
            state_for_new_listener(Some(&retrying)),
            Some(StreamState::Retrying {
                retry_in_ms: 4000,
                ..
            })
        ));
    }

    #[test]
    fn shutdown_stops_the_subscription_and_forgets_what_it_announced() {
        let worklist = Worklist::default();
        let stop = Arc::new(AtomicBool::new(false));
        *lock(&worklist.running) = Some(Running {
            endpoint: Endpoint::new("http://127.0.0.1:9", "care", "tok"),
            stop: Arc::clone(&stop),
            ended: Arc::default(),
            last: Arc::default(),
        });
        worklist.saw(["5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01"]);
        lock(&worklist.notified).insert(1, "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01".into());
        worklist.shutdown();
        assert!(stop.load(Ordering::Relaxed));
        assert!(lock(&worklist.running).is_none());
        assert!(lock(&worklist.seen).is_empty());
        assert!(lock(&worklist.notified).is_empty());
    }

    #[test]
    fn a_request_is_seen_while_it_lives_and_forgotten_once_it_ends() {
        let mut seen = HashSet::new();
        let event = |status: &str| TaskEvent {
            id: None,
            uuid: "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01".into(),
            status: status.into(),
            owner: None,
            owner_name: None,
        };
        assert!(remember(&mut seen, &event("requested")));
        assert!(!remember(&mut seen, &event("in-progress")));
        assert!(
            !remember(&mut seen, &event("requested")),
            "released: not new"
        );
        assert!(!remember(&mut seen, &event("completed")));
        assert!(seen.is_empty());
        assert!(!remember(&mut seen, &event("entered-in-error")));
        assert!(seen.is_empty());
    }

    #[test]
    fn a_notification_names_the_program_and_never_a_patient() {
        let (title, body) = notification_text(Some("DemoCareProgram"));
        assert_eq!(title, "New request");
        assert_eq!(
            body,
            "DemoCareProgram: a missing-information request is open"
        );
        assert_eq!(
            notification_text(None).1,
            "A missing-information request is open"
        );
    }
}
