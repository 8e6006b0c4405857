//! The domain values the store and the rules share: a missing-information request, its group
//! and fields, what it refers to, and the worklist's view of it (its Task status, its holder,
//! a search and its cursor). A leaf below `store`: the store reads and writes these values,
//! and the rules above it (`missing_info`, `worklist`, `fhir`) check and show them, so
//! neither has to reach up into the other.
//!
//! Only what a value is and what follows from it alone lives here (a Task status is computed
//! from a request and the calendar); the rules that refuse or parse live with their service.

use crate::fields::{self, FieldDef};

/// Status of a data request that accepts GET and POST (with an unexpired date).
pub const ACTIVE: &str = "Active";
/// Status after a successful POST.
pub const COMPLETED: &str = "Completed";
/// All statuses a data request can have; every one but `Active` is "no longer active".
pub const STATUSES: &[&str] = &[ACTIVE, COMPLETED, "Ended", "Cancelled"];

/// The data request a UUID names.
#[derive(Debug, Clone)]
pub struct DataRequest {
    /// Row id (history records point to it).
    pub id: i64,
    /// The UUID.
    pub uuid: String,
    /// External ID of its care plan.
    pub care_plan_external_id: String,
    /// External ID of its missing-information group.
    pub group_external_id: String,
    /// Status (see [`STATUSES`]).
    pub status: String,
    /// `yyyy-mm-dd`; the request is expired after that day (UTC).
    pub expiration_date: String,
    /// Unix time in seconds of its creation (`Task.authoredOn`).
    pub created_at: i64,
    /// Who has claimed it, if anyone (the worklist's `in-progress`).
    pub holder: Option<Holder>,
    /// Who answered it and when (Unix seconds): set by the POST that completed it.
    pub answered: Option<Answered>,
    /// When its answer was last amended (Unix seconds), if ever.
    pub amended_at: Option<i64>,
}

/// Who answered a request, and when: what the amend window and its rights run from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answered {
    /// Row id of the user whose POST completed it (`None` once that user is deleted).
    pub by: Option<i64>,
    /// Unix time in seconds of that POST.
    pub at: i64,
}

impl DataRequest {
    /// A request of the rules' unit tests: active-looking, unclaimed, unanswered, with this
    /// status and expiration date (each test changes what it is about).
    #[cfg(test)]
    pub fn sample(status: &str, expiration: &str) -> Self {
        DataRequest {
            id: 1,
            uuid: "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01".into(),
            care_plan_external_id: "plan".into(),
            group_external_id: "group".into(),
            status: status.into(),
            expiration_date: expiration.into(),
            created_at: 1_764_115_200,
            holder: None,
            answered: None,
            amended_at: None,
        }
    }

    /// Whether the request's expiration date is before today (UTC).
    pub fn is_expired(&self) -> bool {
        self.expiration_date < fields::today()
    }
}

/// What a data request is created or replaced with.
#[derive(Debug, Clone)]
pub struct DataRequestInput {
    /// External ID of its care plan.
    pub care_plan_external_id: String,
    /// External ID of its missing-information group.
    pub group_external_id: String,
    /// Status (see [`STATUSES`]).
    pub status: String,
    /// `yyyy-mm-dd`.
    pub expiration_date: String,
}

/// One entry of a data request's history: never values, only the submitted field UUIDs.
#[derive(Debug, Clone)]
pub struct HistoryEntry {
    /// Unix time in seconds.
    pub at: i64,
    /// Row id of the caller.
    pub user_id: Option<i64>,
    /// `GET` or `POST`.
    pub method: String,
    /// The status code answered.
    pub status_code: i64,
    /// UUIDs of the submitted fields.
    pub submitted_fields: Vec<String>,
}

/// A missing-information group: a name and its requested fields, in order.
#[derive(Debug, Clone)]
pub struct Group {
    /// Display name.
    pub name: String,
    /// Requested fields, in order.
    pub fields: Vec<GroupField>,
}

/// One requested field: its definition and the record field it fills.
#[derive(Debug, Clone)]
pub struct GroupField {
    /// The field's UUID.
    pub uuid: String,
    /// Type and limits.
    pub def: FieldDef,
    /// Display label.
    pub label: String,
    /// `Account` (the care plan's patient) or `CarePlan`.
    pub target_object: String,
    /// Field of the target record.
    pub target_field: String,
}

/// The records a data request touches, once all are found.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Row id of the care plan.
    pub care_plan_id: i64,
    /// Row id of the patient account.
    pub patient_account_id: i64,
    /// External ID of the patient account.
    pub patient_external_id: String,
    /// Display name of the care program.
    pub program_name: String,
    /// Requested fields, in order.
    pub fields: Vec<GroupField>,
}

/// What a data request refers to (read with it by
/// `store::data_requests::find_with_context`): its care plan, the plan's program name and
/// patient account, whether its group exists, and its group's fields. `None` where a record
/// is missing.
#[derive(Debug, Clone, Default)]
pub struct RequestContext {
    /// Row ids of the care plan and its patient account.
    pub plan: Option<(i64, i64)>,
    /// Display name of the plan's program.
    pub program_name: Option<String>,
    /// Whether the group exists.
    pub group_exists: bool,
    /// External ID of the plan's patient account.
    pub patient_external_id: Option<String>,
    /// The group's requested fields, in order.
    pub fields: Vec<GroupField>,
}

/// One well-formed entry of a POST body.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The field UUID it names.
    pub uuid: String,
    /// The value, as text.
    pub value: String,
    /// Path of the entry's UUID in the body (for error paths), e.g. `[0].uuid`.
    pub uuid_path: String,
    /// Path of the entry's value in the body, e.g. `[0].value`.
    pub value_path: String,
}

/// The `Task.status` of a data request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskStatus {
    /// Active, unexpired, and nobody holds it: open to claim.
    Requested,
    /// Active, unexpired, and held by a staff member (a claim).
    InProgress,
    /// Answered (`Completed`).
    Completed,
    /// Ended by the program (`Cancelled` or `Ended`).
    Cancelled,
    /// Expired unanswered (still `Active`, past its expiration date).
    Failed,
}

impl TaskStatus {
    /// Every status, in the order the README lists them.
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Requested,
        TaskStatus::InProgress,
        TaskStatus::Completed,
        TaskStatus::Cancelled,
        TaskStatus::Failed,
    ];

    /// The FHIR code.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Requested => "requested",
            TaskStatus::InProgress => "in-progress",
            TaskStatus::Completed => "completed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Failed => "failed",
        }
    }

    /// The status a FHIR code names.
    pub fn parse(code: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|s| s.as_str() == code)
    }

    /// The Task status of a request with this stored status, expiry and claim.
    pub fn of(req: &DataRequest) -> TaskStatus {
        match req.status.as_str() {
            ACTIVE if req.is_expired() => TaskStatus::Failed,
            ACTIVE if req.holder.is_some() => TaskStatus::InProgress,
            ACTIVE => TaskStatus::Requested,
            COMPLETED => TaskStatus::Completed,
            _ => TaskStatus::Cancelled,
        }
    }

    /// The `Task.statusReason` text that says why a request ended the way it did, where the
    /// status alone does not (`failed` is always an expiry; `cancelled` may be an end).
    pub fn reason(req: &DataRequest) -> Option<&'static str> {
        match TaskStatus::of(req) {
            TaskStatus::Failed => Some("expired"),
            TaskStatus::Cancelled if req.status == "Ended" => Some("ended"),
            _ => None,
        }
    }
}

/// The status an event announces: a Task status, or that the request was deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventStatus {
    /// The request's Task status after the change.
    Task(TaskStatus),
    /// The request was deleted (FHIR's `entered-in-error`: it should never have existed).
    Deleted,
}

impl EventStatus {
    /// The code the event carries.
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Task(s) => s.as_str(),
            EventStatus::Deleted => "entered-in-error",
        }
    }
}

/// The staff member who holds (has claimed) a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Row id of the user.
    pub user_id: i64,
    /// The user's external ID (what `owner` filters by).
    pub external_id: String,
    /// The user's display name.
    pub name: String,
}

/// Where a worklist page starts: after the request with this expiry date and row id (the
/// order is expiry, then age, and a younger request has a larger row id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Expiry date (`yyyy-mm-dd`) of the last request of the previous page.
    pub expiration_date: String,
    /// Its row id.
    pub id: i64,
}

/// A Task search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// Statuses to match (any of them); empty matches every status.
    pub statuses: Vec<TaskStatus>,
    /// External ID of the holder to match.
    pub owner: Option<String>,
    /// Tasks per page.
    pub count: u32,
    /// Where the page starts; `None` for the first page.
    pub after: Option<Cursor>,
    /// Whether the answer counts every match (`_total=accurate` or `estimate`; FHIR's default
    /// `none` spares a count over the whole filter on every page).
    pub total: bool,
}
