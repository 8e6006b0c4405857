//! Surgical edits of devfile text: change one scalar or add one entry, leaving every other
//! byte — comments, quoting, indentation, key order — exactly as the user wrote it.
//!
//! No serde YAML crate round-trips comments, so edits work on byte ranges found through the
//! positioned tree of [`crate::yaml`].

use saphyr_parser::ScalarStyle;

use crate::yaml::{self, Node, Value, char_to_byte};

/// Why an edit could not be made; nothing is changed when one of these is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The text is not valid YAML.
    #[error("devfile.yaml is not valid YAML: {0}")]
    Syntax(#[from] yaml::SyntaxError),
    /// No container component has that name.
    #[error("no service (container component) named {0:?} in devfile.yaml")]
    NoService(String),
    /// The service's image is not built by an image component.
    #[error(
        "service {0:?} has no image component (no image component's imageName equals its container.image)"
    )]
    NoImageComponent(String),
    /// The place to edit is written in a style the editor does not rewrite.
    #[error("cannot edit {0}: {1}")]
    Unsupported(String, &'static str),
    /// The path to edit does not exist.
    #[error("{0} does not exist in devfile.yaml")]
    Missing(String),
}

/// Sets `attributes.imageUri` of the image component that builds `service`.
///
/// Replaces the existing scalar in place, or adds the key (and `attributes:` if needed) in
/// the component's own indentation. Nothing else in `text` changes.
pub fn set_image_uri(text: &str, service: &str, image_uri: &str) -> Result<String, EditError> {
    let root = yaml::parse(text)?.ok_or_else(|| EditError::Missing("components".into()))?;
    let components = root
        .get("components")
        .and_then(Node::items)
        .ok_or_else(|| EditError::Missing("components".into()))?;
    let container = components
        .iter()
        .find(|c| {
            c.get("name").and_then(Node::as_str) == Some(service) && c.get("container").is_some()
        })
        .ok_or_else(|| EditError::NoService(service.to_owned()))?;
    let image_name = container
        .get("container")
        .and_then(|c| c.get("image"))
        .and_then(Node::as_str)
        .unwrap_or_default();
    let image = components
        .iter()
        .find(|c| {
            c.get("image")
                .and_then(|i| i.get("imageName"))
                .and_then(Node::as_str)
                == Some(image_name)
        })
        .ok_or_else(|| EditError::NoImageComponent(service.to_owned()))?;
    let rendered = render_scalar(image_uri);
    match image.get("attributes") {
        Some(attrs) => match attrs.get("imageUri") {
            Some(existing) => replace_scalar(text, existing, &rendered, "attributes.imageUri"),
            None => insert_entry(text, attrs, &format!("imageUri: {rendered}"), "attributes"),
        },
        None => insert_entry(
            text,
            image,
            &format!("attributes:\n  imageUri: {rendered}"),
            "the image component",
        ),
    }
}

/// Adds `key: <block>` as the last entry of the mapping at `path` (for example
/// `["metadata", "platform"]`). `block` is YAML written at indentation zero; it is re-indented.
/// Fails when the key exists already.
pub fn append_mapping_entry(
    text: &str,
    path: &[&str],
    key: &str,
    block: &str,
) -> Result<String, EditError> {
    let root = yaml::parse(text)?.ok_or_else(|| EditError::Missing(path.join(".")))?;
    let mut node = &root;
    for segment in path {
        node = node
            .get(segment)
            .ok_or_else(|| EditError::Missing(path.join(".")))?;
    }
    if node.get(key).is_some() {
        return Err(EditError::Unsupported(
            format!("{}.{key}", path.join(".")),
            "the key exists already",
        ));
    }
    let entries = node
        .entries()
        .ok_or_else(|| EditError::Unsupported(path.join("."), "it is not a mapping"))?;
    let Some((first_key, _)) = entries.first() else {
        return Err(EditError::Unsupported(
            path.join("."),
            "it is an empty mapping; add one key by hand first",
        ));
    };
    let last_value = entries.last().map(|(_, v)| v).unwrap_or(first_key);
    if first_key.style.is_none() || is_flow(text, node) {
        return Err(EditError::Unsupported(
            path.join("."),
            "it is written in flow style ({ … })",
        ));
    }
    let indent = " ".repeat(first_key.pos.col);
    let body = if block.starts_with('\n') {
        format!("{key}:{block}")
    } else {
        format!("{key}: {block}")
    };
    let mut lines = String::new();
    for (i, line) in body.lines().enumerate() {
        if i > 0 && line.is_empty() {
            lines.push('\n');
            continue;
        }
        lines.push_str(&indent);
        lines.push_str(line);
        lines.push('\n');
    }
    let end_byte = char_to_byte(text, last_value.pos.end.max(first_key.pos.end));
    let insert_at = line_end_after(text, end_byte);
    let mut out = String::with_capacity(text.len() + lines.len() + 1);
    out.push_str(&text[..insert_at]);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&lines);
    out.push_str(&text[insert_at..]);
    Ok(out)
}

/// Byte offset of the start of the line after the one containing `byte` (or the text's end).
fn line_end_after(text: &str, byte: usize) -> usize {
    // A scalar's span can end at the newline that terminates it; step back onto its line.
    let from = if byte > 0 && text.as_bytes().get(byte - 1) == Some(&b'\n') {
        byte - 1
    } else {
        byte
    };
    text[from..]
        .find('\n')
        .map(|i| from + i + 1)
        .unwrap_or(text.len())
}

fn is_flow(text: &str, node: &Node) -> bool {
    let start = char_to_byte(text, node.pos.start);
    text[start..].starts_with('{') || text[start..].starts_with('[')
}

fn replace_scalar(
    text: &str,
    node: &Node,
    rendered: &str,
    what: &str,
) -> Result<String, EditError> {
    let style = node
        .style
        .ok_or_else(|| EditError::Unsupported(what.into(), "it is not a scalar"))?;
    if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
        return Err(EditError::Unsupported(
            what.into(),
            "block scalars (| or >) are not rewritten",
        ));
    }
    let start = char_to_byte(text, node.pos.start);
    let end = scalar_end(text, start, style, node);
    let mut out = String::with_capacity(text.len() + rendered.len());
    out.push_str(&text[..start]);
    out.push_str(rendered);
    out.push_str(&text[end..]);
    Ok(out)
}

/// The byte just past a single-line scalar that starts at `start`, found from the source text
/// (quotes included) rather than trusted from the parser, so trailing comments stay outside.
fn scalar_end(text: &str, start: usize, style: ScalarStyle, node: &Node) -> usize {
    let rest = &text[start..];
    match style {
        ScalarStyle::DoubleQuoted => {
            let mut escaped = false;
            for (i, c) in rest.char_indices().skip(1) {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => return start + i + 1,
                    _ => escaped = false,
                }
            }
            text.len()
        }
        ScalarStyle::SingleQuoted => {
            let bytes = rest.as_bytes();
            let mut i = 1;
            while i < bytes.len() {
                if bytes[i] == b'\'' {
                    if bytes.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return start + i + 1;
                }
                i += 1;
            }
            text.len()
        }
        _ => {
            if matches!(node.value, Value::Null) && node.pos.start == node.pos.end {
                return start;
            }
            let line_end = rest.find('\n').unwrap_or(rest.len());
            let line = &rest[..line_end];
            let comment = line.find(" #").unwrap_or(line.len());
            start + line[..comment].trim_end().len()
        }
    }
}

/// Inserts an entry into a block mapping, before the first of its keys that starts a line,
/// using that key's indentation.
fn insert_entry(text: &str, mapping: &Node, entry: &str, what: &str) -> Result<String, EditError> {
    let entries = mapping
        .entries()
        .ok_or_else(|| EditError::Unsupported(what.into(), "it is not a mapping"))?;
    if is_flow(text, mapping) {
        return Err(EditError::Unsupported(
            what.into(),
            "it is written in flow style ({ … })",
        ));
    }
    for (key, _) in entries {
        let key_byte = char_to_byte(text, key.pos.start);
        let line_start = text[..key_byte].rfind('\n').map(|i| i + 1).unwrap_or(0);
        if text[line_start..key_byte].chars().all(|c| c == ' ') {
            let indent = &text[line_start..key_byte];
            let mut block = String::new();
            for line in entry.lines() {
                block.push_str(indent);
                block.push_str(line);
                block.push('\n');
            }
            let mut out = String::with_capacity(text.len() + block.len());
            out.push_str(&text[..line_start]);
            out.push_str(&block);
            out.push_str(&text[line_start..]);
            return Ok(out);
        }
    }
    Err(EditError::Unsupported(
        what.into(),
        "no key of it starts its own line; add the key by hand",
    ))
}

/// A scalar in plain style when that reads back as the same string, else double-quoted.
fn render_scalar(value: &str) -> String {
    let plain_safe = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "./:@_-+~".contains(c))
        && !value.starts_with(['-', ':', '@', '~'])
        && matches!(yaml::parse(&format!("k: {value}")), Ok(Some(ref n)) if n.get("k").and_then(Node::as_str) == Some(value));
    if plain_safe {
        value.to_owned()
    } else {
        serde_json::to_string(value).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEVFILE: &str = "# top comment\nschemaVersion: 2.2.0   # version\nmetadata:\n  name: demo\n  displayName: Demo\n  platform:\n    fabrics: []   # none yet\n    permissions: []\ncomponents:\n  # the image\n  - name: api-image\n    attributes:\n      imageUri: old   # written by builds\n    image:\n      imageName: api\n      dockerfile:\n        uri: Dockerfile\n  - name: api\n    container:\n      image: api\n";

    #[test]
    fn replaces_existing_value_only() {
        let out = set_image_uri(DEVFILE, "api", "reg.local/demo/api@sha256:abc").unwrap();
        assert_eq!(
            out,
            DEVFILE.replace("imageUri: old ", "imageUri: reg.local/demo/api@sha256:abc ")
        );
    }

    #[test]
    fn replaces_quoted_values() {
        let text = DEVFILE.replace("imageUri: old", "imageUri: \"o\\\"ld\"");
        let out = set_image_uri(&text, "api", "new").unwrap();
        assert!(
            out.contains("imageUri: new   # written by builds\n"),
            "{out}"
        );
        let text = DEVFILE.replace("imageUri: old", "imageUri: 'o''ld'");
        let out = set_image_uri(&text, "api", "x y").unwrap();
        assert!(out.contains("imageUri: \"x y\"   # written"), "{out}");
    }

    #[test]
    fn adds_missing_attributes() {
        let text = DEVFILE.replace(
            "    attributes:\n      imageUri: old   # written by builds\n",
            "",
        );
        let out = set_image_uri(&text, "api", "u1").unwrap();
        assert!(
            out.contains("  - name: api-image\n    attributes:\n      imageUri: u1\n    image:\n"),
            "{out}"
        );
        let again = set_image_uri(&out, "api", "u2").unwrap();
        assert_eq!(again, out.replace("u1", "u2"));
    }

    #[test]
    fn unknown_service_changes_nothing() {
        assert_eq!(
            set_image_uri(DEVFILE, "nope", "x"),
            Err(EditError::NoService("nope".into()))
        );
    }

    #[test]
    fn appends_block_under_platform() {
        let out = append_mapping_entry(
            DEVFILE,
            &["metadata", "platform"],
            "durable",
            "\n  engine: restate\n  service: api\n  port: 8002",
        )
        .unwrap();
        assert!(out.contains("    permissions: []\n    durable:\n      engine: restate\n      service: api\n      port: 8002\ncomponents:"), "{out}");
        let model = crate::yaml::parse(&out).unwrap().unwrap();
        let durable = model
            .get("metadata")
            .unwrap()
            .get("platform")
            .unwrap()
            .get("durable")
            .unwrap();
        assert_eq!(durable.get("port").unwrap().as_int(), Some(8002));
    }
}
