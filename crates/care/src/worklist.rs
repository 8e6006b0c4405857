//! The care staff's worklist (domain): the rules over a missing-information request seen as a
//! FHIR `Task`: a Task search read from its query parameters and written back into its links,
//! the keyset cursor's text in a `next` link, and claims (who may hold a request). The values
//! (the Task status, the holder, the search and its cursor) are in `model`, where the store
//! reads them too; SQL is in `store::worklist`; the FHIR shapes in `fhir`.
//!
//! A data request's stored `status` (`Active`, `Completed`, `Ended`, `Cancelled`) and its
//! claim decide its Task status; so does the calendar, since an active request past its date
//! has expired without an answer. That is why the Task status is computed, never stored.

use crate::missing_info as mi;
use crate::model::{Cursor, DataRequest, Search, TaskStatus};
use crate::violation::Violation;

/// The staff member who holds a request, named here too: a claim is refused naming them.
pub use crate::model::Holder;

impl Cursor {
    /// The cursor's text in a `next` link: `<date>_<id>` (no character that needs escaping).
    pub fn encode(&self) -> String {
        format!("{}_{}", self.expiration_date, self.id)
    }

    /// The cursor a `next` link carries, or a 400-worthy violation naming `_cursor`.
    pub fn decode(raw: &str) -> Result<Cursor, Violation> {
        let bad = || {
            Violation::new(
                "INVALID_CURSOR",
                "_cursor must be the value of a next link of an earlier page",
                "_cursor",
            )
        };
        let (date, id) = raw.split_once('_').ok_or_else(bad)?;
        if id.is_empty() || id.len() > 18 || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let id: i64 = id.parse().map_err(|_| bad())?;
        if date.is_empty()
            || date.len() > 10
            || date.contains(|c: char| !c.is_ascii_digit() && c != '-')
        {
            return Err(bad());
        }
        Ok(Cursor {
            expiration_date: date.to_owned(),
            id,
        })
    }
}

/// Page size when `_count` is absent, and its most.
pub const DEFAULT_COUNT: u32 = 20;
/// The most Tasks one page holds.
pub const MAX_COUNT: u32 = 100;

impl Search {
    /// The search the query parameters ask for; every malformed one is listed (400).
    pub fn parse(
        status: Option<&str>,
        owner: Option<&str>,
        count: Option<&str>,
        cursor: Option<&str>,
        total: Option<&str>,
    ) -> Result<Search, Vec<Violation>> {
        let mut problems = Vec::new();
        let total = match total {
            None | Some("none") => false,
            Some("accurate" | "estimate") => true,
            Some(other) => {
                problems.push(Violation::new(
                    "INVALID_TOTAL",
                    format!("_total {other:?} is not one of none, estimate, accurate"),
                    "_total",
                ));
                false
            }
        };
        let mut statuses = Vec::new();
        for code in status.into_iter().flat_map(|s| s.split(',')) {
            match TaskStatus::parse(code) {
                Some(s) if !statuses.contains(&s) => statuses.push(s),
                Some(_) => {}
                None => problems.push(Violation::new(
                    "INVALID_STATUS",
                    format!(
                        "status {code:?} is not a Task status this service uses; use {}",
                        TaskStatus::ALL.map(TaskStatus::as_str).join(", ")
                    ),
                    "status",
                )),
            }
        }
        statuses.sort();
        let owner = owner.map(|o| o.strip_prefix("Practitioner/").unwrap_or(o).to_owned());
        if owner.as_deref().is_some_and(|o| !is_user_id(o)) {
            problems.push(Violation::new(
                "INVALID_OWNER",
                "owner must be a user ID (letters, digits, '.', '_', ':' or '-'), or Practitioner/<user ID>",
                "owner",
            ));
        }
        let count = match count {
            None => DEFAULT_COUNT,
            // Digits only: what a schema's integer allows (no sign, no spaces).
            Some(raw) => match raw.parse::<u32>() {
                Ok(n)
                    if (1..=MAX_COUNT).contains(&n) && raw.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    n
                }
                _ => {
                    problems.push(Violation::new(
                        "INVALID_COUNT",
                        format!("_count must be a whole number from 1 to {MAX_COUNT}"),
                        "_count",
                    ));
                    DEFAULT_COUNT
                }
            },
        };
        let after = match cursor.map(Cursor::decode).transpose() {
            Ok(c) => c,
            Err(v) => {
                problems.push(v);
                None
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Search {
            statuses,
            owner,
            count,
            after,
            total,
        })
    }

    /// The query string of this search starting at `after` (the `self` and `next` links).
    pub fn query_string(&self, after: Option<&Cursor>) -> String {
        let mut parts = Vec::new();
        if !self.statuses.is_empty() {
            let codes: Vec<&str> = self.statuses.iter().map(|s| s.as_str()).collect();
            parts.push(format!("status={}", codes.join(",")));
        }
        if let Some(owner) = &self.owner {
            parts.push(format!("owner={}", percent_encode(owner)));
        }
        parts.push(format!("_count={}", self.count));
        if self.total {
            parts.push("_total=accurate".to_owned());
        }
        if let Some(c) = after {
            parts.push(format!("_cursor={}", c.encode()));
        }
        parts.join("&")
    }
}

/// Whether `s` can be a user's ID: what the service makes (UUIDs) and what an ID may hold.
fn is_user_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".:_-".contains(&b))
}

/// Escapes everything but unreserved characters (RFC 3986), for an owner ID in a link.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why a claim or a release is refused (beyond 401/403/404).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    /// Someone else holds the request (409, naming them).
    #[error("{} holds this request", .0.name)]
    HeldByOther(Holder),
    /// The request has ended or expired (409).
    #[error("the request is no longer active")]
    NotActive(Violation),
}

impl ClaimError {
    /// The violation the 409 carries.
    pub fn violation(&self) -> Violation {
        match self {
            ClaimError::HeldByOther(h) => Violation::new(
                "ALREADY_CLAIMED",
                format!(
                    "{} (user {}) holds this request; they can release it, or a care admin can",
                    h.name, h.external_id
                ),
                "",
            ),
            ClaimError::NotActive(v) => v.clone(),
        }
    }
}

/// Refused unless the request can still be claimed (active and unexpired).
pub fn check_claimable(req: &DataRequest) -> Result<(), ClaimError> {
    mi::check_active(req).map_err(|e| match e {
        mi::RequestError::NotActive(v) => ClaimError::NotActive(v),
        other => ClaimError::NotActive(Violation::new("REQUEST_NOT_ACTIVE", other.to_string(), "")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(status: &str, expiration: &str, held: bool) -> DataRequest {
        DataRequest {
            holder: held.then(|| Holder {
                user_id: 7,
                external_id: "nurse-1".into(),
                name: "Nurse".into(),
            }),
            ..DataRequest::sample(status, expiration)
        }
    }

    #[test]
    fn the_task_status_follows_the_stored_status_the_claim_and_the_calendar() {
        let future = "2999-01-01";
        assert_eq!(
            TaskStatus::of(&req("Active", future, false)),
            TaskStatus::Requested
        );
        assert_eq!(
            TaskStatus::of(&req("Active", future, true)),
            TaskStatus::InProgress
        );
        assert_eq!(
            TaskStatus::of(&req("Active", "2000-01-01", true)),
            TaskStatus::Failed
        );
        assert_eq!(
            TaskStatus::reason(&req("Active", "2000-01-01", false)),
            Some("expired")
        );
        assert_eq!(
            TaskStatus::of(&req("Completed", future, true)),
            TaskStatus::Completed
        );
        assert_eq!(
            TaskStatus::of(&req("Ended", future, false)),
            TaskStatus::Cancelled
        );
        assert_eq!(
            TaskStatus::reason(&req("Ended", future, false)),
            Some("ended")
        );
        assert_eq!(
            TaskStatus::of(&req("Cancelled", future, false)),
            TaskStatus::Cancelled
        );
        assert_eq!(TaskStatus::reason(&req("Cancelled", future, false)), None);
    }

    #[test]
    fn a_search_names_each_bad_parameter() {
        let err = Search::parse(
            Some("requested,ready"),
            Some(""),
            Some("0"),
            Some("x"),
            Some("all"),
        )
        .unwrap_err();
        let fields: Vec<&str> = err.iter().map(|v| v.fields[0].as_str()).collect();
        assert_eq!(fields, ["_total", "status", "owner", "_count", "_cursor"]);
        assert!(err[1].message.contains("\"ready\""), "{}", err[1].message);
    }

    #[test]
    fn a_search_round_trips_through_its_next_link() {
        let s = Search::parse(
            Some("in-progress,requested,requested"),
            Some("Practitioner/nurse:1"),
            Some("5"),
            None,
            Some("accurate"),
        )
        .unwrap();
        assert_eq!(s.statuses, [TaskStatus::Requested, TaskStatus::InProgress]);
        assert_eq!(s.owner.as_deref(), Some("nurse:1"));
        let cursor = Cursor {
            expiration_date: "2026-12-01".into(),
            id: 42,
        };
        let q = s.query_string(Some(&cursor));
        assert_eq!(
            q,
            "status=requested,in-progress&owner=nurse%3A1&_count=5&_total=accurate&_cursor=2026-12-01_42"
        );
        assert_eq!(Cursor::decode(&cursor.encode()).unwrap(), cursor);
        assert!(Cursor::decode("2026-12-01_x").is_err());
        assert!(Cursor::decode("2026'--_1").is_err());
        assert!(Cursor::decode("2026_-1").is_err());
        assert!(Cursor::decode("_1").is_err());
        assert!(Search::parse(None, Some("a/b"), None, None, None).is_err());
        assert!(Search::parse(None, None, Some("+5"), None, None).is_err());
        assert!(Search::parse(Some(" requested"), None, None, None, None).is_err());
    }
}
