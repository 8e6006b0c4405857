//! Database access shared by both services: the pool (from `slipway_server::db`), this
//! crate's migrations, one transaction per request, and the generic upsert by external ID.

use std::collections::HashMap;

use sqlx::any::AnyRow;
use sqlx::{Any, Row};

use crate::error::CareError;

pub use slipway_server::db::{Backend, Db, Tx};

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// Opens the pool the URL names (the shared write strategy of `slipway_server::db`: every
/// request writes a history or audit record, so each takes a write transaction, queued
/// in-process on SQLite) and runs this backend's migrations.
pub async fn open(url: &str) -> Result<Db, CareError> {
    let options = slipway_server::db::Options {
        sqlite_foreign_keys: false,
    };
    let mut db = Db::connect(url, options).await?;
    match db.backend() {
        Backend::Sqlite => db.migrate(&SQLITE_MIGRATOR).await?,
        Backend::Postgres => db.migrate(&POSTGRES_MIGRATOR).await?,
    }
    // The hot writes (an enrollment's records, the GETs' history records) run whole on the
    // native writer's thread; every other write stays on the pool's writer (see ARCHITECTURE).
    db.start_native_writer().await?;
    Ok(db)
}

/// Seconds since the Unix epoch, the portable time type of the care schema.
pub fn now() -> i64 {
    slipway_server::clock::now_seconds()
}

/// A column value of a generic upsert.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// A nullable TEXT column.
    Text(Option<String>),
    /// A nullable BIGINT column.
    Int(Option<i64>),
}

impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Self {
        Self::Text(v)
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Self::Text(Some(v))
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Self::Text(Some(v.to_owned()))
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Self::Int(Some(v))
    }
}
impl From<Option<i64>> for Val {
    fn from(v: Option<i64>) -> Self {
        Self::Int(v)
    }
}

/// What an upsert did to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// The record did not exist.
    Created,
    /// The record existed and at least one value changed.
    Updated,
    /// The record existed with the same values.
    Unchanged,
}

impl Change {
    /// Combines the change of a record with the change of its dependent values.
    pub fn and(self, other: Change) -> Change {
        match (self, other) {
            (Change::Created, _) => Change::Created,
            (_, Change::Created | Change::Updated) | (Change::Updated, _) => Change::Updated,
            _ => Change::Unchanged,
        }
    }
}

fn bind_val<'q>(
    q: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments>,
    v: &Val,
) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments> {
    match v {
        Val::Text(t) => q.bind(t.clone()),
        Val::Int(i) => q.bind(*i),
    }
}

fn read_val(row: &AnyRow, idx: usize, like: &Val) -> Result<Val, sqlx::Error> {
    Ok(match like {
        Val::Text(_) => Val::Text(row.try_get::<Option<String>, _>(idx)?),
        Val::Int(_) => Val::Int(row.try_get::<Option<i64>, _>(idx)?),
    })
}

/// Inserts or updates the record of `table` whose `external_id` is given, setting `cols`.
/// The insert comes first (`ON CONFLICT (external_id) DO NOTHING RETURNING id`), so a new
/// record costs one round trip; an existing one is then read and updated only if a value
/// changed, so posting the same data twice changes nothing. `table` and column names are
/// compile-time constants.
pub async fn upsert(
    tx: &mut Tx,
    table: &'static str,
    external_id: &str,
    cols: &[(&'static str, Val)],
) -> Result<(i64, Change), sqlx::Error> {
    let rows = [UpsertRow {
        external_id: external_id.to_owned(),
        cols: cols.to_vec(),
    }];
    Ok(upsert_many(tx, table, &rows).await?[0])
}

/// One record of [`upsert_many`].
#[derive(Debug, Clone)]
pub struct UpsertRow {
    /// The record's external ID.
    pub external_id: String,
    /// The columns to set.
    pub cols: Vec<(&'static str, Val)>,
}

/// Rows per multi-row `INSERT` (far below either backend's limit on bound parameters).
const ROWS_PER_INSERT: usize = 64;

/// [`upsert`] of several records of one table, in their order: records with the same
/// columns are inserted by one multi-row `INSERT … ON CONFLICT (external_id) DO NOTHING
/// RETURNING id, external_id`, so the records of a new enrollment cost one round trip per
/// table instead of one each; those that already existed (not returned) are then read and
/// updated one by one, as [`upsert`] does. A record repeated in `rows` is created once and
/// then treated as existing.
pub async fn upsert_many(
    tx: &mut Tx,
    table: &'static str,
    rows: &[UpsertRow],
) -> Result<Vec<(i64, Change)>, sqlx::Error> {
    let mut results: Vec<Option<(i64, Change)>> = vec![None; rows.len()];
    // Groups of row indices with the same column names, in order of first appearance.
    let mut groups: Vec<(Vec<&'static str>, Vec<usize>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let names: Vec<&'static str> = row.cols.iter().map(|(n, _)| *n).collect();
        match groups.iter_mut().find(|(g, _)| *g == names) {
            Some((_, members)) => members.push(i),
            None => groups.push((names, vec![i])),
        }
    }
    for (names, members) in &groups {
        for chunk in members.chunks(ROWS_PER_INSERT) {
            let batch: Vec<&UpsertRow> = chunk.iter().map(|&i| &rows[i]).collect();
            let mut created = insert_new(tx, table, names, &batch).await?;
            for &i in chunk {
                if let Some(id) = created.remove(&rows[i].external_id) {
                    results[i] = Some((id, Change::Created));
                }
            }
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    for (row, result) in rows.iter().zip(results) {
        out.push(match result {
            Some(done) => done,
            None => update_existing(tx, table, row).await?,
        });
    }
    Ok(out)
}

/// The `INSERT … ON CONFLICT (external_id) DO NOTHING RETURNING id, external_id` of `rows`
/// records with the columns `names`, numbered placeholders written `{prefix}N` (`$N` for
/// sqlx, `?N` for rusqlite): one text for both drivers.
fn insert_new_sql(table: &str, names: &[&str], rows: usize, prefix: char) -> String {
    let width = names.len() + 3;
    let values: Vec<String> = (0..rows)
        .map(|r| {
            let ph: Vec<String> = (1..=width)
                .map(|c| format!("{prefix}{}", r * width + c))
                .collect();
            format!("({})", ph.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO {table} (external_id{}{}, created_at, updated_at) VALUES {} \
         ON CONFLICT (external_id) DO NOTHING RETURNING id, external_id",
        if names.is_empty() { "" } else { ", " },
        names.join(", "),
        values.join(", ")
    )
}

/// Inserts the records that do not exist yet, all with the columns `names`, in one
/// `INSERT … ON CONFLICT (external_id) DO NOTHING RETURNING id, external_id`; the row ids of
/// those it created, by external ID.
async fn insert_new(
    tx: &mut Tx,
    table: &'static str,
    names: &[&'static str],
    rows: &[&UpsertRow],
) -> Result<HashMap<String, i64>, sqlx::Error> {
    let sql = insert_new_sql(table, names, rows.len(), '$');
    let ts = now();
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for row in rows {
        q = q.bind(row.external_id.clone());
        for (_, v) in &row.cols {
            q = bind_val(q, v);
        }
        q = q.bind(ts).bind(ts);
    }
    q.fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| Ok((r.try_get(1)?, r.try_get(0)?)))
        .collect()
}

/// The second half of an upsert, for a record whose insert found it there: reads it and
/// updates it if a value changed. If it is gone by then (deleted by another transaction)
/// it is inserted again.
async fn update_existing(
    tx: &mut Tx,
    table: &'static str,
    row: &UpsertRow,
) -> Result<(i64, Change), sqlx::Error> {
    let cols = &row.cols;
    let names: Vec<&'static str> = cols.iter().map(|(n, _)| *n).collect();
    let select = if names.is_empty() {
        format!("SELECT id FROM {table} WHERE external_id = $1")
    } else {
        format!(
            "SELECT id, {} FROM {table} WHERE external_id = $1",
            names.join(", ")
        )
    };
    for _attempt in 0..2 {
        let existing = sqlx::query(sqlx::AssertSqlSafe(select.clone()))
            .bind(row.external_id.clone())
            .fetch_optional(&mut **tx)
            .await?;
        let Some(found) = existing else {
            if let Some(id) = insert_new(tx, table, &names, &[row])
                .await?
                .remove(&row.external_id)
            {
                return Ok((id, Change::Created));
            }
            continue;
        };
        let id: i64 = found.try_get(0)?;
        let mut changed = false;
        for (i, (_, v)) in cols.iter().enumerate() {
            if read_val(&found, i + 1, v)? != *v {
                changed = true;
                break;
            }
        }
        if !changed {
            return Ok((id, Change::Unchanged));
        }
        let sets: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{n} = ${}", i + 2))
            .collect();
        let sql = format!(
            "UPDATE {table} SET {}, updated_at = ${} WHERE id = $1",
            sets.join(", "),
            cols.len() + 2
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id);
        for (_, v) in cols {
            q = bind_val(q, v);
        }
        q.bind(now()).execute(&mut **tx).await?;
        return Ok((id, Change::Updated));
    }
    Err(sqlx::Error::RowNotFound)
}

/// Parses a JSON array of strings stored in a TEXT column; a malformed value reads as empty.
pub fn json_strings(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

/// The writes of [`upsert_many`] on the native SQLite writer's connection
/// (`slipway_server::db::native`): the same statements, bound the same way, run on the
/// writer thread as prepared, cached statements instead of a message to sqlx's worker thread
/// each.
pub mod native {
    use std::collections::HashMap;

    use rusqlite::types::Value as Sql;
    use rusqlite::{Connection, params_from_iter};
    use slipway_server::db::native::rusqlite;

    use super::{Change, ROWS_PER_INSERT, UpsertRow, Val, now};

    fn sql(v: &Val) -> Sql {
        match v {
            Val::Text(Some(t)) => Sql::Text(t.clone()),
            Val::Int(Some(i)) => Sql::Integer(*i),
            Val::Text(None) | Val::Int(None) => Sql::Null,
        }
    }

    fn read_val(row: &rusqlite::Row<'_>, idx: usize, like: &Val) -> rusqlite::Result<Val> {
        Ok(match like {
            Val::Text(_) => Val::Text(row.get::<_, Option<String>>(idx)?),
            Val::Int(_) => Val::Int(row.get::<_, Option<i64>>(idx)?),
        })
    }

    /// [`super::upsert`] on the native connection.
    pub fn upsert(
        conn: &Connection,
        table: &'static str,
        external_id: &str,
        cols: &[(&'static str, Val)],
    ) -> rusqlite::Result<(i64, Change)> {
        let rows = [UpsertRow {
            external_id: external_id.to_owned(),
            cols: cols.to_vec(),
        }];
        Ok(upsert_many(conn, table, &rows)?[0])
    }

    /// [`super::upsert_many`] on the native connection.
    pub fn upsert_many(
        conn: &Connection,
        table: &'static str,
        rows: &[UpsertRow],
    ) -> rusqlite::Result<Vec<(i64, Change)>> {
        let mut results: Vec<Option<(i64, Change)>> = vec![None; rows.len()];
        let mut groups: Vec<(Vec<&'static str>, Vec<usize>)> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let names: Vec<&'static str> = row.cols.iter().map(|(n, _)| *n).collect();
            match groups.iter_mut().find(|(g, _)| *g == names) {
                Some((_, members)) => members.push(i),
                None => groups.push((names, vec![i])),
            }
        }
        for (names, members) in &groups {
            for chunk in members.chunks(ROWS_PER_INSERT) {
                let batch: Vec<&UpsertRow> = chunk.iter().map(|&i| &rows[i]).collect();
                let mut created = insert_new(conn, table, names, &batch)?;
                for &i in chunk {
                    if let Some(id) = created.remove(&rows[i].external_id) {
                        results[i] = Some((id, Change::Created));
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(rows.len());
        for (row, result) in rows.iter().zip(results) {
            out.push(match result {
                Some(done) => done,
                None => update_existing(conn, table, row)?,
            });
        }
        Ok(out)
    }

    fn insert_new(
        conn: &Connection,
        table: &'static str,
        names: &[&'static str],
        rows: &[&UpsertRow],
    ) -> rusqlite::Result<HashMap<String, i64>> {
        let width = names.len() + 3;
        let statement = super::insert_new_sql(table, names, rows.len(), '?');
        let ts = now();
        let mut args = Vec::with_capacity(rows.len() * width);
        for row in rows {
            args.push(Sql::Text(row.external_id.clone()));
            args.extend(row.cols.iter().map(|(_, v)| sql(v)));
            args.extend([Sql::Integer(ts), Sql::Integer(ts)]);
        }
        let mut stmt = conn.prepare_cached(&statement)?;
        let mut out = HashMap::with_capacity(rows.len());
        let mut returned = stmt.query(params_from_iter(args))?;
        while let Some(r) = returned.next()? {
            out.insert(r.get(1)?, r.get(0)?);
        }
        Ok(out)
    }

    fn update_existing(
        conn: &Connection,
        table: &'static str,
        row: &UpsertRow,
    ) -> rusqlite::Result<(i64, Change)> {
        let cols = &row.cols;
        let names: Vec<&'static str> = cols.iter().map(|(n, _)| *n).collect();
        let select = if names.is_empty() {
            format!("SELECT id FROM {table} WHERE external_id = ?1")
        } else {
            format!(
                "SELECT id, {} FROM {table} WHERE external_id = ?1",
                names.join(", ")
            )
        };
        for _attempt in 0..2 {
            let found = {
                let mut stmt = conn.prepare_cached(&select)?;
                let mut rows = stmt.query([&row.external_id])?;
                match rows.next()? {
                    None => None,
                    Some(r) => {
                        let id: i64 = r.get(0)?;
                        let mut changed = false;
                        for (i, (_, v)) in cols.iter().enumerate() {
                            if read_val(r, i + 1, v)? != *v {
                                changed = true;
                                break;
                            }
                        }
                        Some((id, changed))
                    }
                }
            };
            let Some((id, changed)) = found else {
                if let Some(id) = insert_new(conn, table, &names, &[row])?.remove(&row.external_id)
                {
                    return Ok((id, Change::Created));
                }
                continue;
            };
            if !changed {
                return Ok((id, Change::Unchanged));
            }
            let sets: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{n} = ?{}", i + 2))
                .collect();
            let statement = format!(
                "UPDATE {table} SET {}, updated_at = ?{} WHERE id = ?1",
                sets.join(", "),
                cols.len() + 2
            );
            let mut args = vec![Sql::Integer(id)];
            args.extend(cols.iter().map(|(_, v)| sql(v)));
            args.push(Sql::Integer(now()));
            conn.prepare_cached(&statement)?
                .execute(params_from_iter(args))?;
            return Ok((id, Change::Updated));
        }
        Err(rusqlite::Error::QueryReturnedNoRows)
    }
}
