//! The module layer order of this crate, kept by a test:
//!
//! ```text
//! 0  error, channel, message   why a delivery failed; a channel's settings; what it says
//! 1  webhook, email            sending over HTTP (signed, or Slack's shape) and over SMTP
//! 2  send                      one message to any channel
//! 3  layers (and lib.rs)       declarations and re-exports only
//! ```

#[cfg(test)]
mod tests {
    const LAYERS: &[(&str, u8)] = &[
        ("error", 0),
        ("channel", 0),
        ("message", 0),
        ("webhook", 1),
        ("email", 1),
        ("send", 2),
        ("layers", 3),
        ("lib", 3),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
