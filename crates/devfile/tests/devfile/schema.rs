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
        ("name: shop", "name: \"---\""),
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

/// The editor schema accepts what the validator accepts: every registry stack, and the wild
/// devfiles up to their missing `displayName` (the one error the validator reports for them).
#[test]
fn schema_accepts_standard_devfiles() {
    let v = schema();
    for dir in ["registry", "wild"] {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/devfile")
            .join(dir);
        for entry in std::fs::read_dir(root).expect("test data") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|x| x != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            let valid = slipway_devfile::validate(&text, None).valid();
            let errors: Vec<String> = v
                .iter_errors(&to_json(&text))
                .map(|e| format!("{e} at {}", e.instance_path()))
                .filter(|e| valid || e != "\"displayName\" is a required property at /metadata")
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        }
    }
}

#[test]
fn schema_versions_match_the_validator() {
    let text = include_str!("../../../../schemas/devfile.schema.json");
    let schema: serde_json::Value = serde_json::from_str(text).expect("schema is JSON");
    let listed = &schema["properties"]["schemaVersion"]["anyOf"][0]["enum"];
    assert_eq!(
        listed,
        &serde_json::json!(slipway_devfile::SUPPORTED_SCHEMA_VERSIONS)
    );
    let v = self::schema();
    for (version, ok) in [
        ("2.2.2", true),
        ("2.4.0", true),
        ("1.0.0", false),
        ("3.0.0", false),
    ] {
        let text = super::mutate("schemaVersion: 2.2.0", &format!("schemaVersion: {version}"));
        assert_eq!(v.is_valid(&to_json(&text)), ok, "{version}");
    }
}

/// The schema and the validator agree on the names whose rules this dialect states itself:
/// `metadata.name` (any string an app name can be derived from) and each release's
/// endpoint-name limit.
#[test]
fn schema_and_validator_agree_on_names() {
    let v = schema();
    let agree = |text: &str, what: &str| {
        let valid = slipway_devfile::validate(text, None).valid();
        assert_eq!(
            v.is_valid(&to_json(text)),
            valid,
            "{what}: validator says {valid}"
        );
    };
    for name in [
        "shop", "Shop", "My Shop", "1shop", "my--shop", "", "---", "日本",
    ] {
        let text = super::mutate("name: shop", &format!("name: {name:?}"));
        agree(&text, &format!("metadata.name {name:?}"));
    }
    let mut versions = slipway_devfile::SUPPORTED_SCHEMA_VERSIONS.to_vec();
    versions.push("2.4.0");
    for version in versions {
        for len in [15, 16, 63, 64] {
            let text = super::mutate("name: api-http", &format!("name: {}", "e".repeat(len)))
                .replacen(
                    "schemaVersion: 2.2.0",
                    &format!("schemaVersion: {version}"),
                    1,
                );
            agree(
                &text,
                &format!("{version}: endpoint name of {len} characters"),
            );
        }
    }
}
