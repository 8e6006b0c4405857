//! `GET {base}/{ns}/events`: the worklist's live events as a `text/event-stream`. Each event
//! is `id: <n>`, `event: task`, and a JSON `data` naming the request's UUID, its new Task
//! status and its holder. A client that reconnects with `Last-Event-ID` receives every event
//! after that id (they are rows, see `store::events`); without it, the stream starts now.
//! Same tokens and 401 as every other call, and read access to `DataRequest`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use slipway_server::serve::ShuttingDown;
use tokio::sync::broadcast;

use super::error::{ApiError, ErrorItem};
use super::{AppState, read_as_caller};
use crate::auth::{Access, objects};
use crate::events::POLL;
use crate::store::events;
use crate::store::users::load_caller;

/// How often a quiet stream sends a comment, so proxies and clients see it is alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `{base}/{ns}/events`.
pub fn router() -> Router<AppState> {
    Router::new().route("/events", get(subscribe))
}

/// The id a `Last-Event-ID` header names: 400 naming the header when it is not one of ours.
fn last_event_id(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let Some(raw) = headers.get("last-event-id") else {
        return Ok(None);
    };
    raw.to_str()
        .ok()
        .map(str::trim)
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|id| *id >= 0)
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(
                "INVALID_LAST_EVENT_ID",
                "Last-Event-ID must be the id of an event this stream sent (a whole number)",
                "Last-Event-ID",
            )
        })
}

async fn subscribe(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let token = super::bearer(&headers)?;
    let (tx, caller) = read_as_caller(&state, &headers).await?;
    tx.rollback().await?;
    if !caller.can(objects::DATA_REQUEST, Access::Read) {
        return Err(forbidden());
    }
    let resume = last_event_id(&headers)?;
    // The fan-out first, then the table: an event committed in between comes by both, and
    // the id decides (nothing older than what was sent is sent again). Once the reader reads,
    // every event committed after this listener's position reaches the fan-out.
    let feed = state.events().feed();
    if !state.events().reading(READER_WAIT).await {
        return Err(ApiError::Internal(
            "the worklist's event reader has not started".into(),
        ));
    }
    let (after, catching_up) = match resume {
        Some(id) => (id, true),
        None => {
            let mut tx = state.db().begin_reads().await?;
            let latest = events::latest(&mut tx).await?;
            tx.rollback().await?;
            (latest, false)
        }
    };
    let listener = Listener {
        shutting_down: state.events().shutting_down().clone(),
        state,
        token,
        feed,
        after,
        catching_up,
        pending: VecDeque::new(),
        recheck_at: Instant::now() + RECHECK,
    };
    let stream = futures_util::stream::unfold(listener, Listener::next);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response())
}

fn forbidden() -> ApiError {
    ApiError::Forbidden(vec![ErrorItem::new(
        "OBJECT_ACCESS_DENIED",
        format!(
            "the worklist's events need read access to {}",
            objects::DATA_REQUEST
        ),
        objects::DATA_REQUEST,
    )])
}

/// How long a subscription waits for the event reader (it starts with the server).
const READER_WAIT: Duration = Duration::from_secs(10);

/// How often a stream checks that its token still names a user who may read data requests:
/// a deleted user or a revoked grant stops receiving within this time.
const RECHECK: Duration = Duration::from_secs(30);

/// One stream's state: what it has sent up to, what it has but has not sent, and whether it
/// reads the table (catching up) or the fan-out.
struct Listener {
    state: AppState,
    token: String,
    feed: broadcast::Receiver<Arc<events::Event>>,
    shutting_down: ShuttingDown,
    after: i64,
    catching_up: bool,
    pending: VecDeque<Arc<events::Event>>,
    recheck_at: Instant,
}

impl Listener {
    /// The next event to send; `None` ends the stream.
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Listener)> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                if e.id <= self.after {
                    continue;
                }
                self.after = e.id;
                let event = Event::default()
                    .id(e.id.to_string())
                    .event("task")
                    .json_data(&*e)
                    .unwrap_or_else(|_| Event::default().comment("unencodable event"));
                return Some((Ok(event), self));
            }
            if self.shutting_down.has_begun() {
                return None;
            }
            if Instant::now() >= self.recheck_at {
                if !self.still_allowed().await {
                    return None;
                }
                self.recheck_at = Instant::now() + RECHECK;
            }
            if self.catching_up {
                match self.read().await {
                    Ok(batch) if batch.is_empty() => self.catching_up = false,
                    Ok(batch) => self.pending.extend(batch.into_iter().map(Arc::new)),
                    Err(e) => {
                        tracing::warn!(error = %e, "reading worklist events failed");
                        tokio::time::sleep(POLL).await;
                    }
                }
                continue;
            }
            tokio::select! {
                received = self.feed.recv() => match received {
                    Ok(e) => self.pending.push_back(e),
                    // Fell behind the fan-out: the table has what was dropped.
                    Err(broadcast::error::RecvError::Lagged(_)) => self.catching_up = true,
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                () = self.shutting_down.begun() => {}
                _ = tokio::time::sleep_until(self.recheck_at.into()) => {}
            }
        }
    }

    async fn read(&self) -> Result<Vec<events::Event>, crate::store::StoreError> {
        let mut tx = self.state.db().begin_reads().await?;
        let batch = events::after(&mut tx, self.after).await?;
        tx.rollback().await?;
        Ok(batch)
    }

    /// Whether the token still names a user with read access to data requests.
    async fn still_allowed(&self) -> bool {
        let Ok(mut tx) = self.state.db().begin_reads().await else {
            // The database is unreachable: keep the stream; the next check decides.
            return true;
        };
        let caller = load_caller(&mut tx, &self.token).await;
        let _ = tx.rollback().await;
        match caller {
            Ok(Some(caller)) => caller.can(objects::DATA_REQUEST, Access::Read),
            Ok(None) => false,
            Err(_) => true,
        }
    }
}
