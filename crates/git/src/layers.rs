//! The module layer order of this crate, kept by a test:
//!
//! ```text
//! 0  remote, hooks         repository addresses; webhook events and their signatures
//! 1  command               the git CLI with a credential
//! 2  fetch, keys           one commit fetched, a directory of it packed; deploy keys
//! 3  layers (and lib.rs)   declarations and re-exports only
//! ```

#[cfg(test)]
mod tests {
    const LAYERS: &[(&str, u8)] = &[
        ("remote", 0),
        ("hooks", 0),
        ("command", 1),
        ("keys", 2),
        ("fetch", 2),
        ("layers", 3),
        ("lib", 3),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
