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
//! 6  resources, notifications,             the apps' backing resources (over the vault);
//!    domains                               notification deliveries and their worker;
//!                                          custom domains and their certificate worker
//! 7  deploy, jobs                          long-running work
//! 8  teardown                              deleting an app with all it has
//! 9  gitsource                             git sources: webhooks, fetches, polling (over
//!                                          the build runner); pull requests' previews
//! 10 http, gateway                         transports
//! 11 embedded (and lib.rs)                 the whole server
//! ```

#[cfg(test)]
mod tests {
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
        ("resources", 6),
        ("notifications", 6),
        ("domains", 6),
        ("deploy", 7),
        ("jobs", 7),
        ("teardown", 8),
        ("gitsource", 9),
        ("http", 10),
        ("gateway", 10),
        ("embedded", 11),
        ("layers", 11),
        ("lib", 11),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }

    #[test]
    fn sql_lives_only_in_store() {
        let markers = ["sqlx::query", "sqlx::raw_sql", "query_scalar", "query_as"];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut wrong = Vec::new();
        for (top, path, text) in slipway_layering::sources_by_module(&src) {
            if matches!(top.as_str(), "store" | "db") {
                continue;
            }
            // Comments and the test module at the end of a file are left out.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
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
