//! The module layer order of the care client, kept by a test over `slipway-layering`:
//! `lib.rs` only declares and re-exports, so the worklist and the sign-in checks use the
//! client module, never the crate root.
//!
//! ```text
//! 0  client                   where the care services are, requests, refusals as Failures
//! 1  draft, sign_in, worklist the form drafts; sign-in checks; the worklist and its events
//! 2  layers, lib
//! ```

const LAYERS: &[(&str, u8)] = &[
    ("client", 0),
    ("draft", 1),
    ("sign_in", 1),
    ("worklist", 1),
    ("layers", 2),
    ("lib", 2),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
