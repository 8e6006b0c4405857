//! One broken devfile per rule: each yields `valid: false` with the expected message and path.

use slipway_devfile::validate;

use super::{BASE, mutate};

struct Case {
    rule: &'static str,
    text: String,
    /// A substring of the expected error, path included.
    expect: &'static str,
}

fn case(rule: &'static str, from: &str, to: &str, expect: &'static str) -> Case {
    Case {
        rule,
        text: mutate(from, to),
        expect,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case { rule: "yaml syntax", text: BASE.replace("fabrics: [payments]", "fabrics: [payments"), expect: "YAML syntax error at line" },
        Case { rule: "empty document", text: String::new(), expect: "the devfile is empty" },
        Case { rule: "top level not a mapping", text: "- a\n- b\n".into(), expect: "must be a YAML mapping at the top level" },
        Case {
            rule: "no container component",
            text: "schemaVersion: 2.2.0\nmetadata:\n  name: a\n  displayName: A\ncomponents:\n  - name: data\n    volume: {}\n".into(),
            expect: "components (line 6): the app needs at least one container component",
        },
        Case { rule: "second document", text: format!("{BASE}---\na: 1\n"), expect: "single YAML document" },
        case("schemaVersion required", "schemaVersion: 2.2.0\n", "", "schemaVersion (line 2): schemaVersion is required"),
        case("schemaVersion is a string", "schemaVersion: 2.2.0", "schemaVersion: [2]", "schemaVersion (line 2): must be a version string"),
        case("schemaVersion semver", "schemaVersion: 2.2.0", "schemaVersion: two", "is not a semantic version"),
        case("schemaVersion supported", "schemaVersion: 2.2.0", "schemaVersion: 1.0.0", "unsupported schemaVersion \"1.0.0\""),
        case("unknown top-level key", "components:\n", "componets:\n", "did you mean \"components\""),
        case("metadata required", "metadata:\n  name: shop\n  displayName: Shop\n  description: Two services\n  version: 0.1.0\n  platform:", "platform:", "metadata (line 2): metadata is required"),
        case("metadata.name required", "  name: shop\n", "", "metadata.name (line 4): name is required"),
        case("metadata.name is a string", "name: shop", "name: [shop]", "metadata.name (line 4): must be a string, got a list"),
        case("app name derivable", "name: shop", "name: \"\"", "metadata.name (line 4): no app name can be derived from \"\": an app name needs at least one ASCII letter or digit"),
        case("app name derivable from symbols", "name: shop", "name: \"--- ***\"", "no app name can be derived from \"--- ***\""),
        case("displayName required", "  displayName: Shop\n", "", "metadata.displayName (line 4): displayName is required"),
        case("displayName not empty", "displayName: Shop", "displayName: \"  \"", "metadata.displayName (line 5): must not be empty"),
        case("metadata.version semver", "version: 0.1.0", "version: one", "metadata.version (line 7): \"one\" is not a semantic version"),
        case("fabrics is a list", "fabrics: [payments]", "fabrics: payments", "metadata.platform.fabrics (line 9): must be a list of strings"),
        case("fabrics items non-empty", "fabrics: [payments]", "fabrics: [payments, \"\"]", "metadata.platform.fabrics[1] (line 9): must not be empty"),
        case("fabrics items are strings", "fabrics: [payments]", "fabrics: [1]", "metadata.platform.fabrics[0] (line 9): must be a string"),
        case("permissions is a list", "permissions: [orders.read]", "permissions: {a: b}", "metadata.platform.permissions (line 10): must be a list of strings"),
        case("permissions items non-empty", "permissions: [orders.read]", "permissions: [\"\"]", "metadata.platform.permissions[0] (line 10): must not be empty"),
        case("unknown platform key", "    fabrics: [payments]\n", "    fabrics: [payments]\n    colour: red\n", "metadata.platform.colour (line 10): unknown key"),
        case("managedInfra unknown kind", "      objectStorage:", "      blobStore:", "metadata.platform.managedInfra.blobStore (line 12): unknown managed resource kind \"blobStore\""),
        case("managedInfra resource needs name", "        - name: uploads", "        - versioned: true", "metadata.platform.managedInfra.objectStorage[0].name (line 13): name is required"),
        case("managedInfra name rule", "name: uploads", "name: Uploads", "resource name \"Uploads\" may contain only lowercase"),
        case("managedInfra duplicate name", "        - name: uploads\n", "        - name: uploads\n        - name: uploads\n", "duplicate objectStorage name \"uploads\""),
        case("volume mounted but not declared", "          path: /\ncommands:", "          path: /\n      volumeMounts:\n        - name: data\n          path: /data\ncommands:", "components[3].container.volumeMounts[0].name (line 63): volume \"data\" is mounted but not declared"),
        case("volume mount path absolute", "          path: /\ncommands:", "          path: /\n      volumeMounts:\n        - name: data\n          path: data\n  - name: data\n    volume: {size: 1Gi}\ncommands:", "components[3].container.volumeMounts[0].path (line 64): mount path \"data\" must be an absolute path"),
        case("volume mount path not a system directory", "          path: /\ncommands:", "          path: /\n      volumeMounts:\n        - name: data\n          path: /etc\n  - name: data\n    volume: {size: 1Gi}\ncommands:", "mount path \"/etc\" is a system directory"),
        case("volume mount path no dot-dot", "          path: /\ncommands:", "          path: /\n      volumeMounts:\n        - name: data\n          path: /data/../etc\n  - name: data\n    volume: {size: 1Gi}\ncommands:", "must not contain empty, . or .. segments"),
        case("volume size quantity", "          path: /\ncommands:", "          path: /\n  - name: data\n    volume: {size: lots}\ncommands:", "components[4].volume.size (line 63): size \"lots\" is not a positive storage quantity"),
        case("volume ephemeral boolean", "          path: /\ncommands:", "          path: /\n  - name: data\n    volume: {ephemeral: sometimes}\ncommands:", "components[4].volume.ephemeral (line 63): must be true or false"),
        case("volume keys", "          path: /\ncommands:", "          path: /\n  - name: data\n    volume: {sise: 1Gi}\ncommands:", "components[4].volume"),
        case("volumeMounts is a list", "          path: /\ncommands:", "          path: /\n      volumeMounts: data\ncommands:", "components[3].container.volumeMounts (line 62): must be a list of {name, path} mounts"),
        case("managedInfra engine value", "engine: postgres", "engine: oracle", "\"oracle\" is not a supported relationalDatabase engine"),
        case("managedInfra kind is a list", "      objectStorage:\n        - name: uploads\n", "      objectStorage: uploads\n", "must be a list of resources"),
        case("job schedule is cron", "      group: { kind: run, isDefault: true }\n  - id: run-web", "      group: { kind: run, isDefault: true }\n  - id: report\n    attributes:\n      schedule: \"every day\"\n    exec:\n      component: api\n      commandLine: python3 report.py\n  - id: run-web", "commands[1].attributes.schedule (line 71): \"every day\" is not a cron schedule"),
        case("job time zone", "      group: { kind: run, isDefault: true }\n  - id: run-web", "      group: { kind: run, isDefault: true }\n  - id: report\n    attributes:\n      schedule: \"0 3 * * *\"\n      timeZone: Mars/Olympus\n    exec:\n      component: api\n      commandLine: python3 report.py\n  - id: run-web", "commands[1].attributes.timeZone (line 72): \"Mars/Olympus\" is not an IANA time zone name"),
        case("job concurrency", "      group: { kind: run, isDefault: true }\n  - id: run-web", "      group: { kind: run, isDefault: true }\n  - id: report\n    attributes:\n      schedule: \"0 3 * * *\"\n      concurrency: queue\n    exec:\n      component: api\n      commandLine: python3 report.py\n  - id: run-web", "commands[1].attributes.concurrency (line 72): must be forbid or allow"),
        case("job runMissed boolean", "      group: { kind: run, isDefault: true }\n  - id: run-web", "      group: { kind: run, isDefault: true }\n  - id: report\n    attributes:\n      schedule: \"0 3 * * *\"\n      runMissed: often\n    exec:\n      component: api\n      commandLine: python3 report.py\n  - id: run-web", "commands[1].attributes.runMissed (line 72): must be true or false"),
        case("job is not the run command", "  - id: run-api\n    exec:", "  - id: run-api\n    attributes:\n      schedule: \"*/5 * * * *\"\n    exec:", "a scheduled job cannot be a build or run command"),
        case("durable engine", "engine: restate", "engine: temporal", "metadata.platform.durable.engine (line 18): unsupported durable engine \"temporal\""),
        case("durable service exists", "      service: api\n", "      service: worker\n", "metadata.platform.durable.service (line 19): \"worker\" is not a service"),
        case("durable port matches endpoint", "      port: 8001\n", "      port: 9080\n", "port 9080 is not an endpoint targetPort of service \"api\""),
        case("durable retention format", "retention: 24h", "retention: forever", "is not a duration"),
        case("durable retention ends in a multi-byte character", "retention: 24h", "retention: 2Ɨ", "\"2Ɨ\" is not a duration"),
        case("durable retention unit alone", "retention: 24h", "retention: h", "\"h\" is not a duration"),
        case("components is a list", "components:\n  - name: api-image", "components: {}\nx:\n  - name: api-image", "components (line 22): must be a list of components"),
        case("component needs a name", "  - name: web-image\n", "  - attributes: {}\n", "components[2].name (line 45): name is required"),
        case("component name dns label", "  - name: web-image\n", "  - name: Web_Image\n", "components[2].name (line 45): component name \"Web_Image\" may contain only lowercase"),
        case("component name length", "  - name: web-image\n", "  - name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "at most 63 are allowed"),
        case("component names unique", "  - name: web-image\n", "  - name: api-image\n", "duplicate component name \"api-image\""),
        case("component needs a type", "    image:\n      imageName: web\n      dockerfile:\n        uri: web/Dockerfile\n        buildContext: .\n", "", "a component needs exactly one of container, image"),
        case("component has one type", "    container:\n      image: web\n", "    volume: {}\n    container:\n      image: web\n", "has exactly one type; this one has container and volume"),
        case("unknown component key", "  - name: web\n", "  - name: web\n    contianer: {}\n", "did you mean \"container\""),
        case("container needs image", "      image: web\n      endpoints:", "      endpoints:", "components[3].container.image (line 55): image is required"),
        case("unknown container key", "      memoryLimit: 512Mi\n", "      memoryLimit: 512Mi\n      ports: [8001]\n", "components[1].container.ports (line 36): unknown key \"ports\""),
        case("memoryLimit quantity", "memoryLimit: 512Mi", "memoryLimit: lots", "components[1].container.memoryLimit (line 35): \"lots\" is not a valid quantity"),
        case("cpuLimit quantity", "cpuLimit: 500m", "cpuLimit: fast", "\"fast\" is not a valid quantity"),
        case("env name rule", "name: LOG_LEVEL", "name: LOG-LEVEL", "components[1].container.env[0].name (line 38): \"LOG-LEVEL\" is not a valid environment variable name"),
        case("env value string", "value: info", "value: 3", "components[1].container.env[0].value (line 39): must be a string, got an integer; quote it: \"3\""),
        case("endpoints is a list", "      endpoints:\n        - name: api-http\n          targetPort: 8001\n          exposure: internal\n          protocol: http\n", "      endpoints: 8001\n", "components[1].container.endpoints (line 40): must be a list of endpoints"),
        case("endpoint needs name", "        - name: api-http\n", "        - secure: false\n", "components[1].container.endpoints[0].name (line 41): name is required"),
        case("endpoint name max 15", "name: api-http", "name: api-http-endpoint", "components[1].container.endpoints[0].name (line 41): endpoint name \"api-http-endpoint\" is 17 characters long; at most 15 are allowed by devfile 2.2.0 (schemaVersion)"),
        case("endpoint name lowercase", "name: api-http", "name: API", "endpoint name \"API\" may contain only lowercase"),
        case("endpoint names unique", "        - name: http\n", "        - name: api-http\n", "duplicate endpoint name \"api-http\""),
        case("targetPort required", "          targetPort: 8000\n", "", "components[3].container.endpoints[0].targetPort (line 57): targetPort is required"),
        case("targetPort range high", "targetPort: 8000", "targetPort: 70000", "components[3].container.endpoints[0].targetPort (line 58): must be an integer between 1 and 65535, got 70000"),
        case("targetPort range zero", "targetPort: 8000", "targetPort: 0", "got 0"),
        case("targetPort integer", "targetPort: 8000", "targetPort: \"8000\"", "must be an integer between 1 and 65535, got a string \"8000\""),
        case("exposure value", "exposure: public", "exposure: world", "components[3].container.endpoints[0].exposure (line 59): \"world\" is not allowed; use one of public, internal, none"),
        case("protocol value", "          protocol: http\n          path: /", "          protocol: ftp\n          path: /", "\"ftp\" is not allowed; use one of http, https, ws, wss, tcp, udp"),
        case("endpoint path", "path: /\n", "path: home\n", "\"home\" must start with \"/\""),
        case("imageName required", "      imageName: web\n", "", "components[2].image.imageName (line 47): imageName is required"),
        case("dockerfile required", "      dockerfile:\n        uri: web/Dockerfile\n        buildContext: .\n", "", "components[2].image.dockerfile (line 47): dockerfile is required"),
        case("dockerfile uri required", "        uri: web/Dockerfile\n", "", "components[2].image.dockerfile.uri (line 49): uri is required"),
        case("imageName unique", "      imageName: web\n", "      imageName: api\n", "imageName \"api\" is already built by components[0]"),
        case("dependsOn names a service", "dependsOn: [api]", "dependsOn: [db]", "components[3].attributes.dependsOn[0] (line 53): dependsOn names \"db\", which is not a service"),
        case("dependsOn not self", "dependsOn: [api]", "dependsOn: [web]", "cannot depend on itself"),
        case("dependsOn no cycle", "      secrets: [db/credentials]\n", "      secrets: [db/credentials]\n      dependsOn: [web]\n", "dependsOn forms a cycle: api -> web -> api"),
        case("dependsOn is a list", "dependsOn: [api]", "dependsOn: api", "must be a list of strings"),
        case("secret path rule", "secrets: [db/credentials]", "secrets: [/db/credentials]", "components[1].attributes.secrets[0] (line 32): \"/db/credentials\" is not a valid secret path: must not start with '/'"),
        case("healthPath rule", "healthPath: /health", "healthPath: health", "\"health\" must be an HTTP path starting with \"/\""),
        case("exec component is a container", "  - name: web\n    attributes:\n      dependsOn: [api]\n    container:\n      image: web\n      endpoints:\n        - name: http\n          targetPort: 8000\n          exposure: public\n          protocol: http\n          path: /\n", "", "commands[1].exec.component (line 60): \"web\" is not a container component"),
        case("command id required", "  - id: run-web\n", "  - attributes: {}\n", "commands[1].id (line 69): id is required"),
        case("command ids unique", "  - id: run-web\n", "  - id: run-api\n", "duplicate command id \"run-api\""),
        case("command needs commandLine", "      commandLine: uvicorn main:app --port ${PORT}\n      workingDir: ${PROJECT_SOURCE}/web\n", "      workingDir: ${PROJECT_SOURCE}/web\n", "commands[1].exec.commandLine (line 71): commandLine is required"),
    ]
    .into_iter()
    .collect()
}

#[test]
fn base_devfile_is_valid() {
    let report = validate(BASE, None);
    assert!(report.valid(), "{:?}", report.errors());
    assert!(report.warnings().is_empty(), "{:?}", report.warnings());
}

#[test]
fn every_broken_devfile_is_reported() {
    let cases = cases();
    assert!(
        cases.len() >= 40,
        "the rule table must hold at least 40 cases, has {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for c in &cases {
        let report = validate(&c.text, None);
        let errors = report.errors();
        if report.valid() || !errors.iter().any(|e| e.contains(c.expect)) {
            failures.push(format!(
                "{}: expected an error containing {:?}, got {:?}",
                c.rule, c.expect, errors
            ));
        }
        assert_eq!(report.to_json()["valid"], false, "{}", c.rule);
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn group_kind_must_be_known() {
    let text = BASE.replacen(
        "group: { kind: run, isDefault: true }",
        "group: { kind: launch }",
        1,
    );
    let errors = validate(&text, None).errors();
    assert!(
        errors.iter().any(|e| e.starts_with(
            "commands[0].exec.group.kind (line 68): \"launch\" is not a command group kind"
        )),
        "{errors:?}"
    );
}

#[test]
fn all_errors_are_reported_at_once() {
    let text = BASE
        .replace("exposure: public", "exposure: world")
        .replace("targetPort: 8000", "targetPort: 0");
    assert_eq!(validate(&text, None).errors().len(), 2);
}

#[test]
fn misplaced_platform_fields_warn() {
    let text = mutate("  version: 0.1.0\n", "  version: 0.1.0\n  fabrics: [x]\n");
    let report = validate(&text, None);
    assert!(report.valid());
    assert!(
        report
            .warnings()
            .iter()
            .any(|w| w.contains("move it to metadata.platform.fabrics")),
        "{:?}",
        report.warnings()
    );
}

/// The validator applies the vault's secret-path rule itself (`slipway_devfile::secret_path`),
/// so a devfile that validates never fails at deploy on a secret path.
#[test]
fn secret_paths_follow_the_vaults_rule() {
    let long = "s".repeat(slipway_devfile::secret_path::SEGMENT_MAX + 1);
    let list = format!(
        "      secrets:\n        - db/credentials\n        - a/../b\n        - /abs\n        - team/{long}\n        - a b\n        - team-1/db/primary.v2/pass_word\n"
    );
    let text = mutate("      secrets: [db/credentials]\n", &list);
    let report = validate(&text, None);
    let errors = report.errors();
    let expected = [
        "components[1].attributes.secrets[1] (line 34): \"a/../b\" is not a valid secret path: must not contain '..'".to_owned(),
        "components[1].attributes.secrets[2] (line 35): \"/abs\" is not a valid secret path: must not start with '/'".to_owned(),
        format!(
            "components[1].attributes.secrets[3] (line 36): \"team/{long}\" is not a valid secret path: each segment between '/' must be at most 64 characters"
        ),
        "components[1].attributes.secrets[4] (line 37): \"a b\" is not a valid secret path: must contain only".to_owned(),
    ];
    for e in &expected {
        assert!(
            errors.iter().any(|got| got.starts_with(e.as_str())),
            "{e}\nin {errors:?}"
        );
    }
    assert_eq!(errors.len(), expected.len(), "{errors:?}");
    // Every path the vault accepts passes, nested ones included.
    for good in ["db", "team-1/db/primary.v2/pass_word", &"a".repeat(64)] {
        assert_eq!(slipway_devfile::secret_path::check(good), Ok(()), "{good}");
        let text = mutate(
            "secrets: [db/credentials]",
            &format!("secrets: [db/credentials, {good}]"),
        );
        let report = validate(&text, None);
        assert!(report.valid(), "{good}: {:?}", report.errors());
    }
}

/// `metadata.name` is any string (the devfile schema's rule); the platform names the app by the
/// DNS label derived from it, and the validator says which name that is.
#[test]
fn metadata_name_derives_the_app_name() {
    for (written, derived) in [
        ("Shop", "shop"),
        ("My Shop", "my-shop"),
        ("my--shop", "my-shop"),
        ("1shop", "app-1shop"),
        ("shop-", "shop"),
        ("Orders_API (v2)", "orders-api-v2"),
        (&"a".repeat(64), &"a".repeat(63)),
    ] {
        let text = mutate("name: shop", &format!("name: {written:?}"));
        let report = validate(&text, None);
        assert!(report.valid(), "{written:?}: {:?}", report.errors());
        let warning = format!("the platform names the app {derived:?}, derived from it");
        assert!(
            report.warnings().iter().any(|w| w.starts_with(&format!(
                "metadata.name (line 4): {written:?} is not an app name as written (app name "
            )) && w.ends_with(&warning)),
            "{written:?}: {:?}",
            report.warnings()
        );
        let model = slipway_devfile::Devfile::parse(&text).expect("parses");
        assert_eq!(model.metadata.name, written);
        assert_eq!(
            model.metadata.app_name().expect("derived").as_str(),
            derived
        );
    }
    // A valid app name is the app name, with nothing to say.
    let report = validate(BASE, None);
    assert!(report.warnings().is_empty(), "{:?}", report.warnings());
}

/// Each devfile release's own endpoint-name limit: 63 characters in 2.0.0 and 2.1.0, 15 from
/// 2.2.0 (and in a 2.x version read as the latest release).
#[test]
fn endpoint_name_limit_follows_the_schema_version() {
    let thirty = "a-thirty-character-endpoint-nm";
    assert_eq!(thirty.len(), 30);
    let with = |version: &str, name: &str| {
        mutate("name: api-http", &format!("name: {name}")).replacen(
            "schemaVersion: 2.2.0",
            &format!("schemaVersion: {version}"),
            1,
        )
    };
    for version in ["2.0.0", "2.1.0"] {
        let report = validate(&with(version, thirty), None);
        assert!(report.valid(), "{version}: {:?}", report.errors());
        let long = "a".repeat(64);
        let errors = validate(&with(version, &long), None).errors();
        assert_eq!(
            errors,
            [format!(
                "components[1].container.endpoints[0].name (line 41): endpoint name {long:?} is 64 characters long; at most 63 are allowed by devfile {version} (schemaVersion)"
            )],
            "{version}"
        );
    }
    for (version, read_as) in [
        ("2.2.0", "2.2.0"),
        ("2.2.1", "2.2.1"),
        ("2.2.2", "2.2.2"),
        ("2.3.0", "2.3.0"),
        ("2.4.0", "2.3.0"),
    ] {
        let errors = validate(&with(version, thirty), None).errors();
        assert_eq!(
            errors,
            [format!(
                "components[1].container.endpoints[0].name (line 41): endpoint name {thirty:?} is 30 characters long; at most 15 are allowed by devfile {read_as} (schemaVersion)"
            )],
            "{version}"
        );
        assert!(
            validate(&with(version, "fifteen-chars-x"), None).valid(),
            "{version}"
        );
    }
}
