//! `GET {base}/{ns}/events`: the worklist's live events as a `text/event-stream`. Each event
//! is `id: <n>`, `event: task`, and a JSON `data` naming the request's UUID, its new Task
//! status and its holder. A client that reconnects with `Last-Event-ID` receives every event
//! after that id (they are rows, see `store::events`); without it, the stream starts now.
//! Same tokens and 401 as every other call, and read access to `DataRequest`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::watch;

use super::error::{ApiError, ErrorItem};
use super::{AppState, read_as_caller};
use crate::auth::{Access, objects};
use crate::events::{POLL, Signal};
use crate::store::events;

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
    let (mut tx, caller) = read_as_caller(&state, &headers).await?;
    if !caller.can(objects::DATA_REQUEST, Access::Read) {
        return Err(ApiError::Forbidden(vec![ErrorItem::new(
            "OBJECT_ACCESS_DENIED",
            format!(
                "the worklist's events need read access to {}",
                objects::DATA_REQUEST
            ),
            objects::DATA_REQUEST,
        )]));
    }
    let after = match last_event_id(&headers)? {
        Some(id) => id,
        None => events::latest(&mut tx).await?,
    };
    tx.rollback().await?;
    let listener = Listener {
        signal: state.events().subscribe(),
        state,
        after,
        pending: VecDeque::new(),
    };
    let stream = futures_util::stream::unfold(listener, Listener::next);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response())
}

/// One stream's state: what it has sent up to, and what it has read but not sent.
struct Listener {
    state: AppState,
    signal: watch::Receiver<Signal>,
    after: i64,
    pending: VecDeque<events::Event>,
}

impl Listener {
    /// The next event to send; `None` ends the stream (the server is closing).
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Listener)> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                let event = Event::default()
                    .id(e.id.to_string())
                    .event("task")
                    .json_data(&e)
                    .unwrap_or_else(|_| Event::default().comment("unencodable event"));
                return Some((Ok(event), self));
            }
            // Marked seen before reading, so a commit during the read wakes the wait below.
            if self.signal.borrow_and_update().closing {
                return None;
            }
            match self.read().await {
                Ok(batch) if !batch.is_empty() => {
                    self.after = batch.last().map_or(self.after, |e| e.id);
                    self.pending.extend(batch);
                    continue;
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "reading worklist events failed"),
            }
            tokio::select! {
                changed = self.signal.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }

    async fn read(&self) -> Result<Vec<events::Event>, crate::store::StoreError> {
        let mut tx = self.state.db().begin_reads().await?;
        let batch = events::after(&mut tx, self.after).await?;
        tx.rollback().await?;
        Ok(batch)
    }
}
