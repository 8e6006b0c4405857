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

        check_services(name, &project, &text);
    }
}

/// Each service of the scaffolded devfile `text` of `template` deploys after its
/// dependencies, has a run command and a Dockerfile, and can have its `imageUri` stamped by a
/// one-line edit that leaves every other service's image as it was.
fn check_services(template: &str, project: &std::path::Path, text: &str) {
    let model = slipway_devfile::Devfile::parse(text).unwrap();
    let order = model.deploy_order().unwrap();
    assert_eq!(order.len(), model.services().len());
    for service in model.services() {
        for dep in &service.depends_on {
            let (d, s) = (
                order.iter().position(|x| x == dep),
                order.iter().position(|x| *x == service.name),
            );
            assert!(
                d < s,
                "{template}: {dep} must deploy before {}",
                service.name
            );
        }
        assert!(
            service.run_command.is_some(),
            "{template}: service {} has no run command",
            service.name
        );
        assert!(
            service
                .dockerfile
                .as_deref()
                .is_some_and(|d| project.join(d).is_file()),
            "{template}: {} has no Dockerfile",
            service.name
        );
        let edited =
            slipway_devfile::set_image_uri(text, &service.name, "registry.local/x/y@sha256:ab")
                .unwrap();
        let report = slipway_devfile::validate(&edited, None);
        assert!(report.valid(), "{template}: {:?}", report.errors());
        assert_one_line_edit(template, &service.name, text, &edited);
        let stamped = slipway_devfile::Devfile::parse(&edited).unwrap();
        let stamped = stamped
            .services()
            .into_iter()
            .map(|s| (s.name, s.image_uri))
            .collect::<Vec<_>>();
        for (other, uri) in stamped {
            let before = model
                .services()
                .into_iter()
                .find(|s| s.name == other)
                .and_then(|s| s.image_uri);
            let expected = if other == service.name {
                Some("registry.local/x/y@sha256:ab".to_owned())
            } else {
                before
            };
            assert_eq!(
                uri, expected,
                "{template}: imageUri of {other} after stamping {}",
                service.name
            );
        }
    }
}

/// `edited` is `text` with one `imageUri` line of `service` replaced or inserted (with the
/// `attributes:` key that holds it when the component had none): every other line, comments
/// and order included, is kept.
fn assert_one_line_edit(template: &str, service: &str, text: &str, edited: &str) {
    let (old, new): (Vec<&str>, Vec<&str>) = (text.lines().collect(), edited.lines().collect());
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (removed, added) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let is_uri = |l: &&str| l.trim_start().starts_with("imageUri:");
    let stamped = |l: &&str| is_uri(l) && l.contains("registry.local/x/y@sha256:ab");
    let is_key = |l: &&str| l.trim() == "attributes:";
    let ok = match (removed, added) {
        ([], [line]) | ([], [_, line]) => {
            stamped(line) && added.iter().all(|l| stamped(l) || is_key(l))
        }
        ([old], [line]) => is_uri(old) && stamped(line),
        _ => false,
    };
    assert!(
        ok,
        "{template}/{service}: the edit must replace or insert the imageUri line only; it removed {removed:?} and added {added:?}"
    );
    assert_eq!(
        text.ends_with('\n'),
        edited.ends_with('\n'),
        "{template}/{service}: the final newline changed"
    );
}
