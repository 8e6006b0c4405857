//! Registering an app: the one path both `POST /v1/apps` and the first build upload of an
//! unregistered devfile take, so both apply the same rules to the name, display name and
//! description (they once disagreed: the upload path cut an over-long display name that the
//! API refused) and answer a taken name the same way.

use slipway_devfile::AppName;

use crate::db::Tx;
use crate::model::Caller;
use crate::store::apps::{self, AppRecord, NewApp};

/// Longest display name, in characters (after trimming).
pub const DISPLAY_NAME_MAX: usize = 100;
/// Longest description, in characters (after trimming).
pub const DESCRIPTION_MAX: usize = 4000;

/// Why an app could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// A value breaks its rule; `field` is `name`, `display_name` or `description`.
    #[error("{field}: {message}")]
    Invalid {
        /// The value's name.
        field: &'static str,
        /// The rule it breaks.
        message: String,
    },
    /// Another app (of any account) has the name.
    #[error(
        "the app name {0:?} is already taken; app names are unique across the platform, choose another"
    )]
    Taken(String),
    /// The database failed.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

impl RegisterError {
    fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field,
            message: message.into(),
        }
    }
}

/// Checks the three values (name by the app-name rule; display name required and not blank;
/// both texts trimmed and within their lengths).
pub fn check(
    name: &str,
    display_name: &str,
    description: Option<&str>,
) -> Result<NewApp, RegisterError> {
    let name = AppName::parse(name).map_err(|e| RegisterError::invalid("name", e.to_string()))?;
    let display_name = display_name.trim().to_owned();
    if display_name.is_empty() {
        return Err(RegisterError::invalid("display_name", "must not be blank"));
    }
    if display_name.chars().count() > DISPLAY_NAME_MAX {
        return Err(RegisterError::invalid(
            "display_name",
            format!("must be at most {DISPLAY_NAME_MAX} characters"),
        ));
    }
    let description = description.unwrap_or("").trim().to_owned();
    if description.chars().count() > DESCRIPTION_MAX {
        return Err(RegisterError::invalid(
            "description",
            format!("must be at most {DESCRIPTION_MAX} characters"),
        ));
    }
    Ok(NewApp {
        name,
        display_name,
        description,
    })
}

/// Registers `new` for `caller` (who becomes its owner) in the request's transaction.
pub async fn register_app(
    tx: &mut Tx,
    caller: &Caller,
    new: &NewApp,
) -> Result<AppRecord, RegisterError> {
    match apps::register(tx, caller, new).await {
        Err(e) if crate::store::is_unique_violation(&e) => {
            Err(RegisterError::Taken(new.name.as_str().to_owned()))
        }
        Err(e) => Err(e.into()),
        Ok(app) => {
            tracing::info!(app_id = %app.id, app_name = %app.name, "app registered");
            Ok(app)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_names_its_field() {
        let long = "x".repeat(DISPLAY_NAME_MAX + 1);
        let longer = "x".repeat(DESCRIPTION_MAX + 1);
        for (name, display, description, field) in [
            ("Bad Name", "D", None, "name"),
            ("ok", "   ", None, "display_name"),
            ("ok", long.as_str(), None, "display_name"),
            ("ok", "D", Some(longer.as_str()), "description"),
        ] {
            match check(name, display, description) {
                Err(RegisterError::Invalid { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        let ok = check("ok", " Orders ", Some("  d ")).unwrap();
        assert_eq!(
            (ok.display_name.as_str(), ok.description.as_str()),
            ("Orders", "d")
        );
        let exact = "y".repeat(DISPLAY_NAME_MAX);
        assert!(check("ok", &exact, None).is_ok());
    }
}
