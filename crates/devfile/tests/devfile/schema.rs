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

#[test]
fn schema_applies_the_secret_path_rule() {
    let v = schema();
    let long = "s".repeat(65);
    for bad in [
        "a/../b",
        "/abs",
        &format!("team/{long}"),
        "a b",
        "a//b",
        "./a",
        "a/",
    ] {
        assert!(slipway_devfile::secret_path::check(bad).is_err(), "{bad}");
        let text = super::mutate("secrets: [db/credentials]", &format!("secrets: [{bad:?}]"));
        assert!(!v.is_valid(&to_json(&text)), "schema accepted {bad:?}");
    }
    for good in ["db", "team-1/db/primary.v2/pass_word", ".hidden/x"] {
        assert_eq!(slipway_devfile::secret_path::check(good), Ok(()), "{good}");
        let text = super::mutate("secrets: [db/credentials]", &format!("secrets: [{good:?}]"));
        assert!(v.is_valid(&to_json(&text)), "schema refused {good:?}");
    }
}
