//! The worklist's SQL: the Task search (keyset paging along an index, never OFFSET), one
//! Task, and claims. A claim is one conditional `UPDATE` (`… WHERE claimed_by IS NULL OR
//! claimed_by = caller`), so of two staff members claiming at once exactly one changes the
//! row: on SQLite the writes take turns, on PostgreSQL the second waits for the first's row
//! lock and then finds the row no longer matches.

use sqlx::Row;

use super::base::Result;
use super::data_requests::{DATA_REQUEST_COLUMNS, data_request, data_request_columns, holder_join};
use crate::db::{Tx, now};
use crate::model::{ACTIVE, COMPLETED, Cursor, DataRequest, Search, TaskStatus};

/// One worklist row: the request and what its Task shows of its patient and program.
#[derive(Debug, Clone)]
pub struct TaskRow {
    /// The request (with its holder).
    pub request: DataRequest,
    /// External ID of the patient account, when the care plan and account exist.
    pub patient_external_id: Option<String>,
    /// The patient's display name parts: `name`, `first_name`, `last_name`.
    pub patient_name: [Option<String>; 3],
    /// Display name of the care program.
    pub program_name: Option<String>,
}

/// The columns after [`data_request_columns`] and the joins they need.
macro_rules! task_columns {
    () => {
        concat!(
            data_request_columns!(),
            ", a.external_id, a.name, a.first_name, a.last_name, pg.name"
        )
    };
}
macro_rules! task_joins {
    () => {
        concat!(
            holder_join!(),
            " LEFT JOIN care_plan cp ON cp.external_id = d.care_plan_external_id \
             LEFT JOIN program pg ON pg.api_name = cp.program_api_name \
             LEFT JOIN account a ON a.id = cp.patient_account_id"
        )
    };
}

fn task_row(r: &sqlx::any::AnyRow) -> std::result::Result<TaskRow, sqlx::Error> {
    let c = DATA_REQUEST_COLUMNS;
    Ok(TaskRow {
        request: data_request(r, 0)?,
        patient_external_id: r.try_get(c)?,
        patient_name: [r.try_get(c + 1)?, r.try_get(c + 2)?, r.try_get(c + 3)?],
        program_name: r.try_get(c + 4)?,
    })
}

/// A page of the search: its Tasks, and where the next page starts when there is one.
#[derive(Debug, Clone)]
pub struct Page {
    /// The rows, in worklist order.
    pub rows: Vec<TaskRow>,
    /// The cursor of the next page.
    pub next: Option<Cursor>,
}

/// The arms of a status filter, given `today` as the placeholder of today's date: one term
/// per stored status, each starting with `d.status = …`, the leading equality of the index
/// `(status, expiration_date, id)`; a request matches when it matches any arm. Each arm is
/// one index range in expiry order; [`search`] reads a page from each and merges them, since
/// neither planner merges ranges of an `IN` or an `OR` in order (SQLite scanned past every
/// request of the other statuses instead: 70 ms for the first page of the ended requests at
/// 100,000). No arm at all matches every request.
fn status_arms(statuses: &[TaskStatus], today: &str) -> Vec<String> {
    use TaskStatus::*;
    if statuses.is_empty() || statuses.len() == TaskStatus::ALL.len() {
        return Vec::new();
    }
    let has = |s| statuses.contains(&s);
    let unexpired = format!("d.expiration_date >= {today}");
    let mut active = Vec::new();
    match (has(Requested), has(InProgress)) {
        (true, true) => active.push(unexpired),
        (true, false) => active.push(format!("{unexpired} AND d.claimed_by IS NULL")),
        (false, true) => active.push(format!("{unexpired} AND d.claimed_by IS NOT NULL")),
        (false, false) => {}
    }
    if has(Failed) {
        active.push(format!("d.expiration_date < {today}"));
    }
    let mut arms = Vec::new();
    match active.len() {
        0 => {}
        1 => arms.push(format!("d.status = '{ACTIVE}' AND {}", active[0])),
        _ => arms.push(format!(
            "d.status = '{ACTIVE}' AND (({}))",
            active.join(") OR (")
        )),
    }
    if has(Completed) {
        arms.push(format!("d.status = '{COMPLETED}'"));
    }
    if has(Cancelled) {
        arms.push("d.status = 'Cancelled'".to_owned());
        arms.push("d.status = 'Ended'".to_owned());
    }
    arms
}

/// The search's filter: its status arms, the terms every match meets (holder, cursor), and
/// the values they bind, in order.
struct Filter {
    arms: Vec<String>,
    terms: Vec<String>,
    binds: Vec<String>,
}

impl Filter {
    fn of(search: &Search) -> Filter {
        let mut f = Filter {
            arms: Vec::new(),
            terms: Vec::new(),
            binds: Vec::new(),
        };
        // Today's date is bound only when an arm uses it (`$1` is its placeholder then).
        f.arms = status_arms(&search.statuses, "$1");
        if f.arms.iter().any(|a| a.contains("$1")) {
            f.bind(crate::fields::today());
        }
        if let Some(owner) = &search.owner {
            let p = f.bind(owner.clone());
            f.terms.push(format!(
                "d.claimed_by = (SELECT u.id FROM app_user u WHERE u.external_id = {p})"
            ));
        }
        f
    }

    /// Adds a value and answers its placeholder.
    fn bind(&mut self, value: String) -> String {
        self.binds.push(value);
        format!("${}", self.binds.len())
    }

    /// The `WHERE` clause of one arm (all requests for `None`) with the common terms.
    fn where_clause(&self, arm: Option<&str>) -> String {
        let terms: Vec<&str> = arm
            .into_iter()
            .chain(self.terms.iter().map(String::as_str))
            .collect();
        if terms.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", terms.join(" AND "))
        }
    }

    /// One `Option` per arm, or a single `None` without any: what to run a statement for.
    fn each_arm(&self) -> Vec<Option<&str>> {
        if self.arms.is_empty() {
            vec![None]
        } else {
            self.arms.iter().map(|a| Some(a.as_str())).collect()
        }
    }

    fn bound<'q>(
        &self,
        mut q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
        for b in &self.binds {
            q = q.bind(b.clone());
        }
        q
    }
}

/// One page of a Task search, in expiry then age order, starting after its cursor.
///
/// The page is chosen from `data_request` alone, a page from each status arm merged, and only
/// its rows are joined to what the Task shows: with the joins in the same `SELECT`, SQLite's
/// planner (after `ANALYZE`, with a small `care_plan` table) scanned and sorted the whole
/// table for an unfiltered page, 100 ms at 100,000 requests instead of a fraction of one. The
/// cursor is a row value, which both planners turn into one index range: a page deep in the
/// list costs what the first does.
pub async fn search(tx: &mut Tx, search: &Search) -> Result<Page> {
    let mut filter = Filter::of(search);
    if let Some(after) = &search.after {
        let date = filter.bind(after.expiration_date.clone());
        let id = filter.bind(after.id.to_string());
        filter.terms.push(format!(
            "(d.expiration_date, d.id) > ({date}, CAST({id} AS BIGINT))"
        ));
    }
    let limit = search.count + 1;
    let arms: Vec<String> = filter
        .each_arm()
        .into_iter()
        .enumerate()
        .map(|(i, arm)| {
            format!(
                "SELECT * FROM (SELECT d.* FROM data_request d{} \
                 ORDER BY d.expiration_date, d.id LIMIT {limit}) arm{i}",
                filter.where_clause(arm)
            )
        })
        .collect();
    let sql = format!(
        "SELECT {} FROM ({}) d{} ORDER BY d.expiration_date, d.id LIMIT {limit}",
        task_columns!(),
        arms.join(" UNION ALL "),
        task_joins!(),
    );
    let rows = filter
        .bound(sqlx::query(sqlx::AssertSqlSafe(sql)))
        .fetch_all(&mut **tx)
        .await?;
    let mut rows = rows
        .iter()
        .map(task_row)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let next = if rows.len() > search.count as usize {
        rows.truncate(search.count as usize);
        rows.last().map(|r| Cursor {
            expiration_date: r.request.expiration_date.clone(),
            id: r.request.id,
        })
    } else {
        None
    };
    Ok(Page { rows, next })
}

/// How many requests the search matches in all (`Bundle.total`): the sum of a count per
/// status arm, each an index range.
pub async fn count(tx: &mut Tx, search: &Search) -> Result<i64> {
    let filter = Filter::of(search);
    let counts: Vec<String> = filter
        .each_arm()
        .into_iter()
        .map(|arm| {
            format!(
                "(SELECT COUNT(*) FROM data_request d{})",
                filter.where_clause(arm)
            )
        })
        .collect();
    let sql = format!("SELECT CAST({} AS BIGINT)", counts.join(" + "));
    let row = filter
        .bound(sqlx::query(sqlx::AssertSqlSafe(sql)))
        .fetch_one(&mut **tx)
        .await?;
    Ok(row.try_get(0)?)
}

/// The Task row of one request.
pub async fn find(tx: &mut Tx, uuid: &str) -> Result<Option<TaskRow>> {
    let row = sqlx::query(concat!(
        "SELECT ",
        task_columns!(),
        " FROM data_request d",
        task_joins!(),
        " WHERE d.external_id = $1"
    ))
    .bind(uuid.to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.as_ref().map(task_row).transpose()?)
}

/// Makes `user_id` the holder if the request is still active and unexpired and nobody else
/// holds it; whether it does now. The conditions are in the `UPDATE` itself: on PostgreSQL
/// a concurrent answer or claim that commits first is seen by it, not only by what this
/// transaction read before.
pub async fn claim(tx: &mut Tx, request_id: i64, user_id: i64) -> Result<bool> {
    let at = now();
    let done = sqlx::query(
        "UPDATE data_request SET claimed_by = $1, claimed_at = $2, updated_at = $2 \
         WHERE id = $3 AND (claimed_by IS NULL OR claimed_by = $1) AND status = $4 \
         AND expiration_date >= $5",
    )
    .bind(user_id)
    .bind(at)
    .bind(request_id)
    .bind(ACTIVE)
    .bind(crate::fields::today())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Clears the claim if `holder` (the current holder, as read in this transaction) still
/// holds it; whether it did.
pub async fn release(tx: &mut Tx, request_id: i64, holder: i64) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE data_request SET claimed_by = NULL, claimed_at = NULL, updated_at = $1 \
         WHERE id = $2 AND claimed_by = $3",
    )
    .bind(now())
    .bind(request_id)
    .bind(holder)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// At most this many expiries are announced per write transaction.
pub const EXPIRY_BATCH: usize = 500;

/// Active requests past their date whose expiry no event has announced yet (at most
/// [`EXPIRY_BATCH`]):
/// row ids, UUIDs and holders. A read: the sweeper looks every second, and opens a write
/// transaction only when this finds something.
pub async fn unannounced_expiries(tx: &mut Tx) -> Result<Vec<(i64, String, Option<i64>)>> {
    let rows = sqlx::query(
        "SELECT id, external_id, claimed_by FROM data_request \
         WHERE status = $1 AND expiry_announced = 0 AND expiration_date < $2 LIMIT 500",
    )
    .bind(ACTIVE)
    .bind(crate::fields::today())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect::<std::result::Result<_, sqlx::Error>>()
        .map_err(Into::into)
}

/// Marks one request's expiry announced if it is still active, expired and unannounced:
/// whether this call did (a change committed since the read, or another process's sweep,
/// means there is nothing to announce).
pub async fn mark_expiry_announced(tx: &mut Tx, request_id: i64) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE data_request SET expiry_announced = 1 WHERE id = $1 AND status = $2 \
         AND expiry_announced = 0 AND expiration_date < $3",
    )
    .bind(request_id)
    .bind(ACTIVE)
    .bind(crate::fields::today())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Releases every claim of a user (being deleted): the UUIDs released.
pub async fn release_all_of(tx: &mut Tx, user_id: i64) -> Result<Vec<String>> {
    let rows = sqlx::query("SELECT external_id FROM data_request WHERE claimed_by = $1")
        .bind(user_id)
        .fetch_all(&mut **tx)
        .await?;
    sqlx::query(
        "UPDATE data_request SET claimed_by = NULL, claimed_at = NULL, updated_at = $1 \
         WHERE claimed_by = $2",
    )
    .bind(now())
    .bind(user_id)
    .execute(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, sqlx::Error>>()
        .map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_arm_leads_with_one_stored_status() {
        use TaskStatus::*;
        assert_eq!(
            status_arms(&[Requested, InProgress], "$1"),
            ["d.status = 'Active' AND d.expiration_date >= $1"]
        );
        assert_eq!(
            status_arms(&[Requested], "$1"),
            ["d.status = 'Active' AND d.expiration_date >= $1 AND d.claimed_by IS NULL"]
        );
        assert_eq!(
            status_arms(&[Completed, Cancelled], "$1"),
            [
                "d.status = 'Completed'",
                "d.status = 'Cancelled'",
                "d.status = 'Ended'"
            ]
        );
        assert_eq!(
            status_arms(&[InProgress, Failed, Completed], "$1"),
            [
                "d.status = 'Active' AND ((d.expiration_date >= $1 AND d.claimed_by IS NOT NULL) \
                 OR (d.expiration_date < $1))",
                "d.status = 'Completed'"
            ]
        );
        assert!(status_arms(&TaskStatus::ALL, "$1").is_empty());
        assert!(status_arms(&[], "$1").is_empty());
    }
}
