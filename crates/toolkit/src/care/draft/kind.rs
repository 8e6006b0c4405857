//! Which form a draft belongs to, and the file name that follows from it: parsed once, so no
//! caller's text ever becomes part of a path unchecked.

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
            ("missing_info", Some(uuid)) => crate::links::uuid_segment(uuid.trim(), "a request")
                .map(Self::MissingInfo)
                .map_err(|e| KindError(e.problem().to_owned())),
            ("missing_info", None) => Err(KindError(
                "a missing-information draft needs its request's UUID".to_owned(),
            )),
            (other, _) => Err(KindError(format!(
                "{other:?} is not a form with drafts (enrollment, missing_info)"
            ))),
        }
    }

    /// The draft's file name in the drafts directory; also the associated data it is sealed
    /// with, so a file renamed to another request's name does not open.
    pub fn file_name(&self) -> String {
        match self {
            Self::Enrollment => "enrollment.bin".to_owned(),
            Self::MissingInfo(uuid) => format!("missing-info-{uuid}.bin"),
        }
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
}
