//! The devfile validator: every rule of the spec and of devfile 2.x, all findings at once.
//!
//! Rules are grouped by the part of the document they read; each module adds diagnostics to a
//! shared [`Ctx`]. Cross-references (images, `dependsOn`, durable service, commands) are checked
//! after every component has been read, from the [`Service`] summaries.

mod commands;
mod components;
mod metadata;
mod platform;
mod ports;
mod release;
mod volumes;

pub use volumes::mount_path;

use std::collections::HashMap;

use crate::diagnostics::{Diagnostic, Report, Severity};
use crate::name::{DnsLabelError, dns_label};
use crate::yaml::{self, Node};

use release::Release;
pub use release::SUPPORTED_SCHEMA_VERSIONS;

/// Read access to the files around a devfile, so the validator can compare ports with the
/// Dockerfiles without doing I/O itself (the caller decides where files come from).
pub trait ProjectFiles {
    /// The text of `relative_path` (relative to the devfile's directory), if it exists.
    fn read(&self, relative_path: &str) -> Option<String>;
}

/// Validates devfile text. With `files`, Dockerfiles are read to catch port mismatches.
pub fn validate(text: &str, files: Option<&dyn ProjectFiles>) -> Report {
    let mut ctx = Ctx::default();
    let root = match yaml::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            ctx.error("", None, "the devfile is empty; it needs at least schemaVersion, metadata.name and metadata.displayName");
            return ctx.finish();
        }
        Err(e) => {
            ctx.diags.push(Diagnostic {
                severity: Severity::Error,
                path: String::new(),
                line: Some(e.line),
                message: format!(
                    "YAML syntax error at line {}, column {}: {}",
                    e.line, e.column, e.message
                ),
            });
            return ctx.finish();
        }
    };
    if root.entries().is_none() {
        ctx.error(
            "",
            Some(&root),
            format!(
                "the devfile must be a YAML mapping at the top level, got {}",
                root.kind()
            ),
        );
        return ctx.finish();
    }
    check_keys(
        &mut ctx,
        &root,
        "",
        &[
            "schemaVersion",
            "metadata",
            "components",
            "commands",
            "events",
            "projects",
            "starterProjects",
            "variables",
            "attributes",
            "parent",
            "dependentProjects",
        ],
        Severity::Error,
    );
    ctx.release = metadata::schema_version(&mut ctx, &root);
    let meta = metadata::metadata(&mut ctx, &root);
    let services = components::components(&mut ctx, &root);
    components::dependencies(&mut ctx, &services);
    if let Some(platform) = meta.and_then(|m| m.get("platform")) {
        platform::platform(&mut ctx, platform, "metadata.platform", &services);
    }
    let commands = commands::commands(&mut ctx, &root, &services);
    ports::check(&mut ctx, &services, &commands, files);
    if ctx.diags.iter().all(|d| d.severity != Severity::Error)
        && let Err(e) = serde_yaml::from_str::<crate::model::Devfile>(text)
    {
        ctx.error(
            "",
            None,
            format!("the devfile does not match the devfile model: {e}"),
        );
    }
    ctx.finish()
}

/// What the cross-reference rules need to know about one service.
#[derive(Debug, Default)]
pub(crate) struct Service<'a> {
    pub name: String,
    pub path: String,
    pub node: Option<&'a Node>,
    pub endpoints: Vec<(u16, String, &'a Node)>,
    pub depends_on: Vec<(String, String, &'a Node)>,
    pub dockerfile: Option<String>,
}

/// Findings collected while walking the document, and the release whose rules apply.
#[derive(Default)]
pub(crate) struct Ctx {
    diags: Vec<Diagnostic>,
    /// The devfile release the document declares (`schemaVersion`), or the latest one.
    release: Release,
}

impl Ctx {
    pub fn error(
        &mut self,
        path: impl Into<String>,
        at: Option<&Node>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Error, path, at, message);
    }

    pub fn warn(&mut self, path: impl Into<String>, at: Option<&Node>, message: impl Into<String>) {
        self.push(Severity::Warning, path, at, message);
    }

    fn push(
        &mut self,
        severity: Severity,
        path: impl Into<String>,
        at: Option<&Node>,
        message: impl Into<String>,
    ) {
        self.diags.push(Diagnostic {
            severity,
            path: path.into(),
            line: at.map(|n| n.pos.line),
            message: message.into(),
        });
    }

    fn finish(mut self) -> Report {
        self.diags.sort_by_key(|d| {
            (
                d.line.unwrap_or(usize::MAX),
                d.severity == Severity::Warning,
            )
        });
        Report {
            diagnostics: self.diags,
        }
    }
}

/// Joins a parent path and a key (`""` + `metadata` = `metadata`).
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// Reports keys outside `allowed` and duplicate keys (always errors). With
/// [`Severity::Error`] every other key is an error; with [`Severity::Warning`] the place is open
/// (the devfile schema allows extra keys there, as in `metadata`), so only a key that looks like
/// a misspelt allowed key is reported, as a warning.
pub(crate) fn check_keys(
    ctx: &mut Ctx,
    node: &Node,
    path: &str,
    allowed: &[&str],
    severity: Severity,
) {
    let Some(entries) = node.entries() else {
        return;
    };
    let mut seen: Vec<&str> = Vec::new();
    for (key, _) in entries {
        let Some(name) = key.as_str() else {
            ctx.error(
                path,
                Some(key),
                format!("keys must be strings, got {}", key.kind()),
            );
            continue;
        };
        if seen.contains(&name) {
            ctx.error(
                join(path, name),
                Some(key),
                format!("duplicate key {name:?}"),
            );
        }
        seen.push(name);
        if !allowed.contains(&name) {
            let close = suggestion(name, allowed);
            let hint = close
                .map(|s| format!(" (did you mean {s:?}?)"))
                .unwrap_or_default();
            let message = format!(
                "unknown key {name:?}{hint}; allowed keys here: {}",
                allowed.join(", ")
            );
            match severity {
                Severity::Error => ctx.error(join(path, name), Some(key), message),
                Severity::Warning if close.is_some() => {
                    ctx.warn(join(path, name), Some(key), message);
                }
                Severity::Warning => {}
            }
        }
    }
}

/// The allowed key closest to a misspelt one, when it is close enough to be a typo.
fn suggestion<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (edit_distance(&name.to_lowercase(), &a.to_lowercase()), *a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The value of a required key; reports it missing (at the parent's line) otherwise.
pub(crate) fn required<'a>(
    ctx: &mut Ctx,
    parent: &'a Node,
    path: &str,
    key: &str,
) -> Option<&'a Node> {
    let found = parent.get(key);
    if found.is_none() {
        ctx.error(join(path, key), Some(parent), format!("{key} is required"));
    }
    found
}

/// The text of a string node; reports any other type.
pub(crate) fn string<'a>(ctx: &mut Ctx, node: &'a Node, path: &str) -> Option<&'a str> {
    let s = node.as_str();
    if s.is_none() {
        ctx.error(
            path,
            Some(node),
            format!("must be a string, got {}", node.kind()),
        );
    }
    s
}

/// A non-empty string; reports other types and the empty string.
pub(crate) fn non_empty_string<'a>(ctx: &mut Ctx, node: &'a Node, path: &str) -> Option<&'a str> {
    let s = string(ctx, node, path)?;
    if s.trim().is_empty() {
        ctx.error(path, Some(node), "must not be empty");
        return None;
    }
    Some(s)
}

/// A list of non-empty strings (fabrics, permissions, dependsOn, secrets).
pub(crate) fn string_list<'a>(
    ctx: &mut Ctx,
    node: &'a Node,
    path: &str,
) -> Vec<(String, String, &'a Node)> {
    let Some(items) = node.items() else {
        ctx.error(
            path,
            Some(node),
            format!("must be a list of strings, got {}", node.kind()),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        if let Some(s) = non_empty_string(ctx, item, &item_path) {
            out.push((s.to_owned(), item_path, item));
        }
    }
    out
}

/// A mapping; reports any other type.
pub(crate) fn mapping<'a>(ctx: &mut Ctx, node: &'a Node, path: &str) -> Option<&'a Node> {
    if node.entries().is_some() {
        Some(node)
    } else {
        ctx.error(
            path,
            Some(node),
            format!("must be a mapping, got {}", node.kind()),
        );
        None
    }
}

/// Names that must be DNS labels and unique in the devfile (component names, endpoint names,
/// command ids), with where each was first used: one place for both rules.
pub(crate) struct UniqueNames {
    /// What the names are, for messages ("component name", "command id").
    what: &'static str,
    /// The longest name allowed.
    max: usize,
    /// Where the limit comes from, added to a too-long message ("" when it is the same in
    /// every release).
    limit_source: String,
    /// Added to a duplicate's message.
    duplicate_note: &'static str,
    /// Each name seen, with the path of its first use.
    first_use: HashMap<String, String>,
}

impl UniqueNames {
    /// Names of `what` that are DNS labels of at most `max` characters.
    pub fn new(what: &'static str, max: usize) -> Self {
        Self {
            what,
            max,
            limit_source: String::new(),
            duplicate_note: "",
            first_use: HashMap::new(),
        }
    }

    /// Says which release sets the length limit, for a limit that changed between releases.
    pub fn limited_by(mut self, release: Release) -> Self {
        self.limit_source = format!(" by devfile {} (schemaVersion)", release.version);
        self
    }

    /// Adds `note` to the message about a duplicate.
    pub fn duplicate_note(mut self, note: &'static str) -> Self {
        self.duplicate_note = note;
        self
    }

    /// Reports `raw` (at `path`) when it is not a DNS label of the allowed length or was used
    /// before.
    pub fn check(&mut self, ctx: &mut Ctx, raw: &str, node: &Node, path: &str) {
        let what = self.what;
        if let Err(problem) = dns_label(raw, self.max) {
            let source = match problem {
                DnsLabelError::TooLong { .. } => self.limit_source.as_str(),
                _ => "",
            };
            ctx.error(
                path,
                Some(node),
                format!("{what} {raw:?} {problem}{source}"),
            );
        }
        if let Some(first) = self.first_use.get(raw) {
            ctx.error(
                path,
                Some(node),
                format!(
                    "duplicate {what} {raw:?} (also used by {first}){}",
                    self.duplicate_note
                ),
            );
        } else {
            self.first_use.insert(raw.to_owned(), path.to_owned());
        }
    }
}
