//! The rule-by-rule suite: for every max length, required key, type, format, applicability
//! and reference rule, a request breaking only that rule gets 400 naming that field path, and
//! the same request fixed (that field given another valid value than the base request's, or
//! left out where the rule is that it must be absent) gets 200.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{
    STAFF, TestApp, backends, error_paths, full_enrollment, remove, set, spawn_app,
};

enum Edit {
    Set(&'static str, Value),
    Remove(&'static str),
}

impl Edit {
    fn pointer(&self) -> &'static str {
        match self {
            Edit::Set(p, _) | Edit::Remove(p) => p,
        }
    }
}

struct Case {
    /// What breaks the rule, applied to the base request.
    edit: Edit,
    code: &'static str,
    path: &'static str,
    /// What fixes it, applied to the base request instead: another valid value at the
    /// edit's pointer (nothing where the key must be absent).
    fix: Vec<Edit>,
}

fn set_case(pointer: &'static str, value: Value, code: &'static str, path: &'static str) -> Case {
    Case {
        edit: Edit::Set(pointer, value),
        code,
        path,
        fix: fix_for(pointer),
    }
}

fn rm(pointer: &'static str, path: &'static str) -> Case {
    Case {
        edit: Edit::Remove(pointer),
        code: "REQUIRED_FIELD_MISSING",
        path,
        fix: fix_for(pointer),
    }
}

/// Another valid value than [`full_enrollment`]'s for the field at `pointer` (with the
/// reference data [`add_reference_data`] adds); none for keys the base request does not
/// hold, where the only fix is to leave the key out.
fn fix_for(pointer: &str) -> Vec<Edit> {
    let set = |p: &'static str, v: Value| vec![Edit::Set(p, v)];
    match pointer {
        "/vendorName" => set("/vendorName", json!("OtherRx")),
        // Products belong to a program: another program needs its own.
        "/programName" => vec![
            Edit::Set("/programName", json!("OtherProgram")),
            Edit::Set("/prescriptions/0/drugNdc", json!("NDC PROD-2001")),
            Edit::Set("/prescriptions/1/drugNdc", json!("PROD-2002")),
        ],
        "/enrollmentDate" => set("/enrollmentDate", json!("2026-03-15")),
        "/patient" | "/patient/firstName" => set("/patient/firstName", json!("Anna")),
        "/patient/id" => set("/patient/id", json!("RULES-1B")),
        "/patient/lastName" => set("/patient/lastName", json!("Leigh")),
        "/patient/gender" => set("/patient/gender", json!("O")),
        "/patient/dateOfBirth" => set("/patient/dateOfBirth", json!("1980-06-05")),
        "/patient/additionalFields" => set("/patient/additionalFields", json!({})),
        "/physician" => set("/physician/specialty", json!("Cardiology")),
        "/physician/id" => set("/physician/id", json!("DR-2")),
        "/physician/lastName" => set("/physician/lastName", json!("Kimm")),
        "/staff/lastName" => set("/staff/lastName", json!("Staffer")),
        "/caregiver/lastName" => set("/caregiver/lastName", json!("Carers")),
        "/caregiver/dateOfBirth" => set("/caregiver/dateOfBirth", json!("1975-02-28")),
        "/pharmacy/id" => set("/pharmacy/id", json!("PHARM-2")),
        "/organization/id" => set("/organization/id", json!("ORG-2")),
        "/patient/addresses" | "/patient/addresses/0" => {
            set("/patient/addresses/0/addressLine2", json!("Apt 3"))
        }
        "/patient/addresses/0/id" => set("/patient/addresses/0/id", json!("RULES-1-A9")),
        "/patient/addresses/0/addressLine1" => {
            set("/patient/addresses/0/addressLine1", json!("3 Oak St"))
        }
        "/patient/addresses/0/city" => set("/patient/addresses/0/city", json!("Urbana")),
        "/patient/addresses/0/state" => set("/patient/addresses/0/state", json!("IN")),
        "/patient/addresses/0/postalCode" => set("/patient/addresses/0/postalCode", json!("62703")),
        "/patient/addresses/0/country" => set("/patient/addresses/0/country", json!("CA")),
        "/patient/addresses/0/type" => set("/patient/addresses/0/type", json!("mailing")),
        "/patient/phones/0/id" => set("/patient/phones/0/id", json!("RULES-1-PH9")),
        "/patient/phones/1/id" => set("/patient/phones/1/id", json!("RULES-1-PH8")),
        "/patient/phones/0/countryCode" => set("/patient/phones/0/countryCode", json!("+44")),
        "/patient/phones/0/phoneNumber" => set("/patient/phones/0/phoneNumber", json!("5550199")),
        "/patient/phones/0/type" => set("/patient/phones/0/type", json!("home")),
        "/patient/phones/0/primary" => set("/patient/phones/0/primary", json!(false)),
        "/patient/phones/0/additionalFields" => {
            set("/patient/phones/0/additionalFields", json!({}))
        }
        "/patient/emails/0/id" => set("/patient/emails/0/id", json!("RULES-1-E9")),
        "/patient/emails/0/emailAddress" => set(
            "/patient/emails/0/emailAddress",
            json!("ann.lee@example.org"),
        ),
        "/patient/emails/0/type" => set("/patient/emails/0/type", json!("work")),
        "/patient/faxes/0/id" => set("/patient/faxes/0/id", json!("RULES-1-F9")),
        "/patient/faxes/0/countryCode" => set("/patient/faxes/0/countryCode", json!("+44")),
        "/patient/faxes/0/faxNumber" => set("/patient/faxes/0/faxNumber", json!("5550198")),
        "/patient/faxes/0/type" => set("/patient/faxes/0/type", json!("home")),
        "/consents" => set("/consents/1/name", json!("DUP-MARKETING opt-in")),
        "/consents/0/id" => set("/consents/0/id", json!("RULES-1-C9")),
        "/consents/0/name" => set("/consents/0/name", json!("DUP-TREATMENT form")),
        "/consents/0/effectiveDate" => set("/consents/0/effectiveDate", json!("2026-01-02")),
        // 2028 is a leap year.
        "/consents/0/expirationDate" => set("/consents/0/expirationDate", json!("2028-02-29")),
        "/consents/0/additionalFields" => set("/consents/0/additionalFields", json!({})),
        "/insurances/0/companyName" => set("/insurances/0/companyName", json!("Acme Health Plus")),
        "/insurances/0/effectiveDate" => set("/insurances/0/effectiveDate", json!("2026-01-15")),
        "/insurances/0/expirationDate" => set("/insurances/0/expirationDate", json!("2026-12-30")),
        "/insurances/0/policyHolderFirstName" => {
            set("/insurances/0/policyHolderFirstName", json!("Annabel"))
        }
        "/prescriptions/0/id" => set("/prescriptions/0/id", json!("RULES-1-RX9")),
        "/prescriptions/0/drugNdc" => set("/prescriptions/0/drugNdc", json!("PROD-1002")),
        "/prescriptions/0/numberOfRefills" => set("/prescriptions/0/numberOfRefills", json!(5)),
        "/additionalObjects/0/objectName" => {
            set("/additionalObjects/0/objectName", json!("FollowUp"))
        }
        "/additionalObjects/0/records" => set(
            "/additionalObjects/0/records",
            json!([{ "recordType": "NonSerious" }]),
        ),
        "/additionalObjects/0/records/0" => set(
            "/additionalObjects/0/records/0/additionalFields/description",
            json!("hives"),
        ),
        "/additionalObjects/0/records/0/recordType" => set(
            "/additionalObjects/0/records/0/recordType",
            json!("NonSerious"),
        ),
        "/additionalObjects/0/records/0/additionalFields/description" => set(
            "/additionalObjects/0/records/0/additionalFields/description",
            json!("swelling"),
        ),
        "/additionalObjects/0/records/0/additionalFields/onsetDate" => set(
            "/additionalObjects/0/records/0/additionalFields/onsetDate",
            json!("2026-02-28"),
        ),
        _ => Vec::new(),
    }
}

/// A second vendor, a second program with its own two products, and a second additional
/// object like `AdverseEvent`: the other valid values some fixes use.
async fn add_reference_data(app: &TestApp) {
    for (path, body) in [
        ("/vendors/OtherRx", json!({ "name": "Other vendor" })),
        ("/programs/OtherProgram", json!({ "name": "Other program" })),
        (
            "/products/PROD-2001",
            json!({ "name": "Other drug", "programApiName": "OtherProgram" }),
        ),
        (
            "/products/PROD-2002",
            json!({ "name": "Other drug 2", "programApiName": "OtherProgram" }),
        ),
        (
            "/object-configs/FollowUp",
            json!({
                "additional": true,
                "recordTypes": ["Serious", "NonSerious"],
                "fields": [
                    { "name": "description", "type": "STRING", "length": 255 },
                    { "name": "onsetDate", "type": "DATE" }
                ]
            }),
        ),
    ] {
        let (status, reply) = app.admin_put(path, &body).await;
        assert_eq!(status, StatusCode::OK, "{path}: {reply}");
    }
}

/// `"é"` repeated: two bytes per character, so lengths are checked in characters.
fn chars(n: usize) -> String {
    "é".repeat(n)
}

/// (pointer, path, max, valid prefix) of every length-limited string key; a value of `max`
/// characters passes, `max + 1` fails.
const LENGTHS: &[(&str, &str, usize, &str)] = &[
    ("/patient/id", "patient.id", 50, ""),
    ("/patient/firstName", "patient.firstName", 50, ""),
    ("/patient/middleName", "patient.middleName", 50, ""),
    ("/patient/lastName", "patient.lastName", 50, ""),
    ("/physician/id", "physician.id", 50, ""),
    ("/physician/specialty", "physician.specialty", 50, ""),
    ("/physician/suffix", "physician.suffix", 5, ""),
    ("/physician/npi", "physician.npi", 50, ""),
    ("/staff/lastName", "staff.lastName", 50, ""),
    ("/caregiver/firstName", "caregiver.firstName", 50, ""),
    ("/pharmacy/name", "pharmacy.name", 50, ""),
    ("/pharmacy/npi", "pharmacy.npi", 50, ""),
    ("/organization/id", "organization.id", 50, ""),
    ("/organization/name", "organization.name", 50, ""),
    ("/organization/npi", "organization.npi", 50, ""),
    ("/patient/addresses/0/id", "patient.addresses[0].id", 50, ""),
    (
        "/patient/addresses/0/addressLine1",
        "patient.addresses[0].addressLine1",
        50,
        "",
    ),
    (
        "/patient/addresses/0/addressLine2",
        "patient.addresses[0].addressLine2",
        50,
        "",
    ),
    (
        "/patient/addresses/0/city",
        "patient.addresses[0].city",
        10,
        "",
    ),
    (
        "/patient/addresses/0/state",
        "patient.addresses[0].state",
        2,
        "",
    ),
    (
        "/patient/addresses/0/postalCode",
        "patient.addresses[0].postalCode",
        10,
        "",
    ),
    (
        "/patient/addresses/0/country",
        "patient.addresses[0].country",
        2,
        "",
    ),
    ("/patient/phones/0/id", "patient.phones[0].id", 50, ""),
    (
        "/patient/phones/0/countryCode",
        "patient.phones[0].countryCode",
        5,
        "",
    ),
    (
        "/patient/phones/0/phoneNumber",
        "patient.phones[0].phoneNumber",
        12,
        "",
    ),
    ("/patient/phones/0/ext", "patient.phones[0].ext", 5, ""),
    ("/patient/emails/0/id", "patient.emails[0].id", 50, ""),
    (
        "/patient/faxes/0/countryCode",
        "patient.faxes[0].countryCode",
        5,
        "",
    ),
    (
        "/patient/faxes/0/faxNumber",
        "patient.faxes[0].faxNumber",
        12,
        "",
    ),
    ("/patient/faxes/0/ext", "patient.faxes[0].ext", 5, ""),
    ("/consents/0/id", "consents[0].id", 50, ""),
    ("/consents/0/name", "consents[0].name", 50, "DUP-TREATMENT"),
    ("/insurances/0/id", "insurances[0].id", 50, ""),
    (
        "/insurances/0/relationshipToMember",
        "insurances[0].relationshipToMember",
        255,
        "",
    ),
    (
        "/insurances/0/companyName",
        "insurances[0].companyName",
        255,
        "",
    ),
    ("/insurances/0/groupName", "insurances[0].groupName", 64, ""),
    (
        "/insurances/0/memberNumber",
        "insurances[0].memberNumber",
        64,
        "",
    ),
    ("/prescriptions/0/id", "prescriptions[0].id", 50, ""),
    (
        "/prescriptions/0/drugNdc",
        "prescriptions[0].drugNdc",
        50,
        "PROD-1001",
    ),
    (
        "/prescriptions/0/quantity",
        "prescriptions[0].quantity",
        50,
        "",
    ),
];

fn cases() -> Vec<Case> {
    let mut c = vec![
        // Required keys.
        rm("/vendorName", "vendorName"),
        rm("/programName", "programName"),
        rm("/enrollmentDate", "enrollmentDate"),
        rm("/patient", "patient"),
        rm("/patient/id", "patient.id"),
        rm("/patient/lastName", "patient.lastName"),
        rm("/physician/id", "physician.id"),
        rm("/physician/lastName", "physician.lastName"),
        rm("/staff/lastName", "staff.lastName"),
        rm("/caregiver/lastName", "caregiver.lastName"),
        rm("/pharmacy/id", "pharmacy.id"),
        rm("/organization/id", "organization.id"),
        rm("/patient/addresses/0/id", "patient.addresses[0].id"),
        rm(
            "/patient/addresses/0/addressLine1",
            "patient.addresses[0].addressLine1",
        ),
        rm("/patient/addresses/0/city", "patient.addresses[0].city"),
        rm("/patient/addresses/0/state", "patient.addresses[0].state"),
        rm(
            "/patient/addresses/0/postalCode",
            "patient.addresses[0].postalCode",
        ),
        rm(
            "/patient/addresses/0/country",
            "patient.addresses[0].country",
        ),
        rm("/patient/addresses/0/type", "patient.addresses[0].type"),
        rm("/patient/phones/0/id", "patient.phones[0].id"),
        rm(
            "/patient/phones/0/countryCode",
            "patient.phones[0].countryCode",
        ),
        rm(
            "/patient/phones/0/phoneNumber",
            "patient.phones[0].phoneNumber",
        ),
        rm("/patient/phones/0/type", "patient.phones[0].type"),
        rm("/patient/emails/0/id", "patient.emails[0].id"),
        rm(
            "/patient/emails/0/emailAddress",
            "patient.emails[0].emailAddress",
        ),
        rm("/patient/emails/0/type", "patient.emails[0].type"),
        rm("/patient/faxes/0/id", "patient.faxes[0].id"),
        rm(
            "/patient/faxes/0/countryCode",
            "patient.faxes[0].countryCode",
        ),
        rm("/patient/faxes/0/faxNumber", "patient.faxes[0].faxNumber"),
        rm("/patient/faxes/0/type", "patient.faxes[0].type"),
        rm("/consents/0/id", "consents[0].id"),
        rm("/consents/0/name", "consents[0].name"),
        rm("/prescriptions/0/id", "prescriptions[0].id"),
        rm("/prescriptions/0/drugNdc", "prescriptions[0].drugNdc"),
        rm(
            "/additionalObjects/0/objectName",
            "additionalObjects[0].objectName",
        ),
        rm(
            "/additionalObjects/0/records",
            "additionalObjects[0].records",
        ),
        rm(
            "/additionalObjects/0/records/0/recordType",
            "additionalObjects[0].records[0].recordType",
        ),
        set_case(
            "/patient/lastName",
            json!("  "),
            "REQUIRED_FIELD_MISSING",
            "patient.lastName",
        ),
        set_case(
            "/patient/id",
            Value::Null,
            "REQUIRED_FIELD_MISSING",
            "patient.id",
        ),
        // Types.
        set_case("/vendorName", json!(1), "INVALID_TYPE", "vendorName"),
        set_case("/patient", json!("P-1"), "INVALID_TYPE", "patient"),
        set_case("/physician", json!([]), "INVALID_TYPE", "physician"),
        set_case("/consents", json!({}), "INVALID_TYPE", "consents"),
        set_case(
            "/patient/addresses",
            json!({}),
            "INVALID_TYPE",
            "patient.addresses",
        ),
        set_case(
            "/patient/addresses/0",
            json!("1 Main St"),
            "INVALID_TYPE",
            "patient.addresses[0]",
        ),
        set_case(
            "/patient/firstName",
            json!(5),
            "INVALID_TYPE",
            "patient.firstName",
        ),
        set_case(
            "/patient/phones/0/primary",
            json!("yes"),
            "INVALID_TYPE",
            "patient.phones[0].primary",
        ),
        set_case(
            "/insurances/0/companyName",
            json!(true),
            "INVALID_TYPE",
            "insurances[0].companyName",
        ),
        set_case(
            "/prescriptions/0/numberOfRefills",
            json!("3"),
            "INVALID_TYPE",
            "prescriptions[0].numberOfRefills",
        ),
        set_case(
            "/prescriptions/0/numberOfRefills",
            json!(1.5),
            "INVALID_TYPE",
            "prescriptions[0].numberOfRefills",
        ),
        set_case(
            "/patient/additionalFields",
            json!([]),
            "INVALID_TYPE",
            "patient.additionalFields",
        ),
        set_case(
            "/additionalObjects/0/records/0",
            json!(1),
            "INVALID_TYPE",
            "additionalObjects[0].records[0]",
        ),
        // Number range.
        set_case(
            "/prescriptions/0/numberOfRefills",
            json!(100_000),
            "NUMBER_OUT_OF_RANGE",
            "prescriptions[0].numberOfRefills",
        ),
        set_case(
            "/prescriptions/0/numberOfRefills",
            json!(-1),
            "NUMBER_OUT_OF_RANGE",
            "prescriptions[0].numberOfRefills",
        ),
        // Dates: yyyy-mm-dd and real calendar dates.
        set_case(
            "/enrollmentDate",
            json!("2026-02-30"),
            "INVALID_DATE",
            "enrollmentDate",
        ),
        set_case(
            "/enrollmentDate",
            json!("02/01/2026"),
            "INVALID_DATE",
            "enrollmentDate",
        ),
        set_case(
            "/enrollmentDate",
            json!("2026-02-011"),
            "STRING_TOO_LONG",
            "enrollmentDate",
        ),
        set_case(
            "/patient/dateOfBirth",
            json!("1980-13-01"),
            "INVALID_DATE",
            "patient.dateOfBirth",
        ),
        set_case(
            "/caregiver/dateOfBirth",
            json!("1975-1-31"),
            "INVALID_DATE",
            "caregiver.dateOfBirth",
        ),
        set_case(
            "/consents/0/effectiveDate",
            json!("2026-00-10"),
            "INVALID_DATE",
            "consents[0].effectiveDate",
        ),
        set_case(
            "/consents/0/expirationDate",
            json!("2027-02-29"),
            "INVALID_DATE",
            "consents[0].expirationDate",
        ),
        set_case(
            "/insurances/0/effectiveDate",
            json!("20260101"),
            "INVALID_DATE",
            "insurances[0].effectiveDate",
        ),
        set_case(
            "/insurances/0/expirationDate",
            json!("2026-12-32"),
            "INVALID_DATE",
            "insurances[0].expirationDate",
        ),
        // Allowed values and formats.
        set_case(
            "/patient/gender",
            json!("X"),
            "INVALID_VALUE",
            "patient.gender",
        ),
        set_case(
            "/patient/gender",
            json!("FF"),
            "STRING_TOO_LONG",
            "patient.gender",
        ),
        set_case(
            "/patient/addresses/0/type",
            json!("pager"),
            "INVALID_VALUE",
            "patient.addresses[0].type",
        ),
        set_case(
            "/patient/phones/0/type",
            json!("mobile12"),
            "STRING_TOO_LONG",
            "patient.phones[0].type",
        ),
        set_case(
            "/patient/emails/0/emailAddress",
            json!("not-an-email"),
            "INVALID_VALUE",
            "patient.emails[0].emailAddress",
        ),
        // Cardholder name: first + " " + last at most 50, so the parts at most 49 together.
        Case {
            edit: Edit::Set("/insurances/0/policyHolderFirstName", json!("a".repeat(47))),
            code: "STRING_TOO_LONG",
            path: "insurances[0].policyHolderLastName",
            fix: fix_for("/insurances/0/policyHolderFirstName"),
        },
        set_case(
            "/insurances/0/policyHolderFirstName",
            json!("a".repeat(50)),
            "STRING_TOO_LONG",
            "insurances[0].policyHolderFirstName",
        ),
        // Unknown keys.
        set_case("/foo", json!(1), "UNKNOWN_FIELD", "foo"),
        set_case("/patient/foo", json!(1), "UNKNOWN_FIELD", "patient.foo"),
        set_case(
            "/patient/addresses/0/foo",
            json!(1),
            "UNKNOWN_FIELD",
            "patient.addresses[0].foo",
        ),
        set_case(
            "/consents/0/foo",
            json!(1),
            "UNKNOWN_FIELD",
            "consents[0].foo",
        ),
        set_case(
            "/insurances/0/foo",
            json!(1),
            "UNKNOWN_FIELD",
            "insurances[0].foo",
        ),
        set_case(
            "/prescriptions/0/foo",
            json!(1),
            "UNKNOWN_FIELD",
            "prescriptions[0].foo",
        ),
        set_case(
            "/additionalObjects/0/foo",
            json!(1),
            "UNKNOWN_FIELD",
            "additionalObjects[0].foo",
        ),
        set_case(
            "/additionalObjects/0/records/0/foo",
            json!(1),
            "UNKNOWN_FIELD",
            "additionalObjects[0].records[0].foo",
        ),
        // Keys that do not apply to the party or contact kind.
        set_case(
            "/patient/specialty",
            json!("x"),
            "FIELD_NOT_APPLICABLE",
            "patient.specialty",
        ),
        set_case(
            "/patient/name",
            json!("x"),
            "FIELD_NOT_APPLICABLE",
            "patient.name",
        ),
        set_case(
            "/patient/npi",
            json!("1"),
            "FIELD_NOT_APPLICABLE",
            "patient.npi",
        ),
        set_case(
            "/staff/suffix",
            json!("Jr"),
            "FIELD_NOT_APPLICABLE",
            "staff.suffix",
        ),
        set_case(
            "/pharmacy/firstName",
            json!("x"),
            "FIELD_NOT_APPLICABLE",
            "pharmacy.firstName",
        ),
        set_case(
            "/pharmacy/lastName",
            json!("x"),
            "FIELD_NOT_APPLICABLE",
            "pharmacy.lastName",
        ),
        set_case(
            "/organization/gender",
            json!("F"),
            "FIELD_NOT_APPLICABLE",
            "organization.gender",
        ),
        set_case(
            "/organization/dateOfBirth",
            json!("2000-01-01"),
            "FIELD_NOT_APPLICABLE",
            "organization.dateOfBirth",
        ),
        set_case(
            "/patient/addresses/0/phoneNumber",
            json!("1"),
            "FIELD_NOT_APPLICABLE",
            "patient.addresses[0].phoneNumber",
        ),
        set_case(
            "/patient/addresses/0/ext",
            json!("1"),
            "FIELD_NOT_APPLICABLE",
            "patient.addresses[0].ext",
        ),
        set_case(
            "/patient/phones/0/city",
            json!("x"),
            "FIELD_NOT_APPLICABLE",
            "patient.phones[0].city",
        ),
        set_case(
            "/patient/phones/0/faxNumber",
            json!("1"),
            "FIELD_NOT_APPLICABLE",
            "patient.phones[0].faxNumber",
        ),
        set_case(
            "/patient/emails/0/countryCode",
            json!("+1"),
            "FIELD_NOT_APPLICABLE",
            "patient.emails[0].countryCode",
        ),
        set_case(
            "/patient/faxes/0/phoneNumber",
            json!("1"),
            "FIELD_NOT_APPLICABLE",
            "patient.faxes[0].phoneNumber",
        ),
        set_case(
            "/patient/faxes/0/emailAddress",
            json!("a@b.co"),
            "FIELD_NOT_APPLICABLE",
            "patient.faxes[0].emailAddress",
        ),
        // References.
        set_case(
            "/vendorName",
            json!("NoSuchVendor"),
            "INVALID_REFERENCE",
            "vendorName",
        ),
        set_case(
            "/programName",
            json!("NoSuchProgram"),
            "INVALID_REFERENCE",
            "programName",
        ),
        set_case(
            "/consents/0/name",
            json!("general consent"),
            "INVALID_REFERENCE",
            "consents[0].name",
        ),
        set_case(
            "/consents/0/name",
            json!("DUP-TREATMENT+DUP-MARKETING"),
            "AMBIGUOUS_REFERENCE",
            "consents[0].name",
        ),
        set_case(
            "/prescriptions/0/drugNdc",
            json!("NDC-0000"),
            "INVALID_REFERENCE",
            "prescriptions[0].drugNdc",
        ),
        set_case(
            "/prescriptions/0/drugNdc",
            json!("PROD-1001/PROD-1002"),
            "AMBIGUOUS_REFERENCE",
            "prescriptions[0].drugNdc",
        ),
        set_case(
            "/additionalObjects/0/objectName",
            json!("NoSuchObject"),
            "INVALID_REFERENCE",
            "additionalObjects[0].objectName",
        ),
        set_case(
            "/additionalObjects/0/records/0/recordType",
            json!("Mild"),
            "INVALID_VALUE",
            "additionalObjects[0].records[0].recordType",
        ),
        set_case(
            "/additionalObjects/0/records/0/additionalFields/severity",
            json!("high"),
            "UNKNOWN_FIELD",
            "additionalObjects[0].records[0].additionalFields.severity",
        ),
        set_case(
            "/additionalObjects/0/records/0/additionalFields/description",
            json!("d".repeat(256)),
            "INVALID_VALUE",
            "additionalObjects[0].records[0].additionalFields.description",
        ),
        set_case(
            "/additionalObjects/0/records/0/additionalFields/onsetDate",
            json!("2026-02-31"),
            "INVALID_VALUE",
            "additionalObjects[0].records[0].additionalFields.onsetDate",
        ),
        set_case(
            "/additionalObjects/0/records/0/additionalFields/onsetDate",
            json!(20260101),
            "INVALID_VALUE",
            "additionalObjects[0].records[0].additionalFields.onsetDate",
        ),
        set_case(
            "/patient/additionalFields",
            json!({ "x": 1 }),
            "UNKNOWN_FIELD",
            "patient.additionalFields.x",
        ),
        set_case(
            "/consents/0/additionalFields",
            json!({ "x": 1 }),
            "UNKNOWN_FIELD",
            "consents[0].additionalFields.x",
        ),
        set_case(
            "/patient/phones/0/additionalFields",
            json!({ "x": 1 }),
            "UNKNOWN_FIELD",
            "patient.phones[0].additionalFields.x",
        ),
        // The same external ID twice in one request.
        set_case(
            "/patient/phones/1/id",
            Value::Null,
            "REQUIRED_FIELD_MISSING",
            "patient.phones[1].id",
        ),
    ];
    for (pointer, path, max, prefix) in LENGTHS {
        let fill = max - prefix.chars().count();
        c.push(Case {
            edit: Edit::Set(
                pointer,
                Value::String(format!("{prefix}{}", chars(fill + 1))),
            ),
            code: "STRING_TOO_LONG",
            path,
            fix: vec![Edit::Set(
                pointer,
                Value::String(format!("{prefix}{}", chars(fill))),
            )],
        });
    }
    c
}

fn apply(doc: &mut Value, edit: &Edit) {
    match edit {
        Edit::Set(p, v) => set(doc, p, v.clone()),
        Edit::Remove(p) => remove(doc, p),
    }
}

async fn expect_single_error(app: &TestApp, doc: &Value, code: &str, path: &str, what: &str) {
    let (status, body) = app.enroll(STAFF, doc).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {body}");
    let errors = body
        .as_array()
        .unwrap_or_else(|| panic!("{what}: error body is not an array: {body}"));
    assert_eq!(
        errors.len(),
        1,
        "{what}: exactly one rule must be broken: {body}"
    );
    assert_eq!(errors[0]["errorCode"], code, "{what}: {body}");
    assert!(
        error_paths(&body).iter().any(|p| p == path),
        "{what}: {path} not named in {body}"
    );
}

#[tokio::test]
async fn each_broken_rule_is_a_400_naming_its_field_and_the_fixed_request_passes() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        add_reference_data(&app).await;
        let base = full_enrollment("RULES-1");
        let (status, body) = app.enroll(STAFF, &base).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{backend:?}: the base document must be valid: {body}"
        );
        for case in cases() {
            let mut doc = base.clone();
            apply(&mut doc, &case.edit);
            let what = format!("{backend:?} {}", case.path);
            expect_single_error(&app, &doc, case.code, case.path, &what).await;
            let mut fixed = base.clone();
            for edit in &case.fix {
                apply(&mut fixed, edit);
            }
            let pointer = case.edit.pointer();
            let (before, after) = (base.pointer(pointer), fixed.pointer(pointer));
            assert!(
                before != after || before.is_none(),
                "{what}: the fix must give {pointer} another value than the base request's"
            );
            let (status, body) = app.enroll(STAFF, &fixed).await;
            assert_eq!(status, StatusCode::OK, "{what}: fixed request: {body}");
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn a_value_of_exactly_the_maximum_length_in_characters_is_accepted() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for (pointer, path, max, prefix) in LENGTHS {
            let mut doc = full_enrollment("LEN-1");
            set(
                &mut doc,
                pointer,
                Value::String(format!("{prefix}{}", chars(max - prefix.chars().count()))),
            );
            let (status, body) = app.enroll(STAFF, &doc).await;
            assert_eq!(
                status,
                StatusCode::OK,
                "{backend:?} {path} at {max} characters: {body}"
            );
        }
        // Cardholder parts of 49 characters together (name of exactly 50) pass.
        let mut doc = full_enrollment("LEN-2");
        set(
            &mut doc,
            "/insurances/0/policyHolderFirstName",
            json!("a".repeat(24)),
        );
        set(
            &mut doc,
            "/insurances/0/policyHolderLastName",
            json!("b".repeat(25)),
        );
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{backend:?} cardholder of 50: {body}"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn duplicate_external_ids_in_one_request_are_rejected() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let mut doc = full_enrollment("DUP-1");
        let first = doc["patient"]["phones"][0]["id"].clone();
        set(&mut doc, "/patient/phones/1/id", first);
        expect_single_error(
            &app,
            &doc,
            "DUPLICATE_ID",
            "patient.phones[1].id",
            "duplicate phone id",
        )
        .await;
        app.finish().await;
    }
}

#[tokio::test]
async fn all_errors_of_a_request_are_reported_at_once() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let mut doc = full_enrollment("MANY-1");
        remove(&mut doc, "/patient/lastName");
        set(&mut doc, "/enrollmentDate", json!("2026-02-30"));
        set(&mut doc, "/prescriptions/1/drugNdc", json!("nothing"));
        set(&mut doc, "/patient/addresses/0/city", json!("x".repeat(11)));
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let paths = error_paths(&body);
        for p in [
            "patient.lastName",
            "enrollmentDate",
            "prescriptions[1].drugNdc",
            "patient.addresses[0].city",
        ] {
            assert!(paths.iter().any(|x| x == p), "{p} missing from {body}");
        }
        assert_eq!(body.as_array().map(Vec::len), Some(4), "{body}");
        app.finish().await;
    }
}

#[tokio::test]
async fn bodies_that_are_not_a_json_object_are_400() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for body in [
            "",
            "not json",
            "[1, 2]",
            "\"text\"",
            "null",
            "{\"vendorName\": ",
        ] {
            let (status, reply) = app.enroll_raw(STAFF, body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}: {reply}");
            assert_eq!(reply[0]["errorCode"], "INVALID_JSON", "{body:?}: {reply}");
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn configured_additional_fields_of_parties_are_typed_and_limited() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, body) = app
            .admin_put(
                "/object-configs/patient",
                &json!({ "fields": [
                    { "name": "preferredLanguage", "type": "STRING", "length": 5 },
                    { "name": "heightCm", "type": "INTEGER", "length": 3 },
                    { "name": "smoker", "type": "BOOLEAN" }
                ] }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let mut doc = full_enrollment("EXTRA-1");
        set(
            &mut doc,
            "/patient/additionalFields",
            json!({ "preferredLanguage": "en-US", "heightCm": 170, "smoker": false }),
        );
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        for (pointer, value) in [
            (
                "/patient/additionalFields/preferredLanguage",
                json!("en-US-x"),
            ),
            ("/patient/additionalFields/heightCm", json!(1700)),
            ("/patient/additionalFields/heightCm", json!("170")),
            ("/patient/additionalFields/smoker", json!("no")),
        ] {
            let mut bad = doc.clone();
            set(&mut bad, pointer, value);
            let path = pointer.trim_start_matches('/').replace('/', ".");
            expect_single_error(&app, &bad, "INVALID_VALUE", &path, pointer).await;
        }
        let (_, plan) = app
            .admin_get("/care-plans/DemoRx:DemoCareProgram:EXTRA-1:2026-02-01")
            .await;
        assert_eq!(
            plan["patient"]["additionalFields"]["heightCm"], 170,
            "{plan}"
        );
        app.finish().await;
    }
}
