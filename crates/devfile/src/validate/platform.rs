//! Rules for `metadata.platform`: fabrics, permissions, managedInfra and the durable block.

use std::collections::HashSet;

use super::{Ctx, Service, check_keys, join, mapping, non_empty_string, required, string_list};
use crate::diagnostics::Severity;
use crate::name::dns_label;
use crate::yaml::Node;

/// The resource kinds the platform can provision, with the extra keys each accepts and the
/// allowed values of its `engine` key (empty when the kind has no engine choice).
pub const MANAGED_INFRA_KINDS: [(&str, &[&str], &[&str]); 6] = [
    ("objectStorage", &["versioned", "publicRead"], &[]),
    ("keyValueTable", &["partitionKey", "sortKey"], &[]),
    ("queue", &["fifo", "visibilityTimeoutSeconds"], &[]),
    (
        "relationalDatabase",
        &["engine", "version", "storageGb"],
        &["postgres", "mysql"],
    ),
    ("cache", &["engine", "memoryMb"], &["redis", "memcached"]),
    (
        "inMemoryDatabase",
        &["engine", "memoryMb"],
        &["redis", "valkey"],
    ),
];

/// The durable-workflow engines the platform can run.
pub const DURABLE_ENGINES: [&str; 1] = ["restate"];

pub(super) fn platform(ctx: &mut Ctx, node: &Node, path: &str, services: &[Service<'_>]) {
    let Some(platform) = mapping(ctx, node, path) else {
        return;
    };
    check_keys(
        ctx,
        platform,
        path,
        &["fabrics", "permissions", "managedInfra", "durable"],
        Severity::Error,
    );
    for key in ["fabrics", "permissions"] {
        if let Some(list) = platform.get(key) {
            let mut seen = HashSet::new();
            for (item, item_path, item_node) in string_list(ctx, list, &join(path, key)) {
                if !seen.insert(item.clone()) {
                    ctx.warn(
                        item_path,
                        Some(item_node),
                        format!("{item:?} is listed twice"),
                    );
                }
            }
        }
    }
    if let Some(infra) = platform.get("managedInfra") {
        managed_infra(ctx, infra, &join(path, "managedInfra"));
    }
    if let Some(durable) = platform.get("durable") {
        durable_block(ctx, durable, &join(path, "durable"), services);
    }
}

/// One kind of managed resource as [`MANAGED_INFRA_KINDS`] describes it.
struct ResourceKind {
    /// The kind's key (`objectStorage`, `queue`, …).
    name: &'static str,
    /// The keys its resources accept besides `name`.
    extra: &'static [&'static str],
    /// The allowed values of `engine` (empty when the kind has no engine choice).
    engines: &'static [&'static str],
}

impl ResourceKind {
    /// The kind named `key`, if the platform knows it.
    fn find(key: &str) -> Option<Self> {
        MANAGED_INFRA_KINDS
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|&(name, extra, engines)| Self {
                name,
                extra,
                engines,
            })
    }
}

/// Resource names are DNS labels of at most 63 characters that start with a letter.
const RESOURCE_NAME_MAX: usize = 63;

/// `managedInfra`: a mapping of known resource kinds to lists of resources.
fn managed_infra(ctx: &mut Ctx, node: &Node, path: &str) {
    let Some(infra) = mapping(ctx, node, path) else {
        return;
    };
    for (key, value) in infra.entries().unwrap_or_default() {
        let Some(key_text) = key.as_str() else {
            continue;
        };
        let k_path = join(path, key_text);
        let Some(kind) = ResourceKind::find(key_text) else {
            let kinds: Vec<&str> = MANAGED_INFRA_KINDS.iter().map(|(k, _, _)| *k).collect();
            ctx.error(
                &k_path,
                Some(key),
                format!(
                    "unknown managed resource kind {key_text:?}; known kinds: {}",
                    kinds.join(", ")
                ),
            );
            continue;
        };
        resources(ctx, value, &k_path, &kind);
    }
}

/// The resources of one kind: a list of mappings with unique names.
fn resources(ctx: &mut Ctx, value: &Node, k_path: &str, kind: &ResourceKind) {
    let Some(items) = value.items() else {
        ctx.error(
            k_path,
            Some(value),
            format!(
                "must be a list of resources ({{name: …}}), got {}",
                value.kind()
            ),
        );
        return;
    };
    let mut names = HashSet::new();
    for (i, res) in items.iter().enumerate() {
        let r_path = format!("{k_path}[{i}]");
        let Some(res) = mapping(ctx, res, &r_path) else {
            continue;
        };
        let mut allowed = vec!["name"];
        allowed.extend_from_slice(kind.extra);
        check_keys(ctx, res, &r_path, &allowed, Severity::Error);
        if let Some(name) = required(ctx, res, &r_path, "name")
            && let Some(text) = non_empty_string(ctx, name, &join(&r_path, "name"))
        {
            resource_name(ctx, name, text, &join(&r_path, "name"));
            if !names.insert(text.to_owned()) {
                ctx.error(
                    join(&r_path, "name"),
                    Some(name),
                    format!("duplicate {} name {text:?}", kind.name),
                );
            }
        }
        resource_fields(ctx, res, &r_path, kind);
    }
}

/// A resource name is a DNS label that starts with a letter (it names cloud resources).
fn resource_name(ctx: &mut Ctx, node: &Node, text: &str, path: &str) {
    if let Err(problem) = dns_label(text, RESOURCE_NAME_MAX) {
        ctx.error(
            path,
            Some(node),
            format!("resource name {text:?} {problem}"),
        );
    } else if !text.starts_with(|c: char| c.is_ascii_lowercase()) {
        ctx.error(
            path,
            Some(node),
            format!("resource name {text:?} must start with a lowercase letter"),
        );
    }
}

/// A resource's options: a supported `engine`, boolean flags, positive sizes, non-empty keys.
fn resource_fields(ctx: &mut Ctx, res: &Node, r_path: &str, kind: &ResourceKind) {
    if let Some(engine) = res.get("engine")
        && let Some(text) = non_empty_string(ctx, engine, &join(r_path, "engine"))
        && !kind.engines.contains(&text)
    {
        ctx.error(
            join(r_path, "engine"),
            Some(engine),
            format!(
                "{text:?} is not a supported {} engine; use one of {}",
                kind.name,
                kind.engines.join(", ")
            ),
        );
    }
    for key in ["fifo", "versioned", "publicRead"] {
        if let Some(flag) = res.get(key)
            && flag.as_bool().is_none()
        {
            ctx.error(
                join(r_path, key),
                Some(flag),
                format!("must be true or false, got {}", flag.kind()),
            );
        }
    }
    for key in ["visibilityTimeoutSeconds", "storageGb", "memoryMb"] {
        if let Some(n) = res.get(key)
            && n.as_int().is_none_or(|v| v <= 0)
        {
            ctx.error(join(r_path, key), Some(n), "must be a positive integer");
        }
    }
    for key in ["partitionKey", "sortKey", "version"] {
        if let Some(n) = res.get(key) {
            non_empty_string(ctx, n, &join(r_path, key));
        }
    }
}

fn durable_block(ctx: &mut Ctx, node: &Node, path: &str, services: &[Service<'_>]) {
    let Some(durable) = mapping(ctx, node, path) else {
        return;
    };
    check_keys(
        ctx,
        durable,
        path,
        &["engine", "service", "port", "path", "retention"],
        Severity::Error,
    );
    if let Some(engine) = required(ctx, durable, path, "engine")
        && let Some(text) = non_empty_string(ctx, engine, &join(path, "engine"))
        && !DURABLE_ENGINES.contains(&text)
    {
        ctx.error(
            join(path, "engine"),
            Some(engine),
            format!(
                "unsupported durable engine {text:?}; supported: {}",
                DURABLE_ENGINES.join(", ")
            ),
        );
    }
    let service = required(ctx, durable, path, "service")
        .and_then(|n| non_empty_string(ctx, n, &join(path, "service")).map(|s| (s, n)));
    let target = service.and_then(|(name, node)| {
        let found = services.iter().find(|s| s.name == name);
        if found.is_none() {
            let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
            ctx.error(
                join(path, "service"),
                Some(node),
                format!(
                    "{name:?} is not a service of this devfile; services: {}",
                    names.join(", ")
                ),
            );
        }
        found
    });
    if let Some(port) = required(ctx, durable, path, "port") {
        match port.as_int() {
            Some(p) if (1..=65535).contains(&p) => {
                if let Some(svc) = target
                    && !svc.endpoints.iter().any(|(q, _, _)| i64::from(*q) == p)
                {
                    let ports: Vec<String> = svc
                        .endpoints
                        .iter()
                        .map(|(q, _, _)| q.to_string())
                        .collect();
                    ctx.error(
                            join(path, "port"),
                            Some(port),
                            format!("port {p} is not an endpoint targetPort of service {:?} (its ports: {})", svc.name, if ports.is_empty() { "none".into() } else { ports.join(", ") }),
                        );
                }
            }
            _ => ctx.error(
                join(path, "port"),
                Some(port),
                "must be an integer between 1 and 65535",
            ),
        }
    }
    if let Some(p) = durable.get("path")
        && let Some(text) = non_empty_string(ctx, p, &join(path, "path"))
        && !text.starts_with('/')
    {
        ctx.error(
            join(path, "path"),
            Some(p),
            format!("{text:?} must start with \"/\""),
        );
    }
    if let Some(r) = durable.get("retention")
        && let Some(text) = non_empty_string(ctx, r, &join(path, "retention"))
    {
        // The unit is stripped as a character, never cut at a byte: the text may end in a
        // multi-byte one (found by the fuzzer).
        let ok = text
            .strip_suffix(['s', 'm', 'h', 'd'])
            .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n > 0));
        if !ok {
            ctx.error(
                join(path, "retention"),
                Some(r),
                format!("{text:?} is not a duration such as 30m, 24h or 7d"),
            );
        }
    }
}

#[cfg(test)]
mod kinds {
    use super::MANAGED_INFRA_KINDS;
    use crate::infra::ResourceKind;

    /// The typed kinds the platform provisions from are the kinds these rules accept, and
    /// a kind's default engine is the first it lists.
    #[test]
    fn the_typed_kinds_are_the_rules_kinds() {
        let keys: Vec<&str> = ResourceKind::ALL.iter().map(|k| k.key()).collect();
        let rules: Vec<&str> = MANAGED_INFRA_KINDS.iter().map(|(k, _, _)| *k).collect();
        assert_eq!(keys, rules);
        for (key, _, engines) in MANAGED_INFRA_KINDS {
            let default = ResourceKind::from_key(key).unwrap().default_engine();
            assert_eq!(default, engines.first().copied(), "{key}");
        }
    }
}
