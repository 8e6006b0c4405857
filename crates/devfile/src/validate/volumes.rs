//! Rules for storage: `volume` components (`size`, `ephemeral`) and the containers'
//! `volumeMounts` (`name`, `path`). The platform gives each declared volume real storage
//! owned by the app and mounts it at `path` in every runtime, so a mount of a volume that is
//! not declared, or at a path that cannot be a mount point, is an error here rather than a
//! surprise at deploy time.

use std::collections::{BTreeMap, HashSet};

use super::{Ctx, check_keys, join, mapping, non_empty_string, required};
use crate::diagnostics::Severity;
use crate::quantity;
use crate::yaml::Node;

/// The keys of a `volume` component's body.
const VOLUME_KEYS: [&str; 2] = ["size", "ephemeral"];
/// The keys of one `volumeMounts[]` entry.
const MOUNT_KEYS: [&str; 2] = ["name", "path"];

/// Directories a volume may not be mounted at: a mount there would hide what every process
/// needs (the system's own files), on the process runtime as much as in a container.
const RESERVED_PATHS: [&str; 13] = [
    "/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/run", "/sbin", "/sys",
    "/usr", "/var",
];

/// Checks a `volume` component's body and records its name.
pub(super) fn volume(
    ctx: &mut Ctx,
    comp: &Node,
    path: &str,
    name: &str,
    volumes: &mut BTreeMap<String, String>,
) {
    let v_path = join(path, "volume");
    let Some(body) = comp.get("volume") else {
        return;
    };
    // `volume: {}` and a bare `volume:` both declare a volume with the defaults.
    if body.entries().is_some() {
        check_keys(ctx, body, &v_path, &VOLUME_KEYS, Severity::Error);
        if let Some(size) = body.get("size") {
            let s_path = join(&v_path, "size");
            if let Some(text) = size.scalar_text()
                && quantity::memory_bytes(&text).is_none_or(|b| b == 0)
            {
                ctx.error(
                    s_path,
                    Some(size),
                    format!(
                        "size {text:?} is not a positive storage quantity; write it like 1Gi, 512Mi or 10G"
                    ),
                );
            }
        }
        if let Some(flag) = body.get("ephemeral")
            && flag.as_bool().is_none()
        {
            ctx.error(
                join(&v_path, "ephemeral"),
                Some(flag),
                format!("must be true or false, got {}", flag.kind()),
            );
        }
    } else if !matches!(body.value, crate::yaml::Value::Null) {
        mapping(ctx, body, &v_path);
    }
    if !name.is_empty() {
        volumes.insert(name.to_owned(), path.to_owned());
    }
}

/// Checks every container's `volumeMounts` against the declared volumes.
pub(super) fn mounts(ctx: &mut Ctx, items: &[Node], volumes: &BTreeMap<String, String>) {
    for (i, comp) in items.iter().enumerate() {
        let Some(list) = comp.get("container").and_then(|c| c.get("volumeMounts")) else {
            continue;
        };
        let l_path = format!("components[{i}].container.volumeMounts");
        let Some(entries) = list.items() else {
            ctx.error(
                &l_path,
                Some(list),
                format!(
                    "must be a list of {{name, path}} mounts, got {}",
                    list.kind()
                ),
            );
            continue;
        };
        let mut paths = HashSet::new();
        for (j, entry) in entries.iter().enumerate() {
            let m_path = format!("{l_path}[{j}]");
            let Some(entry) = mapping(ctx, entry, &m_path) else {
                continue;
            };
            check_keys(ctx, entry, &m_path, &MOUNT_KEYS, Severity::Error);
            if let Some(name) = required(ctx, entry, &m_path, "name")
                && let Some(text) = non_empty_string(ctx, name, &join(&m_path, "name"))
                && !volumes.contains_key(text)
            {
                let declared: Vec<&str> = volumes.keys().map(String::as_str).collect();
                ctx.error(
                    join(&m_path, "name"),
                    Some(name),
                    if declared.is_empty() {
                        format!(
                            "volume {text:?} is mounted but not declared; add a component {{name: {text}, volume: {{size: 1Gi}}}}"
                        )
                    } else {
                        format!(
                            "volume {text:?} is mounted but not declared; declared volumes: {}",
                            declared.join(", ")
                        )
                    },
                );
            }
            if let Some(node) = entry.get("path")
                && let Some(text) = non_empty_string(ctx, node, &join(&m_path, "path"))
            {
                let p_path = join(&m_path, "path");
                if let Err(problem) = mount_path(text) {
                    ctx.error(p_path, Some(node), format!("mount path {text:?} {problem}"));
                } else if !paths.insert(text.trim_end_matches('/').to_owned()) {
                    ctx.error(
                        p_path,
                        Some(node),
                        format!("mount path {text:?} is used twice in this container"),
                    );
                }
            }
        }
    }
}

/// The rule for a mount path: absolute, normal (no `.`, `..` or empty segments) and not a
/// system directory.
pub fn mount_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err("must be an absolute path (start with /)".into());
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed
        .split('/')
        .skip(1)
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err("must not contain empty, . or .. segments".into());
    }
    if RESERVED_PATHS.contains(&if trimmed.is_empty() { "/" } else { trimmed }) {
        return Err(format!(
            "is a system directory; mount volumes elsewhere (for example /data); reserved: {}",
            RESERVED_PATHS.join(", ")
        ));
    }
    Ok(())
}
