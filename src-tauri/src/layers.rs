//! The layer order of the Tauri commands (`commands/`), kept by a test over
//! `slipway-layering`: a command module may use only modules of lower layers, so the circle the
//! environment commands once made with the tools and care commands (over `Selection`) cannot
//! come back.
//!
//! ```text
//! 0  selection, browser, startup, links   which environment is in use; leaves
//! 1  tools, care, drafts                  the tool runner, the care client, form drafts
//! 2  run                                  work off the window's thread, rendered
//! 3  build, dev, history, resources, jobs,      commands over the tools and care
//!    worklist, env
//! 4  people                               people, tokens, invites and sign-in (switches env)
//! 5  mod                                  the modules and the window's command list
//! ```

const LAYERS: &[(&str, u8)] = &[
    ("selection", 0),
    ("browser", 0),
    ("startup", 0),
    ("links", 0),
    ("tools", 1),
    ("care", 1),
    ("drafts", 1),
    ("run", 2),
    ("build", 3),
    ("dev", 3),
    ("history", 3),
    ("resources", 3),
    ("jobs", 3),
    ("notifications", 3),
    ("worklist", 3),
    ("env", 3),
    ("people", 4),
    ("mod", 5),
];

#[test]
fn commands_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &["commands"], LAYERS);
}
