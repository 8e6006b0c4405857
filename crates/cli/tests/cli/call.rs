//! Tool listing, exit codes and the devfile tools through the CLI.

use serde_json::json;

use super::{call, call_in};

#[test]
fn templates_match_the_spec_table() {
    let (code, out, _) = call("get_available_templates", "{}");
    assert_eq!(code, 0);
    assert_eq!(out["success"], true);
    let got: Vec<(String, String, u64)> = out["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(
                t["description"].as_str().is_some_and(|d| d.len() > 10),
                "{t}"
            );
            let keys: Vec<&String> = t.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["default_port", "description", "language", "name"]);
            (
                t["name"].as_str().unwrap().to_owned(),
                t["language"].as_str().unwrap().to_owned(),
                t["default_port"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("python-api", "Python", 8002),
        ("python-dashboard", "Python", 8501),
        ("js-web", "JavaScript", 80),
        ("multi-container", "Python", 8000),
        ("js-web-advanced", "JavaScript", 3000),
        ("durable-agent", "Python", 9080),
    ];
    let want: Vec<(String, String, u64)> = want
        .iter()
        .map(|(n, l, p)| ((*n).into(), (*l).into(), *p))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, err) = call("no_such_tool", "{}");
    assert_eq!(code, 2);
    assert!(err.contains("unknown tool \"no_such_tool\""), "{err}");
    let (code, _, err) = call("get_available_templates", "{not json");
    assert_eq!(code, 2);
    assert!(err.contains("not valid JSON"), "{err}");
    let (code, _, err) = call("validate_devfile", "[1]");
    assert_eq!(code, 2);
    assert!(err.contains("must be a JSON object"), "{err}");
}

#[test]
fn tool_failures_exit_1_and_name_the_field() {
    let (code, out, _) = call(
        "generate_devfile",
        r#"{"app_name":"Bad","display_name":"B","description":"d"}"#,
    );
    assert_eq!(code, 1);
    assert_eq!(out["success"], false);
    assert!(
        out["error"].as_str().unwrap().starts_with("app_name:"),
        "{out}"
    );
    let (code, out, _) = call("validate_devfile", "{}");
    assert_eq!(code, 1);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("devfile_content or devfile_path is required")
    );
    let (code, out, _) = call(
        "scaffold_app",
        r#"{"app_name":"a","app_type":"python-api"}"#,
    );
    assert_eq!(code, 1);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("missing field `output_directory`"),
        "{out}"
    );
}

#[test]
fn validate_devfile_reports_every_error() {
    let content = "schemaVersion: 2.2.0\nmetadata:\n  name: \"---\"\ncomponents: []\n";
    let (code, out, _) = call(
        "validate_devfile",
        &json!({ "devfile_content": content }).to_string(),
    );
    assert_eq!(code, 0, "validation ran; the devfile is what is invalid");
    assert_eq!(out["valid"], false);
    let errors: Vec<&str> = out["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e
                .starts_with("metadata.name (line 3): no app name can be derived from \"---\"")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("metadata.displayName")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("components (line 4): components is empty")),
        "{errors:?}"
    );
    assert!(out["warnings"].is_array());
}

#[test]
fn generate_then_validate_from_file() {
    let dir = tempfile::tempdir().unwrap();
    let args = json!({"app_name": "orders", "display_name": "Orders", "description": "Order intake", "output_path": "devfile.yaml", "fabrics": ["payments"]});
    let (code, out, _) = call_in(dir.path(), "generate_devfile", &args.to_string());
    assert_eq!(code, 0, "{out}");
    assert!(
        out["output_path"]
            .as_str()
            .unwrap()
            .ends_with("devfile.yaml")
    );
    let written = std::fs::read_to_string(dir.path().join("devfile.yaml")).unwrap();
    assert_eq!(written, out["content"].as_str().unwrap());
    assert!(written.contains("targetPort: 8002"));
    let (code, out, _) = call_in(
        dir.path(),
        "validate_devfile",
        r#"{"devfile_path":"devfile.yaml"}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out["valid"], true, "{out}");
    // A second generate never replaces the file.
    let (code, out, _) = call_in(dir.path(), "generate_devfile", &args.to_string());
    assert_eq!(code, 1);
    assert!(out["error"].as_str().unwrap().contains("exists already"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("devfile.yaml")).unwrap(),
        written
    );
    // Without output_path nothing is written and no output_path is returned.
    let (code, out, _) = call(
        "generate_devfile",
        r#"{"app_name":"x","display_name":"X","description":"d","port":9000,"language":"javascript"}"#,
    );
    assert_eq!(code, 0);
    assert!(out.get("output_path").is_none());
    assert!(
        out["content"]
            .as_str()
            .unwrap()
            .contains("targetPort: 9000")
    );
}
