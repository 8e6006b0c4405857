//! The worklist's SQL: the Task search (keyset paging along an index, never OFFSET), one
//! Task, and claims. A claim is one conditional `UPDATE` (`… WHERE claimed_by IS NULL OR
//! claimed_by = caller`), so of two staff members claiming at once exactly one changes the
//! row: on SQLite the writes take turns, on PostgreSQL the second waits for the first's row
//! lock and then finds the row no longer matches.

use sqlx::Row;

use super::Result;
use super::data_requests::{DATA_REQUEST_COLUMNS, data_request, data_request_columns, holder_join};
use crate::db::{Tx, now};
use crate::missing_info::{ACTIVE, COMPLETED, DataRequest};
use crate::worklist::{Cursor, Search, TaskStatus};

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

/// The `WHERE` terms of a status filter, given `$today` as the parameter that holds today's
/// date. A single status (and `requested` with `in-progress`, the open worklist) keeps
/// `d.status = 'Active'` as the index's leading equality, so the page is a range scan of
/// `data_request_worklist` in expiry order.
fn status_filter(statuses: &[TaskStatus], today: &str) -> Option<String> {
    use TaskStatus::*;
    if statuses.is_empty() || statuses.len() == TaskStatus::ALL.len() {
        return None;
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
    let mut ended = Vec::new();
    if has(Completed) {
        ended.push(format!("'{COMPLETED}'"));
    }
    if has(Cancelled) {
        ended.push("'Cancelled'".to_owned());
        ended.push("'Ended'".to_owned());
    }
    let active = match active.len() {
        0 => None,
        1 => Some(format!("d.status = '{ACTIVE}' AND {}", active[0])),
        _ => Some(format!(
            "d.status = '{ACTIVE}' AND (({}))",
            active.join(") OR (")
        )),
    };
    let ended = (!ended.is_empty()).then(|| format!("d.status IN ({})", ended.join(", ")));
    match (active, ended) {
        (Some(a), Some(e)) => Some(format!("(({a}) OR {e})")),
        (Some(a), None) => Some(a),
        (None, Some(e)) => Some(e),
        (None, None) => None,
    }
}

/// The search's filter (without the cursor) and the values it binds, in order.
struct Filter {
    terms: Vec<String>,
    binds: Vec<String>,
}

impl Filter {
    fn of(search: &Search) -> Filter {
        let mut f = Filter {
            terms: Vec::new(),
            binds: Vec::new(),
        };
        let today = f.bind(crate::fields::today());
        if let Some(t) = status_filter(&search.statuses, &today) {
            f.terms.push(t);
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

    fn where_clause(&self) -> String {
        if self.terms.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.terms.join(" AND "))
        }
    }
}

/// One page of a Task search, in expiry then age order, starting after its cursor.
pub async fn search(tx: &mut Tx, search: &Search) -> Result<Page> {
    let mut filter = Filter::of(search);
    if let Some(after) = &search.after {
        let date = filter.bind(after.expiration_date.clone());
        let id = filter.binds.len() + 1;
        // Spelled out rather than as a row value: both planners turn it into one index range.
        filter.terms.push(format!(
            "(d.expiration_date > {date} OR (d.expiration_date = {date} AND d.id > ${id}))"
        ));
    }
    let sql = format!(
        "SELECT {} FROM data_request d{}{} ORDER BY d.expiration_date, d.id LIMIT {}",
        task_columns!(),
        task_joins!(),
        filter.where_clause(),
        search.count + 1
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for b in &filter.binds {
        q = q.bind(b.clone());
    }
    if let Some(after) = &search.after {
        q = q.bind(after.id);
    }
    let rows = q.fetch_all(&mut **tx).await?;
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

/// How many requests the search matches in all (`Bundle.total` of a first page).
pub async fn count(tx: &mut Tx, search: &Search) -> Result<i64> {
    let filter = Filter::of(search);
    let sql = format!(
        "SELECT COUNT(*) FROM data_request d{}",
        filter.where_clause()
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for b in &filter.binds {
        q = q.bind(b.clone());
    }
    Ok(q.fetch_one(&mut **tx).await?.try_get(0)?)
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

/// Makes `user_id` the holder unless someone else holds the request; whether it does now.
pub async fn claim(tx: &mut Tx, request_id: i64, user_id: i64) -> Result<bool> {
    let at = now();
    let done = sqlx::query(
        "UPDATE data_request SET claimed_by = $1, claimed_at = $2, updated_at = $2 \
         WHERE id = $3 AND (claimed_by IS NULL OR claimed_by = $1)",
    )
    .bind(user_id)
    .bind(at)
    .bind(request_id)
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

/// Active requests past their date whose expiry no event has announced yet, marked as
/// announced: their UUIDs and holders, for the caller to announce in the same transaction.
pub async fn take_unannounced_expiries(tx: &mut Tx) -> Result<Vec<(String, Option<i64>)>> {
    let today = crate::fields::today();
    let rows = sqlx::query(
        "SELECT id, external_id, claimed_by FROM data_request \
         WHERE status = $1 AND expiration_date < $2 AND expiry_announced = 0 LIMIT 500",
    )
    .bind(ACTIVE)
    .bind(today)
    .fetch_all(&mut **tx)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let id: i64 = r.try_get(0)?;
        sqlx::query("UPDATE data_request SET expiry_announced = 1 WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
        out.push((r.try_get(1)?, r.try_get(2)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_worklist_keeps_active_as_the_leading_equality() {
        use TaskStatus::*;
        assert_eq!(
            status_filter(&[Requested, InProgress], "$1").unwrap(),
            "d.status = 'Active' AND d.expiration_date >= $1"
        );
        assert_eq!(
            status_filter(&[Requested], "$1").unwrap(),
            "d.status = 'Active' AND d.expiration_date >= $1 AND d.claimed_by IS NULL"
        );
        assert_eq!(
            status_filter(&[Completed, Cancelled], "$1").unwrap(),
            "d.status IN ('Completed', 'Cancelled', 'Ended')"
        );
        assert_eq!(
            status_filter(&[InProgress, Failed, Completed], "$1").unwrap(),
            "((d.status = 'Active' AND ((d.expiration_date >= $1 AND d.claimed_by IS NOT NULL) OR \
             (d.expiration_date < $1))) OR d.status IN ('Completed'))"
        );
        assert_eq!(status_filter(&TaskStatus::ALL, "$1"), None);
        assert_eq!(status_filter(&[], "$1"), None);
    }
}
