//! The module layer order of this crate, kept by a test: a module may use only modules of
//! lower layers, so no two modules can use each other, directly or through others (as
//! `backup` ↔ `platform`/`care` over the data-directory helpers, and the servers' commands ↔
//! `main` over the log set-up, once did).
//!
//! ```text
//! 0  call, data_dir, logging,      leaves: `slipway call`, the default data directories, the
//!    prefix, prompt, tls_args,     log set-up, prefixed output, yes-or-no questions, the TLS
//!    table                         flags, tables
//! 1  local_platform, care_staff    the local platform the daily commands fall back to; the
//!                                  care staff's commands (`care tasks|answer`, routed by `care`)
//! 2  backup, daily                 the servers' backups (on the data directories); the daily
//!                                  commands (on the local platform)
//! 3  platform, care, dev, people   the servers' commands (their backup subcommands go to
//!                                  `backup`); `slipway dev` and `people` (on `daily`'s client)
//! 4  tokens, grants, resources     (on `people`'s output)
//! 5  jobs, notify, domains, git  (on `people`'s output and `resources`' app lookup)
//! 6  layers, main                  this check; the crate root, which dispatches to all
//! ```
//!
//! Why this order: what several commands resolve alike (where a server's data lives, how
//! logs are set up) is a leaf, so a command that another command routes to (`backup`, for
//! `platform backup` and `care backup`) never has to reach back into it.

/// The layer of each top-level module (`main` is the crate root).
const LAYERS: &[(&str, u8)] = &[
    ("call", 0),
    ("data_dir", 0),
    ("logging", 0),
    ("prefix", 0),
    ("prompt", 0),
    ("tls_args", 0),
    ("table", 0),
    ("local_platform", 1),
    ("care_staff", 1),
    ("backup", 2),
    ("daily", 2),
    ("platform", 3),
    ("care", 3),
    ("dev", 3),
    ("people", 3),
    ("tokens", 4),
    ("grants", 4),
    ("resources", 4),
    ("jobs", 5),
    ("notify", 5),
    ("domains", 5),
    ("git", 5),
    ("layers", 6),
    ("main", 6),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
