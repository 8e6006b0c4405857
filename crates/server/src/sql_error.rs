//! What a `sqlx::Error` means to a handler, and what of it may be logged. Database messages
//! can quote the values a statement carried (a patient's name in a unique-key message, a
//! secret's path), so only the kind or the SQLSTATE code ever reaches a log.

/// Whether the error is a violated unique constraint (a name or id already taken).
pub fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// A description of the error that is safe to log: the SQLSTATE code for database errors,
/// the kind for the others, never a message text.
pub fn loggable(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Database(db) => {
            format!("database error code {}", db.code().unwrap_or_default())
        }
        other => format!("database error: {}", kind(other)),
    }
}

fn kind(e: &sqlx::Error) -> &'static str {
    match e {
        sqlx::Error::Configuration(_) => "configuration",
        sqlx::Error::Io(_) => "io",
        sqlx::Error::Tls(_) => "tls",
        sqlx::Error::Protocol(_) => "protocol",
        sqlx::Error::RowNotFound => "row not found",
        sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) => "decode",
        sqlx::Error::PoolTimedOut => "pool timed out",
        sqlx::Error::PoolClosed => "pool closed",
        sqlx::Error::Migrate(_) => "migrate",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_logged_without_text() {
        assert_eq!(
            loggable(&sqlx::Error::PoolTimedOut),
            "database error: pool timed out"
        );
        assert_eq!(
            loggable(&sqlx::Error::Protocol("value 'Jane Doe' refused".into())),
            "database error: protocol"
        );
        assert!(!is_unique_violation(&sqlx::Error::RowNotFound));
    }
}
