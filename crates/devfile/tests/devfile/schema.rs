//! The published JSON Schema accepts what the validator accepts, and catches the basics.

use slipway_devfile::yaml;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../../schemas/devfile.schema.json");
    let schema: serde_json::Value = serde_json::from_str(text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn to_json(text: &str) -> serde_json::Value {
    let value: serde_json::Value = serde_yaml::from_str(text).expect("valid YAML");
    value
}

#[test]
fn base_devfile_matches_schema() {
    let v = schema();
    let errors: Vec<String> = v
        .iter_errors(&to_json(super::BASE))
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn schema_rejects_basic_mistakes() {
    let v = schema();
    for (from, to) in [
        ("schemaVersion: 2.2.0\n", ""),
        ("targetPort: 8000", "targetPort: 70000"),
        ("exposure: public", "exposure: world"),
        ("name: shop", "name: Shop"),
        ("      objectStorage:", "      blobStore:"),
    ] {
        let text = super::mutate(from, to);
        assert!(!v.is_valid(&to_json(&text)), "schema accepted {to:?}");
    }
    let _ = yaml::parse("a: 1");
}
