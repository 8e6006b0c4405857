//! The module layer order of the toolkit, kept by a test over `slipway-layering`: the tools
//! below the table that lists them, the runner above it.
//!
//! ```text
//! 0  templates, links, devfile_tools    the offline tools' parts; the slipway:// grammar
//! 1  scaffold                           scaffold_app (renders a template, validates, writes)
//! 2  registry                           the tool table, the dispatcher, render
//! 3  runner, hints                      the dispatcher with a fallback platform; each tool's
//!                                       title, annotations and toolset
//! 4  layers, lib
//! ```

const LAYERS: &[(&str, u8)] = &[
    ("templates", 0),
    ("links", 0),
    ("devfile_tools", 0),
    ("scaffold", 1),
    ("registry", 2),
    ("runner", 3),
    ("hints", 3),
    ("layers", 4),
    ("lib", 4),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
