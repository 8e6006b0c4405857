//! The module layer order of this crate, kept by a test: a module may use only modules of
//! lower layers, so no two modules can use each other, directly or through others (the
//! circles `docker_archive` ↔ `import` and `oci` ↔ `store` once did).
//!
//! ```text
//! 0  digest                        the content digest and the crate's error (each names the other)
//! 1  document, archive             the OCI documents; the one rule for reading an archive's entries
//! 2  store, docker_archive         the blob store; `docker save` archives to an OCI layout
//! 3  oci, sign, import, scan       the packer and image writer, signatures, archive imports,
//!                                  scans: each reads or writes the store
//! 4  layers, lib                   this check; the crate root, which only re-exports
//! ```
//!
//! Why this order: the store only reads documents, so the documents sit below it and the
//! image writer above it; the docker-archive converter and the importer share only the archive
//! rule, so that rule sits below both and the importer (which calls the converter) above it.

/// The layer of each top-level module (`lib` is the crate root).
const LAYERS: &[(&str, u8)] = &[
    ("digest", 0),
    ("document", 1),
    ("archive", 1),
    ("store", 2),
    ("docker_archive", 2),
    ("oci", 3),
    ("sign", 3),
    ("import", 3),
    ("scan", 3),
    ("layers", 4),
    ("lib", 4),
];

#[test]
fn modules_use_only_lower_layers() {
    slipway_layering::assert_layers(env!("CARGO_MANIFEST_DIR"), &[], LAYERS);
}
