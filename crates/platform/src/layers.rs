//! The module layer order of this crate, kept by a test (the way rust-analyzer keeps its
//! architecture rules): a module may use only modules of lower layers, so the module cycle
//! the platform once had cannot come back, and SQL stays in `store/`.
//!
//! ```text
//! 0  model, error                          domain values, the start-up error
//! 1  db, data_dir, pagination              the pool, the data directory, page cursors
//! 2  config, logs                          the command line, presigned log URLs
//! 3  store                                 every SQL statement
//! 4  policy                                the role matrix (pure)
//! 5  vault, bootstrap, apps, retention     rules over stored data (the vault's app-secret
//!                                          access is the matrix's secret actions)
//! 6  deploy, jobs                          long-running work
//! 7  http, gateway                         transports
//! 8  embedded (and lib.rs)                 the whole server
//! ```

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use syn::UseTree;
    use syn::visit::Visit;

    /// The layer of each top-level module.
    const LAYERS: &[(&str, u8)] = &[
        ("model", 0),
        ("error", 0),
        ("db", 1),
        ("data_dir", 1),
        ("pagination", 1),
        ("config", 2),
        ("logs", 2),
        ("store", 3),
        ("policy", 4),
        ("vault", 5),
        ("bootstrap", 5),
        ("apps", 5),
        ("retention", 5),
        ("deploy", 6),
        ("jobs", 6),
        ("http", 7),
        ("gateway", 7),
        ("embedded", 8),
        ("layers", 8),
        ("lib", 8),
    ];

    fn layer(module: &str) -> Option<u8> {
        LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
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

    /// `(top-level module, path, code lines)` of every source file: comments and the test
    /// module at the end of a file are left out (tests may reach anywhere).
    fn files() -> Vec<(String, PathBuf, Vec<String>)> {
        sources_by_module()
            .into_iter()
            .map(|(top, path, text)| {
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                let lines = code
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .map(str::to_owned)
                    .collect();
                (top, path, lines)
            })
            .collect()
    }

    /// `(top-level module, path relative to src/, text)` of every source file.
    fn sources_by_module() -> Vec<(String, PathBuf, String)> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        sources(&src, &mut paths);
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let relative = path.strip_prefix(&src).unwrap().to_owned();
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

    /// The top-level modules a source file names through `crate::`: in `use` trees (grouped
    /// ones included: `use crate::{a, b::c}`), in paths anywhere in the code, and in the
    /// token streams of macro calls (`tracing::info!(… crate::x …)`). Items under
    /// `#[cfg(test)]` are left out: tests may reach anywhere.
    fn used_modules(text: &str) -> BTreeSet<String> {
        let file = syn::parse_file(text).expect("the platform's sources parse");
        let mut uses = Uses::default();
        uses.visit_file(&file);
        uses.modules.remove("self");
        uses.modules
    }

    #[derive(Default)]
    struct Uses {
        modules: BTreeSet<String>,
    }

    fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
        attrs.iter().any(|a| {
            a.path().is_ident("cfg")
                && a.parse_args::<syn::Meta>()
                    .is_ok_and(|m| m.path().is_ident("test"))
        })
    }

    /// The first name of each branch of a use tree (`a` of `a::b`, `a` and `b` of `{a, b}`).
    fn heads(tree: &UseTree, out: &mut BTreeSet<String>) {
        match tree {
            UseTree::Path(p) => {
                out.insert(p.ident.to_string());
            }
            UseTree::Name(n) => {
                out.insert(n.ident.to_string());
            }
            UseTree::Rename(r) => {
                out.insert(r.ident.to_string());
            }
            UseTree::Group(g) => g.items.iter().for_each(|t| heads(t, out)),
            UseTree::Glob(_) => {}
        }
    }

    /// The modules named by the `crate::` branches of a use tree.
    fn crate_heads(tree: &UseTree, out: &mut BTreeSet<String>) {
        match tree {
            UseTree::Path(p) if p.ident == "crate" => heads(&p.tree, out),
            UseTree::Group(g) => g.items.iter().for_each(|t| crate_heads(t, out)),
            _ => {}
        }
    }

    /// `crate :: name` sequences in a macro call's tokens, nested groups included.
    fn macro_heads(tokens: proc_macro2::TokenStream, out: &mut BTreeSet<String>) {
        use proc_macro2::TokenTree;
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Group(g) => macro_heads(g.stream(), out),
                TokenTree::Ident(id) if id == "crate" => {
                    let colons = tokens[i + 1..]
                        .iter()
                        .take(2)
                        .all(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'));
                    if let (true, Some(TokenTree::Ident(name))) = (colons, tokens.get(i + 3)) {
                        out.insert(name.to_string());
                    }
                }
                _ => {}
            }
        }
    }

    impl<'ast> Visit<'ast> for Uses {
        fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
            if !is_cfg_test(&item.attrs) {
                crate_heads(&item.tree, &mut self.modules);
            }
        }

        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            if !is_cfg_test(&item.attrs) {
                syn::visit::visit_item_mod(self, item);
            }
        }

        fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
            if !is_cfg_test(&item.attrs) {
                syn::visit::visit_item_fn(self, item);
            }
        }

        fn visit_path(&mut self, path: &'ast syn::Path) {
            let mut segments = path.segments.iter();
            if let (Some(first), Some(second)) = (segments.next(), segments.next())
                && first.ident == "crate"
            {
                self.modules.insert(second.ident.to_string());
            }
            syn::visit::visit_path(self, path);
        }

        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            macro_heads(mac.tokens.clone(), &mut self.modules);
            syn::visit::visit_macro(self, mac);
        }
    }

    /// Where a module of layer `own` uses a module of the same or a higher layer.
    fn against_the_order(top: &str, text: &str) -> Vec<String> {
        let own = layer(top).unwrap_or_else(|| panic!("{top} has no layer: add it"));
        used_modules(text)
            .into_iter()
            .filter(|used| used != top)
            .filter(|used| match layer(used) {
                Some(l) => l >= own,
                // Items of lib.rs (`crate::prepare`) belong to the top layer.
                None => own != 8,
            })
            .map(|used| format!("{top} uses {used}"))
            .collect()
    }

    #[test]
    fn modules_use_only_lower_layers() {
        let mut wrong = Vec::new();
        for (top, path, text) in sources_by_module() {
            for finding in against_the_order(&top, &text) {
                wrong.push(format!("{}: {finding}", path.display()));
            }
        }
        assert!(
            wrong.is_empty(),
            "against the layer order:\n{}",
            wrong.join("\n")
        );
    }

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
            against_the_order("store", text),
            [
                "store uses deploy",
                "store uses gateway",
                "store uses http",
                "store uses jobs"
            ]
        );
    }

    #[test]
    fn sql_lives_only_in_store() {
        let markers = ["sqlx::query", "sqlx::raw_sql", "query_scalar", "query_as"];
        let mut wrong = Vec::new();
        for (top, path, lines) in files() {
            if matches!(top.as_str(), "store" | "db") {
                continue;
            }
            for line in &lines {
                if markers.iter().any(|m| line.contains(m)) {
                    wrong.push(format!("{}: {}", path.display(), line.trim()));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "SQL outside store/:\n{}",
            wrong.join("\n")
        );
    }
}
