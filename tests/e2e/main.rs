//! Cross-crate tests: what the toolkit scaffolds, the devfile engine and the published JSON
//! Schema both accept, and builds can stamp an imageUri into it without disturbing it.

mod care_sign_in;
mod crate_graph;
mod process;

use serde_json::json;
use slipway_toolkit::call;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../schemas/devfile.schema.json");
    jsonschema::validator_for(&serde_json::from_str(text).unwrap()).unwrap()
}

#[test]
fn scaffolded_devfiles_satisfy_validator_schema_and_editor() {
    let schema = schema();
    let dir = tempfile::tempdir().unwrap();
    let templates = call("get_available_templates", json!({})).unwrap();
    let templates = templates["templates"].as_array().unwrap();
    assert_eq!(templates.len(), 6);
    for t in templates {
        let name = t["name"].as_str().unwrap();
        let out = call(
            "scaffold_app",
            json!({"app_name": format!("e2e-{name}"), "app_type": name, "output_directory": dir.path(), "fabrics": ["f1"]}),
        )
        .unwrap();
        assert_eq!(out["success"], true, "{name}: {out}");
        let project = std::path::PathBuf::from(out["project_path"].as_str().unwrap());
        let text = std::fs::read_to_string(project.join("devfile.yaml")).unwrap();
        let report = slipway_devfile::validate(&text, None);
        assert!(report.valid(), "{name}: {:?}", report.errors());
        assert!(
            report.warnings().is_empty(),
            "{name}: the template draws warnings: {:?}",
            report.warnings()
        );

        let instance: serde_json::Value = serde_yaml::from_str(&text).unwrap();
        let problems: Vec<String> = schema
            .iter_errors(&instance)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            problems.is_empty(),
            "{name}: schema rejects the scaffolded devfile: {problems:?}"
        );

        let model = slipway_devfile::Devfile::parse(&text).unwrap();
        let order = model.deploy_order().unwrap();
        assert_eq!(order.len(), model.services().len());
        for service in model.services() {
            for dep in &service.depends_on {
                let (d, s) = (
                    order.iter().position(|x| x == dep),
                    order.iter().position(|x| *x == service.name),
                );
                assert!(d < s, "{name}: {dep} must deploy before {}", service.name);
            }
            assert!(
                service.run_command.is_some(),
                "{name}: service {} has no run command",
                service.name
            );
            assert!(
                service
                    .dockerfile
                    .as_deref()
                    .is_some_and(|d| project.join(d).is_file()),
                "{name}: {} has no Dockerfile",
                service.name
            );
            let edited = slipway_devfile::set_image_uri(
                &text,
                &service.name,
                "registry.local/x/y@sha256:ab",
            )
            .unwrap();
            let report = slipway_devfile::validate(&edited, None);
            assert!(report.valid(), "{name}: {:?}", report.errors());
            let kept = text
                .lines()
                .filter(|l| edited.lines().any(|e| e == *l))
                .count();
            assert!(
                kept >= text.lines().count() - 1,
                "{name}: the edit changed more than one line"
            );
        }
    }
}
