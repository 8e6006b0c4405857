//! Words for JSON values in error messages, the same in every door ("data: must be a JSON
//! object, got an array").

use serde_json::Value;

/// How a JSON value's type reads in an error message ("a string", "an array", …).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn each_type_has_its_word() {
        let words: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1),
            json!("s"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(super::kind)
        .collect();
        assert_eq!(
            words,
            [
                "null",
                "a boolean",
                "a number",
                "a string",
                "an array",
                "an object"
            ]
        );
    }
}
