//! The module layer order of this crate, kept by a test:
//!
//! ```text
//! 0  error, spec                  what failed; what a resource and its credentials are
//! 1  binding, process                      one supervised server process and its helpers
//! 2  redis                        a Redis server per resource
//! 3  memcached, postgres, mariadb the other servers
//! 4  manager                      every server of one platform
//! 5  layers (and lib.rs)          declarations and re-exports only
//! ```

#[cfg(test)]
mod tests {
    const LAYERS: &[(&str, u8)] = &[
        ("error", 0),
        ("spec", 0),
        ("binding", 1),
        ("process", 1),
        ("redis", 2),
        ("memcached", 3),
        ("postgres", 3),
        ("mariadb", 3),
        ("manager", 4),
        ("layers", 5),
        ("lib", 5),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
