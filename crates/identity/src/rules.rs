//! The input rules, one copy each: e-mail, names, account roles and lifetimes. Each refusal
//! names its field and the rule, so a form can put the message under the right input.

use crate::error::IdentityError;
use crate::model::AccountRole;

/// Longest accepted e-mail address (RFC 5321's path limit).
pub const EMAIL_MAX: usize = 254;
/// Longest accepted person name.
pub const USER_NAME_MAX: usize = 200;
/// Longest accepted token name.
pub const TOKEN_NAME_MAX: usize = 100;
/// An invite's lifetime in days: default and range.
pub const INVITE_DAYS: Days = Days {
    default: 7,
    max: 30,
};
/// A personal token's lifetime in days: default and range.
pub const TOKEN_DAYS: Days = Days {
    default: 90,
    max: 365,
};

/// A lifetime rule: 1 to `max` whole days, `default` when not given.
#[derive(Debug, Clone, Copy)]
pub struct Days {
    /// When the request names none.
    pub default: i64,
    /// The longest allowed.
    pub max: i64,
}

impl Days {
    /// The lifetime `raw` asks for, checked; `None` gives the default.
    pub fn check(self, raw: Option<i64>) -> Result<i64, IdentityError> {
        match raw {
            None => Ok(self.default),
            Some(days) if (1..=self.max).contains(&days) => Ok(days),
            Some(_) => Err(IdentityError::invalid(
                "expires_in_days",
                format!("must be a whole number of days from 1 to {}", self.max),
            )),
        }
    }

    /// The lifetime in milliseconds.
    pub fn millis(days: i64) -> i64 {
        days * 24 * 60 * 60 * 1000
    }
}

/// Checks an e-mail address: one `@` with text on both sides, no whitespace (none around it
/// either: the rule is exactly the OpenAPI document's pattern), at most 254 characters.
/// Deliverability is not checked; the address is an identifier here.
pub fn parse_email(raw: &str) -> Result<String, IdentityError> {
    let email = raw;
    let invalid = |message: &str| IdentityError::invalid("email", message);
    if email.is_empty() {
        return Err(invalid("must not be empty"));
    }
    if email.chars().count() > EMAIL_MAX {
        return Err(invalid("must be at most 254 characters"));
    }
    if email.chars().any(char::is_whitespace) {
        return Err(invalid("must not contain whitespace"));
    }
    match email.split_once('@') {
        Some((local, domain))
            if !local.is_empty() && !domain.is_empty() && !domain.contains('@') =>
        {
            Ok(email.to_owned())
        }
        _ => Err(invalid("must have the form local@domain")),
    }
}

/// Checks a person's name: not blank, at most 200 characters.
pub fn parse_user_name(raw: &str) -> Result<String, IdentityError> {
    bounded_text("name", raw, USER_NAME_MAX)
}

/// Checks a token's name: not blank, at most 100 characters.
pub fn parse_token_name(raw: &str) -> Result<String, IdentityError> {
    bounded_text("name", raw, TOKEN_NAME_MAX)
}

fn bounded_text(field: &'static str, raw: &str, max: usize) -> Result<String, IdentityError> {
    let text = raw.trim();
    if text.is_empty() {
        return Err(IdentityError::invalid(field, "must not be empty"));
    }
    if text.chars().count() > max {
        return Err(IdentityError::invalid(
            field,
            format!("must be at most {max} characters"),
        ));
    }
    Ok(text.to_owned())
}

/// Checks an account role name.
pub fn parse_account_role(raw: &str) -> Result<AccountRole, IdentityError> {
    AccountRole::parse(raw.trim())
        .ok_or_else(|| IdentityError::invalid("role", "must be one of admin, member"))
}

/// The name a person gets when they give none: the e-mail's local part.
pub fn default_name(email: &str) -> String {
    email.split('@').next().unwrap_or(email).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_rules() {
        assert_eq!(parse_email("ada@example.org").unwrap(), "ada@example.org");
        for bad in [
            "",
            "ada",
            "@example.org",
            "ada@",
            "a b@c",
            "a@b@c",
            " ada@example.org",
        ] {
            let err = parse_email(bad).unwrap_err();
            assert_eq!(err.field(), Some("email"), "{bad:?}");
        }
        assert!(parse_email(&format!("{}@x.org", "a".repeat(250))).is_err());
    }

    #[test]
    fn names_roles_and_lifetimes() {
        assert_eq!(parse_user_name(" Ada ").unwrap(), "Ada");
        assert!(parse_user_name("  ").is_err());
        assert!(parse_user_name(&"n".repeat(201)).is_err());
        assert!(parse_token_name(&"n".repeat(100)).is_ok());
        assert!(parse_token_name(&"n".repeat(101)).is_err());
        assert_eq!(parse_account_role("admin").unwrap(), AccountRole::Admin);
        assert_eq!(
            parse_account_role("owner").unwrap_err().field(),
            Some("role")
        );
        assert_eq!(INVITE_DAYS.check(None).unwrap(), 7);
        assert_eq!(INVITE_DAYS.check(Some(30)).unwrap(), 30);
        for bad in [0, 31, -1] {
            assert_eq!(
                INVITE_DAYS.check(Some(bad)).unwrap_err().field(),
                Some("expires_in_days")
            );
        }
        assert_eq!(TOKEN_DAYS.check(None).unwrap(), 90);
        assert!(TOKEN_DAYS.check(Some(365)).is_ok());
        assert!(TOKEN_DAYS.check(Some(366)).is_err());
        assert_eq!(default_name("ada@example.org"), "ada");
    }
}
