//! Typed configurable fields, shared by `additionalFields` of enrollments and by the fields
//! of missing-information requests: the field types and how a value is checked against one.

use serde_json::Value;

/// The data types a configured field can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Text up to `length` characters.
    String,
    /// Long text up to `length` characters.
    Textarea,
    /// `yyyy-mm-dd`, a real calendar date.
    Date,
    /// RFC 3339 date and time, for example `2026-01-15T10:30:00Z`.
    Datetime,
    /// `true` or `false`.
    Boolean,
    /// Whole number with at most `length` digits.
    Integer,
    /// Decimal number: at most `length` digits before the point and `scale` after it.
    Double,
    /// Like `Double`.
    Currency,
    /// Like `Double`.
    Percent,
    /// An e-mail address.
    Email,
    /// A phone number: digits, spaces and `+ - ( ) .`.
    Phone,
    /// One of the field's configured values.
    Picklist,
}

impl FieldType {
    /// Every type, in documentation order.
    pub const ALL: [FieldType; 12] = [
        FieldType::String,
        FieldType::Textarea,
        FieldType::Date,
        FieldType::Datetime,
        FieldType::Boolean,
        FieldType::Integer,
        FieldType::Double,
        FieldType::Currency,
        FieldType::Percent,
        FieldType::Email,
        FieldType::Phone,
        FieldType::Picklist,
    ];

    /// The wire name (upper case).
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::String => "STRING",
            FieldType::Textarea => "TEXTAREA",
            FieldType::Date => "DATE",
            FieldType::Datetime => "DATETIME",
            FieldType::Boolean => "BOOLEAN",
            FieldType::Integer => "INTEGER",
            FieldType::Double => "DOUBLE",
            FieldType::Currency => "CURRENCY",
            FieldType::Percent => "PERCENT",
            FieldType::Email => "EMAIL",
            FieldType::Phone => "PHONE",
            FieldType::Picklist => "PICKLIST",
        }
    }

    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<FieldType> {
        FieldType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    fn is_decimal(self) -> bool {
        matches!(
            self,
            FieldType::Double | FieldType::Currency | FieldType::Percent
        )
    }
}

/// A configured field: type, limits, and picklist values.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDef {
    /// The data type.
    pub ty: FieldType,
    /// Maximum length (characters for text, digits before the point for numbers).
    pub length: Option<i64>,
    /// Maximum digits after the decimal point.
    pub scale: Option<i64>,
    /// Allowed values of a picklist.
    pub picklist: Vec<String>,
}

/// Whether `s` is `yyyy-mm-dd` and a real calendar date of the years 0001–9999.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let Ok(month) = time::Month::try_from(u8::try_from(m).unwrap_or(0)) else {
        return false;
    };
    let (Ok(year), Ok(day)) = (i32::try_from(y), u8::try_from(d)) else {
        return false;
    };
    // Years 0001–9999, as `format: date` (RFC 3339 / ISO 8601 as validators read it).
    if year < 1 {
        return false;
    }
    time::Date::from_calendar_date(year, month, day).is_ok()
}

/// Today's date in UTC as `yyyy-mm-dd`.
pub fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// A deliberately simple e-mail check: one `@`, a non-empty local part, a dotted domain,
/// no spaces.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && !s.chars().any(char::is_whitespace)
        && domain.split('.').count() >= 2
        && domain.split('.').all(|p| !p.is_empty())
}

/// The most characters of a text type without a configured `length`.
pub fn default_max_length(ty: FieldType) -> Option<i64> {
    match ty {
        FieldType::String => Some(255),
        FieldType::Textarea => Some(32_768),
        FieldType::Email => Some(80),
        FieldType::Phone => Some(40),
        _ => None,
    }
}

fn char_len(s: &str) -> i64 {
    i64::try_from(s.chars().count()).unwrap_or(i64::MAX)
}

fn check_length(def: &FieldDef, s: &str) -> Result<(), String> {
    let Some(max) = def.length.or_else(|| default_max_length(def.ty)) else {
        return Ok(());
    };
    if char_len(s) > max {
        return Err(format!("longer than {max} characters"));
    }
    Ok(())
}

/// Checks a decimal written as text against `length` (digits before the point) and `scale`.
fn check_number(def: &FieldDef, s: &str) -> Result<(), String> {
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (int, frac) = match unsigned.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (unsigned, None),
    };
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit());
    if def.ty == FieldType::Integer {
        if frac.is_some() || !all_digits(int) {
            return Err("not a whole number".into());
        }
    } else if !all_digits(int) || frac.is_some_and(|f| !all_digits(f)) {
        return Err("not a decimal number".into());
    }
    let int_digits = char_len(int.trim_start_matches('0').max("0"));
    if let Some(max) = def.length
        && int_digits > max
    {
        return Err(format!("more than {max} digits"));
    }
    let scale = if def.ty == FieldType::Integer {
        Some(0)
    } else {
        def.scale
    };
    if let (Some(max), Some(f)) = (scale, frac)
        && char_len(f) > max
    {
        return Err(format!("more than {max} decimal places"));
    }
    Ok(())
}

/// A stored value as text, the way a missing-information POST gives it: a string as is, a
/// number or boolean written out (what `check_text` turned it into, read back).
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Checks a value given as text (missing-information POST) and returns the JSON value to
/// store: a number for INTEGER, a boolean for BOOLEAN, the text otherwise.
pub fn check_text(def: &FieldDef, s: &str) -> Result<Value, String> {
    if s.contains('\0') {
        return Err("contains a NUL character".into());
    }
    match def.ty {
        FieldType::String => check_length(def, s).map(|()| Value::String(s.to_owned())),
        FieldType::Textarea => check_length(def, s).map(|()| Value::String(s.to_owned())),
        FieldType::Date => {
            if is_date(s) {
                Ok(Value::String(s.to_owned()))
            } else {
                Err("not a yyyy-mm-dd calendar date".into())
            }
        }
        FieldType::Datetime => {
            time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .map(|_| Value::String(s.to_owned()))
                .map_err(|_| "not an RFC 3339 date and time".to_owned())
        }
        FieldType::Boolean => match s {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err("not true or false".into()),
        },
        FieldType::Integer => {
            check_number(def, s)?;
            s.parse::<i64>()
                .map(Value::from)
                .map_err(|_| "whole number out of range".to_owned())
        }
        t if t.is_decimal() => check_number(def, s).map(|()| Value::String(s.to_owned())),
        FieldType::Email => {
            check_length(def, s)?;
            if is_email(s) {
                Ok(Value::String(s.to_owned()))
            } else {
                Err("not an e-mail address".into())
            }
        }
        FieldType::Phone => {
            check_length(def, s)?;
            let ok = s.chars().any(|c| c.is_ascii_digit())
                && s.chars()
                    .all(|c| c.is_ascii_digit() || " +-().".contains(c));
            if ok {
                Ok(Value::String(s.to_owned()))
            } else {
                Err("not a phone number".into())
            }
        }
        FieldType::Picklist => {
            if def.picklist.iter().any(|v| v == s) {
                Ok(Value::String(s.to_owned()))
            } else {
                Err(format!("not one of {}", def.picklist.join(", ")))
            }
        }
        _ => Err("unsupported field type".into()),
    }
}

/// Checks a JSON value (enrollment `additionalFields`): numbers for INTEGER and decimal
/// types, booleans for BOOLEAN, strings otherwise; `null` clears the field.
pub fn check_json(def: &FieldDef, v: &Value) -> Result<Value, String> {
    match (def.ty, v) {
        (_, Value::Null) => Ok(Value::Null),
        (FieldType::Boolean, Value::Bool(_)) => Ok(v.clone()),
        (FieldType::Boolean, _) => Err("must be a boolean".into()),
        (FieldType::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => {
            check_number(def, &n.to_string()).map(|()| v.clone())
        }
        (FieldType::Integer, _) => Err("must be an integer".into()),
        (t, Value::Number(n)) if t.is_decimal() => {
            check_number(def, &n.to_string()).map(|()| v.clone())
        }
        (t, _) if t.is_decimal() => Err("must be a number".into()),
        (_, Value::String(s)) => check_text(def, s).map(|_| v.clone()),
        _ => Err("must be a string".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(ty: FieldType, length: Option<i64>, scale: Option<i64>) -> FieldDef {
        FieldDef {
            ty,
            length,
            scale,
            picklist: vec!["A".into(), "B".into()],
        }
    }

    #[test]
    fn dates_must_be_real_calendar_dates() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2024-13-01"));
        assert!(!is_date("2024-1-01"));
        assert!(!is_date("24-01-011"));
        assert!(!is_date("2024-01-0a"));
        assert!(!is_date("0000-01-01"));
        assert!(is_date("0001-01-01"));
    }

    #[test]
    fn numbers_respect_length_and_scale() {
        let d = def(FieldType::Double, Some(3), Some(1));
        assert!(check_text(&d, "123.4").is_ok());
        assert!(check_text(&d, "1234").is_err());
        assert!(check_text(&d, "1.23").is_err());
        assert!(check_text(&d, "abc").is_err());
        let i = def(FieldType::Integer, Some(2), None);
        assert_eq!(check_text(&i, "42"), Ok(Value::from(42)));
        assert!(check_text(&i, "4.2").is_err());
        assert!(check_text(&i, "420").is_err());
    }

    #[test]
    fn text_types_check_their_format() {
        assert!(check_text(&def(FieldType::Email, None, None), "a@b.co").is_ok());
        assert!(check_text(&def(FieldType::Email, None, None), "a@b").is_err());
        assert!(check_text(&def(FieldType::Phone, None, None), "+1 (555) 010").is_ok());
        assert!(check_text(&def(FieldType::Phone, None, None), "call me").is_err());
        assert!(check_text(&def(FieldType::Picklist, None, None), "B").is_ok());
        assert!(check_text(&def(FieldType::Picklist, None, None), "C").is_err());
        assert!(check_text(&def(FieldType::Boolean, None, None), "yes").is_err());
        assert!(
            check_text(
                &def(FieldType::Datetime, None, None),
                "2026-01-15T10:30:00Z"
            )
            .is_ok()
        );
        assert!(check_text(&def(FieldType::String, Some(3), None), "abcd").is_err());
        assert!(check_text(&def(FieldType::String, Some(3), None), "äöü").is_ok());
    }

    #[test]
    fn json_values_must_have_the_field_type() {
        assert!(check_json(&def(FieldType::Integer, Some(3), None), &Value::from(12)).is_ok());
        assert!(check_json(&def(FieldType::Integer, Some(3), None), &Value::from("12")).is_err());
        assert!(check_json(&def(FieldType::Boolean, None, None), &Value::Bool(true)).is_ok());
        assert!(check_json(&def(FieldType::Date, None, None), &Value::from(3)).is_err());
    }
}
