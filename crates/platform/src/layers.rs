//! The module layer order of this crate, kept by a test (the way rust-analyzer keeps its
//! architecture rules): a module may use only modules of lower layers, so the module cycle
//! the platform once had cannot come back, and SQL stays in `store/`.
//!
//! ```text
//! 0  model, error                          domain values, the start-up error
//! 1  db, data_dir, pagination              the pool, the data directory, page cursors
//! 2  config, logs                          the command line, presigned log URLs
//! 3  store                                 every SQL statement
//! 4  policy                                the role matrix (pure)
//! 5  vault, bootstrap, apps, retention     rules over stored data (the vault's app-secret
//!                                          access is the matrix's secret actions)
//! 6  deploy, jobs                          long-running work
//! 7  http, gateway                         transports
//! 8  embedded (and lib.rs)                 the whole server
//! ```

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The layer of each top-level module.
    const LAYERS: &[(&str, u8)] = &[
        ("model", 0),
        ("error", 0),
        ("db", 1),
        ("data_dir", 1),
        ("pagination", 1),
        ("config", 2),
        ("logs", 2),
        ("store", 3),
        ("policy", 4),
        ("vault", 5),
        ("bootstrap", 5),
        ("apps", 5),
        ("retention", 5),
        ("deploy", 6),
        ("jobs", 6),
        ("http", 7),
        ("gateway", 7),
        ("embedded", 8),
        ("layers", 8),
        ("lib", 8),
    ];

    fn layer(module: &str) -> Option<u8> {
        LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
    }

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// `(top-level module, code lines)` of every source file: comments and the test module
    /// at the end of a file are left out (tests may reach anywhere).
    fn files() -> Vec<(String, PathBuf, Vec<String>)> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        sources(&src, &mut paths);
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let relative = path.strip_prefix(&src).unwrap();
                let first = relative.components().next().unwrap();
                let top = first
                    .as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_owned();
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                let lines = code
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .map(str::to_owned)
                    .collect();
                (top, relative.to_owned(), lines)
            })
            .collect()
    }

    #[test]
    fn modules_use_only_lower_layers() {
        let mut wrong = Vec::new();
        for (top, path, lines) in files() {
            let own = layer(&top).unwrap_or_else(|| panic!("{top} has no layer: add it"));
            for line in &lines {
                for (i, _) in line.match_indices("crate::") {
                    let used: String = line[i + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if used == top || used.is_empty() {
                        continue;
                    }
                    match layer(&used) {
                        Some(l) if l < own => {}
                        // Items of lib.rs (`crate::prepare`) belong to the top layer.
                        None if own == 8 => {}
                        _ => wrong.push(format!("{}: {top} uses {used}", path.display())),
                    }
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "against the layer order:\n{}",
            wrong.join("\n")
        );
    }

    #[test]
    fn sql_lives_only_in_store() {
        let markers = ["sqlx::query", "sqlx::raw_sql", "query_scalar", "query_as"];
        let mut wrong = Vec::new();
        for (top, path, lines) in files() {
            if matches!(top.as_str(), "store" | "db") {
                continue;
            }
            for line in &lines {
                if markers.iter().any(|m| line.contains(m)) {
                    wrong.push(format!("{}: {}", path.display(), line.trim()));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "SQL outside store/:\n{}",
            wrong.join("\n")
        );
    }
}
