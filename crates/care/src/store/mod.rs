//! The store layer: every SQL statement of the care services, one module per kind of record.
//! Functions take the request's transaction and typed domain values, and return typed rows
//! or a [`StoreError`]; they apply no business rule and know nothing of HTTP.
//!
//! Two exceptions stay where they are: `db.rs` (pool, transactions, the generic upsert by
//! external ID) and the caller/token queries of `auth.rs` (`load_caller`, `create_user`,
//! grants), which move with the token plumbing; [`users`] re-exports the latter.
//! The enrollment's persistence (formerly `enrollment/store.rs`) lives here too, as
//! [`enrollment`] and [`erx`], so that all SQL is under `store/`.

/// The statement the macro `$statement` builds from a backend's JSON functions (`$agg`
/// aggregates rows into an array, `$arr` makes one row's array), for the backend `$tx` runs
/// on: `json_group_array` and `json_array` on SQLite, `json_agg` and `json_build_array` on
/// PostgreSQL. The statements that aggregate rows into one are the only SQL that differs
/// between the backends; this is the one place that knows how. `backend = $b` names the
/// backend itself instead of a transaction on it.
macro_rules! with_json_functions {
    (backend = $backend:expr, $statement:ident) => {
        match $backend {
            crate::db::Backend::Sqlite => $statement!("json_group_array", "json_array"),
            crate::db::Backend::Postgres => $statement!("json_agg", "json_build_array"),
        }
    };
    ($tx:expr, $statement:ident) => {
        with_json_functions!(backend = $tx.backend(), $statement)
    };
}

pub mod amendments;
mod base;
pub mod data_requests;
pub mod enrollment;
pub mod erx;
pub mod events;
pub mod groups;
pub mod objects;
pub mod records;
pub mod reference;
pub mod stats;
pub mod users;
pub mod worklist;

pub use base::{Result, StoreError};

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Architecture invariant: SQL lives in the store layer (and `db.rs`'s generic upsert),
    /// nowhere else; and only the HTTP layer knows HTTP (no other module imports it).
    #[test]
    fn sql_only_in_store_and_nothing_else_imports_http() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let http = src.join("http");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(
            files.iter().any(|f| f.starts_with(&http)),
            "no http files found"
        );
        // Spelled in pieces so that this file does not match its own needles.
        let import = concat!("crate::", "http");
        let sql = [
            concat!("sqlx::", "query"),
            concat!("sqlx::", "raw_sql"),
            concat!("AssertSql", "Safe"),
            concat!("SELECT", " "),
            concat!("INSERT", " "),
            concat!("UPDATE", " "),
            concat!("DELETE", " FROM"),
        ];
        let store = src.join("store");
        let db = src.join("db.rs");
        let mut problems = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("read source file");
            let name = file
                .strip_prefix(&src)
                .unwrap_or(file)
                .display()
                .to_string();
            if !file.starts_with(&store) && *file != db {
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for needle in sql.iter().take(3) {
                    if code.contains(needle) {
                        problems.push(format!("{name} contains SQL ({needle:?})"));
                    }
                }
            }
            if file.starts_with(&http) {
                for needle in sql {
                    if text.contains(needle) {
                        problems.push(format!("{name} contains SQL ({needle:?})"));
                    }
                }
            } else if text.contains(import) {
                problems.push(format!("{name} imports the HTTP layer ({import})"));
            }
        }
        assert!(
            problems.is_empty(),
            "layering broken:\n{}",
            problems.join("\n")
        );
    }
}
