//! The module layer order of this crate, kept by a test:
//!
//! ```text
//! 0  name, certificate, challenges   the name rule; what a certificate says; HTTP-01 answers
//! 1  sni, issuer                     certificates by SNI; issuing by ACME
//! 2  layers (and lib.rs)             declarations and re-exports only
//! ```

#[cfg(test)]
mod tests {
    const LAYERS: &[(&str, u8)] = &[
        ("name", 0),
        ("certificate", 0),
        ("challenges", 0),
        ("sni", 1),
        ("issuer", 1),
        ("layers", 2),
        ("lib", 2),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
