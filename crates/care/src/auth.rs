//! Callers and their permissions: bearer tokens (stored as SHA-256 hashes) identify users;
//! each user has object-level and field-level read / create / edit permissions.

use std::collections::HashMap;

/// Object names permissions are granted on.
pub mod objects {
    /// Care plans (one per patient, program, vendor and enrollment date).
    pub const CARE_PLAN: &str = "CarePlan";
    /// Patient and related-party accounts.
    pub const ACCOUNT: &str = "Account";
    /// Contact-information records.
    pub const CONTACT_POINT: &str = "ContactPoint";
    /// Consents.
    pub const CONSENT: &str = "Consent";
    /// Member plans (insurances).
    pub const MEMBER_PLAN: &str = "MemberPlan";
    /// Prescriptions.
    pub const PRESCRIPTION: &str = "Prescription";
    /// Records of additional objects.
    pub const ADDITIONAL_OBJECT: &str = "AdditionalObject";
    /// eRX request (audit) records.
    pub const ERX_REQUEST: &str = "ErxRequest";
    /// Missing-information data requests.
    pub const DATA_REQUEST: &str = "DataRequest";
    /// Every object name, for granting full access.
    pub const ALL: &[&str] = &[
        CARE_PLAN,
        ACCOUNT,
        CONTACT_POINT,
        CONSENT,
        MEMBER_PLAN,
        PRESCRIPTION,
        ADDITIONAL_OBJECT,
        ERX_REQUEST,
        DATA_REQUEST,
    ];
}

/// One kind of access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// See the object or field.
    Read,
    /// Create records.
    Create,
    /// Change records.
    Edit,
}

/// The flags of one permission entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Flags {
    /// Read access.
    #[serde(default)]
    pub read: bool,
    /// Create access.
    #[serde(default)]
    pub create: bool,
    /// Edit access.
    #[serde(default)]
    pub edit: bool,
}

impl Flags {
    /// All three accesses.
    pub const FULL: Flags = Flags {
        read: true,
        create: true,
        edit: true,
    };

    fn allows(self, access: Access) -> bool {
        match access {
            Access::Read => self.read,
            Access::Create => self.create,
            Access::Edit => self.edit,
        }
    }
}

/// The authenticated user of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Row id of the user (recorded in history and audit records).
    pub user_id: i64,
    /// Admins may use the admin API and have every access.
    pub admin: bool,
    objects: HashMap<String, Flags>,
    fields: HashMap<(String, String), Flags>,
}

impl Caller {
    /// The service itself (demo loading): every access, no user row.
    /// A user with these object- and field-level permissions (the store builds callers).
    pub fn new(
        user_id: i64,
        admin: bool,
        objects: HashMap<String, Flags>,
        fields: HashMap<(String, String), Flags>,
    ) -> Self {
        Self {
            user_id,
            admin,
            objects,
            fields,
        }
    }

    /// The service itself (demo loading): every access, no user row.
    pub fn system() -> Self {
        Self {
            user_id: 0,
            admin: true,
            objects: HashMap::new(),
            fields: HashMap::new(),
        }
    }

    /// Whether the caller has `access` on the object.
    pub fn can(&self, object: &str, access: Access) -> bool {
        self.admin || self.objects.get(object).is_some_and(|f| f.allows(access))
    }

    /// Whether the caller has `access` on a field: the field's own entry if there is one,
    /// else the object's.
    pub fn can_field(&self, object: &str, field: &str, access: Access) -> bool {
        if self.admin {
            return true;
        }
        match self.fields.get(&(object.to_owned(), field.to_owned())) {
            Some(f) => f.allows(access),
            None => self.can(object, access),
        }
    }
}

pub use slipway_server::token::hash_token;

/// Prefix of every care token, so a leaked one is recognisable in a secret scanner.
pub const TOKEN_PREFIX: &str = "cst_";

/// A fresh random token for a new user: the prefix and 32 bytes of OS randomness.
pub fn new_token() -> Result<String, getrandom::Error> {
    slipway_server::token::Token::generate(TOKEN_PREFIX).map(|t| t.expose().to_owned())
}

/// One permission entry as the admin API reads and writes it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// Object name, one of [`objects::ALL`].
    pub object: String,
    /// Field name for a field-level entry; absent for the object itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The accesses.
    #[serde(flatten)]
    pub flags: Flags,
}
