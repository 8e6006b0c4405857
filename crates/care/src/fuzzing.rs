//! Pure entry points for the cargo-fuzz targets in `fuzz/` (not an API): the enrollment
//! validator and the missing-information POST body parser, with no database and no HTTP.

use std::collections::HashMap;

use serde_json::Value;

use crate::auth::Caller;
use crate::enrollment::validate::{self, Catalog, ObjectConfig, Settings};
use crate::fields::{FieldDef, FieldType};

/// A catalog like the demo set's: the vendor and program exist, two data use purposes, two
/// products, and a configured text and picklist field on accounts.
fn catalog() -> Catalog {
    let mut account = ObjectConfig::default();
    account.fields.insert(
        "Nickname__c".into(),
        FieldDef {
            ty: FieldType::String,
            length: Some(20),
            scale: None,
            picklist: Vec::new(),
        },
    );
    account.fields.insert(
        "Tier__c".into(),
        FieldDef {
            ty: FieldType::Picklist,
            length: None,
            scale: None,
            picklist: vec!["Gold".into(), "Silver".into()],
        },
    );
    let extra = ObjectConfig {
        additional: true,
        record_types: vec!["Survey".into()],
        fields: HashMap::new(),
    };
    Catalog {
        vendor_exists: true,
        program_exists: true,
        purposes: vec![(1, "DUP-MARKETING".into()), (2, "DUP-TREATMENT".into())],
        products: vec![(1, "PROD-1001".into()), (2, "PROD-1002".into())],
        objects: HashMap::from([("Account".into(), account), ("Visit__c".into(), extra)]),
    }
}

/// Runs the enrollment validator on `body` (anything) as an all-powerful caller; whether it
/// was accepted. Never panics on any input (what the fuzz target checks).
pub fn check_enrollment(body: &[u8]) -> bool {
    let Ok(doc) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    let settings = Settings::default();
    let accepted = validate::validate(&doc, &catalog(), &settings, &Caller::system());
    if let Ok(enrollment) = &accepted {
        // The derived external IDs are computed for every accepted body.
        let _ = enrollment.care_plan_external_id();
    }
    accepted.is_ok()
}

/// Parses a missing-information POST body (`fhir`: as a `QuestionnaireResponse`); the number
/// of well-formed entries, or `None` when refused.
pub fn parse_missing_info_body(body: &[u8], fhir: bool) -> Option<usize> {
    let mut submitted = Vec::new();
    crate::missing_info::parse_body(body, fhir, &mut submitted)
        .ok()
        .map(|e| e.len())
}
