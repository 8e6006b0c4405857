//! Standard devfiles are accepted: every stack of the official devfile registry and devfiles
//! from the wild validate, with runtime-specific concerns as warnings (test data: see
//! `tests/devfile/README.md`).

use std::path::{Path, PathBuf};

use slipway_devfile::{Devfile, Report, Severity, validate};

use super::mutate;

/// Number of stack devfiles kept from `devfile/registry` (every `stacks/**/devfile.yaml`).
const REGISTRY_STACKS: usize = 90;

fn data(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/devfile")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy().into();
            (
                name,
                std::fs::read_to_string(&p).expect("readable test data"),
            )
        })
        .collect()
}

/// Warnings of a standard devfile are about its components and commands only (what a runtime
/// or this platform does not use), never about the document's shape.
fn foreign_warnings(report: &Report) -> Vec<String> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .filter(|d| !(d.path.starts_with("components") || d.path.starts_with("commands")))
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_registry_stack_validates() {
    let stacks = data("registry");
    assert_eq!(
        stacks.len(),
        REGISTRY_STACKS,
        "registry test data went missing"
    );
    let mut failures = Vec::new();
    for (name, text) in &stacks {
        let report = validate(text, None);
        if !report.valid() {
            failures.push(format!("{name}: {:?}", report.errors()));
        }
        let foreign = foreign_warnings(&report);
        if !foreign.is_empty() {
            failures.push(format!("{name}: unexpected warnings {foreign:?}"));
        }
        // What the platform reads from a validated devfile still works.
        let model = Devfile::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let services = model.services();
        let order = model
            .deploy_order()
            .unwrap_or_else(|c| panic!("{name}: cycle {c:?}"));
        assert_eq!(order.len(), services.len(), "{name}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn registry_covers_every_released_schema_version_it_uses() {
    let versions: std::collections::BTreeSet<String> = data("registry")
        .iter()
        .filter_map(|(_, text)| Devfile::parse(text).ok())
        .map(|d| d.schema_version)
        .collect();
    for v in ["2.1.0", "2.2.0", "2.2.2", "2.3.0"] {
        assert!(versions.contains(v), "no stack at {v}: {versions:?}");
    }
}

/// Devfiles from other projects. Only the spec's own rules (required `metadata.name` and
/// `metadata.displayName`, an app name derivable from `metadata.name`) may make them invalid;
/// each file lists exactly the errors it is expected to have.
#[test]
fn devfiles_from_the_wild_validate() {
    let expected: &[(&str, &[&str])] = &[
        ("devfile-registry.devfile.yaml", &[]),
        ("devfile-sample-python-basic.yaml", &[]),
        (
            "devworkspace-operator.devfile.yaml",
            &["metadata.displayName (line 3): displayName is required"],
        ),
        ("odo-devfile-autobuild-deploybydefault.yaml", &[]),
        ("odo-devfile-deploy.yaml", &[]),
        (
            "odo-devfile-variables.yaml",
            &["metadata.displayName (line 3): displayName is required"],
        ),
        (
            "odo-devfile-with-parent.yaml",
            &["metadata.displayName (line 4): displayName is required"],
        ),
        (
            "odo-devfile-with-volume-components.yaml",
            &["metadata.displayName (line 3): displayName is required"],
        ),
    ];
    let files = data("wild");
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let listed: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, listed, "every wild devfile has an expectation");
    for ((name, text), (_, errors)) in files.iter().zip(expected) {
        let report = validate(text, None);
        assert_eq!(report.errors(), *errors, "{name}");
        let foreign = foreign_warnings(&report);
        assert!(foreign.is_empty(), "{name}: {foreign:?}");
    }
}

fn warnings_at(report: &Report, path: &str) -> Vec<String> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning && d.path == path)
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn container_working_dir_warns_for_the_process_runtime() {
    for dir in [
        "/projects/web",
        "${PROJECTS_ROOT}",
        "/home/user",
        "${PROJECT_SOURCE}/../web",
    ] {
        let text = mutate(
            "workingDir: ${PROJECT_SOURCE}/web",
            &format!("workingDir: {dir:?}"),
        );
        let report = validate(&text, None);
        assert!(report.valid(), "{dir}: {:?}", report.errors());
        let warnings = warnings_at(&report, "commands[1].exec.workingDir");
        assert_eq!(warnings.len(), 1, "{dir}: {:?}", report.warnings());
        let w = &warnings[0];
        assert!(w.contains("fine for the container runtime"), "{w}");
        assert!(w.contains("the process runtime"), "{w}");
        assert!(
            w.contains("needs ${PROJECT_SOURCE} or a directory inside it"),
            "{w}"
        );
        assert!(w.contains("run command"), "{w}");
    }
    for dir in ["${PROJECT_SOURCE}", "$PROJECT_SOURCE/web", "web"] {
        let text = mutate(
            "workingDir: ${PROJECT_SOURCE}/web",
            &format!("workingDir: {dir:?}"),
        );
        let report = validate(&text, None);
        assert!(
            report.warnings().is_empty(),
            "{dir}: {:?}",
            report.warnings()
        );
    }
}

const KUBERNETES_ONLY: &str = r#"schemaVersion: 2.2.0
metadata:
  name: go
  displayName: Go Runtime
components:
  - name: image-build
    image:
      imageName: go-image:latest
      dockerfile:
        uri: docker/Dockerfile
        buildContext: .
  - name: kubernetes-deploy
    kubernetes:
      uri: kubernetes/deploy.yaml
      deployByDefault: false
      endpoints:
        - name: http-8081
          targetPort: 8081
commands:
  - id: build-image
    apply:
      component: image-build
  - id: deployk8s
    apply:
      component: kubernetes-deploy
  - id: deploy
    composite:
      commands: [build-image, deployk8s]
      group: { kind: deploy, isDefault: true }
"#;

#[test]
fn kubernetes_only_deploy_is_valid_with_a_warning() {
    let report = validate(KUBERNETES_ONLY, None);
    assert!(report.valid(), "{:?}", report.errors());
    let component = warnings_at(&report, "components[1].kubernetes");
    assert_eq!(component.len(), 1, "{:?}", report.warnings());
    assert!(
        component[0].contains("does not deploy kubernetes components"),
        "{component:?}"
    );
    let whole = warnings_at(&report, "components");
    assert!(
        whole.iter().any(|w| w.contains(
            "deploys only through kubernetes component \"kubernetes-deploy\"; the Slipway platform runs container components only"
        )),
        "{whole:?}"
    );
    let openshift = KUBERNETES_ONLY.replace("    kubernetes:", "    openshift:");
    let report = validate(&openshift, None);
    assert!(report.valid(), "{:?}", report.errors());
    assert_eq!(
        warnings_at(&report, "components[1].openshift").len(),
        1,
        "{:?}",
        report.warnings()
    );
}

#[test]
fn nothing_to_run_at_all_is_still_an_error() {
    let text = KUBERNETES_ONLY.replace(
        "  - name: kubernetes-deploy\n    kubernetes:\n      uri: kubernetes/deploy.yaml\n      deployByDefault: false\n      endpoints:\n        - name: http-8081\n          targetPort: 8081\n",
        "  - name: data\n    volume: {}\n",
    );
    let errors = validate(&text, None).errors();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("the app needs at least one container component")),
        "{errors:?}"
    );
}

#[test]
fn every_released_2x_schema_version_is_accepted() {
    for v in ["2.0.0", "2.1.0", "2.2.0", "2.2.1", "2.2.2", "2.3.0"] {
        let report = validate(
            &mutate("schemaVersion: 2.2.0", &format!("schemaVersion: {v}")),
            None,
        );
        assert!(report.valid(), "{v}: {:?}", report.errors());
        assert!(report.warnings().is_empty(), "{v}: {:?}", report.warnings());
    }
    let later = validate(
        &mutate("schemaVersion: 2.2.0", "schemaVersion: 2.4.0"),
        None,
    );
    assert!(later.valid(), "{:?}", later.errors());
    assert!(
        later.warnings()[0].starts_with(
            "schemaVersion (line 2): \"2.4.0\" is not a devfile release Slipway knows"
        ),
        "{:?}",
        later.warnings()
    );
}

#[test]
fn other_major_schema_versions_are_errors() {
    for v in ["1.0.0", "3.0.0", "0.9.0"] {
        let report = validate(
            &mutate("schemaVersion: 2.2.0", &format!("schemaVersion: {v}")),
            None,
        );
        assert!(!report.valid(), "{v}");
        assert!(
            report.errors()[0].starts_with(&format!(
                "schemaVersion (line 2): unsupported schemaVersion \"{v}\": Slipway reads devfile 2.x only"
            )),
            "{v}: {:?}",
            report.errors()
        );
    }
}

#[test]
fn dockerfiles_outside_the_project_warn_for_the_container_runtime() {
    for (from, to, path) in [
        (
            "uri: web/Dockerfile",
            "uri: ../web/Dockerfile",
            "components[2].image.dockerfile.uri",
        ),
        (
            "uri: web/Dockerfile",
            "uri: /etc/Dockerfile",
            "components[2].image.dockerfile.uri",
        ),
        (
            "uri: web/Dockerfile",
            "uri: https://example.com/Dockerfile",
            "components[2].image.dockerfile.uri",
        ),
        (
            "        uri: web/Dockerfile\n",
            "        git:\n          remotes: { origin: \"https://example.com/x.git\" }\n",
            "components[2].image.dockerfile.git",
        ),
        (
            "uri: web/Dockerfile\n        buildContext: .",
            "uri: web/Dockerfile\n        buildContext: ${PROJECTS_ROOT}",
            "components[2].image.dockerfile.buildContext",
        ),
    ] {
        let report = validate(&mutate(from, to), None);
        assert!(report.valid(), "{to}: {:?}", report.errors());
        let warnings = warnings_at(&report, path);
        assert_eq!(warnings.len(), 1, "{to}: {:?}", report.warnings());
        assert!(
            warnings[0].contains("the container runtime's buildah builder"),
            "{warnings:?}"
        );
    }
    // `${PROJECT_SOURCE}` is the project root: no warning, and the model maps it to `.`.
    let text = mutate(
        "uri: web/Dockerfile\n        buildContext: .",
        "uri: ${PROJECT_SOURCE}/web/Dockerfile\n        buildContext: ${PROJECT_SOURCE}",
    );
    let report = validate(&text, None);
    assert!(report.warnings().is_empty(), "{:?}", report.warnings());
    let web = Devfile::parse(&text).unwrap().services().remove(1);
    assert_eq!(web.dockerfile.as_deref(), Some("web/Dockerfile"));
    assert_eq!(web.build_context, ".");
}

#[test]
fn env_names_with_devfile_variables_warn() {
    let report = validate(
        &mutate("- name: LOG_LEVEL", "- name: \"{{LEVEL_VAR}}\""),
        None,
    );
    assert!(report.valid(), "{:?}", report.errors());
    let warnings = warnings_at(&report, "components[1].container.env[0].name");
    assert!(
        warnings[0].contains("uses a devfile variable, which Slipway does not substitute"),
        "{warnings:?}"
    );
}

/// Fields of the standard devfile schema that Slipway does not use never make a devfile invalid.
#[test]
fn standard_fields_are_accepted() {
    let text = r#"schemaVersion: 2.2.2
metadata:
  name: everything
  displayName: Everything
  attributes: { alpha.dockerimage-port: 8081 }
  alpha.build-dockerfile: https://example.com/Dockerfile
  tags: [Go]
  architectures: [amd64, arm64]
attributes: { team: x }
parent:
  id: go
  registryUrl: https://registry.devfile.io
variables:
  IMAGE: quay.io/x/y
projects:
  - name: app
    git: { remotes: { origin: "https://example.com/app.git" } }
starterProjects:
  - name: starter
    git: { remotes: { origin: "https://example.com/starter.git" } }
events:
  postStart: [init]
components:
  - name: build
    image:
      imageName: app:latest
      autoBuild: true
      dockerfile:
        uri: Dockerfile
        buildContext: .
        rootRequired: false
        args: ["--debug"]
  - name: app
    attributes: { container-overrides: { securityContext: { runAsUser: 1000 } } }
    container:
      image: app:latest
      mountSources: true
      sourceMapping: /projects
      dedicatedPod: false
      command: [tail]
      args: ["-f", "/dev/null"]
      memoryRequest: 256Mi
      cpuRequest: "0.5"
      annotation: { deployment: { a: b } }
      volumeMounts:
        - name: cache
          path: /cache
      env:
        - name: MODE
          value: dev
      endpoints:
        - name: https-8443
          targetPort: 8443
          protocol: https
          secure: true
          path: /health
          exposure: public
          attributes: { urlRewriteSupported: true }
  - name: cache
    volume: { size: 1Gi, ephemeral: true }
  - name: deploy
    kubernetes:
      inlined: "kind: Service"
      deployByDefault: true
commands:
  - id: init
    exec:
      component: app
      commandLine: go mod download
      workingDir: ${PROJECT_SOURCE}
      env:
        - name: GOFLAGS
          value: -mod=mod
  - id: run
    exec:
      component: app
      commandLine: go run .
      workingDir: /projects
      hotReloadCapable: true
      label: Run
      group: { kind: run, isDefault: true }
  - id: apply-deploy
    apply:
      component: deploy
      label: Deploy
  - id: deploy
    composite:
      commands: [apply-deploy]
      parallel: false
      group: { kind: deploy, isDefault: true }
"#;
    let report = validate(text, None);
    assert!(report.valid(), "{:?}", report.errors());
    let foreign = foreign_warnings(&report);
    assert!(foreign.is_empty(), "{foreign:?}");
    let warned: Vec<&str> = report.diagnostics.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        warned,
        ["components[3].kubernetes", "commands[1].exec.workingDir"],
        "{:?}",
        report.warnings()
    );
}
