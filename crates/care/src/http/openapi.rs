//! `{base}/openapi.json`: the OpenAPI 3.0 document. Its paths, responses and the
//! missing-information schemas are hand-written (`src/openapi.json`); the schemas of the
//! enrollment request are generated here from the validator's own key tables
//! (`enrollment::validate::keys`), lengths and value lists, so the document says exactly
//! what the validator enforces. The namespace segment, the base path and the configured
//! value lists of this deployment are filled in.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{Map, Value, json};

use super::AppState;
use crate::enrollment::model::{ContactKind, PartyKind};
use crate::enrollment::validate::{CARDHOLDER_MAX, Key, REFILLS_MAX, Settings, Shape, Ty, keys};

const DOCUMENT: &str = include_str!("../openapi.json");

/// Rust's white space (`char::is_whitespace`, what `str::trim` removes) as ranges.
const WHITESPACE: &[(char, char)] = &[
    ('\t', '\r'),
    (' ', ' '),
    ('\u{85}', '\u{85}'),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
];

/// `yyyy-mm-dd` with a year 0001–9999, a month 01–12 and a day 01–31. Days past the end of
/// their month (`2023-02-29`, `2024-04-31`) match but are refused: a pattern cannot say
/// that; `format: date` does.
pub const DATE_PATTERN: &str = "^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

fn escape(c: char) -> String {
    if c.is_ascii_graphic() && !"^$\\.*+?()[]{}|/-".contains(c) || c == ' ' {
        c.to_string()
    } else if c.is_ascii() {
        if c.is_ascii_graphic() {
            format!("\\{c}")
        } else {
            format!("\\u{:04x}", c as u32)
        }
    } else {
        let mut buf = [0u16; 2];
        c.encode_utf16(&mut buf)
            .iter()
            .map(|u| format!("\\u{u:04x}"))
            .collect()
    }
}

/// The regex class body of Rust white space.
fn whitespace_class() -> String {
    WHITESPACE
        .iter()
        .map(|&(lo, hi)| {
            if lo == hi {
                escape(lo)
            } else {
                format!("{}-{}", escape(lo), escape(hi))
            }
        })
        .collect()
}

/// No NUL character anywhere.
fn no_nul_pattern() -> String {
    "^[^\\u0000]*$".to_owned()
}

/// No NUL character and not blank (at least one character that is not white space).
fn not_blank_pattern() -> String {
    format!("^[^\\u0000]*[^\\u0000{}][^\\u0000]*$", whitespace_class())
}

/// One of `values`, ASCII letters in any case.
fn any_case_pattern(values: &[String]) -> String {
    let alternatives: Vec<String> = values
        .iter()
        .map(|v| {
            v.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
                    } else {
                        escape(c)
                    }
                })
                .collect()
        })
        .collect();
    format!("^({})$", alternatives.join("|"))
}

/// What `fields::is_email` accepts: no white space or NUL; one `@` after a non-empty local
/// part; a domain of at least two non-empty dot-separated labels.
fn email_pattern() -> String {
    let not = format!("[^@.\\u0000{}]", whitespace_class());
    let local = format!("[^@\\u0000{}]", whitespace_class());
    format!("^{local}+@{not}+(\\.{not}+)+$")
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn party_schema_name(kind: PartyKind) -> &'static str {
    match kind {
        PartyKind::Physician => "Physician",
        PartyKind::Pharmacy | PartyKind::Organization => "Organization",
        _ => "Person",
    }
}

fn contact_schema_name(kind: ContactKind) -> &'static str {
    match kind {
        ContactKind::Address => "Address",
        ContactKind::Phone => "Phone",
        ContactKind::Email => "Email",
        ContactKind::Fax => "Fax",
    }
}

/// The schema an object-valued or array-valued key refers to.
fn target(name: &str) -> Option<&'static str> {
    if let Some(kind) = PartyKind::ALL.into_iter().find(|k| k.key() == name) {
        return Some(party_schema_name(kind));
    }
    if let Some(kind) = ContactKind::ALL.into_iter().find(|k| k.array_key() == name) {
        return Some(contact_schema_name(kind));
    }
    Some(match name {
        "additionalFields" => "AdditionalFields",
        "consents" => "Consent",
        "insurances" => "Insurance",
        "prescriptions" => "Prescription",
        "additionalObjects" => "AdditionalObject",
        "records" => "AdditionalRecord",
        _ => return None,
    })
}

/// Rules the schema cannot express, said in the description of the keys they concern.
fn description(shape: Shape, name: &str) -> Option<&'static str> {
    Some(match (shape, name) {
        (Shape::Request, "vendorName") => "Must be the API name of an existing eRX vendor.",
        (Shape::Request, "programName") => "Must be the API name of an existing program.",
        (Shape::Consent, "name") => {
            "Must contain the external ID of exactly one existing data use purpose."
        }
        (Shape::Prescription, "drugNdc") => {
            "Must contain the ID of exactly one product of the request's program."
        }
        (Shape::AdditionalObject, "objectName") => {
            "Must name an object configured with additional: true on the eRX object configuration."
        }
        (Shape::AdditionalRecord, "recordType") => {
            "Must be one of the record types configured for the object."
        }
        (_, "id") => {
            "External ID; unique per kind of record within one request (DUPLICATE_ID otherwise)."
        }
        _ => return None,
    })
}

fn key_schema(shape: Shape, k: &Key, settings: &Settings) -> Value {
    let mut s = match k.ty {
        Ty::Str(max) => {
            let mut s = json!({ "type": "string" });
            if max != usize::MAX {
                s["maxLength"] = json!(max);
            }
            let (pattern, non_blank) = match (shape, k.name) {
                (Shape::Party(_), "gender") => (any_case_pattern(&settings.genders), true),
                (Shape::Contact(_), "type") => (any_case_pattern(&settings.contact_types), true),
                (Shape::Contact(ContactKind::Email), "emailAddress") => (email_pattern(), true),
                _ if k.required => (not_blank_pattern(), true),
                _ => (no_nul_pattern(), false),
            };
            s["pattern"] = json!(pattern);
            if non_blank {
                s["minLength"] = json!(1);
            }
            match (shape, k.name) {
                (Shape::Party(_), "gender") => {
                    s["description"] = json!(format!(
                        "One of {} (any case; stored as written here).",
                        settings.genders.join(", ")
                    ));
                }
                (Shape::Contact(_), "type") => {
                    s["description"] = json!(format!(
                        "One of {} (any case; stored as written here).",
                        settings.contact_types.join(", ")
                    ));
                }
                _ => {}
            }
            s
        }
        Ty::Date => json!({
            "type": "string",
            "format": "date",
            "maxLength": 10,
            "pattern": DATE_PATTERN,
            "description": "yyyy-mm-dd, a calendar date of the years 0001-9999 (format: date; the pattern alone also matches days past the end of their month, which are refused)."
        }),
        Ty::Bool => json!({ "type": "boolean" }),
        Ty::Refills => json!({ "type": "integer", "minimum": 0, "maximum": REFILLS_MAX }),
        Ty::Array => json!({
            "type": "array",
            "items": target(k.name).map_or(json!({}), reference),
        }),
        Ty::Object => match target(k.name) {
            Some(name) if k.required => reference(name),
            Some(name) => json!({ "allOf": [reference(name)] }),
            None => json!({ "type": "object" }),
        },
    };
    if let Some(d) = description(shape, k.name) {
        s["description"] = json!(d);
    }
    if !k.required {
        // The validator treats null like an absent key.
        s["nullable"] = json!(true);
    }
    s
}

fn object_schema(shape: Shape, settings: &Settings) -> Value {
    let keys = keys(shape);
    let mut properties = Map::new();
    for k in &keys {
        properties.insert(k.name.to_owned(), key_schema(shape, k, settings));
    }
    let required: Vec<&str> = keys.iter().filter(|k| k.required).map(|k| k.name).collect();
    let mut s = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
    });
    if !required.is_empty() {
        s["required"] = json!(required);
    }
    s
}

/// The generated component schemas of the enrollment request, by name.
pub fn enrollment_schemas(settings: &Settings) -> Map<String, Value> {
    let mut out = Map::new();
    for kind in PartyKind::ALL {
        out.insert(
            party_schema_name(kind).to_owned(),
            object_schema(Shape::Party(kind), settings),
        );
    }
    for kind in ContactKind::ALL {
        out.insert(
            contact_schema_name(kind).to_owned(),
            object_schema(Shape::Contact(kind), settings),
        );
    }
    for (name, shape) in [
        ("Consent", Shape::Consent),
        ("Insurance", Shape::Insurance),
        ("Prescription", Shape::Prescription),
        ("AdditionalObject", Shape::AdditionalObject),
        ("AdditionalRecord", Shape::AdditionalRecord),
        ("EnrollmentRequest", Shape::Request),
    ] {
        out.insert(name.to_owned(), object_schema(shape, settings));
    }
    out["Insurance"]["description"] = json!(format!(
        "policyHolderFirstName and policyHolderLastName hold at most {} characters together (a cardholder name of at most {CARDHOLDER_MAX}); without an id the insurance is keyed by its position.",
        CARDHOLDER_MAX - 1
    ));
    out["EnrollmentRequest"]["description"] = json!(
        "Rules beyond this schema (they depend on stored data or on several keys): vendorName, programName, consent names, drugNdc, objectName and recordType name existing records; additionalFields keys must be configured for their object, with values of the configured type; external IDs are unique per kind within one request; the cardholder-name rule of Insurance. Breaking one is a 400 like any other rule."
    );
    out
}

/// The document for a deployment: paths written with the `care` namespace are moved to
/// `namespace`, `servers` points at the base path, and the enrollment schemas follow the
/// configured value lists.
pub fn render(base_path: &str, namespace: &str, settings: &Settings) -> String {
    let Ok(mut doc) = serde_json::from_str::<Value>(DOCUMENT) else {
        return DOCUMENT.to_owned();
    };
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        let old = std::mem::take(paths);
        for (path, item) in old {
            let path = match path.strip_prefix("/care/") {
                Some(rest) => format!("/{namespace}/{rest}"),
                None => path,
            };
            paths.insert(path, item);
        }
    }
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        schemas.extend(enrollment_schemas(settings));
    }
    let url = if base_path.is_empty() { "/" } else { base_path };
    doc["servers"] = json!([{ "url": url }]);
    doc.to_string()
}

/// Serves the rendered document.
pub async fn serve(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.inner.openapi.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::{FieldType, is_date};

    fn settings() -> Settings {
        Settings::default()
    }

    fn doc() -> Value {
        serde_json::from_str(&render("", "care", &settings())).unwrap()
    }

    #[test]
    fn document_is_json_and_follows_namespace_and_base() {
        let doc: Value =
            serde_json::from_str(&render("/services/apexrest", "mvn", &settings())).unwrap();
        assert_eq!(doc["servers"][0]["url"], "/services/apexrest");
        assert!(doc["paths"].get("/mvn/eRxApi").is_some());
        assert!(doc["paths"].get("/care/eRxApi").is_none());
    }

    #[test]
    fn every_reference_resolves() {
        fn walk(v: &Value, doc: &Value) {
            match v {
                Value::Object(m) => {
                    if let Some(Value::String(r)) = m.get("$ref") {
                        let ptr = r.trim_start_matches('#');
                        assert!(doc.pointer(ptr).is_some(), "{r} does not resolve");
                    }
                    m.values().for_each(|x| walk(x, doc));
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, doc)),
                _ => {}
            }
        }
        let d = doc();
        walk(&d, &d);
    }

    /// The schemas shared by several party kinds fit each of them.
    #[test]
    fn shared_party_schemas_fit_every_kind() {
        let s = settings();
        for kind in PartyKind::ALL {
            assert_eq!(
                object_schema(Shape::Party(kind), &s),
                enrollment_schemas(&s)[party_schema_name(kind)],
                "{kind:?}"
            );
        }
    }

    /// Every key of the validator's tables is in the document with its length, type and
    /// required flag; nothing else is.
    #[test]
    fn enrollment_schemas_say_what_the_validator_checks() {
        let d = doc();
        let schemas = &d["components"]["schemas"];
        let check = |name: &str, shape: Shape| {
            let schema = &schemas[name];
            let props = schema["properties"].as_object().unwrap();
            let keys = keys(shape);
            let mut names: Vec<&str> = keys.iter().map(|k| k.name).collect();
            names.sort_unstable();
            let documented: Vec<&str> = props.keys().map(String::as_str).collect();
            assert_eq!(documented, names, "{name}");
            assert_eq!(schema["additionalProperties"], false, "{name}");
            for k in &keys {
                let p = &props[k.name];
                let required = schema["required"]
                    .as_array()
                    .is_some_and(|r| r.contains(&json!(k.name)));
                assert_eq!(required, k.required, "{name}.{}", k.name);
                assert_eq!(p["nullable"] == true, !k.required, "{name}.{}", k.name);
                match k.ty {
                    Ty::Str(max) => {
                        assert_eq!(p["type"], "string");
                        if max == usize::MAX {
                            assert!(p.get("maxLength").is_none());
                        } else {
                            assert_eq!(p["maxLength"], max, "{name}.{}", k.name);
                        }
                        if k.required {
                            assert_eq!(p["minLength"], 1, "{name}.{}", k.name);
                        }
                    }
                    Ty::Date => {
                        assert_eq!(p["format"], "date");
                        assert_eq!(p["pattern"], DATE_PATTERN);
                    }
                    Ty::Bool => assert_eq!(p["type"], "boolean"),
                    Ty::Refills => assert_eq!(p["maximum"], REFILLS_MAX),
                    Ty::Array => assert_eq!(p["type"], "array"),
                    Ty::Object => assert!(p.get("$ref").is_some() || p.get("allOf").is_some()),
                }
            }
        };
        check("Physician", Shape::Party(PartyKind::Physician));
        check("Person", Shape::Party(PartyKind::Patient));
        check("Organization", Shape::Party(PartyKind::Pharmacy));
        for kind in ContactKind::ALL {
            check(contact_schema_name(kind), Shape::Contact(kind));
        }
        check("Consent", Shape::Consent);
        check("Insurance", Shape::Insurance);
        check("Prescription", Shape::Prescription);
        check("AdditionalObject", Shape::AdditionalObject);
        check("AdditionalRecord", Shape::AdditionalRecord);
        check("EnrollmentRequest", Shape::Request);
        assert_eq!(
            schemas["Person"]["properties"]["gender"]["pattern"],
            "^([Ff]|[Mm]|[Oo]|[Uu])$"
        );
    }

    #[test]
    fn whitespace_ranges_are_rusts_white_space() {
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            let listed = WHITESPACE.iter().any(|&(lo, hi)| (lo..=hi).contains(&c));
            assert_eq!(listed, c.is_whitespace(), "{:x}", c as u32);
        }
    }

    fn regex(pattern: &str) -> regex::Regex {
        regex::Regex::new(pattern).unwrap()
    }

    /// The patterns accept exactly what the validator accepts (dates: up to month lengths).
    #[test]
    fn patterns_match_the_validators_checks() {
        let date = regex(DATE_PATTERN);
        for y in [
            "0000", "0001", "0010", "0100", "1000", "2024", "2023", "9999",
        ] {
            for m in 0..=13 {
                for d in 0..=32 {
                    let s = format!("{y}-{m:02}-{d:02}");
                    let in_month = d <= 28 || is_date(&format!("{y}-{m:02}-28"));
                    if in_month && (d <= 28 || is_date(&s)) {
                        assert_eq!(date.is_match(&s), is_date(&s), "{s}");
                    } else if !is_date(&s) && date.is_match(&s) {
                        // The known limitation: a day past the end of its month.
                        assert!((29..=31).contains(&d) && (1..=12).contains(&m), "{s}");
                    }
                }
            }
        }
        for s in [
            "2024-1-01",
            "2024-01-1",
            "12024-01-01",
            "2024-01-01 ",
            "２０２４-01-01",
        ] {
            assert!(!date.is_match(s) && !is_date(s), "{s}");
        }

        let not_blank = regex(&not_blank_pattern());
        let no_nul = regex(&no_nul_pattern());
        for s in [
            "a",
            " a ",
            "\u{3000}x",
            "",
            " ",
            "\t\n",
            "\u{2028}\u{3000}",
            "\u{1c}",
            "a\0b",
            "\u{200b}",
        ] {
            assert_eq!(
                not_blank.is_match(s),
                !s.trim().is_empty() && !s.contains('\0'),
                "{s:?}"
            );
            assert_eq!(no_nul.is_match(s), !s.contains('\0'), "{s:?}");
        }

        let email = regex(&email_pattern());
        for s in [
            "a@b.co",
            "ann.lee@example.com",
            "a@b",
            "@b.co",
            "a@@b.co",
            "a@b@c.co",
            "a b@c.co",
            "a@b..co",
            "a@.b.co",
            "a@b.co.",
            "ä@ö.ü",
            "a@b.c\u{a0}",
        ] {
            assert_eq!(email.is_match(s), crate::fields::is_email(s), "{s:?}");
        }

        let s = settings();
        let gender = regex(&any_case_pattern(&s.genders));
        let contact = regex(&any_case_pattern(&s.contact_types));
        for v in [
            "F", "f", "m", "X", "", "FF", "home", "HOME", "Mailing", "pager", "home ",
        ] {
            let canonical = |list: &[String]| list.iter().any(|a| a.eq_ignore_ascii_case(v));
            assert_eq!(gender.is_match(v), canonical(&s.genders), "{v}");
            assert_eq!(contact.is_match(v), canonical(&s.contact_types), "{v}");
        }
    }

    #[test]
    fn requested_field_types_are_the_validators() {
        let d = doc();
        let types: Vec<&str> =
            d["components"]["schemas"]["RequestedField"]["properties"]["type"]["enum"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
        let ours: Vec<&str> = FieldType::ALL.into_iter().map(FieldType::as_str).collect();
        assert_eq!(types, ours);
    }
}
