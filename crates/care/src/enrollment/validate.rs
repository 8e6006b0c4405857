//! Enrollment request validation: every key, type, max length, required flag, format and
//! reference rule of the spec, plus caller permissions. All problems are collected; a body
//! without any becomes a typed [`Enrollment`].

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::model::{
    AdditionalRecord, Consent, Contact, ContactKind, Enrollment, Insurance, Party, PartyKind,
    Prescription, scoped_id,
};
use crate::auth::{Access, Caller, objects};
use crate::config::{DEFAULT_CONTACT_TYPES, DEFAULT_GENDERS, owned};
use crate::fields::{self, FieldDef};
use crate::violation::Violation;

/// The configurable value lists.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Allowed contact `type` values.
    pub contact_types: Vec<String>,
    /// Allowed `gender` values.
    pub genders: Vec<String>,
}

impl Default for Settings {
    /// The documented lists, [`DEFAULT_CONTACT_TYPES`] and [`DEFAULT_GENDERS`]: what a
    /// service started without its own lists (and the demo, the fuzz targets, the desktop's
    /// pure check) accepts.
    fn default() -> Self {
        Self {
            contact_types: owned(DEFAULT_CONTACT_TYPES),
            genders: owned(DEFAULT_GENDERS),
        }
    }
}

/// Configuration of one object on the eRX object configuration.
#[derive(Debug, Clone, Default)]
pub struct ObjectConfig {
    /// Whether it may appear in `additionalObjects`.
    pub additional: bool,
    /// Allowed record types of an additional object.
    pub record_types: Vec<String>,
    /// Configured fields by name.
    pub fields: HashMap<String, FieldDef>,
}

/// The reference data a request is checked against, read in the request's transaction.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Whether `vendorName` names an eRX vendor.
    pub vendor_exists: bool,
    /// Whether `programName` names a program.
    pub program_exists: bool,
    /// Data use purposes: (row id, external ID).
    pub purposes: Vec<(i64, String)>,
    /// Products of the program: (row id, product ID).
    pub products: Vec<(i64, String)>,
    /// Object configuration by object name.
    pub objects: HashMap<String, ObjectConfig>,
}

/// Why a body was refused.
#[derive(Debug)]
pub enum Rejection {
    /// Rule violations (400).
    Invalid(Vec<Violation>),
    /// Missing permissions (403).
    Forbidden(Vec<Violation>),
}

/// Error codes of enrollment validation.
pub mod codes {
    /// The body is not JSON or not an object.
    pub const INVALID_JSON: &str = "INVALID_JSON";
    /// A required key is absent, null or blank.
    pub const REQUIRED_FIELD_MISSING: &str = "REQUIRED_FIELD_MISSING";
    /// A value has the wrong JSON type.
    pub const INVALID_TYPE: &str = "INVALID_TYPE";
    /// A string is longer than its maximum (in characters).
    pub const STRING_TOO_LONG: &str = "STRING_TOO_LONG";
    /// A date is not `yyyy-mm-dd` or not a calendar date.
    pub const INVALID_DATE: &str = "INVALID_DATE";
    /// A value is not in the allowed list or has a bad format.
    pub const INVALID_VALUE: &str = "INVALID_VALUE";
    /// `numberOfRefills` is negative or has more than 5 digits.
    pub const NUMBER_OUT_OF_RANGE: &str = "NUMBER_OUT_OF_RANGE";
    /// A key the spec does not define at that place.
    pub const UNKNOWN_FIELD: &str = "UNKNOWN_FIELD";
    /// A key the spec defines but not for this party or contact kind.
    pub const FIELD_NOT_APPLICABLE: &str = "FIELD_NOT_APPLICABLE";
    /// A reference names no existing record.
    pub const INVALID_REFERENCE: &str = "INVALID_REFERENCE";
    /// A containment reference matches several records.
    pub const AMBIGUOUS_REFERENCE: &str = "AMBIGUOUS_REFERENCE";
    /// Two records of the request have the same external ID.
    pub const DUPLICATE_ID: &str = "DUPLICATE_ID";
    /// The caller lacks create or edit access.
    pub const INSUFFICIENT_ACCESS: &str = "INSUFFICIENT_ACCESS";
}

/// The type of a key as the validator checks it; the OpenAPI document is generated from
/// the same tables (see [`keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string of at most this many characters (`usize::MAX`: no limit); never with NUL
    /// characters; not blank when required.
    Str(usize),
    /// A `yyyy-mm-dd` calendar date.
    Date,
    /// A boolean.
    Bool,
    /// A whole number from 0 to [`REFILLS_MAX`].
    Refills,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// One key of an object of the enrollment request.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// The key.
    pub name: &'static str,
    /// Its type.
    pub ty: Ty,
    /// Whether it must be present, not null and not blank.
    pub required: bool,
}

/// The largest `numberOfRefills` (5 digits).
pub const REFILLS_MAX: i64 = 99_999;

/// The objects of an enrollment request, each with its own keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The request itself.
    Request,
    /// A party of this kind.
    Party(PartyKind),
    /// A contact of this kind.
    Contact(ContactKind),
    /// A consent.
    Consent,
    /// An insurance.
    Insurance,
    /// A prescription.
    Prescription,
    /// An entry of `additionalObjects`.
    AdditionalObject,
    /// A record of an additional object.
    AdditionalRecord,
}

/// The keys an object accepts, in table order: what the validator checks.
pub fn keys(shape: Shape) -> Vec<Key> {
    let table: Vec<Key> = match shape {
        Shape::Request => TOP_KEYS.to_vec(),
        Shape::AdditionalObject => ADDITIONAL_OBJECT_KEYS.to_vec(),
        Shape::AdditionalRecord => ADDITIONAL_RECORD_KEYS.to_vec(),
        Shape::Party(_) => PARTY_KEYS.iter().map(|(k, _)| *k).collect(),
        Shape::Contact(_) => CONTACT_KEYS.iter().map(|(k, _)| *k).collect(),
        Shape::Consent => CONSENT_KEYS.iter().map(|(k, _)| *k).collect(),
        Shape::Insurance => INSURANCE_KEYS.iter().map(|(k, _)| *k).collect(),
        Shape::Prescription => PRESCRIPTION_KEYS.iter().map(|(k, _)| *k).collect(),
    };
    table
        .into_iter()
        .filter(|k| match shape {
            Shape::Party(kind) => party_applies(kind, k.name),
            Shape::Contact(kind) => contact_applies(kind, k.name),
            _ => true,
        })
        .collect()
}

const fn key(name: &'static str, ty: Ty, required: bool) -> Key {
    Key { name, ty, required }
}

const TOP_KEYS: &[Key] = &[
    key("vendorName", Ty::Str(usize::MAX), true),
    key("programName", Ty::Str(usize::MAX), true),
    key("enrollmentDate", Ty::Date, true),
    key("patient", Ty::Object, true),
    key("physician", Ty::Object, false),
    key("staff", Ty::Object, false),
    key("caregiver", Ty::Object, false),
    key("pharmacy", Ty::Object, false),
    key("organization", Ty::Object, false),
    key("consents", Ty::Array, false),
    key("insurances", Ty::Array, false),
    key("prescriptions", Ty::Array, false),
    key("additionalObjects", Ty::Array, false),
];

/// Every party key the spec defines, with the column it maps to.
const PARTY_KEYS: &[(Key, Option<&str>)] = &[
    (key("id", Ty::Str(50), true), None),
    (key("name", Ty::Str(50), false), Some("name")),
    (key("firstName", Ty::Str(50), false), Some("first_name")),
    (key("middleName", Ty::Str(50), false), Some("middle_name")),
    (key("lastName", Ty::Str(50), true), Some("last_name")),
    (key("gender", Ty::Str(1), false), Some("gender")),
    (key("dateOfBirth", Ty::Date, false), Some("birthdate")),
    (key("specialty", Ty::Str(50), false), Some("specialty")),
    (key("suffix", Ty::Str(5), false), Some("suffix")),
    (key("npi", Ty::Str(50), false), Some("npi")),
    (key("addresses", Ty::Array, false), None),
    (key("phones", Ty::Array, false), None),
    (key("emails", Ty::Array, false), None),
    (key("faxes", Ty::Array, false), None),
    (key("additionalFields", Ty::Object, false), None),
];

fn party_applies(kind: PartyKind, key: &str) -> bool {
    match key {
        "name" => !kind.is_person(),
        "firstName" | "middleName" | "lastName" | "gender" | "dateOfBirth" => kind.is_person(),
        "specialty" | "suffix" => kind == PartyKind::Physician,
        "npi" => matches!(
            kind,
            PartyKind::Physician | PartyKind::Pharmacy | PartyKind::Organization
        ),
        _ => true,
    }
}

/// Every contact key the spec defines, with the column it maps to.
const CONTACT_KEYS: &[(Key, Option<&str>)] = &[
    (key("id", Ty::Str(50), true), None),
    (
        key("addressLine1", Ty::Str(50), true),
        Some("address_line1"),
    ),
    (
        key("addressLine2", Ty::Str(50), false),
        Some("address_line2"),
    ),
    (key("city", Ty::Str(10), true), Some("city")),
    (key("state", Ty::Str(2), true), Some("state")),
    (key("postalCode", Ty::Str(10), true), Some("postal_code")),
    (key("country", Ty::Str(2), true), Some("country")),
    (key("countryCode", Ty::Str(5), true), None),
    (key("phoneNumber", Ty::Str(12), true), None),
    (key("faxNumber", Ty::Str(12), true), None),
    (key("ext", Ty::Str(5), false), Some("ext")),
    (key("emailAddress", Ty::Str(50), true), Some("email")),
    (key("type", Ty::Str(7), true), Some("contact_type")),
    (key("primary", Ty::Bool, false), None),
    (key("additionalFields", Ty::Object, false), None),
];

fn contact_applies(kind: ContactKind, key: &str) -> bool {
    match key {
        "addressLine1" | "addressLine2" | "city" | "state" | "postalCode" | "country" => {
            kind == ContactKind::Address
        }
        "countryCode" | "ext" => matches!(kind, ContactKind::Phone | ContactKind::Fax),
        "phoneNumber" => kind == ContactKind::Phone,
        "faxNumber" => kind == ContactKind::Fax,
        "emailAddress" => kind == ContactKind::Email,
        _ => true,
    }
}

const CONSENT_KEYS: &[(Key, Option<&str>)] = &[
    (key("id", Ty::Str(50), true), None),
    (key("name", Ty::Str(50), true), Some("name")),
    (
        key("effectiveDate", Ty::Date, false),
        Some("effective_from"),
    ),
    (key("expirationDate", Ty::Date, false), Some("effective_to")),
    (key("additionalFields", Ty::Object, false), None),
];

const INSURANCE_KEYS: &[(Key, Option<&str>)] = &[
    (key("id", Ty::Str(50), false), None),
    (
        key("relationshipToMember", Ty::Str(255), false),
        Some("relationship"),
    ),
    (
        key("effectiveDate", Ty::Date, false),
        Some("effective_date"),
    ),
    (
        key("expirationDate", Ty::Date, false),
        Some("expiration_date"),
    ),
    (key("companyName", Ty::Str(255), false), Some("payer_name")),
    (key("groupName", Ty::Str(64), false), Some("group_name")),
    (
        key("memberNumber", Ty::Str(64), false),
        Some("member_number"),
    ),
    (key("policyHolderFirstName", Ty::Str(49), false), None),
    (key("policyHolderLastName", Ty::Str(49), false), None),
    (key("additionalFields", Ty::Object, false), None),
];

const PRESCRIPTION_KEYS: &[(Key, Option<&str>)] = &[
    (key("id", Ty::Str(50), true), None),
    (key("drugNdc", Ty::Str(50), true), Some("drug_ndc")),
    (key("quantity", Ty::Str(50), false), Some("quantity")),
    (key("numberOfRefills", Ty::Refills, false), None),
    (key("additionalFields", Ty::Object, false), None),
];

const ADDITIONAL_OBJECT_KEYS: &[Key] = &[
    key("objectName", Ty::Str(usize::MAX), true),
    key("records", Ty::Array, true),
];

const ADDITIONAL_RECORD_KEYS: &[Key] = &[
    key("recordType", Ty::Str(usize::MAX), true),
    key("additionalFields", Ty::Object, false),
];

/// Cardholder name = first + " " + last, at most 50 characters.
pub const CARDHOLDER_MAX: usize = 50;

struct Validator<'a> {
    catalog: &'a Catalog,
    settings: &'a Settings,
    caller: &'a Caller,
    errors: Vec<Violation>,
    denied: Vec<Violation>,
    denied_objects: HashSet<&'static str>,
    seen_ids: HashSet<String>,
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The configured spelling of `value` in `allowed`, compared regardless of the case of
/// ASCII letters (an exact match wins when the list holds several spellings of one value).
/// ASCII only, so the OpenAPI document can say it with a pattern (`[Hh][Oo][Mm][Ee]`).
fn canonical(allowed: &[String], value: &str) -> Option<String> {
    allowed
        .iter()
        .find(|a| a.as_str() == value)
        .or_else(|| allowed.iter().find(|a| a.eq_ignore_ascii_case(value)))
        .cloned()
}

/// Replaces the value of `column` (an allowed-value column) by its canonical spelling.
fn set_column(columns: &mut [(&'static str, String)], column: &str, value: Option<String>) {
    if let Some(value) = value {
        for (c, v) in columns.iter_mut() {
            if *c == column {
                *v = value.clone();
            }
        }
    }
}

fn str_of(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl Validator<'_> {
    fn err(&mut self, code: &'static str, message: impl Into<String>, path: &str) {
        self.errors.push(Violation::new(code, message, path));
    }

    /// Checks one key's value; returns whether it is present and valid. A missing (or
    /// `null`) value is an error only when the key is required.
    fn check_key(&mut self, map: &Map<String, Value>, k: Key, path: &str) -> bool {
        let p = child(path, k.name);
        let Some(value) = map.get(k.name).filter(|v| !v.is_null()) else {
            if k.required {
                self.err(
                    codes::REQUIRED_FIELD_MISSING,
                    format!("'{}' is required", k.name),
                    &p,
                );
            }
            return false;
        };
        match k.ty {
            Ty::Str(max) => self.check_text(k, value, max, &p),
            Ty::Date => self.check_text(k, value, "yyyy-mm-dd".len(), &p),
            Ty::Bool => self.expect(value.is_boolean(), k, "a boolean", &p),
            Ty::Refills => self.check_refills(k, value, &p),
            Ty::Array => self.expect(value.is_array(), k, "an array", &p),
            Ty::Object => self.expect(value.is_object(), k, "an object", &p),
        }
    }

    /// Whether the value has the key's JSON type (`ok`); if not, says that it must be `what`.
    fn expect(&mut self, ok: bool, k: Key, what: &str, path: &str) -> bool {
        if !ok {
            self.err(
                codes::INVALID_TYPE,
                format!("'{}' must be {what}", k.name),
                path,
            );
        }
        ok
    }

    /// The rules of a text or date value, first broken rule only (a blank value is not also
    /// reported as a bad date): a string, not blank when required, no NUL, at most `max`
    /// characters, and a calendar date for a date.
    fn check_text(&mut self, k: Key, value: &Value, max: usize, path: &str) -> bool {
        let Some(s) = value.as_str() else {
            return self.expect(false, k, "a string", path);
        };
        let problem = if s.trim().is_empty() && k.required {
            Some((
                codes::REQUIRED_FIELD_MISSING,
                "must not be blank".to_owned(),
            ))
        } else if s.contains('\0') {
            Some((
                codes::INVALID_VALUE,
                "must not contain NUL characters".to_owned(),
            ))
        } else if s.chars().count() > max {
            Some((
                codes::STRING_TOO_LONG,
                format!("is longer than {max} characters"),
            ))
        } else if matches!(k.ty, Ty::Date) && !fields::is_date(s) {
            Some((
                codes::INVALID_DATE,
                "must be a yyyy-mm-dd calendar date".to_owned(),
            ))
        } else {
            None
        };
        match problem {
            Some((code, what)) => {
                self.err(code, format!("'{}' {what}", k.name), path);
                false
            }
            None => true,
        }
    }

    /// `numberOfRefills`: a whole number from 0 to [`REFILLS_MAX`]; a whole number outside
    /// that range (even one too large for an `i64`) is out of range, anything else the wrong
    /// type.
    fn check_refills(&mut self, k: Key, value: &Value, path: &str) -> bool {
        match value.as_i64() {
            Some(n) if (0..=REFILLS_MAX).contains(&n) => true,
            _ if value.is_i64() || value.is_u64() => {
                self.err(
                    codes::NUMBER_OUT_OF_RANGE,
                    format!("'{}' must be a whole number of at most 5 digits", k.name),
                    path,
                );
                false
            }
            _ => self.expect(false, k, "an integer", path),
        }
    }

    /// Checks all keys of an object against a table; keys known to the table but not
    /// applicable (per `applies`) and unknown keys are errors. Returns the valid keys.
    fn check_keys(
        &mut self,
        map: &Map<String, Value>,
        table: &[(Key, Option<&'static str>)],
        applies: &dyn Fn(&str) -> bool,
        what: &str,
        path: &str,
    ) -> HashSet<&'static str> {
        for name in map.keys() {
            match table.iter().find(|(k, _)| k.name == name) {
                None => self.err(
                    codes::UNKNOWN_FIELD,
                    format!("unknown key '{name}' on {what}"),
                    &child(path, name),
                ),
                Some((k, _)) if !applies(k.name) => self.err(
                    codes::FIELD_NOT_APPLICABLE,
                    format!("key '{name}' does not apply to {what}"),
                    &child(path, name),
                ),
                Some(_) => {}
            }
        }
        let mut ok = HashSet::new();
        for (k, _) in table.iter().filter(|(k, _)| applies(k.name)) {
            if self.check_key(map, *k, path) {
                ok.insert(k.name);
            }
        }
        ok
    }

    fn plain_keys(
        &mut self,
        map: &Map<String, Value>,
        table: &[Key],
        what: &str,
        path: &str,
    ) -> HashSet<&'static str> {
        let wrapped: Vec<(Key, Option<&'static str>)> = table.iter().map(|k| (*k, None)).collect();
        self.check_keys(map, &wrapped, &|_| true, what, path)
    }

    fn object<'v>(
        &mut self,
        v: &'v Value,
        what: &str,
        path: &str,
    ) -> Option<&'v Map<String, Value>> {
        let obj = v.as_object();
        if obj.is_none() {
            self.err(
                codes::INVALID_TYPE,
                format!("{what} must be an object"),
                path,
            );
        }
        obj
    }

    fn array<'v>(
        map: &'v Map<String, Value>,
        key: &str,
        ok: &HashSet<&'static str>,
    ) -> &'v [Value] {
        if ok.contains(key) {
            map.get(key)
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice)
        } else {
            &[]
        }
    }

    /// Records that the caller must create and edit `object` (and `field` of it).
    fn need(&mut self, object: &'static str, field: Option<&str>, path: &str) {
        let object_ok =
            self.caller.can(object, Access::Create) && self.caller.can(object, Access::Edit);
        if !object_ok {
            if self.denied_objects.insert(object) {
                self.denied.push(Violation::new(
                    codes::INSUFFICIENT_ACCESS,
                    format!("no create and edit access to {object}"),
                    path,
                ));
            }
            return;
        }
        if let Some(field) = field
            && !(self.caller.can_field(object, field, Access::Create)
                && self.caller.can_field(object, field, Access::Edit))
        {
            self.denied.push(Violation::new(
                codes::INSUFFICIENT_ACCESS,
                format!("no create and edit access to {object}.{field}"),
                path,
            ));
        }
    }

    fn fields_of_keys(
        &mut self,
        object: &'static str,
        map: &Map<String, Value>,
        ok: &HashSet<&'static str>,
        path: &str,
    ) {
        let mut names: Vec<&&str> = ok.iter().collect();
        names.sort();
        for name in names {
            if !matches!(
                *name,
                "id" | "additionalFields" | "addresses" | "phones" | "emails" | "faxes"
            ) {
                self.need(object, Some(name), &child(path, name));
            }
        }
        let _ = map;
    }

    fn unique(&mut self, external_id: String, path: &str) {
        if !self.seen_ids.insert(external_id) {
            self.err(
                codes::DUPLICATE_ID,
                "this 'id' is used twice in the request",
                path,
            );
        }
    }

    /// Checks `additionalFields` against the configuration of `config_name`.
    fn extra(
        &mut self,
        map: &Map<String, Value>,
        ok: &HashSet<&'static str>,
        config_name: &str,
        object: &'static str,
        path: &str,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        if !ok.contains("additionalFields") {
            return out;
        }
        let Some(fields_map) = map.get("additionalFields").and_then(Value::as_object) else {
            return out;
        };
        let base = child(path, "additionalFields");
        let config = self.catalog.objects.get(config_name);
        for (name, value) in fields_map {
            let p = child(&base, name);
            match config.and_then(|c| c.fields.get(name)) {
                None => self.err(
                    codes::UNKNOWN_FIELD,
                    format!("field '{name}' is not configured for '{config_name}' on the eRX object configuration"),
                    &p,
                ),
                Some(def) => match fields::check_json(def, value) {
                    Ok(v) => {
                        self.need(object, Some(name), &p);
                        out.insert(name.clone(), v);
                    }
                    Err(reason) => self.err(
                        codes::INVALID_VALUE,
                        format!("field '{name}' ({}): {reason}", def.ty.as_str()),
                        &p,
                    ),
                },
            }
        }
        out
    }

    fn columns(
        map: &Map<String, Value>,
        ok: &HashSet<&'static str>,
        table: &[(Key, Option<&'static str>)],
    ) -> Vec<(&'static str, String)> {
        table
            .iter()
            .filter_map(|(k, col)| {
                let col = (*col)?;
                if !ok.contains(k.name) {
                    return None;
                }
                str_of(map, k.name).map(|v| (col, v))
            })
            .collect()
    }

    fn party(&mut self, kind: PartyKind, v: &Value, vendor: &str) -> Option<Party> {
        let path = kind.key();
        let map = self.object(v, path, path)?;
        let what = format!("a {} party", kind.key());
        let ok = self.check_keys(map, PARTY_KEYS, &|k| party_applies(kind, k), &what, path);
        self.need(objects::ACCOUNT, None, path);
        self.fields_of_keys(objects::ACCOUNT, map, &ok, path);
        let mut gender = None;
        if ok.contains("gender") {
            let g = str_of(map, "gender").unwrap_or_default();
            gender = canonical(&self.settings.genders, &g);
            if gender.is_none() {
                self.err(
                    codes::INVALID_VALUE,
                    format!(
                        "'gender' must be one of {}",
                        self.settings.genders.join(", ")
                    ),
                    &child(path, "gender"),
                );
            }
        }
        let id = str_of(map, "id").unwrap_or_default();
        if ok.contains("id") {
            self.unique(scoped_id(vendor, kind.key(), &id), &child(path, "id"));
        }
        let mut contacts = Vec::new();
        for ck in ContactKind::ALL {
            let arr = Self::array(map, ck.array_key(), &ok);
            for (i, item) in arr.iter().enumerate() {
                let p = format!("{}[{i}]", child(path, ck.array_key()));
                if let Some(c) = self.contact(ck, item, &p, vendor) {
                    contacts.push(c);
                }
            }
        }
        let extra = self.extra(map, &ok, kind.key(), objects::ACCOUNT, path);
        let mut columns = Self::columns(map, &ok, PARTY_KEYS);
        set_column(&mut columns, "gender", gender);
        Some(Party {
            path: path.to_owned(),
            id,
            columns,
            contacts,
            extra,
        })
    }

    fn contact(
        &mut self,
        kind: ContactKind,
        v: &Value,
        path: &str,
        vendor: &str,
    ) -> Option<Contact> {
        let map = self.object(v, &format!("an {} entry", kind.name()), path)?;
        let what = format!("an {} contact", kind.name());
        let ok = self.check_keys(
            map,
            CONTACT_KEYS,
            &|k| contact_applies(kind, k),
            &what,
            path,
        );
        self.need(objects::CONTACT_POINT, None, path);
        self.fields_of_keys(objects::CONTACT_POINT, map, &ok, path);
        let mut contact_type = None;
        if ok.contains("type") {
            let t = str_of(map, "type").unwrap_or_default();
            contact_type = canonical(&self.settings.contact_types, &t);
            if contact_type.is_none() {
                self.err(
                    codes::INVALID_VALUE,
                    format!(
                        "'type' must be one of {}",
                        self.settings.contact_types.join(", ")
                    ),
                    &child(path, "type"),
                );
            }
        }
        if ok.contains("emailAddress")
            && !fields::is_email(&str_of(map, "emailAddress").unwrap_or_default())
        {
            self.err(
                codes::INVALID_VALUE,
                "'emailAddress' is not an e-mail address",
                &child(path, "emailAddress"),
            );
        }
        let id = str_of(map, "id").unwrap_or_default();
        if ok.contains("id") {
            self.unique(scoped_id(vendor, kind.name(), &id), &child(path, "id"));
        }
        let mut columns = Self::columns(map, &ok, CONTACT_KEYS);
        set_column(&mut columns, "contact_type", contact_type);
        let number_key = match kind {
            ContactKind::Phone => Some("phoneNumber"),
            ContactKind::Fax => Some("faxNumber"),
            _ => None,
        };
        if let Some(nk) = number_key
            && ok.contains("countryCode")
            && ok.contains(nk)
        {
            let cc = str_of(map, "countryCode").unwrap_or_default();
            let n = str_of(map, nk).unwrap_or_default();
            columns.push(("number", format!("{cc}{n}")));
        }
        let extra = self.extra(map, &ok, kind.name(), objects::CONTACT_POINT, path);
        Some(Contact {
            path: path.to_owned(),
            kind,
            id,
            columns,
            primary: if ok.contains("primary") {
                map.get("primary").and_then(Value::as_bool)
            } else {
                None
            },
            extra,
        })
    }

    /// Containment reference: exactly one candidate whose ID the value contains.
    fn contained(
        &mut self,
        value: &str,
        candidates: &[(i64, String)],
        what: &str,
        path: &str,
    ) -> Option<i64> {
        let matches: Vec<&(i64, String)> = candidates
            .iter()
            .filter(|(_, id)| value.contains(id.as_str()))
            .collect();
        match matches.as_slice() {
            [(id, _)] => Some(*id),
            [] => {
                self.err(
                    codes::INVALID_REFERENCE,
                    format!("contains the ID of no existing {what}"),
                    path,
                );
                None
            }
            many => {
                let ids: Vec<&str> = many.iter().map(|(_, id)| id.as_str()).collect();
                self.err(
                    codes::AMBIGUOUS_REFERENCE,
                    format!("contains the IDs of several {what}s: {}", ids.join(", ")),
                    path,
                );
                None
            }
        }
    }

    fn consent(&mut self, v: &Value, path: &str, vendor: &str) -> Option<Consent> {
        let map = self.object(v, "a consent", path)?;
        let ok = self.check_keys(map, CONSENT_KEYS, &|_| true, "a consent", path);
        self.need(objects::CONSENT, None, path);
        self.fields_of_keys(objects::CONSENT, map, &ok, path);
        let mut purpose_id = None;
        if ok.contains("name") {
            let name = str_of(map, "name").unwrap_or_default();
            let purposes = self.catalog.purposes.clone();
            purpose_id = self.contained(&name, &purposes, "data use purpose", &child(path, "name"));
        }
        let id = str_of(map, "id").unwrap_or_default();
        if ok.contains("id") {
            self.unique(scoped_id(vendor, "consent", &id), &child(path, "id"));
        }
        let extra = self.extra(map, &ok, "consent", objects::CONSENT, path);
        Some(Consent {
            path: path.to_owned(),
            id,
            purpose_id: purpose_id.unwrap_or(0),
            columns: Self::columns(map, &ok, CONSENT_KEYS),
            extra,
        })
    }

    fn insurance(
        &mut self,
        index: usize,
        v: &Value,
        path: &str,
        vendor: &str,
    ) -> Option<Insurance> {
        let map = self.object(v, "an insurance", path)?;
        let ok = self.check_keys(map, INSURANCE_KEYS, &|_| true, "an insurance", path);
        self.need(objects::MEMBER_PLAN, None, path);
        self.fields_of_keys(objects::MEMBER_PLAN, map, &ok, path);
        let mut columns = Self::columns(map, &ok, INSURANCE_KEYS);
        let first = ok
            .contains("policyHolderFirstName")
            .then(|| str_of(map, "policyHolderFirstName"))
            .flatten();
        let last = ok
            .contains("policyHolderLastName")
            .then(|| str_of(map, "policyHolderLastName"))
            .flatten();
        let name = match (&first, &last) {
            (Some(f), Some(l)) => Some(format!("{f} {l}")),
            (Some(x), None) | (None, Some(x)) => Some(x.clone()),
            (None, None) => None,
        };
        if let Some(name) = name {
            let parts = first.as_deref().map_or(0, |s| s.chars().count())
                + last.as_deref().map_or(0, |s| s.chars().count());
            if parts > CARDHOLDER_MAX - 1 {
                self.errors.push(Violation {
                    code: codes::STRING_TOO_LONG,
                    message: format!(
                        "the cardholder name (first + ' ' + last) holds at most {CARDHOLDER_MAX} characters, so the two parts at most {} together",
                        CARDHOLDER_MAX - 1
                    ),
                    fields: vec![child(path, "policyHolderFirstName"), child(path, "policyHolderLastName")],
                });
            } else {
                columns.push(("cardholder_name", name));
            }
        }
        let id = ok.contains("id").then(|| str_of(map, "id")).flatten();
        if let Some(id) = &id {
            self.unique(scoped_id(vendor, "insurance", id), &child(path, "id"));
        }
        let extra = self.extra(map, &ok, "insurance", objects::MEMBER_PLAN, path);
        Some(Insurance {
            path: path.to_owned(),
            index,
            id,
            columns,
            extra,
        })
    }

    fn prescription(&mut self, v: &Value, path: &str, vendor: &str) -> Option<Prescription> {
        let map = self.object(v, "a prescription", path)?;
        let ok = self.check_keys(map, PRESCRIPTION_KEYS, &|_| true, "a prescription", path);
        self.need(objects::PRESCRIPTION, None, path);
        self.fields_of_keys(objects::PRESCRIPTION, map, &ok, path);
        let mut product_id = None;
        // Products belong to the program: with an unknown program the program is the error.
        if ok.contains("drugNdc") && self.catalog.program_exists {
            let ndc = str_of(map, "drugNdc").unwrap_or_default();
            let products = self.catalog.products.clone();
            product_id = self.contained(
                &ndc,
                &products,
                "care-program product",
                &child(path, "drugNdc"),
            );
        }
        let id = str_of(map, "id").unwrap_or_default();
        if ok.contains("id") {
            self.unique(scoped_id(vendor, "prescription", &id), &child(path, "id"));
        }
        let extra = self.extra(map, &ok, "prescription", objects::PRESCRIPTION, path);
        Some(Prescription {
            path: path.to_owned(),
            id,
            product_id: product_id.unwrap_or(0),
            columns: Self::columns(map, &ok, PRESCRIPTION_KEYS),
            refills: if ok.contains("numberOfRefills") {
                map.get("numberOfRefills").and_then(Value::as_i64)
            } else {
                None
            },
            extra,
        })
    }

    fn additional_object(&mut self, v: &Value, path: &str, out: &mut Vec<AdditionalRecord>) {
        let Some(map) = self.object(v, "an additional object", path) else {
            return;
        };
        let ok = self.plain_keys(map, ADDITIONAL_OBJECT_KEYS, "an additional object", path);
        self.need(objects::ADDITIONAL_OBJECT, None, path);
        let object_name = str_of(map, "objectName").unwrap_or_default();
        let config = if ok.contains("objectName") {
            let c = self
                .catalog
                .objects
                .get(&object_name)
                .filter(|c| c.additional)
                .cloned();
            if c.is_none() {
                self.err(
                    codes::INVALID_REFERENCE,
                    format!("'{object_name}' is not an object of the eRX object configuration"),
                    &child(path, "objectName"),
                );
            }
            c
        } else {
            None
        };
        for (i, rv) in Self::array(map, "records", &ok).iter().enumerate() {
            let rp = format!("{}[{i}]", child(path, "records"));
            let Some(rmap) = self.object(rv, "a record", &rp) else {
                continue;
            };
            let rok = self.plain_keys(
                rmap,
                ADDITIONAL_RECORD_KEYS,
                "an additional-object record",
                &rp,
            );
            let record_type = str_of(rmap, "recordType").unwrap_or_default();
            if let Some(c) = &config
                && rok.contains("recordType")
                && !c.record_types.contains(&record_type)
            {
                self.err(
                    codes::INVALID_VALUE,
                    format!("'recordType' must be one of {}", c.record_types.join(", ")),
                    &child(&rp, "recordType"),
                );
            }
            let fields = if config.is_some() {
                self.extra(rmap, &rok, &object_name, objects::ADDITIONAL_OBJECT, &rp)
            } else {
                Map::new()
            };
            out.push(AdditionalRecord {
                path: rp,
                object_name: object_name.clone(),
                index: i,
                record_type,
                fields,
            });
        }
    }
}

/// Validates a parsed body. `Ok` only when no rule is broken and the caller may write every
/// record and field the request touches.
pub fn validate(
    body: &Value,
    catalog: &Catalog,
    settings: &Settings,
    caller: &Caller,
) -> Result<Enrollment, Rejection> {
    let Some(map) = body.as_object() else {
        return Err(Rejection::Invalid(vec![Violation::new(
            codes::INVALID_JSON,
            "the request body must be a JSON object",
            "",
        )]));
    };
    let mut v = Validator {
        catalog,
        settings,
        caller,
        errors: Vec::new(),
        denied: Vec::new(),
        denied_objects: HashSet::new(),
        seen_ids: HashSet::new(),
    };
    let ok = v.plain_keys(map, TOP_KEYS, "the enrollment request", "");
    v.need(objects::CARE_PLAN, None, "");
    let vendor = str_of(map, "vendorName").unwrap_or_default();
    let program = str_of(map, "programName").unwrap_or_default();
    if ok.contains("vendorName") && !catalog.vendor_exists {
        v.err(
            codes::INVALID_REFERENCE,
            "no eRX vendor has this API name",
            "vendorName",
        );
    }
    if ok.contains("programName") && !catalog.program_exists {
        v.err(
            codes::INVALID_REFERENCE,
            "no program has this API name",
            "programName",
        );
    }
    let mut e = Enrollment {
        vendor: vendor.clone(),
        program,
        enrollment_date: str_of(map, "enrollmentDate").unwrap_or_default(),
        ..Enrollment::default()
    };
    for kind in PartyKind::ALL {
        if ok.contains(kind.key())
            && let Some(p) = map
                .get(kind.key())
                .and_then(|pv| v.party(kind, pv, &vendor))
        {
            e.parties.push((kind, p));
        }
    }
    for (i, c) in Validator::array(map, "consents", &ok).iter().enumerate() {
        if let Some(c) = v.consent(c, &format!("consents[{i}]"), &vendor) {
            e.consents.push(c);
        }
    }
    for (i, c) in Validator::array(map, "insurances", &ok).iter().enumerate() {
        if let Some(c) = v.insurance(i, c, &format!("insurances[{i}]"), &vendor) {
            e.insurances.push(c);
        }
    }
    for (i, c) in Validator::array(map, "prescriptions", &ok)
        .iter()
        .enumerate()
    {
        if let Some(c) = v.prescription(c, &format!("prescriptions[{i}]"), &vendor) {
            e.prescriptions.push(c);
        }
    }
    let mut additional = Vec::new();
    for (i, c) in Validator::array(map, "additionalObjects", &ok)
        .iter()
        .enumerate()
    {
        v.additional_object(c, &format!("additionalObjects[{i}]"), &mut additional);
    }
    e.additional = additional;
    if !v.errors.is_empty() {
        return Err(Rejection::Invalid(v.errors));
    }
    if !v.denied.is_empty() {
        return Err(Rejection::Forbidden(v.denied));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_values_match_regardless_of_case_in_their_configured_spelling() {
        let list: Vec<String> = ["home", "Work", "F"].map(String::from).to_vec();
        assert_eq!(canonical(&list, "HOME").as_deref(), Some("home"));
        assert_eq!(canonical(&list, "work").as_deref(), Some("Work"));
        assert_eq!(canonical(&list, "f").as_deref(), Some("F"));
        assert_eq!(canonical(&list, "pager"), None);
        let both: Vec<String> = ["x", "X"].map(String::from).to_vec();
        assert_eq!(canonical(&both, "X").as_deref(), Some("X"));
    }
}
