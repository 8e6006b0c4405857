//! A `queue` resource: pgmq (a message queue in plain SQL) installed in a database of the
//! resource's own on the shared PostgreSQL cluster, and the queue made in it. No extra
//! server runs for queues, and a queue is backed up with its database.
//!
//! The install runs as the resource's role, so the role owns the `pgmq` schema and every
//! queue table: the app may use every pgmq function, and no other role reaches the database.
//! Apps send with `pgmq.send`, receive with `pgmq.read` (a message not deleted within its
//! visibility timeout is delivered again) and delete with `pgmq.delete`; a `fifo` queue is
//! read with `pgmq.read_grouped`, which never hands out a message while an earlier one of its
//! group is being processed.

use pgmq::PGMQueueExt;

use crate::error::ServiceError;
use crate::spec::Credentials;

/// Installs (or upgrades) pgmq in the resource's database and makes the queue `name`
/// (with the index its FIFO reads use when `fifo`). Idempotent.
pub(crate) async fn ensure(
    credentials: &Credentials,
    name: &str,
    fifo: bool,
) -> Result<(), ServiceError> {
    let refused = |action: &str, e: pgmq::PgmqError| ServiceError::Refused {
        server: "postgres",
        action: action.to_owned(),
        reason: e.to_string(),
    };
    let queue = PGMQueueExt::new(credentials.url(), 1)
        .await
        .map_err(|e| refused("connect to a queue's database", e))?;
    let made = async {
        queue
            .install_sql_from_embedded()
            .await
            .map_err(|e| refused("install pgmq", e))?;
        queue
            .create(name)
            .await
            .map_err(|e| refused("create a queue", e))?;
        if fifo {
            queue
                .create_fifo_index(name)
                .await
                .map_err(|e| refused("index a FIFO queue", e))?;
        }
        Ok(())
    }
    .await;
    queue.connection.close().await;
    made
}
