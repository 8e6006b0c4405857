//! The missing-information service: each status code of the spec's table, the GET shape,
//! the values written by a POST, and the request-history trail.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{
    ACTIVE, ADMIN, DEMO_PLAN, ENDED, EXPIRED, RESTRICTED, STAFF, TestApp, backends, spawn_app,
};

const F_DOB: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f01";
const F_WEIGHT: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f02";
const F_TIME: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f03";
const F_SMS: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f04";

/// A valid POST body for the demo group, built from the GET body as a client would.
fn answers(get_body: &Value, values: &[(&str, &str)]) -> Value {
    let fields = get_body["fields"].as_array().expect("fields");
    Value::Array(
        fields
            .iter()
            .map(|f| {
                let mut f = f.clone();
                let uuid = f["uuid"].as_str().unwrap_or_default().to_owned();
                let value = values
                    .iter()
                    .find(|(u, _)| *u == uuid)
                    .map_or("", |(_, v)| v);
                f["value"] = json!(value);
                f
            })
            .collect(),
    )
}

const GOOD: &[(&str, &str)] = &[
    (F_DOB, "1980-05-06"),
    (F_WEIGHT, "72.5"),
    (F_TIME, "Evening"),
    (F_SMS, "true"),
];

async fn new_request(
    app: &TestApp,
    plan: &str,
    group: &str,
    status: &str,
    expiration: &str,
) -> String {
    let uuid = uuid::Uuid::new_v4().to_string();
    let (s, body) = app
        .admin_put(
            &format!("/data-requests/{uuid}"),
            &json!({ "carePlanExternalId": plan, "groupId": group, "status": status, "expirationDate": expiration }),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    uuid
}

async fn enroll_patient(app: &TestApp, patient: &str, program: &str) -> String {
    let doc = json!({
        "vendorName": "DemoRx", "programName": program, "enrollmentDate": "2026-03-01",
        "patient": { "id": patient, "lastName": "Tmp" }
    });
    let (status, body) = app.enroll(STAFF, &doc).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["carePlanExternalId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn get_returns_the_requested_fields_in_the_spec_shape() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, body) = app.mi_get(STAFF, ACTIVE).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 4, "{body}");
        assert_eq!(body["uuid"], ACTIVE);
        assert_eq!(body["expirationDate"], "2099-12-31");
        assert_eq!(body["drugProgram"], "Demo Care Program");
        let fields = body["fields"].as_array().unwrap();
        assert_eq!(fields.len(), 4);
        for f in fields {
            let mut k: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
            k.sort_unstable();
            if f["type"] == "PICKLIST" {
                // The one added key: the allowed values of a picklist, for forms.
                assert_eq!(
                    k,
                    ["label", "length", "picklistValues", "scale", "type", "uuid"]
                );
            } else {
                assert_eq!(k, ["label", "length", "scale", "type", "uuid"]);
            }
        }
        assert_eq!(
            fields[2]["picklistValues"],
            json!(["Morning", "Afternoon", "Evening"])
        );
        assert_eq!(fields[0]["type"], "DATE");
        assert_eq!(
            fields[1],
            json!({ "uuid": F_WEIGHT, "type": "DOUBLE", "scale": 1, "length": 3, "label": "Weight (kg)" })
        );
        // Upper-case UUIDs name the same request.
        let (status, _) = app.mi_get(STAFF, &ACTIVE.to_uppercase()).await;
        assert_eq!(status, StatusCode::OK);
        app.finish().await;
    }
}

#[tokio::test]
async fn post_writes_the_values_ends_the_request_and_later_calls_are_409() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (_, get) = app.mi_get(STAFF, ACTIVE).await;
        let (status, body) = app.mi_post(STAFF, ACTIVE, &answers(&get, GOOD)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "Completed");
        let (_, plan) = app.admin_get(&format!("/care-plans/{DEMO_PLAN}")).await;
        assert_eq!(plan["patient"]["dateOfBirth"], "1980-05-06", "{plan}");
        assert_eq!(
            plan["patient"]["additionalFields"]["weightKg"], "72.5",
            "{plan}"
        );
        assert_eq!(
            plan["additionalFields"]["preferredContactTime"], "Evening",
            "{plan}"
        );
        assert_eq!(plan["additionalFields"]["smsConsent"], true, "{plan}");
        for (status, body) in [
            app.mi_get(STAFF, ACTIVE).await,
            app.mi_post(STAFF, ACTIVE, &answers(&get, GOOD)).await,
        ] {
            assert_eq!(status, StatusCode::CONFLICT, "{body}");
            assert_eq!(body[0]["errorCode"], "REQUEST_NOT_ACTIVE");
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn malformed_or_missing_uuids_and_bodies_are_400() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for uuid in [
            "not-a-uuid",
            "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e0",
            "5f0c8b8e1d2a4c1e9a570a4a5c1d7e01zz",
        ] {
            let (status, body) = app.mi_get(STAFF, uuid).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{uuid}: {body}");
            assert_eq!(body[0]["errorCode"], "INVALID_UUID");
            let (status, _) = app.mi_post(STAFF, uuid, &json!([])).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{uuid}");
        }
        for path in [
            "/care/missingInformationRequest",
            "/care/missingInformationRequest/",
        ] {
            let (status, body) = app
                .send(reqwest::Method::GET, path, Some(STAFF), None)
                .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        }
        let before = app.history(ACTIVE).await.len();
        for body in [
            "",
            "not json",
            "{}",
            "[1]",
            "[{\"uuid\": 1, \"value\": \"x\"}]",
            "[{\"uuid\": \"x\"}]",
            "[{\"uuid\": \"x\", \"value\": 5}]",
        ] {
            let (status, reply) = app.mi_post_raw(STAFF, ACTIVE, body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}: {reply}");
            assert_eq!(reply[0]["errorCode"], "INVALID_BODY", "{body:?}: {reply}");
        }
        let history = app.history(ACTIVE).await;
        assert_eq!(history.len(), before + 7);
        assert!(
            history
                .iter()
                .skip(before)
                .all(|h| h["statusCode"] == 400 && h["method"] == "POST")
        );
        // The request is still active.
        assert_eq!(app.mi_get(STAFF, ACTIVE).await.0, StatusCode::OK);
        app.finish().await;
    }
}

#[tokio::test]
async fn callers_need_a_token_and_read_or_edit_access_to_every_field() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, _) = app
            .send(
                reqwest::Method::GET,
                &format!("/care/missingInformationRequest/{ACTIVE}"),
                None,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (_, get) = app.mi_get(STAFF, ACTIVE).await;
        let (status, body) = app.mi_get(RESTRICTED, ACTIVE).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body[0]["errorCode"], "INSUFFICIENT_ACCESS");
        assert_eq!(body[0]["fields"][0], F_DOB);
        let (status, _) = app.mi_post(RESTRICTED, ACTIVE, &answers(&get, GOOD)).await;
        assert_eq!(status, StatusCode::FORBIDDEN);

        // Read-only access: GET is allowed, POST is not.
        let grants: Vec<Value> = ["DataRequest", "CarePlan", "Account"]
            .iter()
            .map(|o| json!({ "object": o, "read": true }))
            .collect();
        let (status, user) = app
            .admin_post(
                "/users",
                &json!({ "name": "reader", "permissions": grants }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{user}");
        let reader = user["token"].as_str().unwrap();
        assert_eq!(app.mi_get(reader, ACTIVE).await.0, StatusCode::OK);
        let (status, body) = app.mi_post(reader, ACTIVE, &answers(&get, GOOD)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        // Nothing was written.
        let (_, plan) = app.admin_get(&format!("/care-plans/{DEMO_PLAN}")).await;
        assert!(plan["patient"]["dateOfBirth"].is_null(), "{plan}");
        app.finish().await;
    }
}

/// A GET reads the caller and the request in one statement; the caller still decides first:
/// an unknown token learns nothing of the request (401 whatever the UUID), and a known user
/// without a single permission is refused (403) rather than mistaken for no user.
#[tokio::test]
async fn an_unknown_token_is_401_before_the_request_and_no_permissions_is_403() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for uuid in [ACTIVE, "00000000-0000-4000-8000-000000000000", "not-a-uuid"] {
            let (status, body) = app.mi_get("no-such-token", uuid).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{uuid}: {body}");
            let (status, _) = app
                .send(
                    reqwest::Method::GET,
                    &format!("/care/missingInformationRequest/{uuid}/fhir"),
                    Some("no-such-token"),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{uuid} (FHIR)");
        }
        let (status, user) = app
            .admin_post("/users", &json!({ "name": "nobody", "permissions": [] }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{user}");
        let nobody = user["token"].as_str().unwrap();
        let (status, body) = app.mi_get(nobody, ACTIVE).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body[0]["errorCode"], "INSUFFICIENT_ACCESS");
        let (status, body) = app
            .mi_get(nobody, "00000000-0000-4000-8000-000000000000")
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(
            app.mi_get(nobody, "not-a-uuid").await.0,
            StatusCode::BAD_REQUEST
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn each_missing_record_is_a_404_that_says_which() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, body) = app.mi_get(STAFF, &uuid::Uuid::new_v4().to_string()).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body[0]["errorCode"], "REQUEST_NOT_FOUND");

        let no_plan = new_request(
            &app,
            "DemoRx:DemoCareProgram:NOBODY:2026-01-01",
            "DEMO-GROUP",
            "Active",
            "2099-01-01",
        )
        .await;
        let no_group = new_request(&app, DEMO_PLAN, "NO-SUCH-GROUP", "Active", "2099-01-01").await;

        let (s, b) = app
            .admin_put("/programs/TmpProgram", &json!({ "name": "Temporary" }))
            .await;
        assert_eq!(s, StatusCode::OK, "{b}");
        let tmp_plan = enroll_patient(&app, "TMP-1", "TmpProgram").await;
        let no_program = new_request(&app, &tmp_plan, "DEMO-GROUP", "Active", "2099-01-01").await;
        assert_eq!(
            app.admin_delete("/programs/TmpProgram").await.0,
            StatusCode::OK
        );

        let orphan_plan = enroll_patient(&app, "TMP-2", "DemoCareProgram").await;
        let no_patient =
            new_request(&app, &orphan_plan, "DEMO-GROUP", "Active", "2099-01-01").await;
        assert_eq!(
            app.admin_delete("/accounts/DemoRx:patient:TMP-2").await.0,
            StatusCode::OK
        );

        for (uuid, code) in [
            (&no_plan, "CARE_PLAN_NOT_FOUND"),
            (&no_group, "GROUP_NOT_FOUND"),
            (&no_program, "CARE_PROGRAM_NOT_FOUND"),
            (&no_patient, "PATIENT_ACCOUNT_NOT_FOUND"),
        ] {
            let (status, body) = app.mi_get(STAFF, uuid).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{code}: {body}");
            assert_eq!(body[0]["errorCode"], code);
            let (status, body) = app.mi_post(STAFF, uuid, &json!([])).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{code}: {body}");
            assert_eq!(body[0]["errorCode"], code);
            let history = app.history(uuid).await;
            let codes: Vec<i64> = history
                .iter()
                .filter_map(|h| h["statusCode"].as_i64())
                .collect();
            assert_eq!(codes, [404, 404], "{code}");
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn ended_cancelled_and_expired_requests_are_409() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let cancelled = new_request(&app, DEMO_PLAN, "DEMO-GROUP", "Cancelled", "2099-01-01").await;
        let (_, get) = app.mi_get(STAFF, ACTIVE).await;
        for (uuid, code) in [
            (ENDED, "REQUEST_NOT_ACTIVE"),
            (cancelled.as_str(), "REQUEST_NOT_ACTIVE"),
            (EXPIRED, "REQUEST_EXPIRED"),
        ] {
            let (status, body) = app.mi_get(STAFF, uuid).await;
            assert_eq!(status, StatusCode::CONFLICT, "{uuid}: {body}");
            assert_eq!(body[0]["errorCode"], code);
            let (status, body) = app.mi_post(STAFF, uuid, &answers(&get, GOOD)).await;
            assert_eq!(status, StatusCode::CONFLICT, "{uuid}: {body}");
            assert_eq!(body[0]["errorCode"], code);
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn values_that_do_not_fulfil_the_fields_are_412_with_each_reason() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (_, get) = app.mi_get(STAFF, ACTIVE).await;
        let cases: Vec<(Value, &str, &str)> = vec![
            (
                answers(
                    &get,
                    &[
                        (F_DOB, "1980-02-30"),
                        (F_WEIGHT, "72.5"),
                        (F_TIME, "Evening"),
                        (F_SMS, "true"),
                    ],
                ),
                "INVALID_VALUE",
                "[0].value",
            ),
            (
                answers(
                    &get,
                    &[
                        (F_DOB, "1980-05-06"),
                        (F_WEIGHT, "72.55"),
                        (F_TIME, "Evening"),
                        (F_SMS, "true"),
                    ],
                ),
                "INVALID_VALUE",
                "[1].value",
            ),
            (
                answers(
                    &get,
                    &[
                        (F_DOB, "1980-05-06"),
                        (F_WEIGHT, "7200"),
                        (F_TIME, "Evening"),
                        (F_SMS, "true"),
                    ],
                ),
                "INVALID_VALUE",
                "[1].value",
            ),
            (
                answers(
                    &get,
                    &[
                        (F_DOB, "1980-05-06"),
                        (F_WEIGHT, "72.5"),
                        (F_TIME, "Night"),
                        (F_SMS, "true"),
                    ],
                ),
                "INVALID_VALUE",
                "[2].value",
            ),
            (
                answers(
                    &get,
                    &[
                        (F_DOB, "1980-05-06"),
                        (F_WEIGHT, "72.5"),
                        (F_TIME, "Evening"),
                        (F_SMS, "yes"),
                    ],
                ),
                "INVALID_VALUE",
                "[3].value",
            ),
            (
                answers(
                    &get,
                    &[
                        (F_DOB, "1980-05-06"),
                        (F_WEIGHT, "72.5"),
                        (F_TIME, "Evening"),
                    ],
                ),
                "VALUE_REQUIRED",
                "[3].value",
            ),
        ];
        for (body, code, path) in cases {
            let (status, reply) = app.mi_post(STAFF, ACTIVE, &body).await;
            assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{path}: {reply}");
            assert_eq!(reply.as_array().map(Vec::len), Some(1), "{reply}");
            assert_eq!(reply[0]["errorCode"], code, "{reply}");
            assert_eq!(reply[0]["fields"][0], path, "{reply}");
        }
        // A requested field left out, an unknown field, a field twice.
        let full = answers(&get, GOOD);
        let mut missing = full.clone();
        missing.as_array_mut().unwrap().pop();
        let (status, reply) = app.mi_post(STAFF, ACTIVE, &missing).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED);
        assert_eq!(reply[0]["errorCode"], "FIELD_MISSING");
        assert_eq!(reply[0]["fields"][0], F_SMS);
        let mut unknown = full.clone();
        unknown
            .as_array_mut()
            .unwrap()
            .push(json!({ "uuid": uuid::Uuid::new_v4().to_string(), "value": "x" }));
        let (status, reply) = app.mi_post(STAFF, ACTIVE, &unknown).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED);
        assert_eq!(reply[0]["errorCode"], "UNKNOWN_FIELD");
        let mut twice = full.clone();
        let first = twice[0].clone();
        twice.as_array_mut().unwrap().push(first);
        let (status, reply) = app.mi_post(STAFF, ACTIVE, &twice).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED);
        assert_eq!(reply[0]["errorCode"], "DUPLICATE_FIELD");
        // Nothing was written and the request is still active.
        let (_, plan) = app.admin_get(&format!("/care-plans/{DEMO_PLAN}")).await;
        assert!(plan["patient"]["dateOfBirth"].is_null(), "{plan}");
        assert_eq!(app.mi_get(STAFF, ACTIVE).await.0, StatusCode::OK);
        app.finish().await;
    }
}

#[tokio::test]
async fn every_call_on_a_known_request_adds_one_history_record_without_values() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        assert!(app.history(ACTIVE).await.is_empty());
        let (_, get) = app.mi_get(STAFF, ACTIVE).await; // 200
        app.mi_get(RESTRICTED, ACTIVE).await; // 403
        let mut bad = answers(&get, GOOD);
        bad[0]["value"] = json!("secret-not-a-date");
        app.mi_post(STAFF, ACTIVE, &bad).await; // 412
        app.mi_post_raw(STAFF, ACTIVE, "nope").await; // 400
        app.mi_post(STAFF, ACTIVE, &answers(&get, GOOD)).await; // 200
        app.mi_get(STAFF, ACTIVE).await; // 409
        // Calls that never identify a request leave no record.
        app.mi_get(STAFF, "not-a-uuid").await;
        app.send(
            reqwest::Method::GET,
            &format!("/care/missingInformationRequest/{ACTIVE}"),
            None,
            None,
        )
        .await;

        let history = app.history(ACTIVE).await;
        let summary: Vec<(String, i64)> = history
            .iter()
            .map(|h| {
                (
                    h["method"].as_str().unwrap().to_owned(),
                    h["statusCode"].as_i64().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(String, i64)> = [
            ("GET", 200),
            ("GET", 403),
            ("POST", 412),
            ("POST", 400),
            ("POST", 200),
            ("GET", 409),
        ]
        .iter()
        .map(|(m, s)| ((*m).to_owned(), *s))
        .collect();
        assert_eq!(summary, expected);
        assert_eq!(
            history[2]["submittedFields"].as_array().map(Vec::len),
            Some(4)
        );
        assert!(
            history
                .iter()
                .all(|h| h["userId"].is_i64() && h["at"].is_i64())
        );
        let text = Value::Array(history).to_string();
        assert!(
            !text.contains("secret-not-a-date") && !text.contains("72.5"),
            "{text}"
        );
        let _ = ADMIN;
        app.finish().await;
    }
}

/// Concurrent GETs share batched history inserts: every answered GET has its own record, with
/// its caller's status code, once, on both backends.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_answered_get_of_a_burst_leaves_its_history_record() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let before = app.history(ACTIVE).await.len();
        let app = std::sync::Arc::new(app);
        let mut calls = Vec::new();
        for i in 0..48 {
            let app = app.clone();
            // Every third caller has no access to the request's fields: a 403, still recorded.
            let token = if i % 3 == 0 { RESTRICTED } else { STAFF };
            calls.push(tokio::spawn(
                async move { app.mi_get(token, ACTIVE).await.0 },
            ));
        }
        let mut answered = std::collections::HashMap::new();
        for call in calls {
            *answered.entry(call.await.unwrap().as_u16()).or_insert(0) += 1;
        }
        let history = app.history(ACTIVE).await;
        let new = &history[before..];
        assert_eq!(new.len(), 48, "{backend:?}");
        let mut recorded = std::collections::HashMap::new();
        for h in new {
            assert_eq!(h["method"], "GET");
            *recorded
                .entry(h["statusCode"].as_u64().unwrap() as u16)
                .or_insert(0) += 1;
        }
        assert_eq!(recorded, answered, "{backend:?}");
        std::sync::Arc::into_inner(app).unwrap().finish().await;
    }
}
