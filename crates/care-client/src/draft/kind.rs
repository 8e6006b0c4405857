//! Which form, and which environment, a draft belongs to, and the file name that follows from
//! them: parsed once, so no caller's text ever becomes part of a path unchecked.

use std::fmt;

/// A form with a draft: the enrollment form (one draft), or the missing-information form of one
/// request (one draft per request UUID).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DraftKind {
    /// The enrollment form.
    Enrollment,
    /// The missing-information form of the request with this UUID (lowercase, 8-4-4-4-12).
    MissingInfo(String),
}

/// A kind the UI named that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KindError(String);

impl DraftKind {
    /// `("enrollment", _)` or `("missing_info", Some(uuid))`.
    ///
    /// # Errors
    /// An unknown kind, or a missing-information draft without a request UUID in its 8-4-4-4-12
    /// form.
    pub fn parse(kind: &str, uuid: Option<&str>) -> Result<Self, KindError> {
        match (kind, uuid) {
            ("enrollment", _) => Ok(Self::Enrollment),
            ("missing_info", Some(uuid)) => {
                slipway_toolkit::links::uuid_segment(uuid.trim(), "a request")
                    .map(Self::MissingInfo)
                    .map_err(|e| KindError(e.problem().to_owned()))
            }
            ("missing_info", None) => Err(KindError(
                "a missing-information draft needs its request's UUID".to_owned(),
            )),
            (other, _) => Err(KindError(format!(
                "{other:?} is not a form with drafts (enrollment, missing_info)"
            ))),
        }
    }

    /// The form's part of a draft's file name ([`Draft::file_name`]).
    fn file_name(&self) -> String {
        match self {
            Self::Enrollment => "enrollment.bin".to_owned(),
            Self::MissingInfo(uuid) => format!("missing-info-{uuid}.bin"),
        }
    }
}

/// A draft: a form's, typed for the care service of one environment. Request UUIDs name
/// requests of one service only, and an enrollment belongs to the service it was typed for,
/// so the environment is part of the file name (and so of the data the draft is sealed with):
/// another environment's form neither restores it nor, by answering that the request is
/// unknown there, deletes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Draft {
    /// The remote environment's name; `None`: this computer's care service (embedded, or the
    /// one the process environment configures).
    environment: Option<String>,
    kind: DraftKind,
}

impl Draft {
    /// `kind`'s draft in `environment` (`None`: this computer).
    ///
    /// # Errors
    /// The environment's name is not one (1-63 letters, digits, `-`, `_`).
    pub fn new(environment: Option<&str>, kind: DraftKind) -> Result<Self, KindError> {
        if let Some(name) = environment {
            slipway_platform_client::credentials::check_environment(name)
                .map_err(|e| KindError(e.to_string()))?;
        }
        Ok(Self {
            environment: environment.map(str::to_owned),
            kind,
        })
    }

    /// Which form.
    pub fn kind(&self) -> &DraftKind {
        &self.kind
    }

    /// The draft's file name in the drafts directory, `<environment>.<form>.bin`, the
    /// environment being `this-computer` or `env-<name>` (names have no `.`); also the
    /// associated data it is sealed with, so a file renamed to another request's or another
    /// environment's name does not open.
    pub fn file_name(&self) -> String {
        let place = match &self.environment {
            Some(name) => format!("env-{name}"),
            None => "this-computer".to_owned(),
        };
        format!("{place}.{}", self.kind.file_name())
    }
}

impl fmt::Display for DraftKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Enrollment => f.write_str("the enrollment draft"),
            Self::MissingInfo(uuid) => write!(f, "the draft of request {uuid}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_to_safe_file_names() {
        assert_eq!(
            DraftKind::parse("enrollment", None).unwrap().file_name(),
            "enrollment.bin"
        );
        let kind =
            DraftKind::parse("missing_info", Some("5F0C8B8E-1D2A-4C1E-9A57-0A4A5C1D7E01")).unwrap();
        assert_eq!(
            kind.file_name(),
            "missing-info-5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01.bin"
        );
        for (kind, uuid) in [
            ("missing_info", None),
            ("missing_info", Some("../../etc/passwd")),
            ("missing_info", Some("5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e0/")),
            ("invoice", None),
        ] {
            assert!(DraftKind::parse(kind, uuid).is_err(), "{kind} {uuid:?}");
        }
    }

    #[test]
    fn each_environment_has_its_own_file_names() {
        let kind =
            DraftKind::parse("missing_info", Some("5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01")).unwrap();
        let here = Draft::new(None, kind.clone()).unwrap();
        let staging = Draft::new(Some("staging"), kind.clone()).unwrap();
        assert_eq!(
            here.file_name(),
            "this-computer.missing-info-5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01.bin"
        );
        assert_eq!(
            staging.file_name(),
            "env-staging.missing-info-5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01.bin"
        );
        assert_eq!(
            Draft::new(Some("this-computer"), DraftKind::Enrollment)
                .unwrap()
                .file_name(),
            "env-this-computer.enrollment.bin"
        );
        for bad in ["", "../x", "a.b", "a/b"] {
            assert!(Draft::new(Some(bad), kind.clone()).is_err(), "{bad:?}");
        }
    }
}
