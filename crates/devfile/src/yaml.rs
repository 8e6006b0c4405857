//! A YAML tree that remembers where every node stands in the source text.
//!
//! serde_yaml gives typed values but no positions; diagnostics need a line for every path
//! and the editor needs the exact byte range of a scalar. This tree is built from
//! saphyr-parser's span-carrying events and resolves plain scalars by the YAML 1.2 core schema.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Where a node stands: 1-based line, 0-based column, and its character range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 1-based line of the node's first character.
    pub line: usize,
    /// 0-based column (in characters) of the node's first character.
    pub col: usize,
    /// Character offset of the node's first character.
    pub start: usize,
    /// Character offset just past the node's last character.
    pub end: usize,
}

impl From<Span> for Pos {
    fn from(span: Span) -> Self {
        Pos {
            line: span.start.line(),
            col: span.start.col(),
            start: span.start.index(),
            end: span.end.index(),
        }
    }
}

/// A resolved YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `~`, `null` or an empty plain scalar.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer (plain scalar only).
    Int(i64),
    /// A float (plain scalar only).
    Float(f64),
    /// Any other scalar, and every quoted or block scalar.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order (duplicate keys are kept so they can be reported).
    Map(Vec<(Node, Node)>),
}

/// A value with its position and, for scalars, its style.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The resolved value.
    pub value: Value,
    /// Where the node stands in the source.
    pub pos: Pos,
    /// How a scalar was written (None for collections).
    pub style: Option<ScalarStyle>,
}

/// A syntax error with its position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("YAML syntax error at line {line}, column {column}: {message}")]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The parser's description.
    pub message: String,
}

impl Node {
    /// The value of `key` when this node is a mapping with a string key `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// The key node of `key` (its position is where the entry starts).
    pub fn key_node(&self, key: &str) -> Option<&Node> {
        self.entries()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, _)| k)
    }

    /// The entries when this node is a mapping.
    pub fn entries(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The items when this node is a sequence.
    pub fn items(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The text when this node is a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number when this node is an integer scalar.
    pub fn as_int(&self) -> Option<i64> {
        match self.value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    /// The flag when this node is a boolean scalar.
    pub fn as_bool(&self) -> Option<bool> {
        match self.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// A short name of the node's type, for messages ("a string", "a list", …).
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The scalar rendered as text, whatever its resolved type (None for collections).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Null => Some(String::new()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Str(s) => Some(s.clone()),
            Value::Seq(_) | Value::Map(_) => None,
        }
    }
}

/// A collection being read: its items (or entries and a key waiting for its value), where it
/// starts, and its anchor id (0 for none).
enum Frame {
    Seq(Vec<Node>, Pos, usize),
    Map(Vec<(Node, Node)>, Option<Node>, Pos, usize),
}

/// Builds the tree from parser events: open collections on a stack, anchored nodes kept for
/// aliases, and the first complete top-level node as the root.
#[derive(Default)]
struct TreeBuilder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
    documents: usize,
}

/// Parses the first YAML document of `text` into a positioned tree.
///
/// Returns `Ok(None)` for an empty document. A second document in the stream is an error,
/// because a devfile is exactly one document.
pub fn parse(text: &str) -> Result<Option<Node>, SyntaxError> {
    let mut tree = TreeBuilder::default();
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| SyntaxError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_owned(),
        })?;
        if let Some((node, anchor)) = tree.event(event, span)? {
            tree.attach(node, anchor);
        }
    }
    Ok(tree
        .root
        .filter(|n| !(n.value == Value::Null && n.pos.start == n.pos.end)))
}

impl TreeBuilder {
    /// Reads one event; returns the node it completes, with its anchor id.
    fn event(
        &mut self,
        event: Event<'_>,
        span: Span,
    ) -> Result<Option<(Node, usize)>, SyntaxError> {
        let done = match event {
            Event::DocumentStart(_) => {
                self.document_start(span)?;
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                let value = resolve(&text, style, tag.as_deref().map(|t| t.suffix.as_str()));
                let node = Node {
                    value,
                    pos: span.into(),
                    style: Some(style),
                };
                Some((node, anchor))
            }
            Event::Alias(id) => Some((self.alias(id, span), 0)),
            Event::SequenceStart(anchor, _) => {
                self.stack.push(Frame::Seq(Vec::new(), span.into(), anchor));
                None
            }
            Event::MappingStart(anchor, _) => {
                self.stack
                    .push(Frame::Map(Vec::new(), None, span.into(), anchor));
                None
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(span),
            _ => None,
        };
        Ok(done)
    }

    /// Counts documents: a devfile is exactly one.
    fn document_start(&mut self, span: Span) -> Result<(), SyntaxError> {
        self.documents += 1;
        if self.documents > 1 {
            return Err(SyntaxError {
                line: span.start.line(),
                column: span.start.col() + 1,
                message:
                    "a devfile must be a single YAML document (found a second \"---\" document)"
                        .into(),
            });
        }
        Ok(())
    }

    /// A copy of the anchored node `id`, positioned where the alias stands.
    fn alias(&self, id: usize, span: Span) -> Node {
        let mut node = self.anchors.get(&id).cloned().unwrap_or(Node {
            value: Value::Null,
            pos: span.into(),
            style: None,
        });
        node.pos = span.into();
        node
    }

    /// Closes the innermost collection; returns it as a node, extended to the end event.
    fn close(&mut self, span: Span) -> Option<(Node, usize)> {
        let (value, mut pos, anchor) = match self.stack.pop()? {
            Frame::Seq(items, pos, anchor) => (Value::Seq(items), pos, anchor),
            Frame::Map(entries, _, pos, anchor) => (Value::Map(entries), pos, anchor),
        };
        pos.end = span.end.index().max(pos.end);
        let node = Node {
            value,
            pos,
            style: None,
        };
        Some((node, anchor))
    }

    /// Puts a complete node where it belongs: into the open collection (as an item, a key or a
    /// value), or as the root; an anchored node is also kept for later aliases.
    fn attach(&mut self, node: Node, anchor: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            Some(Frame::Seq(items, pos, _)) => {
                pos.end = pos.end.max(node.pos.end);
                items.push(node);
            }
            Some(Frame::Map(entries, pending, pos, _)) => {
                pos.end = pos.end.max(node.pos.end);
                match pending.take() {
                    Some(key) => entries.push((key, node)),
                    None => *pending = Some(node),
                }
            }
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
        }
    }
}

fn resolve(text: &str, style: ScalarStyle, tag: Option<&str>) -> Value {
    if style != ScalarStyle::Plain || tag == Some("str") {
        return Value::Str(text.to_owned());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Value::Int(i);
    }
    if let Some(hex) = text.strip_prefix("0x")
        && let Ok(i) = i64::from_str_radix(hex, 16)
    {
        return Value::Int(i);
    }
    if let Some(oct) = text.strip_prefix("0o")
        && let Ok(i) = i64::from_str_radix(oct, 8)
    {
        return Value::Int(i);
    }
    let looks_numeric = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && text.chars().any(|c| c.is_ascii_digit());
    if looks_numeric && let Ok(f) = text.parse::<f64>() {
        return Value::Float(f);
    }
    match text {
        ".inf" | ".Inf" | "+.inf" => Value::Float(f64::INFINITY),
        "-.inf" | "-.Inf" => Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" => Value::Float(f64::NAN),
        _ => Value::Str(text.to_owned()),
    }
}

/// Converts a character offset (what the parser reports) to a byte offset into `text`.
pub fn char_to_byte(text: &str, char_index: usize) -> usize {
    text.char_indices()
        .nth(char_index)
        .map(|(b, _)| b)
        .unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_types() {
        let text = "a: 1\nb:\n  - \"x\"\n  - true\nc: ~\n";
        let root = parse(text).unwrap().unwrap();
        assert_eq!(root.get("a").unwrap().as_int(), Some(1));
        let b = root.get("b").unwrap();
        assert_eq!(b.pos.line, 3);
        assert_eq!(b.items().unwrap()[0].as_str(), Some("x"));
        assert_eq!(b.items().unwrap()[1].as_bool(), Some(true));
        assert_eq!(root.get("c").unwrap().value, Value::Null);
        assert_eq!(root.get("a").unwrap().pos.line, 1);
    }

    #[test]
    fn quoted_numbers_stay_strings() {
        let root = parse("v: \"8002\"\nw: '1'\n").unwrap().unwrap();
        assert_eq!(root.get("v").unwrap().as_str(), Some("8002"));
        assert_eq!(root.get("w").unwrap().as_str(), Some("1"));
    }

    #[test]
    fn syntax_error_has_line() {
        let err = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(err.line >= 1, "{err}");
    }

    #[test]
    fn second_document_is_rejected() {
        assert!(parse("a: 1\n---\nb: 2\n").is_err());
    }

    #[test]
    fn empty_is_none() {
        assert!(parse("").unwrap().is_none());
        assert!(parse("# only a comment\n").unwrap().is_none());
    }
}
