//! Rules for `schemaVersion` and `metadata` (name, displayName and the standard fields).

use super::release::{LATEST, Release, SUPPORTED_SCHEMA_VERSIONS};
use super::{Ctx, check_keys, non_empty_string, required, string};
use crate::diagnostics::Severity;
use crate::name::AppName;
use crate::yaml::Node;

/// Longest display name; it is shown in lists and window titles.
pub const DISPLAY_NAME_MAX: usize = 100;

/// The keys of `metadata` in the devfile schema, plus Slipway's `platform` block.
const METADATA_KEYS: [&str; 15] = [
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
];

/// Platform keys people put directly under `metadata`, where the platform does not look.
const MISPLACED_PLATFORM_KEYS: [&str; 4] = ["fabrics", "permissions", "managedInfra", "durable"];

/// Free-text `metadata` fields, which must be strings when present.
const TEXT_FIELDS: [&str; 8] = [
    "description",
    "version",
    "language",
    "projectType",
    "icon",
    "website",
    "provider",
    "supportUrl",
];

/// Values of `metadata.architectures`.
const ARCHITECTURES: [&str; 4] = ["amd64", "arm64", "ppc64le", "s390x"];

/// Checks `schemaVersion` and returns the release whose rules apply to the document: the one
/// it declares, or [`LATEST`] for another 2.x version and when the version is missing or broken
/// (both reported).
pub(super) fn schema_version(ctx: &mut Ctx, root: &Node) -> Release {
    let Some(node) = required(ctx, root, "", "schemaVersion") else {
        return LATEST;
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
        return LATEST;
    };
    let Some(major) = semver_major(&version) else {
        ctx.error(
            "schemaVersion",
            Some(node),
            format!("{version:?} is not a semantic version (MAJOR.MINOR.PATCH)"),
        );
        return LATEST;
    };
    if let Some(release) = Release::find(&version) {
        return release;
    }
    unknown_version(ctx, node, &version, major);
    LATEST
}

/// The major part of a `MAJOR.MINOR.PATCH` version of digits only.
fn semver_major(version: &str) -> Option<&str> {
    let parts: Vec<&str> = version.split('.').collect();
    let semver = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    semver.then(|| parts[0])
}

/// A version that is not a release Slipway knows: another 2.x is read as the latest release
/// (a warning, as 2.x releases are backward compatible); any other major version is an error.
fn unknown_version(ctx: &mut Ctx, node: &Node, version: &str, major: &str) {
    let known = SUPPORTED_SCHEMA_VERSIONS.join(", ");
    if major == "2" {
        ctx.warn(
            "schemaVersion",
            Some(node),
            format!(
                "{version:?} is not a devfile release Slipway knows ({known}); it is read as devfile {latest}, so keys added after {latest} are reported as unknown",
                latest = LATEST.version
            ),
        );
    } else {
        ctx.error(
            "schemaVersion",
            Some(node),
            format!(
                "unsupported schemaVersion {version:?}: Slipway reads devfile 2.x only; supported: {known}"
            ),
        );
    }
}

/// Checks `metadata` and returns it when it is a mapping.
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
    check_keys(ctx, meta, "metadata", &METADATA_KEYS, Severity::Warning);
    misplaced_platform_keys(ctx, meta);
    app_name(ctx, meta);
    display_name(ctx, meta);
    for key in TEXT_FIELDS {
        if let Some(node) = meta.get(key) {
            string(ctx, node, &format!("metadata.{key}"));
        }
    }
    app_version(ctx, meta);
    if let Some(tags) = meta.get("tags") {
        super::string_list(ctx, tags, "metadata.tags");
    }
    architectures(ctx, meta);
    Some(meta)
}

/// Platform keys directly under `metadata` are ignored by the platform: a warning says where
/// they belong.
fn misplaced_platform_keys(ctx: &mut Ctx, meta: &Node) {
    for misplaced in MISPLACED_PLATFORM_KEYS {
        if let Some(key) = meta.key_node(misplaced) {
            ctx.warn(
                format!("metadata.{misplaced}"),
                Some(key),
                format!("the platform ignores metadata.{misplaced}; move it to metadata.platform.{misplaced}"),
            );
        }
    }
}

/// `metadata.name` is required (Slipway names the app after it) and, as in the devfile schema,
/// a string. The app name is derived from it ([`AppName::derive`]): a name that is not an app
/// name as written draws a warning naming the app name used; only a name with nothing to derive
/// from (no ASCII letter or digit) is an error.
fn app_name(ctx: &mut Ctx, meta: &Node) {
    let Some(node) = required(ctx, meta, "metadata", "name") else {
        return;
    };
    let Some(raw) = string(ctx, node, "metadata.name") else {
        return;
    };
    match (AppName::parse(raw), AppName::derive(raw)) {
        (Ok(_), _) => {}
        (Err(rule), Ok(derived)) => ctx.warn(
            "metadata.name",
            Some(node),
            format!(
                "{raw:?} is not an app name as written ({rule}); the platform names the app {:?}, derived from it",
                derived.as_str()
            ),
        ),
        (Err(_), Err(e)) => ctx.error(
            "metadata.name",
            Some(node),
            format!("no app name can be derived from {raw:?}: {e}"),
        ),
    }
}

/// `metadata.displayName` is required, not blank and at most [`DISPLAY_NAME_MAX`] characters.
fn display_name(ctx: &mut Ctx, meta: &Node) {
    let Some(display) = required(ctx, meta, "metadata", "displayName") else {
        return;
    };
    let Some(text) = non_empty_string(ctx, display, "metadata.displayName") else {
        return;
    };
    let count = text.chars().count();
    if count > DISPLAY_NAME_MAX {
        ctx.error(
            "metadata.displayName",
            Some(display),
            format!("is {count} characters long; at most {DISPLAY_NAME_MAX} are allowed"),
        );
    }
}

/// `metadata.version` is a semantic version.
fn app_version(ctx: &mut Ctx, meta: &Node) {
    let Some(version) = meta.get("version").and_then(Node::as_str) else {
        return;
    };
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

/// `metadata.architectures` lists known architectures.
fn architectures(ctx: &mut Ctx, meta: &Node) {
    let Some(archs) = meta.get("architectures") else {
        return;
    };
    for (arch, path, node) in super::string_list(ctx, archs, "metadata.architectures") {
        if !ARCHITECTURES.contains(&arch.as_str()) {
            ctx.error(
                path,
                Some(node),
                format!(
                    "unknown architecture {arch:?}; allowed: {}",
                    ARCHITECTURES.join(", ")
                ),
            );
        }
    }
}
