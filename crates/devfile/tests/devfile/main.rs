//! Integration tests of the devfile engine: the broken-devfile rule table, port mismatches,
//! comment-preserving edits, the published JSON Schema and standard devfiles (the official
//! registry's stacks and devfiles from the wild).

#![allow(
    clippy::too_many_lines,
    reason = "a test or a bench reads as one scenario; the 100-line limit is for production code"
)]

mod edits;
mod ports;
mod rules;
mod schema;
mod standard;

/// A valid two-service devfile that uses every part of the dialect. Each rule case breaks it
/// in exactly one place.
pub const BASE: &str = r#"# A complete devfile
schemaVersion: 2.2.0
metadata:
  name: shop
  displayName: Shop
  description: Two services
  version: 0.1.0
  platform:
    fabrics: [payments]
    permissions: [orders.read]
    managedInfra:
      objectStorage:
        - name: uploads
      relationalDatabase:
        - name: main
          engine: postgres
    durable:
      engine: restate
      service: api
      port: 8001
      retention: 24h
components:
  - name: api-image
    image:
      imageName: api
      dockerfile:
        uri: api/Dockerfile
        buildContext: .
  - name: api
    attributes:
      healthPath: /health
      secrets: [db/credentials]
    container:
      image: api
      memoryLimit: 512Mi
      cpuLimit: 500m
      env:
        - name: LOG_LEVEL
          value: info
      endpoints:
        - name: api-http
          targetPort: 8001
          exposure: internal
          protocol: http
  - name: web-image
    image:
      imageName: web
      dockerfile:
        uri: web/Dockerfile
        buildContext: .
  - name: web
    attributes:
      dependsOn: [api]
    container:
      image: web
      endpoints:
        - name: http
          targetPort: 8000
          exposure: public
          protocol: http
          path: /
commands:
  - id: run-api
    exec:
      component: api
      commandLine: uvicorn main:app --port ${PORT}
      workingDir: ${PROJECT_SOURCE}/api
      group: { kind: run, isDefault: true }
  - id: run-web
    exec:
      component: web
      commandLine: uvicorn main:app --port ${PORT}
      workingDir: ${PROJECT_SOURCE}/web
      group: { kind: run, isDefault: true }
"#;

/// `BASE` with `from` replaced by `to` exactly once (panics when `from` is absent, so a case
/// can never silently test the unmodified document).
pub fn mutate(from: &str, to: &str) -> String {
    assert_eq!(
        BASE.matches(from).count(),
        1,
        "mutation anchor {from:?} must occur exactly once"
    );
    BASE.replacen(from, to, 1)
}
