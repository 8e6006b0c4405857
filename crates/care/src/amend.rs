//! Correcting a submitted answer ("amend", domain): who may, until when, and what an
//! amendment changes. The spec ends a request once it is answered (its GET and POST answer
//! 409 from then on); staff still need to fix a typo they notice a minute later, so the
//! person who answered, or a care admin, may submit the values again within a window the
//! service configures (`--amend-window`, default 24 hours), under the POST's field rules.
//! Every amendment is kept with who, when and which fields (their labels) it changed.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::auth::Caller;
use crate::fields::text_of;
use crate::missing_info::{FieldView, RequestError};
use crate::model::{Answered, COMPLETED, DataRequest, GroupField, Resolved};
use crate::store::amendments::{Amendment, Changed};
use crate::violation::Violation;

/// When `answered`'s window closes (Unix seconds).
pub fn closes(answered: &Answered, window: Duration) -> i64 {
    answered
        .at
        .saturating_add(i64::try_from(window.as_secs()).unwrap_or(i64::MAX))
}

/// Refused unless the request has been answered: 409 otherwise, as for the spec's calls on a
/// request that is not in the state they need.
pub fn check_answered(req: &DataRequest) -> Result<Answered, RequestError> {
    let answered = req.answered.filter(|_| req.status == COMPLETED);
    answered.ok_or_else(|| {
        let message = if req.status == COMPLETED {
            "the data request was completed without an answer through this service, so there \
             is no answer to correct"
                .to_owned()
        } else {
            format!(
                "only an answered data request can be corrected (status {})",
                req.status
            )
        };
        RequestError::NotActive(Violation::new("REQUEST_NOT_ANSWERED", message, ""))
    })
}

/// Refused unless `caller` may amend the answered `req` at `now` (Unix seconds): they
/// answered it or are a care admin (403 otherwise), and its window is open (409 otherwise).
pub fn check_amendable(
    req: &DataRequest,
    caller: &Caller,
    now: i64,
    window: Duration,
) -> Result<Answered, RequestError> {
    let answered = check_answered(req)?;
    if answered.by != Some(caller.user_id) && !caller.admin {
        return Err(RequestError::Forbidden(vec![Violation::new(
            "NOT_THE_ANSWERER",
            "only the person who answered this data request, or a care admin, can correct it",
            "",
        )]));
    }
    if window.is_zero() {
        return Err(RequestError::NotActive(Violation::new(
            "AMEND_WINDOW_CLOSED",
            "this service does not allow correcting answers (its amend window is 0)",
            "",
        )));
    }
    let closes = closes(&answered, window);
    if now > closes {
        return Err(RequestError::NotActive(Violation::new(
            "AMEND_WINDOW_CLOSED",
            format!(
                "an answer can be corrected for {} after it is submitted; this one was \
                 submitted at {} and could be corrected until {}",
                describe(window),
                crate::fhir::date_time(answered.at),
                crate::fhir::date_time(closes)
            ),
            "",
        )));
    }
    Ok(answered)
}

/// A window as people say it: "24 hours", "90 minutes", "2 days".
pub fn describe(window: Duration) -> String {
    let s = window.as_secs();
    let (n, unit) = if s.is_multiple_of(86_400) && s >= 86_400 * 2 {
        (s / 86_400, "day")
    } else if s.is_multiple_of(3_600) && s >= 3_600 {
        (s / 3_600, "hour")
    } else if s.is_multiple_of(60) && s >= 60 {
        (s / 60, "minute")
    } else {
        (s, "second")
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// The fields whose checked new value differs from the value on the record now, with the
/// previous value.
pub fn changes(current: &HashMap<String, Value>, values: &[(&GroupField, Value)]) -> Vec<Changed> {
    values
        .iter()
        .filter_map(|(field, new)| {
            let previous = current.get(&field.uuid);
            let same = previous.is_some_and(|p| p == new || text_of(p) == text_of(new));
            (!same).then(|| Changed {
                uuid: field.uuid.clone(),
                label: field.label.clone(),
                previous: previous.map(text_of),
            })
        })
        .collect()
}

/// Who a user is, as the answer's views name them.
#[derive(Debug, Clone, Serialize)]
pub struct Person {
    /// Their external ID.
    pub id: String,
    /// Their name.
    pub name: String,
}

/// One field of an answer: the GET's field and the value the records hold now.
#[derive(Debug, Serialize)]
pub struct AnsweredField {
    #[serde(flatten)]
    field: FieldView,
    /// The value now, as text (`None` when the record holds none).
    value: Option<String>,
}

/// One amendment as the answer shows it: who, when, which fields (labels, never values).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AmendmentView {
    at: String,
    by: Option<Person>,
    fields: Vec<String>,
}

/// `GET …/missingInformationRequest/{uuid}/answer`: what was answered, by whom, its
/// amendments, and whether (and until when) the caller may correct it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerView {
    uuid: String,
    status: String,
    drug_program: String,
    answered_by: Option<Person>,
    answered_at: String,
    amended: bool,
    amendable_until: String,
    /// Whether the caller may amend it now.
    amendable: bool,
    fields: Vec<AnsweredField>,
    amendments: Vec<AmendmentView>,
}

/// What [`answer_view`] shows.
#[derive(Debug)]
pub struct AnswerFacts<'a> {
    /// The request (answered).
    pub request: &'a DataRequest,
    /// When it was answered and by whom.
    pub answered: Answered,
    /// The answerer, while their user exists.
    pub answered_by: Option<Person>,
    /// Its fields and records.
    pub resolved: &'a Resolved,
    /// The values on the records now, by field UUID.
    pub values: &'a HashMap<String, Value>,
    /// Its amendments, oldest first.
    pub amendments: &'a [Amendment],
    /// The configured window.
    pub window: Duration,
    /// Whether the caller may amend it now.
    pub amendable: bool,
}

/// The answer of a request.
pub fn answer_view(f: AnswerFacts<'_>) -> AnswerView {
    AnswerView {
        uuid: f.request.uuid.clone(),
        status: f.request.status.clone(),
        drug_program: f.resolved.program_name.clone(),
        answered_by: f.answered_by,
        answered_at: crate::fhir::date_time(f.answered.at),
        amended: !f.amendments.is_empty(),
        amendable_until: crate::fhir::date_time(closes(&f.answered, f.window)),
        amendable: f.amendable,
        fields: f
            .resolved
            .fields
            .iter()
            .map(|g| AnsweredField {
                field: FieldView::of(g),
                value: f.values.get(&g.uuid).map(text_of),
            })
            .collect(),
        amendments: f
            .amendments
            .iter()
            .map(|a| AmendmentView {
                at: crate::fhir::date_time(a.at),
                by: a.by_id.clone().map(|id| Person {
                    id,
                    name: a.by_name.clone().unwrap_or_default(),
                }),
                fields: a.changed.iter().map(|c| c.label.clone()).collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::{FieldDef, FieldType};

    fn req(status: &str, answered: Option<(i64, i64)>) -> DataRequest {
        DataRequest {
            answered: answered.map(|(by, at)| Answered { by: Some(by), at }),
            ..DataRequest::sample(status, "2999-01-01")
        }
    }

    fn caller(id: i64, admin: bool) -> Caller {
        Caller::new(id, admin, Default::default(), Default::default())
    }

    #[test]
    fn the_answerer_or_an_admin_within_the_window() {
        let hour = Duration::from_secs(3600);
        let r = req(COMPLETED, Some((7, 1000)));
        assert!(check_amendable(&r, &caller(7, false), 1000 + 3600, hour).is_ok());
        assert!(check_amendable(&r, &caller(9, true), 1000 + 10, hour).is_ok());
        match check_amendable(&r, &caller(9, false), 1000, hour) {
            Err(RequestError::Forbidden(v)) => assert_eq!(v[0].code, "NOT_THE_ANSWERER"),
            other => panic!("{other:?}"),
        }
        match check_amendable(&r, &caller(7, false), 1000 + 3601, hour) {
            Err(RequestError::NotActive(v)) => {
                assert_eq!(v.code, "AMEND_WINDOW_CLOSED");
                assert!(v.message.contains("1 hour after"), "{}", v.message);
            }
            other => panic!("{other:?}"),
        }
        // Not answered: nothing to correct, whoever asks.
        for r in [req("Active", None), req(COMPLETED, None)] {
            match check_amendable(&r, &caller(9, true), 1000, hour) {
                Err(RequestError::NotActive(v)) => assert_eq!(v.code, "REQUEST_NOT_ANSWERED"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn windows_read_as_people_say_them() {
        assert_eq!(describe(crate::config::DEFAULT_AMEND_WINDOW), "24 hours");
        assert_eq!(describe(Duration::from_secs(90 * 60)), "90 minutes");
        assert_eq!(describe(Duration::from_secs(2 * 86_400)), "2 days");
        assert_eq!(describe(Duration::from_secs(1)), "1 second");
    }

    #[test]
    fn only_changed_values_are_changes() {
        let field = |uuid: &str| GroupField {
            uuid: uuid.into(),
            def: FieldDef {
                ty: FieldType::Double,
                scale: None,
                length: None,
                picklist: Vec::new(),
            },
            label: format!("label {uuid}"),
            target_object: "Account".into(),
            target_field: uuid.into(),
        };
        let (a, b, c) = (field("a"), field("b"), field("c"));
        let current: HashMap<String, Value> = [
            ("a".into(), Value::from(72.5)),
            ("b".into(), Value::from(1)),
        ]
        .into();
        let values = [
            (&a, Value::from(72.5)),
            (&b, Value::from(2)),
            (&c, Value::from(3)),
        ];
        let changed = changes(&current, &values);
        assert_eq!(
            changed,
            vec![
                Changed {
                    uuid: "b".into(),
                    label: "label b".into(),
                    previous: Some("1".into())
                },
                Changed {
                    uuid: "c".into(),
                    label: "label c".into(),
                    previous: None
                },
            ]
        );
    }
}
