//! Callers and their permissions: bearer tokens (stored as SHA-256 hashes) identify users;
//! each user has object-level and field-level read / create / edit permissions.

use std::collections::HashMap;

use sqlx::Row;

use crate::db::Tx;

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

/// Loads the user a token belongs to, with permissions; `None` if the token is unknown.
pub async fn load_caller(tx: &mut Tx, token: &str) -> Result<Option<Caller>, sqlx::Error> {
    let Some(row) = sqlx::query("SELECT id, is_admin FROM app_user WHERE token_hash = $1")
        .bind(hash_token(token))
        .fetch_optional(&mut **tx)
        .await?
    else {
        return Ok(None);
    };
    let user_id: i64 = row.try_get(0)?;
    let admin: i64 = row.try_get(1)?;
    let rows = sqlx::query(
        "SELECT object_name, field_name, can_read, can_create, can_edit \
         FROM user_permission WHERE user_id = $1",
    )
    .bind(user_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut objects = HashMap::new();
    let mut fields = HashMap::new();
    for r in rows {
        let object: String = r.try_get(0)?;
        let field: String = r.try_get(1)?;
        let flags = Flags {
            read: r.try_get::<i64, _>(2)? != 0,
            create: r.try_get::<i64, _>(3)? != 0,
            edit: r.try_get::<i64, _>(4)? != 0,
        };
        if field.is_empty() {
            objects.insert(object, flags);
        } else {
            fields.insert((object, field), flags);
        }
    }
    Ok(Some(Caller {
        user_id,
        admin: admin != 0,
        objects,
        fields,
    }))
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

/// Creates a user and its permissions; returns the user's external id.
pub async fn create_user(
    tx: &mut Tx,
    name: &str,
    token: &str,
    admin: bool,
    grants: &[Grant],
) -> Result<String, sqlx::Error> {
    let external_id = uuid::Uuid::new_v4().to_string();
    let row = sqlx::query(
        "INSERT INTO app_user (external_id, name, token_hash, is_admin, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(external_id.clone())
    .bind(name.to_owned())
    .bind(hash_token(token))
    .bind(i64::from(admin))
    .bind(crate::db::now())
    .fetch_one(&mut **tx)
    .await?;
    let user_id: i64 = row.try_get(0)?;
    replace_grants(tx, user_id, grants).await?;
    Ok(external_id)
}

/// Replaces every permission entry of a user.
pub async fn replace_grants(
    tx: &mut Tx,
    user_id: i64,
    grants: &[Grant],
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM user_permission WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut **tx)
        .await?;
    for g in grants {
        sqlx::query(
            "INSERT INTO user_permission (user_id, object_name, field_name, can_read, can_create, can_edit) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (user_id, object_name, field_name) DO UPDATE SET \
             can_read = excluded.can_read, can_create = excluded.can_create, can_edit = excluded.can_edit",
        )
        .bind(user_id)
        .bind(g.object.clone())
        .bind(g.field.clone().unwrap_or_default())
        .bind(i64::from(g.flags.read))
        .bind(i64::from(g.flags.create))
        .bind(i64::from(g.flags.edit))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Reads the permission entries of a user.
pub async fn list_grants(tx: &mut Tx, user_id: i64) -> Result<Vec<Grant>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT object_name, field_name, can_read, can_create, can_edit FROM user_permission \
         WHERE user_id = $1 ORDER BY object_name, field_name",
    )
    .bind(user_id)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            let field: String = r.try_get(1)?;
            Ok(Grant {
                object: r.try_get(0)?,
                field: (!field.is_empty()).then_some(field),
                flags: Flags {
                    read: r.try_get::<i64, _>(2)? != 0,
                    create: r.try_get::<i64, _>(3)? != 0,
                    edit: r.try_get::<i64, _>(4)? != 0,
                },
            })
        })
        .collect()
}
