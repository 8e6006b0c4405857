//! The module layer order of this crate, kept by a test (the same check as every crate's,
//! from `slipway-layering`): a module may use only modules of lower layers, so no module
//! circle can form. Most modules are leaves that both servers take one by one; the few that
//! build on another sit one layer up. Features only decide which modules are compiled, so
//! every module is listed, whatever the features of the test build.
//!
//! ```text
//! 0  background, clock, db, file,          leaves: each a piece of its own (the pool, the
//!    first_use, json, seal, sql_error,     clock, atomic writes, sealing, tokens,
//!    tls, token                            certificates, …)
//! 1  http, metrics, serve, testing         over a leaf: bearer tokens (token), the figures
//!                                          read from the pool (db), HTTPS (tls), test
//!                                          databases (db)
//! 2  layers (and lib.rs)                   declarations only
//! ```

#[cfg(test)]
mod tests {
    /// The layer of each top-level module.
    const LAYERS: &[(&str, u8)] = &[
        ("background", 0),
        ("clock", 0),
        ("db", 0),
        ("file", 0),
        ("first_use", 0),
        ("json", 0),
        ("seal", 0),
        ("sql_error", 0),
        ("tls", 0),
        ("token", 0),
        ("http", 1),
        ("metrics", 1),
        ("serve", 1),
        ("testing", 1),
        ("layers", 2),
        ("lib", 2),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
