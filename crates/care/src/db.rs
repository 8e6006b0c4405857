//! Database access shared by both services: the pool (from `slipway_server::db`), this
//! crate's migrations, one transaction per request, and the generic upsert by external ID.
//!
//! The writes an enrollment makes run on one of two drivers: sqlx's transaction (either
//! backend) or, on SQLite, the native writer's connection ([`native`]). They are written
//! once, over [`Driver`], which only binds, executes and reads; which statements run, in
//! which order and with which values is decided in one place for both.

use std::collections::HashMap;

use sqlx::any::{AnyArguments, AnyRow};
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

/// A value bound to a statement of a [`Driver`], borrowed from where the caller holds it:
/// the native driver binds text without copying it (an enrollment's payload is bound as
/// it came), sqlx copies what it binds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Param<'a> {
    /// A nullable TEXT value.
    Text(Option<&'a str>),
    /// A nullable BIGINT value.
    Int(Option<i64>),
}

impl<'a> From<&'a Val> for Param<'a> {
    fn from(v: &'a Val) -> Self {
        match v {
            Val::Text(t) => Self::Text(t.as_deref()),
            Val::Int(i) => Self::Int(*i),
        }
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Self::Text(Some(v))
    }
}

impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Self::Text(v)
    }
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Self::Int(Some(v))
    }
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

/// What a driver does for the writes both paths share (the generic upsert, and through it
/// an enrollment's records; the eRX request record): bind values to a statement, execute it
/// and read what it returns; nothing else. The rules (which statements, in which order, with
/// which values, and what counts as a change) are written once, over this trait, for both
/// drivers: sqlx's transaction (either backend) and the native SQLite writer's connection
/// ([`native`]). The calls are `async` because sqlx's are; the native driver's never wait.
pub(crate) trait Driver {
    /// The driver's error.
    type Error;
    /// How the driver writes the numbered placeholder `N`: `$N` (sqlx) or `?N` (rusqlite).
    const PLACEHOLDER: char;

    /// Runs an `INSERT … RETURNING id, external_id` with `params`; the row ids it returned,
    /// by external ID.
    async fn insert(
        &mut self,
        sql: String,
        params: &[Param<'_>],
    ) -> Result<HashMap<String, i64>, Self::Error>;

    /// Runs a `SELECT id, <cols> … WHERE external_id = <1>` of `external_id`: the row id of
    /// the record it finds and whether a stored value differs from `cols` ([`changed`]).
    async fn select(
        &mut self,
        sql: String,
        external_id: &str,
        cols: &[(&'static str, Val)],
    ) -> Result<Option<(i64, bool)>, Self::Error>;

    /// Runs a statement that returns nothing with `params`.
    async fn execute(&mut self, sql: String, params: &[Param<'_>]) -> Result<(), Self::Error>;

    /// The error of a record that was there for its insert and gone for its read, twice.
    fn gone() -> Self::Error;
}

impl Driver for Tx {
    type Error = sqlx::Error;
    const PLACEHOLDER: char = '$';

    async fn insert(
        &mut self,
        sql: String,
        params: &[Param<'_>],
    ) -> Result<HashMap<String, i64>, sqlx::Error> {
        bound(sql, params)
            .fetch_all(&mut **self)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(1)?, r.try_get(0)?)))
            .collect()
    }

    async fn select(
        &mut self,
        sql: String,
        external_id: &str,
        cols: &[(&'static str, Val)],
    ) -> Result<Option<(i64, bool)>, sqlx::Error> {
        let found = bound(sql, &[Param::from(external_id)])
            .fetch_optional(&mut **self)
            .await?;
        found
            .map(|r| {
                Ok((
                    r.try_get(0)?,
                    changed(cols, |i, like| read_val(&r, i, like))?,
                ))
            })
            .transpose()
    }

    async fn execute(&mut self, sql: String, params: &[Param<'_>]) -> Result<(), sqlx::Error> {
        bound(sql, params).execute(&mut **self).await?;
        Ok(())
    }

    fn gone() -> sqlx::Error {
        sqlx::Error::RowNotFound
    }
}

/// `sql` with `params` bound in order.
fn bound(sql: String, params: &[Param<'_>]) -> sqlx::query::Query<'static, Any, AnyArguments> {
    params
        .iter()
        .fold(sqlx::query(sqlx::AssertSqlSafe(sql)), |q, v| match *v {
            Param::Text(t) => q.bind(t.map(str::to_owned)),
            Param::Int(i) => q.bind(i),
        })
}

fn read_val(row: &AnyRow, idx: usize, like: &Val) -> Result<Val, sqlx::Error> {
    Ok(match like {
        Val::Text(_) => Val::Text(row.try_get::<Option<String>, _>(idx)?),
        Val::Int(_) => Val::Int(row.try_get::<Option<i64>, _>(idx)?),
    })
}

/// Whether a stored record differs from `cols`: `read(i, like)` reads its column `i`
/// (after the row id) as the kind of value `like` is; the first difference ends the read.
fn changed<E>(
    cols: &[(&'static str, Val)],
    mut read: impl FnMut(usize, &Val) -> Result<Val, E>,
) -> Result<bool, E> {
    for (i, (_, v)) in cols.iter().enumerate() {
        if read(i + 1, v)? != *v {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Inserts or updates the record of `table` whose `external_id` is given, setting `cols`.
/// The insert comes first (`ON CONFLICT (external_id) DO NOTHING RETURNING id`), so a new
/// record costs one round trip; an existing one is then read and updated only if a value
/// changed, so posting the same data twice changes nothing. `table` and column names are
/// compile-time constants.
pub(crate) async fn upsert<D: Driver>(
    d: &mut D,
    table: &'static str,
    external_id: &str,
    cols: &[(&'static str, Val)],
) -> Result<(i64, Change), D::Error> {
    let rows = [UpsertRow {
        external_id: external_id.to_owned(),
        cols: cols.to_vec(),
    }];
    Ok(upsert_many(d, table, &rows).await?[0])
}

/// [`upsert`] of several records of one table, in their order: records with the same
/// columns are inserted by one multi-row `INSERT … ON CONFLICT (external_id) DO NOTHING
/// RETURNING id, external_id`, so the records of a new enrollment cost one round trip per
/// table instead of one each; those that already existed (not returned) are then read and
/// updated one by one, as [`upsert`] does. A record repeated in `rows` is created once and
/// then treated as existing.
///
/// On any [`Driver`]: the one copy of the upsert's rules.
pub(crate) async fn upsert_many<D: Driver>(
    d: &mut D,
    table: &'static str,
    rows: &[UpsertRow],
) -> Result<Vec<(i64, Change)>, D::Error> {
    let mut results: Vec<Option<(i64, Change)>> = vec![None; rows.len()];
    for (names, members) in &same_columns(rows) {
        for chunk in members.chunks(ROWS_PER_INSERT) {
            let batch: Vec<&UpsertRow> = chunk.iter().map(|&i| &rows[i]).collect();
            let mut created = insert_new(d, table, names, &batch).await?;
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
            None => update_existing(d, table, row).await?,
        });
    }
    Ok(out)
}

/// Groups of row indices with the same column names, in order of first appearance: the
/// records one multi-row `INSERT` can hold.
fn same_columns(rows: &[UpsertRow]) -> Vec<(Vec<&'static str>, Vec<usize>)> {
    let mut groups: Vec<(Vec<&'static str>, Vec<usize>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let names: Vec<&'static str> = row.cols.iter().map(|(n, _)| *n).collect();
        match groups.iter_mut().find(|(g, _)| *g == names) {
            Some((_, members)) => members.push(i),
            None => groups.push((names, vec![i])),
        }
    }
    groups
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
async fn insert_new<D: Driver>(
    d: &mut D,
    table: &'static str,
    names: &[&'static str],
    rows: &[&UpsertRow],
) -> Result<HashMap<String, i64>, D::Error> {
    let sql = insert_new_sql(table, names, rows.len(), D::PLACEHOLDER);
    let ts = now();
    let mut params = Vec::with_capacity(rows.len() * (names.len() + 3));
    for row in rows {
        params.push(Param::from(row.external_id.as_str()));
        params.extend(row.cols.iter().map(|(_, v)| Param::from(v)));
        params.extend([Param::from(ts), Param::from(ts)]);
    }
    d.insert(sql, &params).await
}

/// The second half of an upsert, for a record whose insert found it there: reads it and
/// updates it if a value changed. If it is gone by then (deleted by another transaction)
/// it is inserted again.
async fn update_existing<D: Driver>(
    d: &mut D,
    table: &'static str,
    row: &UpsertRow,
) -> Result<(i64, Change), D::Error> {
    let p = D::PLACEHOLDER;
    let cols = &row.cols;
    let names: Vec<&'static str> = cols.iter().map(|(n, _)| *n).collect();
    let select = if names.is_empty() {
        format!("SELECT id FROM {table} WHERE external_id = {p}1")
    } else {
        format!(
            "SELECT id, {} FROM {table} WHERE external_id = {p}1",
            names.join(", ")
        )
    };
    for _attempt in 0..2 {
        let Some((id, changed)) = d.select(select.clone(), &row.external_id, cols).await? else {
            if let Some(id) = insert_new(d, table, &names, &[row])
                .await?
                .remove(&row.external_id)
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
            .map(|(i, n)| format!("{n} = {p}{}", i + 2))
            .collect();
        let sql = format!(
            "UPDATE {table} SET {}, updated_at = {p}{} WHERE id = {p}1",
            sets.join(", "),
            cols.len() + 2
        );
        let mut params = Vec::with_capacity(cols.len() + 2);
        params.push(Param::from(id));
        params.extend(cols.iter().map(|(_, v)| Param::from(v)));
        params.push(Param::from(now()));
        d.execute(sql, &params).await?;
        return Ok((id, Change::Updated));
    }
    Err(D::gone())
}

/// Parses a JSON array of strings stored in a TEXT column; a malformed value reads as empty.
pub fn json_strings(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

/// The native SQLite writer's connection (`slipway_server::db::native`) as a [`Driver`]: the
/// same statements, bound the same way, run on the writer thread as prepared, cached
/// statements instead of a message to sqlx's worker thread each.
pub mod native {
    use std::collections::HashMap;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use rusqlite::types::{ToSqlOutput, Value as Sql, ValueRef};
    use rusqlite::{Connection, ToSql, params_from_iter};
    use slipway_server::db::native::rusqlite;

    use super::{Driver, Param, Val, changed};

    /// The native connection as a [`Driver`]: every call runs to its end before it returns,
    /// so what runs on it is [`finished`] in one poll.
    pub(crate) struct Native<'c>(pub(crate) &'c Connection);

    impl Driver for Native<'_> {
        type Error = rusqlite::Error;
        const PLACEHOLDER: char = '?';

        async fn insert(
            &mut self,
            sql: String,
            params: &[Param<'_>],
        ) -> rusqlite::Result<HashMap<String, i64>> {
            let mut stmt = self.0.prepare_cached(&sql)?;
            let mut out = HashMap::new();
            let mut returned = stmt.query(params_from_iter(params))?;
            while let Some(r) = returned.next()? {
                out.insert(r.get(1)?, r.get(0)?);
            }
            Ok(out)
        }

        async fn select(
            &mut self,
            sql: String,
            external_id: &str,
            cols: &[(&'static str, Val)],
        ) -> rusqlite::Result<Option<(i64, bool)>> {
            let mut stmt = self.0.prepare_cached(&sql)?;
            let mut rows = stmt.query([external_id])?;
            rows.next()?
                .map(|r| Ok((r.get(0)?, changed(cols, |i, like| read_val(r, i, like))?)))
                .transpose()
        }

        async fn execute(&mut self, sql: String, params: &[Param<'_>]) -> rusqlite::Result<()> {
            self.0
                .prepare_cached(&sql)?
                .execute(params_from_iter(params))?;
            Ok(())
        }

        fn gone() -> rusqlite::Error {
            rusqlite::Error::QueryReturnedNoRows
        }
    }

    impl ToSql for Param<'_> {
        fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
            Ok(match *self {
                Param::Text(Some(t)) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
                Param::Int(Some(i)) => ToSqlOutput::Owned(Sql::Integer(i)),
                Param::Text(None) | Param::Int(None) => ToSqlOutput::Owned(Sql::Null),
            })
        }
    }

    fn read_val(row: &rusqlite::Row<'_>, idx: usize, like: &Val) -> rusqlite::Result<Val> {
        Ok(match like {
            Val::Text(_) => Val::Text(row.get::<_, Option<String>>(idx)?),
            Val::Int(_) => Val::Int(row.get::<_, Option<i64>>(idx)?),
        })
    }

    /// The output of work on a [`Native`] driver, which never waits: polled once, on this
    /// thread (the writer's), without a runtime.
    pub(crate) fn finished<T>(future: impl Future<Output = T>) -> T {
        match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(out) => out,
            Poll::Pending => unreachable!("the native driver's calls never wait"),
        }
    }
}
