//! The care services' HTTP client and how their refusals read: where they are ([`Endpoint`]),
//! the requests, and the [`Failure`] every refusal becomes.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::Method;
use reqwest::blocking::Client as Http;
use serde::Serialize;
use serde_json::Value;

/// Where the care services are and whose token to present.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Base URL without a trailing slash (the services are under `{base}/{namespace}`, the
    /// admin API under `{base}/admin`).
    pub base_url: String,
    /// The namespace path segment.
    pub namespace: String,
    /// Bearer token (never logged: `Debug` hides it).
    pub token: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("namespace", &self.namespace)
            .field("token", &"<redacted>")
            .finish()
    }
}

impl Endpoint {
    /// An endpoint from explicit values.
    pub fn new(
        base_url: impl Into<String>,
        namespace: impl Into<String>,
        token: impl Into<String>,
    ) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            namespace: namespace.into(),
            token: token.into(),
        }
    }
}

/// Environment variable naming a care service's base URL (else the desktop runs its own).
pub const ENV_URL: &str = "SLIPWAY_CARE_URL";
/// Environment variable naming the care service's namespace segment (default `care`).
pub const ENV_NAMESPACE: &str = "SLIPWAY_CARE_NAMESPACE";
/// Environment variable holding the care staff token.
pub const ENV_TOKEN: &str = "SLIPWAY_CARE_TOKEN";
/// Environment variable holding the care admin token.
pub const ENV_ADMIN_TOKEN: &str = "SLIPWAY_CARE_ADMIN_TOKEN";

/// A configured care service, from the environment: `(base URL, namespace, staff token,
/// admin token)`; `None` when [`ENV_URL`] is unset (the desktop then uses its embedded one).
pub fn configured() -> Option<(String, String, Option<String>, Option<String>)> {
    let var = |k: &str| std::env::var(k).ok().filter(|s| !s.trim().is_empty());
    let url = var(ENV_URL)?;
    Some((
        url,
        var(ENV_NAMESPACE).unwrap_or_else(|| "care".to_owned()),
        var(ENV_TOKEN),
        var(ENV_ADMIN_TOKEN),
    ))
}

/// Which kind of refusal an answer is: what the user should be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// 400: the input breaks rules (each on its field).
    Invalid,
    /// 401: the token is unknown.
    Unauthorized,
    /// 403: the signed-in user lacks access to an object or field.
    Forbidden,
    /// 404: the request, or a record it needs, is missing.
    NotFound,
    /// 409: the request is no longer active.
    NotActive,
    /// 412: the submitted values do not fulfil the requested fields (each on its field).
    Unmet,
    /// 413: the document is too large.
    TooLarge,
    /// The service did not answer.
    Unavailable,
    /// 500 or an unexpected answer.
    Server,
}

/// One error of an answer, as the service sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// The service's error code.
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// Field paths concerned (for missing information: the requested fields' UUIDs).
    pub fields: Vec<String>,
}

/// A refused or failed call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct Failure {
    /// Which screen fits.
    pub kind: Kind,
    /// The HTTP status, when the service answered.
    pub status: Option<u16>,
    /// One sentence for the whole failure.
    pub message: String,
    /// The first field concerned, if any.
    pub field: Option<String>,
    /// Every error of the answer.
    pub errors: Vec<Issue>,
    /// Messages by field path; `""` holds those about no field.
    pub field_errors: BTreeMap<String, Vec<String>>,
}

impl Failure {
    /// A failure with no answer from the service (or before any request).
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::plain(Kind::Unavailable, None, message)
    }

    /// An invalid argument of the caller, about `field`.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::from_issues(
            Kind::Invalid,
            None,
            vec![Issue {
                code: "INVALID_ARGUMENT".into(),
                message: message.clone(),
                fields: vec![field.to_owned()],
            }],
            |p| p.to_owned(),
        )
    }

    fn plain(kind: Kind, status: Option<u16>, message: impl Into<String>) -> Self {
        Self {
            kind,
            status,
            message: message.into(),
            field: None,
            errors: Vec::new(),
            field_errors: BTreeMap::new(),
        }
    }

    /// Groups the issues' messages by (mapped) field path and writes the headline.
    pub fn from_issues(
        kind: Kind,
        status: Option<u16>,
        errors: Vec<Issue>,
        map_path: impl Fn(&str) -> String,
    ) -> Self {
        let mut field_errors: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in &errors {
            if e.fields.is_empty() {
                field_errors
                    .entry(String::new())
                    .or_default()
                    .push(e.message.clone());
            }
            for f in &e.fields {
                field_errors
                    .entry(map_path(f))
                    .or_default()
                    .push(e.message.clone());
            }
        }
        let field = errors
            .iter()
            .flat_map(|e| e.fields.first())
            .next()
            .map(|f| map_path(f));
        let message = headline(kind, &errors);
        Self {
            kind,
            status,
            message,
            field,
            errors,
            field_errors,
        }
    }
}

fn headline(kind: Kind, errors: &[Issue]) -> String {
    let first = errors
        .first()
        .map(|e| e.message.clone())
        .unwrap_or_default();
    let n = errors.len();
    match kind {
        Kind::Invalid if n > 1 => format!("{n} problems: each is shown on its field"),
        Kind::Unmet => format!(
            "the values do not fulfil the requested fields ({n} problem{}): each is shown on its field",
            if n == 1 { "" } else { "s" }
        ),
        Kind::Forbidden => format!("you lack access: {first}"),
        Kind::NotFound => format!("not found: {first}"),
        Kind::NotActive => format!("this request is no longer active: {first}"),
        Kind::Unauthorized => "the care service does not know the signed-in user's token".into(),
        _ if first.is_empty() => "the care service refused the call".into(),
        _ => first,
    }
}

/// The care client.
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) endpoint: Endpoint,
    http: Http,
}

impl Client {
    /// A client for `endpoint`.
    pub fn new(endpoint: Endpoint) -> Result<Self, Failure> {
        let http = slipway_platform_client::trust::client_builder(&endpoint.base_url)
            .map_err(|e| Failure::unavailable(e.to_string()))?
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| Failure::unavailable(format!("HTTP client: {e}")))?;
        Ok(Self { endpoint, http })
    }

    pub(crate) fn service(&self, path: &str) -> String {
        format!(
            "{}/{}/{path}",
            self.endpoint.base_url, self.endpoint.namespace
        )
    }

    fn admin(&self, path: &str) -> String {
        format!("{}/admin/{path}", self.endpoint.base_url)
    }

    pub(crate) fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        map_path: impl Fn(&str) -> String,
    ) -> Result<Value, Failure> {
        let mut req = self
            .http
            .request(method, url)
            .bearer_auth(&self.endpoint.token);
        if let Some(b) = body {
            req = req.json(b);
        }
        let response = req.send().map_err(|e| {
            Failure::unavailable(format!(
                "the care service at {} did not answer: {}",
                self.endpoint.base_url,
                slipway_platform_client::trust::describe_send_error(&self.endpoint.base_url, &e)
            ))
        })?;
        let status = response.status().as_u16();
        let text = response.text().unwrap_or_default();
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        if (200..300).contains(&status) {
            return Ok(parsed.unwrap_or(Value::Null));
        }
        Err(refusal(status, parsed.as_ref(), map_path))
    }

    /// `GET {ns}/missingInformationRequest/{uuid}`: the requested fields.
    pub fn missing_info(&self, uuid: &str) -> Result<Value, Failure> {
        let uuid = request_uuid(uuid)?;
        self.send(
            Method::GET,
            &self.service(&format!("missingInformationRequest/{uuid}")),
            None,
            str::to_owned,
        )
    }

    /// `POST {ns}/missingInformationRequest/{uuid}` with the requested fields, each with its
    /// `value`. Errors about an entry (`[2].value`) are reported on that entry's field UUID.
    pub fn submit_missing_info(&self, uuid: &str, fields: &[Value]) -> Result<Value, Failure> {
        self.submit_to(uuid, fields, "")
    }

    /// A POST of fields with values to the request's path with `suffix`.
    fn submit_to(&self, uuid: &str, fields: &[Value], suffix: &str) -> Result<Value, Failure> {
        let uuid = request_uuid(uuid)?;
        let uuids: Vec<String> = fields
            .iter()
            .map(|f| {
                f.get("uuid")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        let body = Value::Array(fields.to_vec());
        self.send(
            Method::POST,
            &self.service(&format!("missingInformationRequest/{uuid}{suffix}")),
            Some(&body),
            |path| entry_field(path, &uuids),
        )
    }

    /// `GET {ns}/missingInformationRequest/{uuid}/answer`: what an answered request holds,
    /// its amendments, and whether (until when) the caller may correct it.
    pub fn answer(&self, uuid: &str) -> Result<Value, Failure> {
        let uuid = request_uuid(uuid)?;
        self.send(
            Method::GET,
            &self.service(&format!("missingInformationRequest/{uuid}/answer")),
            None,
            str::to_owned,
        )
    }

    /// `POST {ns}/missingInformationRequest/{uuid}/amend`: the answered request's fields
    /// again, corrected; refused as the submission is (errors on the field UUIDs), and 403 or
    /// 409 when the caller may not correct it (any more).
    pub fn amend_missing_info(&self, uuid: &str, fields: &[Value]) -> Result<Value, Failure> {
        self.submit_to(uuid, fields, "/amend")
    }

    /// `POST {ns}/eRxApi` with the document (blank values pruned, see [`prune`]).
    pub fn enroll(&self, document: &Value) -> Result<Value, Failure> {
        let doc = prune(document);
        self.send(
            Method::POST,
            &self.service("eRxApi"),
            Some(&doc),
            str::to_owned,
        )
    }

    /// `GET admin/users`: every user with its permissions (admin token).
    pub fn users(&self) -> Result<Value, Failure> {
        self.send(Method::GET, &self.admin("users"), None, str::to_owned)
    }

    /// `POST admin/users` `{name, admin, permissions}`: the answer holds the token, once.
    pub fn create_user(&self, user: &Value) -> Result<Value, Failure> {
        self.send(
            Method::POST,
            &self.admin("users"),
            Some(user),
            str::to_owned,
        )
    }

    /// `PUT admin/users/{id}/permissions`: replaces the user's permissions.
    pub fn set_permissions(&self, id: &str, permissions: &Value) -> Result<Value, Failure> {
        let id = path_segment("id", id)?;
        self.send(
            Method::PUT,
            &self.admin(&format!("users/{id}/permissions")),
            Some(permissions),
            str::to_owned,
        )
    }

    /// `DELETE admin/users/{id}`.
    pub fn delete_user(&self, id: &str) -> Result<Value, Failure> {
        let id = path_segment("id", id)?;
        self.send(
            Method::DELETE,
            &self.admin(&format!("users/{id}")),
            None,
            str::to_owned,
        )
    }
}

/// The field an error path of a missing-information POST is about: `[i].value` and
/// `[i].uuid` name the i-th submitted entry's field; a UUID stays as it is.
fn entry_field(path: &str, uuids: &[String]) -> String {
    let index = path
        .strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(i, _)| i.parse::<usize>().ok());
    match index.and_then(|i| uuids.get(i)) {
        Some(uuid) if !uuid.is_empty() => uuid.clone(),
        _ => path.to_owned(),
    }
}

/// A request UUID as typed (trimmed); the service checks its form and answers 400.
pub(crate) fn request_uuid(uuid: &str) -> Result<String, Failure> {
    let uuid = uuid.trim();
    if uuid.is_empty() {
        return Err(Failure::invalid("uuid", "uuid: give the request's UUID"));
    }
    path_segment("uuid", uuid).map(str::to_owned)
}

fn path_segment<'a>(field: &str, value: &'a str) -> Result<&'a str, Failure> {
    if value.is_empty()
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(Failure::invalid(
            field,
            format!("{field}: letters, digits, '-' and '_' only"),
        ));
    }
    Ok(value)
}

pub(crate) fn refusal(
    status: u16,
    body: Option<&Value>,
    map_path: impl Fn(&str) -> String,
) -> Failure {
    let kind = match status {
        400 => Kind::Invalid,
        401 => Kind::Unauthorized,
        403 => Kind::Forbidden,
        404 => Kind::NotFound,
        409 => Kind::NotActive,
        412 => Kind::Unmet,
        413 => Kind::TooLarge,
        _ => Kind::Server,
    };
    let errors = issues_in(body);
    if errors.is_empty() {
        return Failure::plain(
            kind,
            Some(status),
            format!("the care service answered {status}"),
        );
    }
    Failure::from_issues(kind, Some(status), errors, map_path)
}

/// The `[{errorCode, message, fields}]` of a care service's error answer (none when the body
/// is not one).
pub(crate) fn issues_in(body: Option<&Value>) -> Vec<Issue> {
    body.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|e| Issue {
                    code: e["errorCode"].as_str().unwrap_or_default().to_owned(),
                    message: e["message"].as_str().unwrap_or_default().to_owned(),
                    fields: e["fields"]
                        .as_array()
                        .map(|f| {
                            f.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The document without what a form leaves blank: empty or whitespace-only strings, and
/// objects and arrays that end up empty. A form's empty input means "not given".
pub fn prune(value: &Value) -> Value {
    fn inner(v: &Value) -> Option<Value> {
        match v {
            Value::String(s) if s.trim().is_empty() => None,
            Value::Object(map) => {
                let out: serde_json::Map<String, Value> = map
                    .iter()
                    .filter_map(|(k, v)| inner(v).map(|v| (k.clone(), v)))
                    .collect();
                (!out.is_empty()).then_some(Value::Object(out))
            }
            Value::Array(items) => {
                let out: Vec<Value> = items.iter().filter_map(inner).collect();
                (!out.is_empty()).then_some(Value::Array(out))
            }
            Value::Null => None,
            other => Some(other.clone()),
        }
    }
    inner(value).unwrap_or_else(|| Value::Object(serde_json::Map::new()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn blank_values_are_pruned() {
        let doc = json!({"patient": {"id": "P", "middleName": " ", "addresses": [{"id": "", "primary": false}, {}]},
            "physician": {"id": ""}, "consents": [], "prescriptions": [{"numberOfRefills": 0}]});
        assert_eq!(
            prune(&doc),
            json!({"patient": {"id": "P", "addresses": [{"primary": false}]}, "prescriptions": [{"numberOfRefills": 0}]})
        );
    }

    #[test]
    fn entry_errors_land_on_their_fields() {
        let uuids = vec!["u-a".to_owned(), "u-b".to_owned()];
        assert_eq!(entry_field("[1].value", &uuids), "u-b");
        assert_eq!(entry_field("[0].uuid", &uuids), "u-a");
        assert_eq!(entry_field("u-c", &uuids), "u-c");
        assert_eq!(entry_field("[7].value", &uuids), "[7].value");
    }

    #[test]
    fn a_412_answer_maps_every_message_onto_its_field() {
        let body = json!([
            {"errorCode": "VALUE_REQUIRED", "message": "'Weight' needs a value", "fields": ["[1].value"]},
            {"errorCode": "FIELD_MISSING", "message": "'Date' is requested but not submitted", "fields": ["u-d"]},
        ]);
        let uuids = vec!["u-a".to_owned(), "u-b".to_owned()];
        let f = refusal(412, Some(&body), |p| entry_field(p, &uuids));
        assert_eq!(f.kind, Kind::Unmet);
        assert_eq!(f.field.as_deref(), Some("u-b"));
        assert_eq!(
            f.field_errors["u-b"],
            vec!["'Weight' needs a value".to_owned()]
        );
        assert_eq!(f.field_errors["u-d"].len(), 1);
        assert!(f.message.contains("2 problems"), "{}", f.message);
    }

    #[test]
    fn statuses_choose_the_screen() {
        let body = json!([{"errorCode": "REQUEST_NOT_ACTIVE", "message": "the data request is no longer active (status Completed)", "fields": []}]);
        let f = refusal(409, Some(&body), str::to_owned);
        assert_eq!(f.kind, Kind::NotActive);
        assert_eq!(f.field_errors[""].len(), 1);
        assert_eq!(refusal(404, None, str::to_owned).kind, Kind::NotFound);
        assert_eq!(refusal(403, None, str::to_owned).kind, Kind::Forbidden);
        assert_eq!(refusal(502, None, str::to_owned).kind, Kind::Server);
    }

    #[test]
    fn path_arguments_are_checked_before_any_request() {
        assert_eq!(
            request_uuid("  ").unwrap_err().field.as_deref(),
            Some("uuid")
        );
        assert_eq!(request_uuid("../x").unwrap_err().kind, Kind::Invalid);
        assert_eq!(request_uuid(" 5f0c-1 ").unwrap(), "5f0c-1");
    }
}
