//! Databases for tests (feature `testing`). Every test of a server runs on SQLite and, when
//! `SLIPWAY_TEST_PG_URL` names a PostgreSQL server, on PostgreSQL too, each test in a fresh
//! database of its own that is dropped when the test ends, also when it panics: the drop
//! lives in `Drop`, which runs during unwinding, so a failing test leaks no database.

use std::sync::Once;

use sqlx::Connection as _;

pub use crate::db::Backend;

/// The variable naming the PostgreSQL server tests may use (a URL with a database the test
/// user can connect to, for example `postgres://slipway:slipway@127.0.0.1/postgres`).
pub const PG_URL_VAR: &str = "SLIPWAY_TEST_PG_URL";

/// The backends every test runs on. Without [`PG_URL_VAR`], PostgreSQL is skipped with a
/// loud note once per process, or, under CI (`CI` set), the call panics so CI cannot pass
/// with half the tests unrun. `suite` names the tests in the note.
pub fn backends(suite: &str) -> Vec<Backend> {
    static NOTE: Once = Once::new();
    let mut out = vec![Backend::Sqlite];
    if admin_url().is_some() {
        out.push(Backend::Postgres);
    } else if std::env::var_os("CI").is_some() {
        panic!(
            "PostgreSQL is required under CI: set {PG_URL_VAR} \
             (run `eval \"$(bash scripts/care-pg-setup.sh | tail -n 1)\"`)"
        );
    } else {
        NOTE.call_once(|| {
            eprintln!(
                "\n!!!!!!!! SKIPPING the PostgreSQL half of the {suite} tests: {PG_URL_VAR} is not set.\n\
                 !!!!!!!! Run `eval \"$(bash scripts/care-pg-setup.sh | tail -n 1)\"` to include it.\n"
            );
        });
    }
    out
}

fn admin_url() -> Option<String> {
    std::env::var(PG_URL_VAR).ok().filter(|v| !v.is_empty())
}

/// A fresh PostgreSQL database, dropped (with its connections) when this value drops.
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    url: String,
}

impl TestDatabase {
    /// Creates `<prefix>_<random>` on the server of [`PG_URL_VAR`]. Panics when the variable
    /// is unset or the server refuses: this is test set-up.
    pub async fn create(prefix: &str) -> Self {
        let admin = admin_url().unwrap_or_else(|| panic!("{PG_URL_VAR} is not set"));
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "a test database prefix is lowercase letters, digits and '_'"
        );
        admin_exec(&admin, &format!("CREATE DATABASE {name}")).await;
        let (head, _) = admin
            .rsplit_once('/')
            .unwrap_or_else(|| panic!("{PG_URL_VAR} must name a database"));
        let url = format!("{head}/{name}");
        Self { name, url }
    }

    /// The URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether a database of this name exists on the test server (for tests of the clean-up).
    pub async fn exists(name: &str) -> bool {
        let admin = admin_url().unwrap_or_else(|| panic!("{PG_URL_VAR} is not set"));
        let mut conn = sqlx::postgres::PgConnection::connect(&admin)
            .await
            .expect("connect to PostgreSQL");
        let found: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
            .bind(name)
            .fetch_optional(&mut conn)
            .await
            .expect("query pg_database");
        let _ = conn.close().await;
        found.is_some()
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Some(admin) = admin_url() else { return };
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop may run inside a runtime (a test's) or during a panic's unwinding: a thread
        // with its own small runtime works in both, and its join keeps the test from ending
        // before the database is gone.
        let joined =
            std::thread::spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt.block_on(async { admin_exec(&admin, &sql).await }),
                    Err(e) => eprintln!("cannot drop a test database: {e}"),
                }
            })
            .join();
        if joined.is_err() {
            eprintln!("dropping test database {} failed", self.name);
        }
    }
}

async fn admin_exec(admin: &str, sql: &str) {
    let mut conn = sqlx::postgres::PgConnection::connect(admin)
        .await
        .expect("connect to PostgreSQL");
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut conn)
        .await
        .expect("administrative SQL on the test server");
    let _ = conn.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_test_leaves_no_database_behind() {
        if admin_url().is_none() {
            eprintln!("{PG_URL_VAR} not set: skipped");
            return;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let failing = tokio::spawn(async move {
            let db = TestDatabase::create("server_leak_check").await;
            let _ = tx.send(db.name().to_owned());
            assert!(TestDatabase::exists(db.name()).await);
            panic!("a deliberately failing test");
        });
        assert!(failing.await.unwrap_err().is_panic());
        let name = rx.await.unwrap();
        assert!(!TestDatabase::exists(&name).await, "{name} was left behind");
    }
}
