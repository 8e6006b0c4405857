//! The enrollment rules as a pure function, for a form that checks as the user types: the
//! same validator the service runs on `POST {ns}/eRxApi`, without the database. Rules that
//! need stored records (vendor, program, data use purposes, products, the eRX object
//! configuration behind `additionalFields` and `additionalObjects`) and the caller's
//! permissions are left to the service, which reports them on submission with the same paths.

use serde::Serialize;
use serde_json::Value;

use crate::enrollment::validate::{self, Catalog, Rejection, Settings, codes};

/// One broken rule, as the service reports it: a code, a message and the field paths
/// (`patient.addresses[0].city`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// The service's error code (see the crate README).
    pub code: String,
    /// What is wrong, in words.
    pub message: String,
    /// Paths of the fields concerned; empty for the document as a whole.
    pub fields: Vec<String>,
}

/// The enrollment-form choices the service accepts by default.
#[derive(Debug, Clone, Serialize)]
pub struct EnrollmentOptions {
    /// Allowed `gender` values.
    pub genders: Vec<String>,
    /// Allowed contact `type` values.
    pub contact_types: Vec<String>,
}

/// The default allowed values ([`crate::DEFAULT_GENDERS`], [`crate::DEFAULT_CONTACT_TYPES`]).
pub fn enrollment_options() -> EnrollmentOptions {
    let Settings {
        contact_types,
        genders,
    } = Settings::default();
    EnrollmentOptions {
        genders,
        contact_types,
    }
}

/// Every rule of the enrollment document that needs no stored record, with the default
/// allowed values. An empty answer means the service will only check references and access.
pub fn check_enrollment(body: &Value) -> Vec<Issue> {
    let settings = Settings::default();
    // Vendor known, program unknown: the product references of prescriptions are then not
    // checked; the remaining reference and configuration findings are dropped below.
    let catalog = Catalog {
        vendor_exists: true,
        ..Catalog::default()
    };
    let violations =
        match validate::validate(body, &catalog, &settings, &crate::auth::Caller::system()) {
            Ok(_) => return Vec::new(),
            Err(Rejection::Invalid(v) | Rejection::Forbidden(v)) => v,
        };
    violations
        .into_iter()
        .filter(|v| !needs_stored_records(v))
        .map(|v| Issue {
            code: v.code.to_owned(),
            message: v.message,
            fields: v.fields,
        })
        .collect()
}

fn needs_stored_records(v: &crate::violation::Violation) -> bool {
    match v.code {
        codes::INVALID_REFERENCE | codes::AMBIGUOUS_REFERENCE => true,
        codes::UNKNOWN_FIELD => v.fields.iter().any(|f| f.contains("additionalFields.")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_minimal_valid_document_has_no_issue() {
        let doc = json!({
            "vendorName": "AnyVendor", "programName": "AnyProgram", "enrollmentDate": "2026-01-15",
            "patient": {"id": "P-1", "lastName": "Doe", "additionalFields": {"custom": "x"}},
            "consents": [{"id": "C-1", "name": "unknown purpose"}],
            "prescriptions": [{"id": "RX-1", "drugNdc": "no such product"}],
        });
        assert_eq!(check_enrollment(&doc), Vec::<Issue>::new());
    }

    #[test]
    fn issues_name_their_field_paths() {
        let doc = json!({
            "vendorName": "DemoRx", "programName": "DemoCareProgram", "enrollmentDate": "2026-13-01",
            "patient": {"id": "P-1", "addresses": [{"id": "A-1", "type": "home", "addressLine1": "1 Main St",
                "city": "Springfield Heights", "state": "IL", "postalCode": "62701", "country": "US"}]},
        });
        let issues = check_enrollment(&doc);
        let paths: Vec<&str> = issues
            .iter()
            .flat_map(|i| i.fields.iter().map(String::as_str))
            .collect();
        assert!(paths.contains(&"enrollmentDate"), "{issues:?}");
        assert!(paths.contains(&"patient.lastName"), "{issues:?}");
        assert!(paths.contains(&"patient.addresses[0].city"), "{issues:?}");
        let city = issues
            .iter()
            .find(|i| i.fields == ["patient.addresses[0].city"])
            .unwrap();
        assert_eq!(city.code, "STRING_TOO_LONG");
    }
}
