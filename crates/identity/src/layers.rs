//! The module layer order of this crate, kept by a test (the same check as every crate's,
//! from `slipway-layering`): a module may use only modules of lower layers, so no module
//! circle can form. Each layer is the rules of one thing over the things below it: a person
//! is made with a token, an invite makes a person, a sign-in admits through an invite.
//! `Tx`, `Db` and `Token` come from `slipway-server` straight, and each prefix lives beside
//! what it prefixes; lib.rs only re-exports them.
//!
//! ```text
//! 0  model, error          domain values, the crate's error
//! 1  rules, store          the input rules; every SQL statement
//! 2  audit                 what happened to whom
//! 3  tokens                personal tokens and authentication (TOKEN_PREFIX)
//! 4  people                people and their roles (the first token of a new person)
//! 5  invites, oauth        invites and joining (INVITE_PREFIX); assistants' OAuth sign-in
//! 6  oidc                  single sign-on (admission may join through an invite)
//! 7  layers (and lib.rs)   declarations, re-exports and the migrations
//! ```

#[cfg(test)]
mod tests {
    /// The layer of each top-level module.
    const LAYERS: &[(&str, u8)] = &[
        ("model", 0),
        ("error", 0),
        ("rules", 1),
        ("store", 1),
        ("audit", 2),
        ("tokens", 3),
        ("people", 4),
        ("invites", 5),
        ("oauth", 5),
        ("oidc", 6),
        ("layers", 7),
        ("lib", 7),
    ];

    #[test]
    fn modules_use_only_lower_layers() {
        slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
    }
}
