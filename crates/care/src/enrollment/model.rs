//! The typed enrollment a valid request body parses into, and the external-ID formulas.

use serde_json::{Map, Value};

/// The six party kinds of an enrollment request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartyKind {
    /// The enrolled patient (required).
    Patient,
    /// The prescribing physician.
    Physician,
    /// A staff member.
    Staff,
    /// A caregiver.
    Caregiver,
    /// The pharmacy, tied to the prescriptions.
    Pharmacy,
    /// An organization.
    Organization,
}

impl PartyKind {
    /// All kinds, in request order.
    pub const ALL: [PartyKind; 6] = [
        PartyKind::Patient,
        PartyKind::Physician,
        PartyKind::Staff,
        PartyKind::Caregiver,
        PartyKind::Pharmacy,
        PartyKind::Organization,
    ];

    /// The request key (also the object name of its `additionalFields` configuration).
    pub fn key(self) -> &'static str {
        match self {
            PartyKind::Patient => "patient",
            PartyKind::Physician => "physician",
            PartyKind::Staff => "staff",
            PartyKind::Caregiver => "caregiver",
            PartyKind::Pharmacy => "pharmacy",
            PartyKind::Organization => "organization",
        }
    }

    /// Whether the party is a person (has names, gender and birth date).
    pub fn is_person(self) -> bool {
        !matches!(self, PartyKind::Pharmacy | PartyKind::Organization)
    }
}

/// The four contact kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactKind {
    /// `addresses[]`.
    Address,
    /// `phones[]`.
    Phone,
    /// `emails[]`.
    Email,
    /// `faxes[]`.
    Fax,
}

impl ContactKind {
    /// All kinds, in request order.
    pub const ALL: [ContactKind; 4] = [
        ContactKind::Address,
        ContactKind::Phone,
        ContactKind::Email,
        ContactKind::Fax,
    ];

    /// The array key on a party.
    pub fn array_key(self) -> &'static str {
        match self {
            ContactKind::Address => "addresses",
            ContactKind::Phone => "phones",
            ContactKind::Email => "emails",
            ContactKind::Fax => "faxes",
        }
    }

    /// The kind name (also the object name of its `additionalFields` configuration).
    pub fn name(self) -> &'static str {
        match self {
            ContactKind::Address => "address",
            ContactKind::Phone => "phone",
            ContactKind::Email => "email",
            ContactKind::Fax => "fax",
        }
    }
}

/// A validated party.
#[derive(Debug, Clone, Default)]
pub struct Party {
    /// Path in the request, for the response.
    pub path: String,
    /// Source system ID.
    pub id: String,
    /// Present string keys, as (column, value).
    pub columns: Vec<(&'static str, String)>,
    /// Contact-information records.
    pub contacts: Vec<Contact>,
    /// Configured additional fields.
    pub extra: Map<String, Value>,
}

/// A validated contact-information record.
#[derive(Debug, Clone)]
pub struct Contact {
    /// Path in the request.
    pub path: String,
    /// Kind of contact.
    pub kind: ContactKind,
    /// External ID from the request.
    pub id: String,
    /// Present values, as (column, value).
    pub columns: Vec<(&'static str, String)>,
    /// `primary`, if given.
    pub primary: Option<bool>,
    /// Configured additional fields.
    pub extra: Map<String, Value>,
}

/// A validated consent.
#[derive(Debug, Clone)]
pub struct Consent {
    /// Path in the request.
    pub path: String,
    /// External ID from the request.
    pub id: String,
    /// Row id of the data use purpose the name refers to.
    pub purpose_id: i64,
    /// Present values, as (column, value).
    pub columns: Vec<(&'static str, String)>,
    /// Configured additional fields.
    pub extra: Map<String, Value>,
}

/// A validated insurance (member plan).
#[derive(Debug, Clone)]
pub struct Insurance {
    /// Path in the request.
    pub path: String,
    /// Position in `insurances`, used for the external ID when `id` is absent.
    pub index: usize,
    /// External ID from the request, if given.
    pub id: Option<String>,
    /// Present values, as (column, value).
    pub columns: Vec<(&'static str, String)>,
    /// Configured additional fields.
    pub extra: Map<String, Value>,
}

/// A validated prescription.
#[derive(Debug, Clone)]
pub struct Prescription {
    /// Path in the request.
    pub path: String,
    /// External ID from the request.
    pub id: String,
    /// Row id of the product `drugNdc` refers to.
    pub product_id: i64,
    /// Present values, as (column, value).
    pub columns: Vec<(&'static str, String)>,
    /// `numberOfRefills`, if given.
    pub refills: Option<i64>,
    /// Configured additional fields.
    pub extra: Map<String, Value>,
}

/// A validated record of an additional object.
#[derive(Debug, Clone)]
pub struct AdditionalRecord {
    /// Path in the request.
    pub path: String,
    /// The configured object name.
    pub object_name: String,
    /// Position in the object's `records`.
    pub index: usize,
    /// The record type.
    pub record_type: String,
    /// The record's fields.
    pub fields: Map<String, Value>,
}

/// A fully validated enrollment request.
#[derive(Debug, Clone, Default)]
pub struct Enrollment {
    /// eRX vendor API name.
    pub vendor: String,
    /// Program API name.
    pub program: String,
    /// `yyyy-mm-dd`.
    pub enrollment_date: String,
    /// Parties present, with their kind; the patient first.
    pub parties: Vec<(PartyKind, Party)>,
    /// Consents.
    pub consents: Vec<Consent>,
    /// Insurances.
    pub insurances: Vec<Insurance>,
    /// Prescriptions.
    pub prescriptions: Vec<Prescription>,
    /// Additional-object records.
    pub additional: Vec<AdditionalRecord>,
}

impl Enrollment {
    /// The patient's source-system ID.
    pub fn patient_id(&self) -> &str {
        self.parties
            .iter()
            .find(|(k, _)| *k == PartyKind::Patient)
            .map_or("", |(_, p)| p.id.as_str())
    }

    /// The care plan's external ID: `{vendorName}:{programName}:{patient.id}:{enrollmentDate}`.
    /// Vendor and program API names cannot contain `:` and the date has a fixed length, so
    /// the formula is unambiguous.
    pub fn care_plan_external_id(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.vendor,
            self.program,
            self.patient_id(),
            self.enrollment_date
        )
    }
}

/// External ID of a record the request names by `id`: `{vendorName}:{kind}:{id}`; vendors
/// keep separate ID spaces.
pub fn scoped_id(vendor: &str, kind: &str, id: &str) -> String {
    format!("{vendor}:{kind}:{id}")
}
