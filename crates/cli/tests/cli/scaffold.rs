//! scaffold_app through the CLI: every template, port overrides, the durable overlay, bad
//! names, and never clobbering files.

use std::path::Path;

use serde_json::json;

use super::call_in;

const TEMPLATES: [(&str, u16); 6] = [
    ("python-api", 8002),
    ("python-dashboard", 8501),
    ("js-web", 80),
    ("multi-container", 8000),
    ("js-web-advanced", 3000),
    ("durable-agent", 9080),
];

fn scaffold(dir: &Path, args: serde_json::Value) -> (i32, serde_json::Value) {
    let (code, out, _) = call_in(dir, "scaffold_app", &args.to_string());
    (code, out)
}

fn validate(project: &Path) -> serde_json::Value {
    let (_, out, _) = call_in(
        project,
        "validate_devfile",
        r#"{"devfile_path":"devfile.yaml"}"#,
    );
    out
}

#[test]
fn every_template_scaffolds_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    for (template, port) in TEMPLATES {
        let name = format!("my-{template}");
        let (code, out) = scaffold(
            dir.path(),
            json!({"app_name": name, "app_type": template, "output_directory": "."}),
        );
        assert_eq!(code, 0, "{template}: {out}");
        let project = dir.path().join(&name);
        assert_eq!(Path::new(out["project_path"].as_str().unwrap()), project);
        let files: Vec<&str> = out["files_created"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        for required in ["devfile.yaml", "README.md"] {
            assert!(
                files.contains(&required),
                "{template} lacks {required}: {files:?}"
            );
        }
        assert!(
            files.iter().any(|f| f.ends_with("Dockerfile")),
            "{template}: {files:?}"
        );
        for f in &files {
            assert!(
                project.join(f).is_file(),
                "{template}: {f} listed but not written"
            );
            let text = std::fs::read_to_string(project.join(f)).unwrap_or_default();
            assert!(
                !text.contains("__APP_NAME__") && !text.contains("__PORT__"),
                "{template}: placeholder left in {f}"
            );
        }
        let report = validate(&project);
        assert_eq!(report["valid"], true, "{template}: {report}");
        assert_eq!(report["errors"], json!([]), "{template}");
        assert_eq!(
            report["warnings"],
            json!([]),
            "{template}: a fresh scaffold must not warn"
        );
        let devfile = std::fs::read_to_string(project.join("devfile.yaml")).unwrap();
        assert!(devfile.contains(&format!("name: {name}")), "{template}");
        assert!(
            devfile.contains(&format!("targetPort: {port}")),
            "{template}"
        );
        assert_eq!(out["durable"], template == "durable-agent", "{template}");
    }
}

#[test]
fn port_override_reaches_devfile_dockerfile_and_app() {
    let dir = tempfile::tempdir().unwrap();
    for (template, default) in TEMPLATES {
        let port = 9123;
        let (code, out) = scaffold(
            dir.path(),
            json!({"app_name": format!("p-{template}"), "app_type": template, "output_directory": ".", "port": port}),
        );
        assert_eq!(code, 0, "{template}: {out}");
        let project = dir.path().join(format!("p-{template}"));
        let report = validate(&project);
        assert_eq!(report["valid"], true, "{template}: {report}");
        assert!(
            report["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| !w.as_str().unwrap().contains("port mismatch")),
            "{template}: {report}"
        );
        let mut saw_expose = false;
        let mut saw_app = false;
        for f in out["files_created"].as_array().unwrap() {
            let f = f.as_str().unwrap();
            let text = std::fs::read_to_string(project.join(f)).unwrap_or_default();
            if f.ends_with("Dockerfile") && text.contains(&format!("EXPOSE {port}")) {
                saw_expose = true;
            }
            let is_source = [".py", ".js", ".mjs", ".conf", ".toml"]
                .iter()
                .any(|e| f.ends_with(e));
            if is_source && text.contains(&port.to_string()) {
                saw_app = true;
            }
            if f.ends_with("Dockerfile") || is_source {
                assert!(
                    !text.contains(&format!("EXPOSE {default}\n")) || default == 8001,
                    "{template}: {f} still exposes {default}"
                );
            }
        }
        assert!(saw_expose, "{template}: no Dockerfile exposes {port}");
        assert!(saw_app, "{template}: no app source or config uses {port}");
    }
}

#[test]
fn invalid_app_names_are_rejected_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let long = "a".repeat(64);
    let cases: [(&str, &str); 6] = [
        ("MyApp", "lowercase letters, digits and hyphens"),
        ("1app", "must start with a lowercase letter"),
        ("my--app", "consecutive hyphens"),
        (&long, "at most 63"),
        ("", "must not be empty"),
        ("app-", "must end with a letter or digit"),
    ];
    for (name, rule) in cases {
        let (code, out) = scaffold(
            dir.path(),
            json!({"app_name": name, "app_type": "python-api", "output_directory": "out"}),
        );
        assert_eq!(code, 1, "{name:?}");
        let error = out["error"].as_str().unwrap();
        assert!(
            error.starts_with("app_name: ") && error.contains(rule),
            "{name:?}: {error}"
        );
    }
    assert!(
        !dir.path().join("out").exists(),
        "nothing may be written for an invalid name"
    );
}

#[test]
fn existing_files_are_never_clobbered_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let args = json!({"app_name": "keep", "app_type": "python-api", "output_directory": "."});
    assert_eq!(scaffold(dir.path(), args.clone()).0, 0);
    let readme = dir.path().join("keep/README.md");
    std::fs::write(&readme, "my notes").unwrap();
    let (code, out) = scaffold(dir.path(), args.clone());
    assert_eq!(code, 1);
    assert!(
        out["error"].as_str().unwrap().contains("overwrite: true"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "my notes");
    let mut forced = args;
    forced["overwrite"] = json!(true);
    assert_eq!(scaffold(dir.path(), forced).0, 0);
    assert_ne!(std::fs::read_to_string(&readme).unwrap(), "my notes");
}

#[test]
fn durable_overlay_and_platform_fields() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = scaffold(
        dir.path(),
        json!({"app_name": "flow", "app_type": "python-api", "output_directory": ".", "durable": true,
               "fabrics": ["payments"], "permissions": ["orders.read"], "display_name": "Flow \"β\"", "description": "Has: colons # and hashes"}),
    );
    assert_eq!(code, 0, "{out}");
    let project = dir.path().join("flow");
    assert_eq!(out["durable"], true);
    let devfile = std::fs::read_to_string(project.join("devfile.yaml")).unwrap();
    assert!(devfile.contains("    durable:\n"), "{devfile}");
    assert!(devfile.contains("engine: restate"));
    assert!(devfile.contains("fabrics: [\"payments\"]"));
    assert!(
        devfile.contains("displayName: \"Flow \\\"β\\\"\""),
        "{devfile}"
    );
    assert!(project.join("durable_workflow.py").is_file());
    let req = std::fs::read_to_string(project.join("requirements.txt")).unwrap();
    assert!(req.contains("restate-sdk"), "{req}");
    assert_eq!(validate(&project)["valid"], true);

    let (code, out) = scaffold(
        dir.path(),
        json!({"app_name": "dash", "app_type": "python-dashboard", "output_directory": ".", "durable": true}),
    );
    assert_eq!(code, 1);
    assert!(
        out["error"].as_str().unwrap().starts_with("durable: "),
        "{out}"
    );
    assert!(!dir.path().join("dash").exists());
}
