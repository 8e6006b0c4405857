//! A secret's `data` and `metadata`: JSON objects of key–value pairs (the spec's
//! "JSON-encoded string of key-value pairs"). Keys become environment variable names at
//! deploy time, so values are kept flat: strings, numbers or booleans. Limits:
//!
//! - `data`: 1 to [`MAX_KEYS`] keys, at most [`DATA_MAX_BYTES`] as compact JSON;
//! - `metadata`: 0 to [`MAX_KEYS`] keys, at most [`METADATA_MAX_BYTES`];
//! - keys 1 to [`KEY_MAX`] characters without control characters.

use serde_json::{Map, Value};
use slipway_server::json::kind;

/// Largest `data`, as compact JSON.
pub const DATA_MAX_BYTES: usize = 32 * 1024;
/// Largest `metadata`, as compact JSON.
pub const METADATA_MAX_BYTES: usize = 4 * 1024;
/// Most keys in one object.
pub const MAX_KEYS: usize = 100;
/// Longest key.
pub const KEY_MAX: usize = 128;

/// Which object is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// `data`: at least one key.
    Data,
    /// `metadata`: may be empty.
    Metadata,
}

/// Checks `value` as `part`; the error is the rule it breaks.
pub fn check(part: Part, value: &Value) -> Result<Map<String, Value>, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "must be a JSON object of key-value pairs (for example {{\"password\": \"…\"}}), not {}",
            kind(value)
        ));
    };
    if part == Part::Data && map.is_empty() {
        return Err("must hold at least one key".into());
    }
    if map.len() > MAX_KEYS {
        return Err(format!("must hold at most {MAX_KEYS} keys"));
    }
    for (key, v) in map {
        if key.is_empty() {
            return Err("keys must not be empty".into());
        }
        if key.chars().count() > KEY_MAX {
            return Err(format!("keys must be at most {KEY_MAX} characters"));
        }
        if key.chars().any(char::is_control) {
            return Err("keys must not contain control characters".into());
        }
        if !matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
            return Err(format!(
                "the value of key {key:?} must be a string, number or boolean, not {}",
                kind(v)
            ));
        }
    }
    let max = match part {
        Part::Data => DATA_MAX_BYTES,
        Part::Metadata => METADATA_MAX_BYTES,
    };
    let size = serde_json::to_vec(map)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > max {
        return Err(format!(
            "must be at most {} KiB as JSON ({} bytes given)",
            max / 1024,
            size
        ));
    }
    Ok(map.clone())
}

/// A value as an environment variable's text (strings as is, others as JSON).
pub fn env_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_objects_pass_and_everything_else_names_the_rule() {
        assert!(check(Part::Data, &json!({"a": "b", "n": 1, "t": true})).is_ok());
        assert!(check(Part::Metadata, &json!({})).is_ok());
        let cases = [
            (Part::Data, json!({}), "at least one key"),
            (Part::Data, json!("x"), "not a string"),
            (Part::Data, json!([1]), "not an array"),
            (Part::Data, json!(null), "not null"),
            (Part::Data, json!({"a": {"b": 1}}), "not an object"),
            (Part::Data, json!({"a": null}), "not null"),
            (Part::Data, json!({"": "x"}), "empty"),
            (Part::Metadata, json!({"a\u{1}": "x"}), "control"),
            (
                Part::Data,
                json!({"a": "x".repeat(DATA_MAX_BYTES)}),
                "at most 32 KiB",
            ),
            (
                Part::Metadata,
                json!({"a": "x".repeat(METADATA_MAX_BYTES)}),
                "at most 4 KiB",
            ),
        ];
        for (part, value, rule) in cases {
            let err = check(part, &value).expect_err(&value.to_string());
            assert!(err.contains(rule), "{value}: {err}");
        }
        let many: Map<String, Value> = (0..=MAX_KEYS)
            .map(|i| (format!("k{i}"), json!("v")))
            .collect();
        assert!(
            check(Part::Data, &Value::Object(many))
                .unwrap_err()
                .contains("at most 100 keys")
        );
    }
}
