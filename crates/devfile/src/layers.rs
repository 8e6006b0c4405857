//! The module layer order of this crate, kept by a test (the same check as every crate's,
//! from `slipway-layering`): a module may use only modules of lower layers, so no module
//! circle can form, and the rules (`validate`) stay the one place that reads every other part.
//!
//! ```text
//! 0  diagnostics, graph, name, quantity,   what the rest is made of: findings, the
//!    secret_path, yaml                     dependency order, the shared name, quantity and
//!                                          secret-path rules, the positioned YAML tree
//! 1  model, edit, generate                 the typed devfile, surgical edits of its text,
//!                                          a fresh devfile (each over one or two leaves)
//! 2  infra, jobs                           the volumes and managed resources, the scheduled
//!                                          jobs, typed
//! 3  validate                              every rule, over the model and the leaves
//! 4  layers (and lib.rs)                   declarations and re-exports only
//! ```

#[cfg(test)]
mod tests {
    /// The layer of each top-level module.
    const LAYERS: &[(&str, u8)] = &[
        ("diagnostics", 0),
        ("graph", 0),
        ("name", 0),
        ("quantity", 0),
        ("secret_path", 0),
        ("yaml", 0),
        ("model", 1),
        ("edit", 1),
        ("generate", 1),
        ("infra", 2),
        ("jobs", 2),
        ("validate", 3),
        ("layers", 4),
        ("lib", 4),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
