//! The module layer order of this crate, kept by a test (the way rust-analyzer keeps its
//! architecture rules): a module may use only modules of lower layers, so the module circles
//! the crate once had (`fhir`, `missing_info`, `store` and `worklist` through each other's
//! types; `lib.rs` as both the top and the home of `CareConfig`) cannot come back.
//!
//! ```text
//! 0  violation, fields, auth, error        the words every rule speaks: a broken rule, typed
//!                                          fields, callers and permissions, the start-up error
//! 1  config, model                         the settings; the domain values store and rules share
//! 2  db, enrollment                        the pool and generic upsert; the enrollment rules
//! 3  store                                 every SQL statement
//! 4  fhir, reference, history, events,     FHIR views, the reference data's rules, batched
//!    check, probes, demo                   history, live events, the desktop's check, the
//!                                          load bench's probe, the demo data set
//! 5  missing_info                          the missing-information rules (FHIR bodies via fhir)
//! 6  worklist, amend, fuzzing              claims and amendments (refused by missing_info's
//!                                          rules), fuzz entry
//! 7  http                                  the transport
//! 8  embedded, layers (and lib.rs)         the whole service
//! ```
//!
//! Inside `store/` the same holds for its files (`store/records` is a module of its own):
//!
//! ```text
//! 0  base                                  the store's error, reading a row of either driver
//! 1  users, groups, objects, reference,    one kind of record each
//!    stats, erx, records, events
//! 2  data_requests, enrollment,            records read or written with others
//!    amendments
//! 3  worklist                              data requests seen as Tasks
//! 4  mod.rs                                declares and re-exports
//! ```

#[cfg(test)]
mod tests {
    /// The layer of each top-level module.
    const LAYERS: &[(&str, u8)] = &[
        ("violation", 0),
        ("fields", 0),
        ("auth", 0),
        ("error", 0),
        ("config", 1),
        ("model", 1),
        ("db", 2),
        ("enrollment", 2),
        ("store", 3),
        ("fhir", 4),
        ("reference", 4),
        ("history", 4),
        ("events", 4),
        ("check", 4),
        ("probes", 4),
        ("demo", 4),
        ("missing_info", 5),
        ("worklist", 6),
        ("amend", 6),
        ("fuzzing", 6),
        ("http", 7),
        ("embedded", 8),
        ("layers", 8),
        ("lib", 8),
    ];

    /// The layer of each module of `store/`.
    const STORE_LAYERS: &[(&str, u8)] = &[
        ("base", 0),
        ("users", 1),
        ("groups", 1),
        ("objects", 1),
        ("reference", 1),
        ("stats", 1),
        ("erx", 1),
        ("records", 1),
        ("events", 1),
        ("data_requests", 2),
        ("enrollment", 2),
        ("amendments", 2),
        ("worklist", 3),
        ("mod", 4),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }

    #[test]
    fn store_modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &["store"], STORE_LAYERS);
    }
}
