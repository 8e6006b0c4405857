//! The module layer order of this crate, kept by a test: a module may use only modules of
//! lower layers, so no two modules can use each other, directly or through others (as
//! `runtime` → `process` → `layers` → `runtime` over `RUN_DIR`, and `engine` ↔ `build` over
//! the image host name, once did). Not to be confused with `layers`, the unpacked image
//! layers of the process runtime.
//!
//! ```text
//! 0  pgroup, health, engine,       mechanisms that use no other module: process groups, the
//!    runtime, base_image           health probe, the engine CLI, the `Runtime` trait with
//!                                  what every runtime shares, base image imports
//! 1  layers, build, supervisor,    unpacked layers; the builders (on pgroup and the engine);
//!    volumes                       the process runtime's private mounts;
//!                                  the supervisor (on the trait)
//! 2  process, container            the two runtimes
//! 3  module_layers, lib            this check; the crate root
//! ```
//!
//! Why this order: the trait's module is what every runtime implements, so it holds the
//! values they share (`RUN_DIR`, `STOP_GRACE`) and uses none of them; the engine's CLI is
//! used by the builders (buildah) and by the container runtime alike, so it holds the name
//! they all tag images with (`IMAGE_HOST`) and uses neither.

/// The layer of each top-level module (`lib` is the crate root).
const LAYERS: &[(&str, u8)] = &[
    ("pgroup", 0),
    ("health", 0),
    ("engine", 0),
    ("runtime", 0),
    ("base_image", 0),
    ("layers", 1),
    ("build", 1),
    ("supervisor", 1),
    ("volumes", 1),
    ("process", 2),
    ("container", 2),
    ("module_layers", 3),
    ("lib", 3),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
