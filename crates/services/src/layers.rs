//! The module layer order of this crate, kept by a test:
//!
//! ```text
//! 0  error, spec                  what failed; what a resource and its credentials are
//! 1  binding, process, forward    one supervised server process and its helpers; relays;
//!    sigv4                        checking an AWS request signature
//! 2  redis                        a Redis server per resource
//! 3  memcached, postgres, mariadb the other servers; queue (pgmq in a database); seaweed (S3);
//!    dynalite, restate            an app's tables behind their gate; an app's Restate
//! 4  backup                       the servers' dumps for a backup, loaded after a restore
//! 5  manager                      every server of one platform
//! 6  layers (and lib.rs)          declarations and re-exports only
//! ```

#[cfg(test)]
mod tests {
    const LAYERS: &[(&str, u8)] = &[
        ("error", 0),
        ("spec", 0),
        ("binding", 1),
        ("process", 1),
        ("forward", 1),
        ("sigv4", 1),
        ("redis", 2),
        ("memcached", 3),
        ("postgres", 3),
        ("mariadb", 3),
        ("queue", 3),
        ("seaweed", 3),
        ("dynalite", 3),
        ("restate", 3),
        ("backup", 4),
        ("manager", 5),
        ("layers", 6),
        ("lib", 6),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
