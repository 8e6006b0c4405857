//! How the CLI's commands print rows for people: a table whose columns are as wide as their
//! widest cell, and times as a table shows them. A leaf, so that every command can print
//! tables without depending on the command that first had them.

/// Rows under a header, each column as wide as its widest cell.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// An RFC 3339 time as a table shows it: `2026-05-01 10:00` (UTC), none as `null_as`.
pub(crate) fn when(time: Option<&str>, null_as: &str) -> String {
    match time {
        Some(t) => t.get(..16).unwrap_or(t).replacen('T', " ", 1),
        None => null_as.to_owned(),
    }
}
