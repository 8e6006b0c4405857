//! The module layer order of this crate, kept by a test (the same check as every crate's,
//! from `slipway-layering`): a module may use only modules of lower layers, so no module
//! circle can form. What both services' backups and restores share sits below `care` and
//! `platform`, each in a module of what it holds; lib.rs only declares and re-exports.
//!
//! ```text
//! 0  error                               the crate's error
//! 1  passphrase, postgres, sqlite, dirs  the secret; each database's tools; the directories
//!                                        and path checks of a backup and a restore
//! 2  archive                             the format, and reading and writing it off the
//!                                        async threads
//! 3  database, report                    the database part of a backup and a restore; what
//!                                        a finished one says
//! 4  care, platform                      what each service's archive holds, and where a
//!                                        restore puts it
//! 5  layers (and lib.rs)                 declarations and re-exports only
//! ```

#[cfg(test)]
mod tests {
    /// The layer of each top-level module.
    const LAYERS: &[(&str, u8)] = &[
        ("error", 0),
        ("passphrase", 1),
        ("postgres", 1),
        ("sqlite", 1),
        ("dirs", 1),
        ("archive", 2),
        ("database", 3),
        ("report", 3),
        ("care", 4),
        ("platform", 4),
        ("layers", 5),
        ("lib", 5),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
