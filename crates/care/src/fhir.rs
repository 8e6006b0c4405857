//! FHIR R4 views of missing-information requests: a data request as a `Bundle` (type
//! `collection`) of a `Questionnaire` (one item per requested field) and a `Task` following
//! the SDC "complete a questionnaire" pattern, and a `QuestionnaireResponse` read back into
//! the same [`Submitted`] entries as the plain POST body, so both go through one set of rules.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::fields::{FieldType, default_max_length};
use crate::model::{DataRequest, GroupField, Resolved, Submitted, TaskStatus};
use crate::violation::Violation;

/// The SDC code system of `complete-questionnaire` and `questionnaire`.
pub const SDC_TEMP: &str = "http://hl7.org/fhir/uv/sdc/CodeSystem/temp";
/// Code system of `Questionnaire.item.code`: the field's own type (`STRING`, `EMAIL`, …).
pub const FIELD_TYPE_SYSTEM: &str = "urn:slipway:care:field-type";
/// Identifier system of patient accounts (value: the account's external ID).
pub const ACCOUNT_SYSTEM: &str = "urn:slipway:care:account";
/// Identifier system of care plans (value: the care plan's external ID).
pub const CARE_PLAN_SYSTEM: &str = "urn:slipway:care:care-plan";
/// Identifier system of care users, the staff who hold requests (value: the user's ID).
pub const USER_SYSTEM: &str = "urn:slipway:care:user";
/// Identifier system of data requests (value: the request's UUID).
pub const DATA_REQUEST_SYSTEM: &str = "urn:slipway:care:data-request";
/// Extension giving the most digits after the decimal point.
pub const MAX_DECIMAL_PLACES: &str = "http://hl7.org/fhir/StructureDefinition/maxDecimalPlaces";
/// The media type of FHIR JSON.
pub const MEDIA_TYPE: &str = "application/fhir+json";
/// Error code of a `QuestionnaireResponse` that cannot be read (400, like a bad plain body).
pub const INVALID_BODY: &str = "INVALID_BODY";

/// A `Coding`.
#[derive(Debug, Clone, Serialize)]
pub struct Coding {
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'static str>,
    code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    display: Option<String>,
}

/// A `CodeableConcept` with codings only.
#[derive(Debug, Clone, Serialize)]
pub struct CodeableConcept {
    coding: Vec<Coding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

fn sdc(code: &str) -> CodeableConcept {
    CodeableConcept {
        coding: vec![Coding {
            system: Some(SDC_TEMP),
            code: code.to_owned(),
            display: None,
        }],
        text: None,
    }
}

/// An `Identifier`.
#[derive(Debug, Clone, Serialize)]
pub struct Identifier {
    system: &'static str,
    value: String,
}

/// A `Reference`: by literal reference or by identifier, with what it names for a reader.
#[derive(Debug, Clone, Serialize)]
pub struct Reference {
    #[serde(skip_serializing_if = "Option::is_none")]
    reference: Option<String>,
    #[serde(rename = "type")]
    ty: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    identifier: Option<Identifier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    display: Option<String>,
}

impl Reference {
    /// A reference by identifier.
    fn by_identifier(
        ty: &'static str,
        system: &'static str,
        value: String,
        display: Option<String>,
    ) -> Self {
        Self {
            reference: None,
            ty,
            identifier: Some(Identifier { system, value }),
            display,
        }
    }
}

/// An `Extension` with an integer value.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Extension {
    url: &'static str,
    value_integer: i64,
}

/// An `answerOption` of a choice item.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerOption {
    value_coding: Coding,
}

/// A `Questionnaire.item`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    extension: Vec<Extension>,
    link_id: String,
    code: Vec<Coding>,
    text: String,
    #[serde(rename = "type")]
    ty: &'static str,
    required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_length: Option<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    answer_option: Vec<AnswerOption>,
}

/// A `Questionnaire`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Questionnaire {
    resource_type: &'static str,
    id: String,
    url: String,
    title: String,
    status: &'static str,
    subject_type: Vec<&'static str>,
    item: Vec<Item>,
}

/// `Task.restriction`.
#[derive(Debug, Clone, Serialize)]
pub struct Restriction {
    period: Period,
}

/// A `Period` with an end only.
#[derive(Debug, Clone, Serialize)]
pub struct Period {
    end: String,
}

/// A `Task.input` naming the questionnaire.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskInput {
    #[serde(rename = "type")]
    ty: CodeableConcept,
    value_canonical: String,
}

/// A `Task`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    resource_type: &'static str,
    id: String,
    identifier: Vec<Identifier>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_reason: Option<CodeableConcept>,
    intent: &'static str,
    code: CodeableConcept,
    description: String,
    focus: Reference,
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    for_: Option<Reference>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    based_on: Vec<Reference>,
    authored_on: String,
    /// When the Task last changed for its reader: its answer, or the last amendment of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    last_modified: Option<String>,
    /// `amended` once the answer has been corrected (the status stays `completed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    business_status: Option<CodeableConcept>,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<Reference>,
    restriction: Restriction,
    input: Vec<TaskInput>,
    /// The history of the answer (in a request's bundle): one note per amendment, naming who
    /// made it, when, and the fields it changed (never their values).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    note: Vec<Annotation>,
}

/// A `Task.note`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotation {
    #[serde(skip_serializing_if = "Option::is_none")]
    author_string: Option<String>,
    time: String,
    text: String,
}

/// One answer of a `QuestionnaireResponse.item`, typed as its item is.
#[derive(Debug, Clone, Serialize)]
pub enum AnswerValue {
    /// `string` and `text` items.
    #[serde(rename = "valueString")]
    String(String),
    /// `date` items.
    #[serde(rename = "valueDate")]
    Date(String),
    /// `dateTime` items.
    #[serde(rename = "valueDateTime")]
    DateTime(String),
    /// `boolean` items.
    #[serde(rename = "valueBoolean")]
    Boolean(bool),
    /// `integer` items.
    #[serde(rename = "valueInteger")]
    Integer(i64),
    /// `decimal` items.
    #[serde(rename = "valueDecimal")]
    Decimal(serde_json::Number),
    /// `choice` items.
    #[serde(rename = "valueCoding")]
    Coding(Coding),
}

/// A `QuestionnaireResponse.item`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseItem {
    link_id: String,
    text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    answer: Vec<AnswerValue>,
}

/// The `QuestionnaireResponse` of an answered request: what the records hold now.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionnaireResponse {
    resource_type: &'static str,
    id: String,
    questionnaire: String,
    /// `completed`, or `amended` once corrected.
    status: &'static str,
    subject: Reference,
    authored: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    author: Option<Reference>,
    item: Vec<ResponseItem>,
}

/// A resource of the bundle.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Resource {
    /// The form.
    Questionnaire(Questionnaire),
    /// The request to fill it in (boxed: a Task is much larger than a Questionnaire).
    Task(Box<Task>),
    /// The answer, once the request is answered.
    Response(Box<QuestionnaireResponse>),
}

/// A `Bundle.entry`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    #[serde(skip_serializing_if = "Option::is_none")]
    full_url: Option<String>,
    resource: Resource,
}

/// The `Bundle` answered by `GET …/missingInformationRequest/{uuid}/fhir`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    resource_type: &'static str,
    #[serde(rename = "type")]
    ty: &'static str,
    entry: Vec<Entry>,
}

/// The canonical URL of a data request's questionnaire (also its entry's `fullUrl`).
pub fn questionnaire_url(uuid: &str) -> String {
    format!("urn:uuid:{uuid}")
}

/// The FHIR item type of a field type.
pub fn item_type(ty: FieldType) -> &'static str {
    match ty {
        FieldType::String | FieldType::Email | FieldType::Phone => "string",
        FieldType::Textarea => "text",
        FieldType::Date => "date",
        FieldType::Datetime => "dateTime",
        FieldType::Boolean => "boolean",
        FieldType::Integer => "integer",
        FieldType::Double | FieldType::Currency | FieldType::Percent => "decimal",
        FieldType::Picklist => "choice",
    }
}

fn item(f: &GroupField) -> Item {
    let ty = f.def.ty;
    let text_like = matches!(
        ty,
        FieldType::String | FieldType::Textarea | FieldType::Email | FieldType::Phone
    );
    let decimal = item_type(ty) == "decimal";
    Item {
        extension: match f.def.scale {
            Some(places) if decimal => vec![Extension {
                url: MAX_DECIMAL_PLACES,
                value_integer: places,
            }],
            _ => Vec::new(),
        },
        link_id: f.uuid.clone(),
        code: vec![Coding {
            system: Some(FIELD_TYPE_SYSTEM),
            code: ty.as_str().to_owned(),
            display: None,
        }],
        text: f.label.clone(),
        ty: item_type(ty),
        required: true,
        max_length: if text_like {
            f.def.length.or_else(|| default_max_length(ty))
        } else {
            None
        },
        answer_option: f
            .def
            .picklist
            .iter()
            .filter(|_| ty == FieldType::Picklist)
            .map(|v| AnswerOption {
                value_coding: Coding {
                    system: None,
                    code: v.clone(),
                    display: Some(v.clone()),
                },
            })
            .collect(),
    }
}

/// What a Task shows of a request: the request (with its holder), its patient and program.
#[derive(Debug, Clone, Copy)]
pub struct TaskFacts<'a> {
    /// The request.
    pub request: &'a DataRequest,
    /// External ID of its patient account, when known.
    pub patient_external_id: Option<&'a str>,
    /// The patient's name, when the caller may read it.
    pub patient_name: Option<&'a str>,
    /// Whether to name the care plan (`basedOn`): only for a caller who may read care plans.
    pub care_plan: bool,
    /// Display name of its care program, when known.
    pub program_name: Option<&'a str>,
}

/// The `Task` of a data request, the same in the request's bundle and in a worklist search:
/// `focus` its questionnaire, `for` its patient, `basedOn` its care plan (named by its
/// program), `owner` who holds it, `restriction.period.end` its expiry.
pub fn task(f: TaskFacts<'_>) -> Task {
    let req = f.request;
    let status = TaskStatus::of(req);
    Task {
        resource_type: "Task",
        id: req.uuid.clone(),
        identifier: vec![Identifier {
            system: DATA_REQUEST_SYSTEM,
            value: req.uuid.clone(),
        }],
        status: status.as_str(),
        status_reason: TaskStatus::reason(req).map(|text| CodeableConcept {
            coding: Vec::new(),
            text: Some(text.to_owned()),
        }),
        intent: "order",
        code: sdc("complete-questionnaire"),
        description: match f.program_name {
            Some(program) => format!("Complete the missing information for {program}"),
            None => "Complete the missing information".to_owned(),
        },
        focus: Reference {
            reference: Some(questionnaire_url(&req.uuid)),
            ty: "Questionnaire",
            identifier: None,
            display: None,
        },
        for_: f.patient_external_id.map(|id| {
            Reference::by_identifier(
                "Patient",
                ACCOUNT_SYSTEM,
                id.to_owned(),
                f.patient_name.map(str::to_owned),
            )
        }),
        based_on: f
            .care_plan
            .then(|| {
                Reference::by_identifier(
                    "CarePlan",
                    CARE_PLAN_SYSTEM,
                    req.care_plan_external_id.clone(),
                    f.program_name.map(str::to_owned),
                )
            })
            .into_iter()
            .collect(),
        authored_on: date_time(req.created_at),
        last_modified: req.amended_at.or(req.answered.map(|a| a.at)).map(date_time),
        business_status: req.amended_at.map(|_| CodeableConcept {
            coding: Vec::new(),
            text: Some("amended".to_owned()),
        }),
        owner: req.holder.as_ref().map(|h| {
            Reference::by_identifier(
                "Practitioner",
                USER_SYSTEM,
                h.external_id.clone(),
                Some(h.name.clone()),
            )
        }),
        restriction: Restriction {
            period: Period {
                end: req.expiration_date.clone(),
            },
        },
        input: vec![TaskInput {
            ty: sdc("questionnaire"),
            value_canonical: questionnaire_url(&req.uuid),
        }],
        note: Vec::new(),
    }
}

/// A FHIR `instant`/`dateTime` of Unix seconds (UTC).
pub fn date_time(seconds: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(seconds)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// What an answered request's bundle adds: the answer as the records hold it now.
#[derive(Debug, Clone, Copy)]
pub struct AnswerFacts<'a> {
    /// The answerer: `(external ID, name)`, while their user exists.
    pub answered_by: Option<(&'a str, &'a str)>,
    /// The values on the records now, by field UUID.
    pub values: &'a std::collections::HashMap<String, Value>,
    /// The amendments of the answer, oldest first.
    pub amendments: &'a [crate::store::amendments::Amendment],
}

/// The bundle of a resolved data request: its questionnaire, then its task, then (once it is
/// answered) its `QuestionnaireResponse`.
pub fn bundle(req: &DataRequest, r: &Resolved, answer: Option<AnswerFacts<'_>>) -> Bundle {
    let url = questionnaire_url(&req.uuid);
    let questionnaire = Questionnaire {
        resource_type: "Questionnaire",
        id: req.uuid.clone(),
        url: url.clone(),
        title: format!("Missing information: {}", r.program_name),
        status: "active",
        subject_type: vec!["Patient"],
        item: r.fields.iter().map(item).collect(),
    };
    let mut task = task(TaskFacts {
        request: req,
        patient_external_id: Some(&r.patient_external_id),
        patient_name: None,
        care_plan: true,
        program_name: Some(&r.program_name),
    });
    let mut entry = vec![Entry {
        full_url: Some(url),
        resource: Resource::Questionnaire(questionnaire),
    }];
    let response = answer.zip(req.answered).map(|(a, answered)| {
        task.note = a
            .amendments
            .iter()
            .map(|m| Annotation {
                author_string: m.by_name.clone().or_else(|| m.by_id.clone()),
                time: date_time(m.at),
                text: format!(
                    "Answer amended: {}",
                    m.changed
                        .iter()
                        .map(|c| c.label.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
            .collect();
        response(req, r, answered.at, a)
    });
    entry.push(Entry {
        full_url: None,
        resource: Resource::Task(Box::new(task)),
    });
    if let Some(response) = response {
        entry.push(Entry {
            full_url: None,
            resource: Resource::Response(Box::new(response)),
        });
    }
    Bundle {
        resource_type: "Bundle",
        ty: "collection",
        entry,
    }
}

/// The answer of a request as a `QuestionnaireResponse`, `amended` once corrected.
fn response(
    req: &DataRequest,
    r: &Resolved,
    answered_at: i64,
    a: AnswerFacts<'_>,
) -> QuestionnaireResponse {
    QuestionnaireResponse {
        resource_type: "QuestionnaireResponse",
        id: req.uuid.clone(),
        questionnaire: questionnaire_url(&req.uuid),
        status: if a.amendments.is_empty() {
            "completed"
        } else {
            "amended"
        },
        subject: Reference::by_identifier(
            "Patient",
            ACCOUNT_SYSTEM,
            r.patient_external_id.clone(),
            None,
        ),
        authored: date_time(req.amended_at.unwrap_or(answered_at)),
        author: a.answered_by.map(|(id, name)| {
            Reference::by_identifier(
                "Practitioner",
                USER_SYSTEM,
                id.to_owned(),
                Some(name.to_owned()),
            )
        }),
        item: r
            .fields
            .iter()
            .map(|f| ResponseItem {
                link_id: f.uuid.clone(),
                text: f.label.clone(),
                answer: a
                    .values
                    .get(&f.uuid)
                    .and_then(|v| stored_answer(f.def.ty, v))
                    .into_iter()
                    .collect(),
            })
            .collect(),
    }
}

/// A stored value as the answer of an item of type `ty`; `None` when it does not read as one.
fn stored_answer(ty: FieldType, v: &Value) -> Option<AnswerValue> {
    let text = crate::fields::text_of(v);
    Some(match item_type(ty) {
        "date" => AnswerValue::Date(text),
        "dateTime" => AnswerValue::DateTime(text),
        "boolean" => AnswerValue::Boolean(match v {
            Value::Bool(b) => *b,
            _ => text.parse().ok()?,
        }),
        "integer" => AnswerValue::Integer(match v {
            Value::Number(n) => n.as_i64()?,
            _ => text.parse().ok()?,
        }),
        "decimal" => AnswerValue::Decimal(match v {
            Value::Number(n) => n.clone(),
            _ => serde_json::Number::from_f64(text.parse().ok()?)?,
        }),
        "choice" => AnswerValue::Coding(Coding {
            system: None,
            code: text.clone(),
            display: Some(text),
        }),
        _ => AnswerValue::String(text),
    })
}

/// A `Bundle.link`.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    relation: &'static str,
    url: String,
}

/// `Bundle.entry.search`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchMode {
    mode: &'static str,
}

/// A `Bundle.entry` of a search.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchEntry {
    full_url: String,
    resource: Task,
    search: SearchMode,
}

/// The `searchset` `Bundle` answered by `GET {base}/fhir/Task`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchBundle {
    resource_type: &'static str,
    #[serde(rename = "type")]
    ty: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<i64>,
    link: Vec<Link>,
    entry: Vec<SearchEntry>,
}

/// A searchset of Tasks: `task_url` gives each Task's full URL, `self_url` and `next_url`
/// the page's links; `total` when the search asked for it (`_total`).
pub fn search_bundle(
    tasks: Vec<Task>,
    task_url: impl Fn(&str) -> String,
    self_url: String,
    next_url: Option<String>,
    total: Option<i64>,
) -> SearchBundle {
    let mut link = vec![Link {
        relation: "self",
        url: self_url,
    }];
    if let Some(url) = next_url {
        link.push(Link {
            relation: "next",
            url,
        });
    }
    SearchBundle {
        resource_type: "Bundle",
        ty: "searchset",
        total,
        link,
        entry: tasks
            .into_iter()
            .map(|t| SearchEntry {
                full_url: task_url(&t.id),
                resource: t,
                search: SearchMode { mode: "match" },
            })
            .collect(),
    }
}

/// Keys an item of a `QuestionnaireResponse` may have (nested items are not part of this
/// questionnaire); only `linkId` and `answer` are read.
const ITEM_KEYS: &[&str] = &["linkId", "answer", "text", "definition", "id", "extension"];
/// Keys an answer may have besides its one `value[x]`.
const ANSWER_KEYS: &[&str] = &["id", "extension"];
/// The `value[x]` keys of an answer.
const VALUE_KEYS: &[&str] = &[
    "valueString",
    "valueDate",
    "valueDateTime",
    "valueTime",
    "valueUri",
    "valueBoolean",
    "valueInteger",
    "valueDecimal",
    "valueCoding",
];

/// The answer value keys read from a `QuestionnaireResponse` and how each becomes text.
fn answer_text(key: &str, v: &Value) -> Option<Result<String, &'static str>> {
    let text = match key {
        "valueString" | "valueDate" | "valueDateTime" | "valueTime" | "valueUri" => {
            v.as_str().map(str::to_owned).ok_or("must be a string")
        }
        "valueBoolean" => v
            .as_bool()
            .map(|b| b.to_string())
            .ok_or("must be a boolean"),
        "valueInteger" => v
            .as_i64()
            .map(|n| n.to_string())
            .ok_or("must be a whole number"),
        "valueDecimal" => v
            .is_number()
            .then(|| v.to_string())
            .ok_or("must be a number"),
        "valueCoding" => v
            .get("code")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or("must have a string 'code'"),
        _ => return None,
    };
    Some(text)
}

/// Reads a `QuestionnaireResponse` into the entries of a plain POST body: each item's
/// `linkId` is a field UUID, its single answer the value (none: an empty value). Items
/// whose `linkId` is a string are noted in `linked` for the history record. Anything that
/// cannot be read that way is an [`INVALID_BODY`] violation (400).
pub fn answers(doc: &Value, linked: &mut Vec<String>) -> Result<Vec<Submitted>, Vec<Violation>> {
    let bad = |msg: &str, path: &str| Violation::new(INVALID_BODY, msg, path);
    let Some(map) = doc.as_object() else {
        return Err(vec![bad(
            "the body must be a FHIR resource (a JSON object)",
            "",
        )]);
    };
    if map.get("resourceType").and_then(Value::as_str) != Some("QuestionnaireResponse") {
        return Err(vec![bad(
            "the body must be a QuestionnaireResponse",
            "resourceType",
        )]);
    }
    let items = match map.get("item") {
        None => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(_) => return Err(vec![bad("'item' must be an array", "item")]),
    };
    let mut errors = Vec::new();
    let mut entries = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("item[{i}]");
        let Some(item) = item.as_object() else {
            errors.push(bad("each item must be an object", &path));
            continue;
        };
        let link_path = format!("{path}.linkId");
        let Some(link_id) = item.get("linkId").and_then(Value::as_str) else {
            errors.push(bad("'linkId' must be a string", &link_path));
            continue;
        };
        linked.push(link_id.to_owned());
        if let Some(key) = item.keys().find(|k| !ITEM_KEYS.contains(&k.as_str())) {
            errors.push(bad(
                &format!("'{key}' is not read on an item (nested items are not part of this questionnaire)"),
                &format!("{path}.{key}"),
            ));
            continue;
        }
        let answer_path = format!("{path}.answer");
        let value = match item.get("answer") {
            None => Ok(String::new()),
            Some(Value::Array(a)) => match a.as_slice() {
                [] => Ok(String::new()),
                [one] => answer_value(one, &format!("{answer_path}[0]")),
                _ => Err(bad("each item takes one answer", &answer_path)),
            },
            Some(_) => Err(bad("'answer' must be an array", &answer_path)),
        };
        match value {
            Ok(value) => entries.push(Submitted {
                uuid: link_id.to_owned(),
                value,
                uuid_path: link_path,
                value_path: answer_path,
            }),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(entries)
    } else {
        Err(errors)
    }
}

fn answer_value(answer: &Value, path: &str) -> Result<String, Violation> {
    let map: Option<&Map<String, Value>> = answer.as_object();
    if let Some(key) = map
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .find(|k| !ANSWER_KEYS.contains(&k.as_str()) && !VALUE_KEYS.contains(&k.as_str()))
    {
        return Err(Violation::new(
            INVALID_BODY,
            format!("'{key}' is not an answer type of this questionnaire"),
            &format!("{path}.{key}"),
        ));
    }
    let values: Vec<(&String, &Value)> = map
        .into_iter()
        .flatten()
        .filter(|(k, _)| VALUE_KEYS.contains(&k.as_str()))
        .collect();
    match values.as_slice() {
        [(key, v)] => match answer_text(key, v) {
            Some(Ok(text)) => Ok(text),
            Some(Err(why)) => Err(Violation::new(
                INVALID_BODY,
                format!("'{key}' {why}"),
                &format!("{path}.{key}"),
            )),
            None => Err(Violation::new(
                INVALID_BODY,
                format!("'{key}' is not an answer type of this questionnaire"),
                &format!("{path}.{key}"),
            )),
        },
        _ => Err(Violation::new(
            INVALID_BODY,
            "an answer is an object with one value[x]",
            path,
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn req(status: &str, expiration: &str) -> DataRequest {
        DataRequest::sample(status, expiration)
    }

    #[test]
    fn every_field_type_has_an_item_type() {
        let types: Vec<&str> = FieldType::ALL.into_iter().map(item_type).collect();
        assert_eq!(
            types,
            [
                "string", "text", "date", "dateTime", "boolean", "integer", "decimal", "decimal",
                "decimal", "string", "string", "choice"
            ]
        );
    }

    #[test]
    fn a_task_names_its_questionnaire_patient_plan_holder_and_expiry() {
        let mut r = req("Active", "2999-01-01");
        r.holder = Some(crate::worklist::Holder {
            user_id: 3,
            external_id: "nurse-1".into(),
            name: "Nurse One".into(),
        });
        let t = serde_json::to_value(task(TaskFacts {
            request: &r,
            patient_external_id: Some("P-1"),
            patient_name: Some("Ada Lovelace"),
            care_plan: true,
            program_name: Some("Cardio"),
        }))
        .unwrap();
        assert_eq!(t["status"], "in-progress");
        assert_eq!(t["focus"]["reference"], format!("urn:uuid:{}", r.uuid));
        assert_eq!(t["for"]["identifier"]["value"], "P-1");
        assert_eq!(t["for"]["display"], "Ada Lovelace");
        assert_eq!(t["basedOn"][0]["display"], "Cardio");
        assert_eq!(t["owner"]["identifier"]["value"], "nurse-1");
        assert_eq!(t["restriction"]["period"]["end"], "2999-01-01");
        assert_eq!(t["authoredOn"], "2025-11-26T00:00:00Z");
        let open = serde_json::to_value(task(TaskFacts {
            request: &req("Active", "2000-01-01"),
            patient_external_id: None,
            patient_name: None,
            care_plan: false,
            program_name: None,
        }))
        .unwrap();
        assert_eq!(open["status"], "failed");
        assert_eq!(open["statusReason"]["text"], "expired");
        assert!(open.get("owner").is_none() && open.get("for").is_none());
        assert!(open.get("basedOn").is_none());
    }

    #[test]
    fn answers_become_the_entries_of_a_plain_body() {
        let doc = json!({
            "resourceType": "QuestionnaireResponse",
            "status": "completed",
            "item": [
                { "linkId": "a", "answer": [{ "valueDate": "1980-05-06" }] },
                { "linkId": "b", "answer": [{ "valueDecimal": 72.5 }] },
                { "linkId": "c", "answer": [{ "valueCoding": { "code": "Evening" } }] },
                { "linkId": "d", "answer": [{ "valueBoolean": true }] },
                { "linkId": "e" }
            ]
        });
        let mut linked = Vec::new();
        let entries = answers(&doc, &mut linked).unwrap();
        let got: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| (e.uuid.as_str(), e.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "1980-05-06"),
                ("b", "72.5"),
                ("c", "Evening"),
                ("d", "true"),
                ("e", "")
            ]
        );
        assert_eq!(linked, ["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn unreadable_responses_are_invalid_bodies() {
        for (doc, path) in [
            (json!([]), ""),
            (json!({ "resourceType": "Patient" }), "resourceType"),
            (
                json!({ "resourceType": "QuestionnaireResponse", "item": {} }),
                "item",
            ),
            (
                json!({ "resourceType": "QuestionnaireResponse", "item": [{ "answer": [] }] }),
                "item[0].linkId",
            ),
            (
                json!({ "resourceType": "QuestionnaireResponse", "item": [{ "linkId": "a", "answer": [{ "valueBoolean": "yes" }] }] }),
                "item[0].answer[0].valueBoolean",
            ),
            (
                json!({ "resourceType": "QuestionnaireResponse", "item": [{ "linkId": "a", "answer": [{}, {}] }] }),
                "item[0].answer",
            ),
        ] {
            let err = answers(&doc, &mut Vec::new()).unwrap_err();
            assert_eq!(err[0].code, INVALID_BODY);
            let fields: Vec<&str> = err[0].fields.iter().map(String::as_str).collect();
            let want: Vec<&str> = if path.is_empty() { vec![] } else { vec![path] };
            assert_eq!(fields, want, "{doc}");
        }
    }
}
