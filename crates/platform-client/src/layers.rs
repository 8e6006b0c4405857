//! The module layer order of the platform client, kept by a test over `slipway-layering`: a
//! module may use only modules of lower layers, so the circle the token store once made with
//! the trust rules (each asking the other about URLs) cannot come back.
//!
//! ```text
//! 0  error, fsutil, url, model                  the error, files, URL origins, the answers
//! 1  credentials, local                         environments and tokens; the local builder
//! 2  endpoint, trust, answer                    where a platform is; what HTTPS trusts; how
//!                                               its answers read
//! 3  one_call                                   a tool that is one request, as a value
//! 4  client                                     the HTTP client with retries
//! 5  apps, people                               the app tools and the .app file; people
//! 6  pack, builds, history, secrets, sharing,   the calls over apps and people
//!    stream, tokens, join, resources,
//!    jobs, notifications, domains, git
//! 7  build, sso, grants                         build_app (packs, uploads, waits); sign-in;
//!                                               assistants' grants (a scope as tokens write it)
//! 8  layers, lib
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
    ("answer", 2),
    ("one_call", 3),
    ("client", 4),
    ("apps", 5),
    ("people", 5),
    ("pack", 6),
    ("builds", 6),
    ("history", 6),
    ("secrets", 6),
    ("sharing", 6),
    ("stream", 6),
    ("tokens", 6),
    ("grants", 7),
    ("resources", 6),
    ("jobs", 6),
    ("notifications", 6),
    ("domains", 6),
    ("git", 6),
    ("join", 6),
    ("build", 7),
    ("sso", 7),
    ("layers", 8),
    ("lib", 8),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
