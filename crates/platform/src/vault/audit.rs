//! The audit trail of secret operations: who did what to which path, when, and how it ended
//! (never a value). An entry is filled in as a request is understood; a success is recorded
//! in the request's own transaction, a failure in a transaction of its own after the
//! request's was rolled back, so a refused call is on record too.

use crate::db::{Db, Tx};
use crate::model::Caller;
use crate::store::audit;
use crate::vault::access::Scope;

/// An audit entry under construction: filled in as the request is understood.
pub struct Pending {
    /// The entry as understood so far.
    pub entry: audit::Entry,
}

impl Pending {
    /// An entry of `caller` doing `action` in `scope`, successful until said otherwise.
    pub fn new(caller: &Caller, action: &'static str, scope: Scope) -> Self {
        Self {
            entry: audit::Entry {
                account_id: caller.account_id.clone(),
                user_id: caller.user_id.clone(),
                action,
                scope: scope.as_str().to_owned(),
                app_id: None,
                path: None,
                version: None,
                outcome: "success".into(),
            },
        }
    }

    /// Names the app and path once they are known.
    pub fn at(mut self, app_id: Option<&String>, path: Option<&str>) -> Self {
        self.entry.app_id = app_id.cloned();
        self.entry.path = path.map(str::to_owned);
        self
    }
}

/// Records a successful operation (with the version it produced or read) in the request's
/// transaction, which the caller then commits.
pub async fn record_success(
    tx: &mut Tx,
    mut pending: Pending,
    version: Option<i64>,
) -> Result<(), sqlx::Error> {
    pending.entry.version = version;
    audit::record(tx, &pending.entry).await
}

/// Records a failed operation with its outcome code in a transaction of its own (the
/// request's was rolled back). A failure to record is logged, not answered.
pub async fn record_failure(db: &Db, mut pending: Pending, outcome: &str) {
    pending.entry.outcome = outcome.to_owned();
    let recorded = async {
        let mut tx = db.begin_write().await?;
        audit::record(&mut tx, &pending.entry).await?;
        tx.commit().await
    }
    .await;
    if let Err(err) = recorded {
        tracing::error!(error = %err, "cannot record a failed secret operation in the audit trail");
    }
}
