//! The workspace's crate graph, as `cargo metadata` reads it from the manifests: each crate
//! depends on exactly the Slipway crates ARCHITECTURE.md draws, and the two servers stay
//! independent of each other (neither reaches the other, directly or through a third crate).

use std::collections::{BTreeMap, BTreeSet};

/// Slipway crate → the Slipway crates it depends on (normal dependencies only; tests may use
/// more).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut graph = BTreeMap::new();
    for package in meta["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_owned();
        let deps = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| d.starts_with("slipway-"))
            .map(str::to_owned)
            .collect();
        graph.insert(name, deps);
    }
    graph
}

fn closure(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_owned()];
    while let Some(next) = todo.pop() {
        for dep in graph.get(&next).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn crates_depend_on_exactly_the_drawn_crates() {
    let graph = graph();
    let expected: &[(&str, &[&str])] = &[
        ("slipway-api", &[]),
        ("slipway-devfile", &[]),
        ("slipway-layering", &[]),
        ("slipway-server", &[]),
        ("slipway-services", &["slipway-server"]),
        ("slipway-notify", &["slipway-api"]),
        ("slipway-acme", &[]),
        ("slipway-git", &[]),
        ("slipway-image", &["slipway-server"]),
        (
            "slipway-runtime",
            &["slipway-devfile", "slipway-image", "slipway-server"],
        ),
        ("slipway-care", &["slipway-server"]),
        ("slipway-identity", &["slipway-api", "slipway-server"]),
        (
            "slipway-platform",
            &[
                "slipway-acme",
                "slipway-api",
                "slipway-devfile",
                "slipway-git",
                "slipway-identity",
                "slipway-image",
                "slipway-mcp",
                "slipway-notify",
                "slipway-runtime",
                "slipway-server",
                "slipway-services",
            ],
        ),
        (
            "slipway-platform-client",
            &["slipway-api", "slipway-devfile", "slipway-server"],
        ),
        (
            "slipway-toolkit",
            &[
                "slipway-devfile",
                "slipway-platform-client",
                "slipway-server",
            ],
        ),
        (
            "slipway-dev",
            &["slipway-devfile", "slipway-platform-client"],
        ),
        (
            "slipway-care-client",
            &[
                "slipway-platform-client",
                "slipway-server",
                "slipway-toolkit",
            ],
        ),
        (
            "slipway-mcp",
            &["slipway-api", "slipway-platform-client", "slipway-toolkit"],
        ),
        (
            "slipway-desktop",
            &[
                "slipway-care",
                "slipway-care-client",
                "slipway-dev",
                "slipway-platform",
                "slipway-platform-client",
                "slipway-toolkit",
            ],
        ),
        (
            "slipway-backup",
            &[
                "slipway-care",
                "slipway-platform",
                "slipway-server",
                "slipway-services",
            ],
        ),
    ];
    for (name, deps) in expected {
        let actual: Vec<&str> = graph[*name].iter().map(String::as_str).collect();
        assert_eq!(&actual, deps, "{name}");
    }
}

#[test]
fn care_and_platform_are_independent_and_the_graph_has_no_cycle() {
    let graph = graph();
    assert!(!closure(&graph, "slipway-care").contains("slipway-platform"));
    assert!(!closure(&graph, "slipway-platform").contains("slipway-care"));
    for name in graph.keys() {
        assert!(
            !closure(&graph, name).contains(name),
            "{name} reaches itself"
        );
    }
    // The shared crates know neither server.
    for shared in [
        "slipway-api",
        "slipway-platform-client",
        "slipway-dev",
        "slipway-server",
        "slipway-services",
        "slipway-notify",
        "slipway-acme",
        "slipway-git",
        "slipway-image",
        "slipway-runtime",
        "slipway-identity",
        "slipway-toolkit",
        // The tool server: the platform mounts it; it reaches the platform only over its API.
        "slipway-mcp",
    ] {
        let reach = closure(&graph, shared);
        assert!(
            !reach.contains("slipway-care") && !reach.contains("slipway-platform"),
            "{shared} reaches a server: {reach:?}"
        );
    }
}
