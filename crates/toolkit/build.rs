//! Rebuild when any template changes: the templates are embedded with include_dir.

fn main() {
    println!("cargo:rerun-if-changed=../../templates");
}
