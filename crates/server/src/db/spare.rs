//! Connections kept between one-statement calls.
//!
//! sqlx pings every connection it takes back into its pool (hard-coded in `sqlx-core` 0.9,
//! whatever the pool's options): a round trip to PostgreSQL, or a trip to the connection's
//! worker thread on SQLite, for each call that gave one back. For the calls that are one
//! statement and nothing else (a missing-information GET's read, and its history record on
//! PostgreSQL) that ping is as much work as the call itself, and under load on a small
//! machine each such trip waits for a thread to be scheduled. So a connection such a call
//! finished with cleanly is kept here, up to a few, for the next one. A call that did not
//! finish (its future dropped mid-statement, say) still gives its connection back through
//! sqlx, ping and all.
//!
//! A kept connection is checked out of the pool as far as the pool knows, so the pool is
//! opened with room for [`Spares::CAPACITY`] more connections than it would otherwise need.

use std::sync::Mutex;
use std::time::Instant;

use sqlx::Any;
use sqlx::pool::PoolConnection;

use super::PING_IF_IDLE_FOR;

/// Connections finished with cleanly, newest last, each with when it was kept.
#[derive(Debug, Default)]
pub(super) struct Spares {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    conns: Vec<(PoolConnection<Any>, Instant)>,
    /// The pool is closing: nothing is kept any more (the pool waits for every connection).
    closed: bool,
}

impl Spares {
    /// At most this many connections are kept.
    pub(super) const CAPACITY: usize = 4;

    /// The connection kept last, if any; pinged first if it waited longer than
    /// [`PING_IF_IDLE_FOR`] (the pool's own rule), and given back if that fails.
    pub(super) async fn take(&self) -> Option<PoolConnection<Any>> {
        let (mut conn, kept) = {
            let mut state = self.state.lock().expect("spare connections");
            state.conns.pop()?
        };
        if kept.elapsed() >= PING_IF_IDLE_FOR && sqlx::Connection::ping(&mut *conn).await.is_err() {
            conn.close_on_drop();
            return None;
        }
        Some(conn)
    }

    /// Keeps a connection whose call finished cleanly, or gives it back to the pool when
    /// enough are kept or the pool is closing.
    pub(super) fn keep(&self, conn: PoolConnection<Any>) {
        let refused = {
            let mut state = self.state.lock().expect("spare connections");
            if state.closed || state.conns.len() >= Self::CAPACITY {
                Some(conn)
            } else {
                state.conns.push((conn, Instant::now()));
                None
            }
        };
        // Given back outside the lock: dropping one spawns sqlx's return to the pool.
        drop(refused);
    }

    /// How many connections are kept now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.state.lock().expect("spare connections").conns.len()
    }

    /// Gives every kept connection back and keeps none from now on, so that the pool can
    /// close.
    pub(super) fn close(&self) {
        let conns = {
            let mut state = self.state.lock().expect("spare connections");
            state.closed = true;
            std::mem::take(&mut state.conns)
        };
        drop(conns);
    }
}
