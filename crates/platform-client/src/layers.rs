//! The module layer order of the platform client, kept by a test over `slipway-layering`: a
//! module may use only modules of lower layers, so the circle the token store once made with
//! the trust rules (each asking the other about URLs) cannot come back.
//!
//! ```text
//! 0  error, fsutil, url, model                  the error, files, URL origins, the answers
//! 1  credentials, local                         environments and tokens; the local builder
//! 2  endpoint, trust                            where a platform is; what HTTPS trusts
//! 3  client                                     the HTTP client with retries
//! 4  apps, people                               the app tools and the .app file; people
//! 5  pack, builds, history, secrets, sharing,   the calls over apps and people
//!    stream, tokens, join, resources,
//!    jobs, notifications, domains, git
//! 6  build, sso, grants                         build_app (packs, uploads, waits); sign-in;
//!                                               assistants' grants (a scope as tokens write it)
//! 7  layers, lib
//! ```

const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("fsutil", 0),
    ("url", 0),
    ("model", 0),
    ("credentials", 1),
    ("local", 1),
    ("endpoint", 2),
    ("trust", 2),
    ("client", 3),
    ("apps", 4),
    ("people", 4),
    ("pack", 5),
    ("builds", 5),
    ("history", 5),
    ("secrets", 5),
    ("sharing", 5),
    ("stream", 5),
    ("tokens", 5),
    ("grants", 6),
    ("resources", 5),
    ("jobs", 5),
    ("notifications", 5),
    ("domains", 5),
    ("git", 5),
    ("join", 5),
    ("build", 6),
    ("sso", 6),
    ("layers", 7),
    ("lib", 7),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
