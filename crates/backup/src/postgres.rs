//! PostgreSQL: `pg_dump --format=custom` (one consistent snapshot: pg_dump reads everything in
//! a single repeatable-read transaction while the server goes on serving) and
//! `pg_restore --single-transaction --no-owner` into an empty database (all or nothing).
//!
//! The programs come with the PostgreSQL client package. pg_dump refuses a server newer than
//! itself and pg_restore may not read a newer pg_dump's archive, so both versions are checked
//! first and a refusal names what to install. The password never reaches a command line
//! (where every user of the machine could read it): the tools get it through `PGPASSWORD`.

use std::path::Path;

use sqlx::Connection as _;
use sqlx::postgres::PgConnection;

use crate::error::BackupError;

/// A database URL split for the tools: the URL without its password, and the password.
pub struct Target {
    url: String,
    password: Option<String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// Splits a `postgres://` or `postgresql://` URL.
    pub fn parse(url: &str) -> Result<Self, BackupError> {
        let mut parsed = url::Url::parse(url).map_err(|e| {
            BackupError::target("--database-url", "(not shown)", format!("not a URL: {e}"))
        })?;
        let mut password = parsed.password().map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .into_owned()
        });
        let _ = parsed.set_password(None);
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if pairs.iter().any(|(k, _)| k == "password") {
            let mut query = parsed.query_pairs_mut();
            query.clear();
            for (k, v) in pairs {
                if k == "password" {
                    password = Some(v);
                } else {
                    query.append_pair(&k, &v);
                }
            }
        }
        if parsed.query() == Some("") {
            parsed.set_query(None);
        }
        Ok(Self {
            url: parsed.to_string(),
            password,
        })
    }

    /// The URL as it may be shown: without the password.
    pub fn shown(&self) -> &str {
        &self.url
    }

    async fn connect(&self, original: &str) -> Result<PgConnection, BackupError> {
        PgConnection::connect(original)
            .await
            .map_err(|e| BackupError::Database {
                what: format!("cannot connect to {}", self.url),
                reason: e.to_string(),
            })
    }

    fn command(&self, program: &str) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(program);
        if let Some(password) = &self.password {
            command.env("PGPASSWORD", password);
        }
        command
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        command
    }
}

/// The server's major version (`SHOW server_version_num`: 150018 is 15).
async fn server_major(conn: &mut PgConnection, target: &Target) -> Result<u32, BackupError> {
    let num: String = sqlx::query_scalar("SHOW server_version_num")
        .fetch_one(&mut *conn)
        .await
        .map_err(|e| BackupError::Database {
            what: format!("cannot read the server version of {}", target.url),
            reason: e.to_string(),
        })?;
    Ok(num.trim().parse::<u32>().unwrap_or(0) / 10_000)
}

/// How many tables the database has in its schema (`current_schema()`, where the services
/// keep theirs).
async fn table_count(conn: &mut PgConnection, target: &Target) -> Result<i64, BackupError> {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
    )
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| BackupError::Database {
        what: format!("cannot list the tables of {}", target.url),
        reason: e.to_string(),
    })
}

/// A client program's version line and major version (`pg_dump (PostgreSQL) 15.18 …`).
async fn tool_version(program: &str, needed: u32) -> Result<(String, u32), BackupError> {
    let missing = |why: String| {
        BackupError::Tool(format!(
            "{program} {why}: this needs {program} {needed} or later (Debian: postgresql-client, \
             or postgresql-client-{needed} from the PostgreSQL apt repository)"
        ))
    };
    let out = tokio::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                missing("is not installed".into())
            } else {
                missing(format!("cannot be run ({e})"))
            }
        })?;
    let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let major = major_of(&line).ok_or_else(|| missing(format!("printed no version ({line:?})")))?;
    if major < needed {
        return Err(missing(format!("is version {major}")));
    }
    Ok((line, major))
}

/// The major version in a `--version` line: `pg_dump (PostgreSQL) 15.18 (Debian …)` is 15.
pub fn major_of(line: &str) -> Option<u32> {
    let after = line.split_once("(PostgreSQL)")?.1.trim_start();
    let version = after.split_whitespace().next()?;
    version
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The first few of a tool's own error lines, with nothing that can hold a row's value: the
/// `DETAIL`/`CONTEXT`/`Command was` lines are left out, and in the server's message after
/// `ERROR:` every quoted part is cut (`invalid input syntax for type integer: "…"` can
/// quote a patient's data).
fn tool_errors(program: &str, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{program}:")))
        .take(5)
        .map(redact)
        .collect();
    if lines.is_empty() {
        "it failed without a message".into()
    } else {
        lines.join("; ")
    }
}

/// A tool's line with every quoted part of the server's message (after `ERROR:`, or after
/// the tool's own words when there is none) replaced by `"…"`, and anything after a
/// `DETAIL:`, `HINT:` or `CONTEXT:` on the same line dropped.
fn redact(line: &str) -> String {
    let (head, message) = match line.find("ERROR:") {
        Some(at) => line.split_at(at),
        None => ("", line),
    };
    let message = ["DETAIL:", "HINT:", "CONTEXT:"]
        .iter()
        .filter_map(|label| message.find(label))
        .min()
        .map_or(message, |at| &message[..at])
        .trim_end();
    let mut out = String::from(head);
    let mut open: Option<char> = None;
    for c in message.chars() {
        match open {
            Some(quote) if c == quote => {
                out.push('…');
                out.push(c);
                open = None;
            }
            Some(_) => {}
            None => {
                out.push(c);
                if c == '"' || c == '\'' {
                    open = Some(c);
                }
            }
        }
    }
    if open.is_some() {
        out.push('…');
    }
    out
}

/// Refuses a database that already has tables (a restore only fills an empty one).
pub async fn ensure_empty(url: &str, target: &Target) -> Result<(), BackupError> {
    let mut conn = target.connect(url).await?;
    let tables = table_count(&mut conn, target).await?;
    let _ = conn.close().await;
    if tables > 0 {
        return Err(BackupError::target(
            "--database-url",
            target.shown(),
            format!(
                "the database has {tables} tables already; restore into a new, empty database \
                 (createdb NAME)"
            ),
        ));
    }
    Ok(())
}

/// Dumps the database to `out`; returns pg_dump's version line for the manifest.
pub async fn dump(url: &str, out: &Path) -> Result<String, BackupError> {
    let target = Target::parse(url)?;
    let mut conn = target.connect(url).await?;
    let server = server_major(&mut conn, &target).await?;
    let _ = conn.close().await;
    let (version, _) = tool_version("pg_dump", server).await?;
    let result = target
        .command("pg_dump")
        .arg("--format=custom")
        .arg("--no-owner")
        .arg("--no-privileges")
        .arg("--file")
        .arg(out)
        .arg("--dbname")
        .arg(&target.url)
        .output()
        .await
        .map_err(|e| BackupError::Tool(format!("cannot run pg_dump: {e}")))?;
    if !result.status.success() {
        return Err(BackupError::Database {
            what: format!("pg_dump of {} failed", target.url),
            reason: tool_errors("pg_dump", &result.stderr),
        });
    }
    Ok(version)
}

/// Checks that `pg_restore` can read a dump made by `made_by` (pg_dump's version line).
pub async fn check_restore_tool(made_by: Option<&str>) -> Result<(), BackupError> {
    let needed = made_by.and_then(major_of).unwrap_or(0);
    tool_version("pg_restore", needed).await.map(|_| ())
}

/// Restores `dump` into the empty database `url`, in one transaction.
pub async fn restore(url: &str, dump: &Path) -> Result<(), BackupError> {
    let target = Target::parse(url)?;
    let result = target
        .command("pg_restore")
        .arg("--single-transaction")
        .arg("--exit-on-error")
        .arg("--no-owner")
        .arg("--no-privileges")
        .arg("--dbname")
        .arg(&target.url)
        .arg(dump)
        .output()
        .await
        .map_err(|e| BackupError::Tool(format!("cannot run pg_restore: {e}")))?;
    if !result.status.success() {
        return Err(BackupError::Database {
            what: format!(
                "pg_restore into {} failed (its single transaction was rolled back)",
                target.url
            ),
            reason: tool_errors("pg_restore", &result.stderr),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_the_tools_lines() {
        assert_eq!(
            major_of("pg_dump (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"),
            Some(15)
        );
        assert_eq!(major_of("pg_restore (PostgreSQL) 17beta1"), Some(17));
        assert_eq!(major_of("pg_dump (PostgreSQL) 9.6.24"), Some(9));
        assert_eq!(major_of("something else"), None);
    }

    #[test]
    fn the_password_leaves_the_url() {
        let t =
            Target::parse("postgres://ann:s%40cret@db.example:5433/care?sslmode=require").unwrap();
        assert_eq!(t.password.as_deref(), Some("s@cret"));
        assert_eq!(
            t.shown(),
            "postgres://ann@db.example:5433/care?sslmode=require"
        );
        let q = Target::parse("postgres://db/care?password=pw&sslmode=disable").unwrap();
        assert_eq!(q.password.as_deref(), Some("pw"));
        assert_eq!(q.shown(), "postgres://db/care?sslmode=disable");
        assert!(!format!("{q:?}").contains("pw&"));
    }

    #[test]
    fn tool_errors_keep_only_the_tools_own_lines() {
        let stderr = b"pg_restore: error: could not execute query: ERROR: x\nDETAIL: Key (email)=(ann@example.org)\nCommand was: INSERT\n";
        let shown = tool_errors("pg_restore", stderr);
        assert!(shown.contains("could not execute query"));
        assert!(!shown.contains("ann@example.org"));
        let stderr = "pg_restore: error: COPY failed for table \"patients\": ERROR:  invalid input \
                      syntax for type integer: \"Ann Smith\"\nCONTEXT:  COPY patients, line 1\n\
                      pg_restore: error: could not execute query: ERROR:  value 'Bob' is odd \
                      DETAIL: (bob@example.org)\n";
        let shown = tool_errors("pg_restore", stderr.as_bytes());
        assert_eq!(
            shown,
            "pg_restore: error: COPY failed for table \"patients\": ERROR:  invalid input syntax \
             for type integer: \"…\"; pg_restore: error: could not execute query: ERROR:  value \
             '…' is odd"
        );
    }
}
