//! The module layer order of the dev loop, kept by a test over `slipway-layering`: `lib.rs`
//! only declares and re-exports, so no module reaches back into it.
//!
//! ```text
//! 0  fingerprint      per-service digests: sync or full build
//! 1  watch            the debounced watcher (what matters is the fingerprint's rule)
//! 2  round            one round of the loop, and the loop
//! 3  session,         the loop on a thread for the desktop; one devfile re-validated on
//!    devfile_watch    every change
//! 4  layers, lib
//! ```

const LAYERS: &[(&str, u8)] = &[
    ("fingerprint", 0),
    ("watch", 1),
    ("round", 2),
    ("session", 3),
    ("devfile_watch", 3),
    ("layers", 4),
    ("lib", 4),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
