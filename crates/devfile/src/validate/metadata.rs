//! Rules for `schemaVersion` and `metadata` (name, displayName and the standard fields).

use super::{Ctx, SUPPORTED_SCHEMA_VERSIONS, check_keys, non_empty_string, required, string};
use crate::diagnostics::Severity;
use crate::name::AppName;
use crate::yaml::Node;

/// Longest display name; it is shown in lists and window titles.
pub const DISPLAY_NAME_MAX: usize = 100;

pub(super) fn schema_version(ctx: &mut Ctx, root: &Node) {
    let Some(node) = required(ctx, root, "", "schemaVersion") else {
        return;
    };
    let Some(version) = node.scalar_text().filter(|_| node.as_str().is_some()) else {
        ctx.error(
            "schemaVersion",
            Some(node),
            format!(
                "must be a version string such as \"2.2.0\", got {}",
                node.kind()
            ),
        );
        return;
    };
    let parts: Vec<&str> = version.split('.').collect();
    let semver = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    if !semver {
        ctx.error(
            "schemaVersion",
            Some(node),
            format!("{version:?} is not a semantic version (MAJOR.MINOR.PATCH)"),
        );
    } else if SUPPORTED_SCHEMA_VERSIONS.contains(&version.as_str()) {
        // A released devfile version.
    } else if parts[0] == "2" {
        ctx.warn(
            "schemaVersion",
            Some(node),
            format!(
                "{version:?} is not a devfile release Slipway knows ({}); it is read as devfile 2.3.0, so keys added after 2.3.0 are reported as unknown",
                SUPPORTED_SCHEMA_VERSIONS.join(", ")
            ),
        );
    } else {
        ctx.error(
            "schemaVersion",
            Some(node),
            format!(
                "unsupported schemaVersion {version:?}: Slipway reads devfile 2.x only; supported: {}",
                SUPPORTED_SCHEMA_VERSIONS.join(", ")
            ),
        );
    }
}

pub(super) fn metadata<'a>(ctx: &mut Ctx, root: &'a Node) -> Option<&'a Node> {
    let meta = required(ctx, root, "", "metadata")?;
    if meta.entries().is_none() {
        ctx.error(
            "metadata",
            Some(meta),
            format!("must be a mapping, got {}", meta.kind()),
        );
        return None;
    }
    check_keys(
        ctx,
        meta,
        "metadata",
        &[
            "name",
            "version",
            "attributes",
            "displayName",
            "description",
            "tags",
            "architectures",
            "icon",
            "globalMemoryLimit",
            "projectType",
            "language",
            "website",
            "provider",
            "supportUrl",
            "platform",
        ],
        Severity::Warning,
    );
    for misplaced in ["fabrics", "permissions", "managedInfra", "durable"] {
        if let Some(key) = meta.key_node(misplaced) {
            ctx.warn(
                format!("metadata.{misplaced}"),
                Some(key),
                format!("the platform ignores metadata.{misplaced}; move it to metadata.platform.{misplaced}"),
            );
        }
    }
    if let Some(name) = required(ctx, meta, "metadata", "name")
        && let Some(raw) = string(ctx, name, "metadata.name")
        && let Err(e) = AppName::parse(raw)
    {
        ctx.error(
            "metadata.name",
            Some(name),
            format!("{raw:?} is not a valid app name: {e}"),
        );
    }
    if let Some(display) = required(ctx, meta, "metadata", "displayName")
        && let Some(text) = non_empty_string(ctx, display, "metadata.displayName")
    {
        let count = text.chars().count();
        if count > DISPLAY_NAME_MAX {
            ctx.error(
                "metadata.displayName",
                Some(display),
                format!("is {count} characters long; at most {DISPLAY_NAME_MAX} are allowed"),
            );
        }
    }
    for key in [
        "description",
        "version",
        "language",
        "projectType",
        "icon",
        "website",
        "provider",
        "supportUrl",
    ] {
        if let Some(node) = meta.get(key) {
            string(ctx, node, &format!("metadata.{key}"));
        }
    }
    if let Some(version) = meta.get("version").and_then(Node::as_str) {
        let ok = version.split('.').count() == 3
            && version
                .split(['.', '-', '+'])
                .take(3)
                .all(|p| p.parse::<u64>().is_ok());
        if !ok {
            ctx.error(
                "metadata.version",
                meta.get("version"),
                format!("{version:?} is not a semantic version (for example 0.1.0)"),
            );
        }
    }
    if let Some(tags) = meta.get("tags") {
        super::string_list(ctx, tags, "metadata.tags");
    }
    if let Some(archs) = meta.get("architectures") {
        for (arch, path, node) in super::string_list(ctx, archs, "metadata.architectures") {
            if !["amd64", "arm64", "ppc64le", "s390x"].contains(&arch.as_str()) {
                ctx.error(
                    path,
                    Some(node),
                    format!("unknown architecture {arch:?}; allowed: amd64, arm64, ppc64le, s390x"),
                );
            }
        }
    }
    Some(meta)
}
