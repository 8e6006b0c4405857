//! The module layer check behind every crate's layer test (the way rust-analyzer keeps its
//! architecture rules): each crate lists its top-level modules with a layer number, and a
//! module may use only modules of lower layers. A module circle cannot then come back, since
//! every edge of a circle would have to go down.
//!
//! One copy of the reader serves every crate (a dev-dependency only), so the rule "what counts
//! as a use" is the same everywhere: `use crate::…` trees (grouped ones included), `crate::…`
//! paths anywhere in the code, and `crate :: name` in the token streams of macro calls. Items
//! under `#[cfg(test)]` are left out: tests may reach anywhere. A name after `crate::` that is
//! not in the table (`crate::CareConfig`) is an item of `lib.rs`, which is the top layer.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::UseTree;
use syn::visit::Visit;

/// Where the modules of the crate at `manifest_dir` (its `src/`) use a module of the same or a
/// higher layer, as `"path: module uses other"` lines; empty when the order holds. Panics, as
/// a test should, when a module has no layer or a file does not parse.
pub fn check(manifest_dir: &str, layers: &[(&str, u8)]) -> Vec<String> {
    check_in(manifest_dir, &[], layers)
}

/// [`check`] for the submodules of one module (`within`, such as `["commands"]`): `layers`
/// names the files and folders directly inside it, and the module's own file (`mod.rs`, which
/// may use every submodule) is `"mod"`, the top layer. A submodule uses another through
/// `crate::<within>::other` or `super::other`.
pub fn check_in(manifest_dir: &str, within: &[&str], layers: &[(&str, u8)]) -> Vec<String> {
    let mut src = Path::new(manifest_dir).join("src");
    for part in within {
        src.push(part);
    }
    let mut wrong = Vec::new();
    for (top, path, text) in sources_by_module(&src) {
        let depth = path.components().count();
        // `super` in a file directly below `within` (or in its folder's mod.rs) is `within`.
        let direct = depth == 1 || (depth == 2 && path.ends_with("mod.rs"));
        let names = used_paths(&text)
            .iter()
            .filter_map(|p| named_module(p, within, direct))
            .collect();
        for finding in against_the_order_of(layers, &top, names) {
            wrong.push(format!("{}: {finding}", path.display()));
        }
    }
    wrong
}

/// The module of `within` a path names: `crate::<within>::X…` or (when `via_super`)
/// `super::X…` give `X`.
fn named_module(path: &[String], within: &[&str], via_super: bool) -> Option<String> {
    let rest = if path.first()? == "crate" {
        let rest = &path[1..];
        if rest.len() <= within.len() || !within.iter().zip(rest).all(|(w, r)| w == r) {
            return None;
        }
        &rest[within.len()..]
    } else if via_super && path.first()? == "super" {
        &path[1..]
    } else {
        return None;
    };
    rest.first().filter(|n| *n != "self").cloned()
}

/// The whole layer test of a crate (`within`: `&[]`) or of one module's submodules: panics
/// with every use against the order, one per line, so each crate's test is one call.
pub fn assert_layers(manifest_dir: &str, within: &[&str], layers: &[(&str, u8)]) {
    let wrong = check_in(manifest_dir, within, layers);
    assert!(
        wrong.is_empty(),
        "against the layer order of {manifest_dir}/src/{}:\n{}",
        within.join("/"),
        wrong.join("\n")
    );
}

/// `(top-level module, path relative to src/, text)` of every source file of a crate; the
/// crate's (or module's) own file is module `lib`, `main` or `mod`.
pub fn sources_by_module(src: &Path) -> Vec<(String, PathBuf, String)> {
    let mut paths = Vec::new();
    sources(src, &mut paths);
    if let Some(own) = src.parent().map(|p| {
        p.join(format!(
            "{}.rs",
            src.file_name().unwrap_or_default().to_string_lossy()
        ))
    }) && own.is_file()
    {
        paths.push(own);
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(src)
                .map_or_else(|_| PathBuf::from("mod.rs"), Path::to_owned);
            let first = relative.components().next().unwrap();
            let top = first
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            (top, relative, text)
        })
        .collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Where a module of `top`'s layer uses a module of the same or a higher layer (a crate's
/// top-level modules, named through `crate::`).
pub fn against_the_order(layers: &[(&str, u8)], top: &str, text: &str) -> Vec<String> {
    against_the_order_of(layers, top, used_modules(text))
}

fn against_the_order_of(layers: &[(&str, u8)], top: &str, used: BTreeSet<String>) -> Vec<String> {
    let layer = |module: &str| layers.iter().find(|(m, _)| *m == module).map(|(_, l)| *l);
    let highest = layers.iter().map(|(_, l)| *l).max().unwrap_or(0);
    let own = layer(top).unwrap_or_else(|| panic!("module {top} has no layer: add it"));
    used.into_iter()
        .filter(|used| used != top)
        .filter(|used| match layer(used) {
            Some(l) => l >= own,
            // An item of the crate's (or module's) own file belongs to the top layer.
            None => own != highest,
        })
        .map(|used| format!("{top} uses {used}"))
        .collect()
}

/// The top-level modules (or lib.rs items) a source file names through `crate::`, outside
/// `#[cfg(test)]` items.
pub fn used_modules(text: &str) -> BTreeSet<String> {
    used_paths(text)
        .iter()
        .filter_map(|p| named_module(p, &[], false))
        .collect()
}

/// Every `crate::…` and `super::…` path a source file names outside `#[cfg(test)]` items: in
/// use trees (each branch of a group as a path of its own), in paths anywhere in the code,
/// and in the token streams of macro calls.
fn used_paths(text: &str) -> BTreeSet<Vec<String>> {
    let file = syn::parse_file(text).expect("the crate's sources parse");
    let mut uses = Uses::default();
    uses.visit_file(&file);
    uses.paths
}

#[derive(Default)]
struct Uses {
    paths: BTreeSet<Vec<String>>,
    /// How deep inside inline `mod x { … }` items the visitor is: a `super::` there names the
    /// file's own module, not a sibling.
    inline: usize,
}

impl Uses {
    fn keep(&mut self, path: Vec<String>) {
        let head = path.first().map(String::as_str);
        let own_file = head == Some("super") && self.inline > 0;
        if matches!(head, Some("crate" | "super")) && path.len() > 1 && !own_file {
            self.paths.insert(path);
        }
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// Each branch of a use tree as a whole path (`a::b::{c, d::e}`: `a::b::c`, `a::b::d::e`).
fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let leaf = |name: String, prefix: &Vec<String>| {
        let mut path = prefix.clone();
        path.push(name);
        path
    };
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => out.push(leaf(n.ident.to_string(), prefix)),
        UseTree::Rename(r) => out.push(leaf(r.ident.to_string(), prefix)),
        UseTree::Group(g) => g.items.iter().for_each(|t| flatten(t, prefix, out)),
        UseTree::Glob(_) => out.push(prefix.clone()),
    }
}

/// `crate :: a :: b` and `super :: a` sequences in a macro call's tokens, nested groups
/// included.
fn macro_paths(tokens: proc_macro2::TokenStream, uses: &mut Uses) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let colons = |i: usize| {
        tokens[i..]
            .iter()
            .take(2)
            .filter(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'))
            .count()
            == 2
    };
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(g) => macro_paths(g.stream(), uses),
            TokenTree::Ident(id) if id == "crate" || id == "super" => {
                let mut path = vec![id.to_string()];
                let mut at = i + 1;
                while at + 2 < tokens.len() + 1 && colons(at) {
                    match tokens.get(at + 2) {
                        Some(TokenTree::Ident(name)) => path.push(name.to_string()),
                        _ => break,
                    }
                    at += 3;
                }
                uses.keep(path);
            }
            _ => {}
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if !is_cfg_test(&item.attrs) {
            let mut out = Vec::new();
            flatten(&item.tree, &mut Vec::new(), &mut out);
            out.into_iter().for_each(|p| self.keep(p));
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if !is_cfg_test(&item.attrs) {
            self.inline += 1;
            syn::visit::visit_item_mod(self, item);
            self.inline -= 1;
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !is_cfg_test(&item.attrs) {
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if !is_cfg_test(&item.attrs) {
            syn::visit::visit_item_impl(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.keep(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        macro_paths(mac.tokens.clone(), self);
        syn::visit::visit_macro(self, mac);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYERS: &[(&str, u8)] = &[
        ("model", 0),
        ("db", 1),
        ("store", 3),
        ("deploy", 6),
        ("jobs", 6),
        ("http", 7),
        ("gateway", 7),
        ("lib", 8),
    ];

    #[test]
    fn grouped_imports_paths_and_macros_are_read() {
        let text = r#"
            use crate::{db::Tx, http};
            use crate::{
                model::AppStatus,
                deploy::{self, Deployer},
            };
            fn f() { crate::gateway::router(); tracing::info!(x = ?crate::jobs::ONE, "m"); }
            #[cfg(test)]
            mod tests { use crate::embedded; }
        "#;
        let used = used_modules(text);
        let expected = ["db", "deploy", "gateway", "http", "jobs", "model"];
        assert_eq!(used, expected.iter().map(|s| (*s).to_owned()).collect());
        // store (layer 3) may use db and model, not deploy, gateway, http or jobs.
        assert_eq!(
            against_the_order(LAYERS, "store", text),
            [
                "store uses deploy",
                "store uses gateway",
                "store uses http",
                "store uses jobs"
            ]
        );
    }

    #[test]
    fn super_names_a_sibling_inside_a_module() {
        let text = "use super::{env::Selection, Shared}; fn f() { crate::commands::tools::x(); }";
        let names: BTreeSet<String> = used_paths(text)
            .iter()
            .filter_map(|p| named_module(p, &["commands"], true))
            .collect();
        let expected = ["Shared", "env", "tools"];
        assert_eq!(names, expected.iter().map(|s| (*s).to_owned()).collect());
        let layers = &[("env", 0), ("tools", 1), ("mod", 2)];
        assert_eq!(
            against_the_order_of(layers, "env", names),
            ["env uses Shared", "env uses tools"]
        );
    }

    #[test]
    fn an_item_of_lib_rs_is_the_top_layer() {
        let text = "fn f(c: &crate::Config) {}";
        assert_eq!(against_the_order(LAYERS, "db", text), ["db uses Config"]);
        assert!(against_the_order(LAYERS, "lib", text).is_empty());
    }
}
