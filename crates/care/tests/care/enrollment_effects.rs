//! What an enrollment does to the database: the 200 body, idempotency, concurrency, the
//! audit record of failed requests, and permissions.

use std::collections::HashSet;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{RESTRICTED, STAFF, backends, domain_counts, full_enrollment, set, spawn_app};

fn results(body: &Value) -> Vec<(String, String)> {
    body["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            (
                r["object"].as_str().unwrap_or_default().to_owned(),
                r["result"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_full_enrollment_creates_every_record_and_says_so() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let before = app.stats().await;
        let (status, body) = app.enroll(STAFF, &full_enrollment("FULL-1")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["outcome"], "success");
        assert_eq!(
            body["carePlanExternalId"],
            "DemoRx:DemoCareProgram:FULL-1:2026-02-01"
        );
        assert!(
            uuid::Uuid::try_parse(body["requestId"].as_str().unwrap_or_default()).is_ok(),
            "{body}"
        );
        let r = results(&body);
        let count = |object: &str| r.iter().filter(|(o, _)| o == object).count();
        assert_eq!(count("CarePlan"), 1);
        assert_eq!(count("Account"), 6);
        assert_eq!(count("ContactPoint"), 7);
        assert_eq!(count("Consent"), 2);
        assert_eq!(count("MemberPlan"), 2);
        assert_eq!(count("Prescription"), 2);
        assert_eq!(count("AdditionalObject"), 2);
        assert!(r.iter().all(|(_, res)| res == "created"), "{body}");
        let after = app.stats().await;
        let grew = |t: &str| after[t].as_i64().unwrap() - before[t].as_i64().unwrap();
        assert_eq!(grew("care_plan"), 1);
        assert_eq!(grew("account"), 6);
        assert_eq!(grew("contact_point"), 7);
        assert_eq!(grew("prescription"), 2);
        assert_eq!(grew("erx_request"), 1);
        let (status, audit) = app
            .admin_get(&format!(
                "/erx-requests/{}",
                body["requestId"].as_str().unwrap()
            ))
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(audit["outcome"], "success");
        assert!(
            audit["payload"]
                .as_str()
                .unwrap_or_default()
                .contains("FULL-1")
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn posting_the_same_document_twice_changes_nothing_the_second_time() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let doc = full_enrollment("IDEM-1");
        let (status, _) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::OK);
        let first = app.stats().await;
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            results(&body).iter().all(|(_, r)| r == "unchanged"),
            "{body}"
        );
        let second = app.stats().await;
        assert_eq!(domain_counts(&first), domain_counts(&second));

        // One changed value updates that record only.
        let mut changed = doc.clone();
        set(&mut changed, "/patient/firstName", json!("Anne"));
        let (status, body) = app.enroll(STAFF, &changed).await;
        assert_eq!(status, StatusCode::OK);
        let updated: Vec<_> = body["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["result"] == "updated")
            .collect();
        assert_eq!(updated.len(), 1, "{body}");
        assert_eq!(updated[0]["path"], "patient");
        assert_eq!(domain_counts(&second), domain_counts(&app.stats().await));
        app.finish().await;
    }
}

#[tokio::test]
async fn concurrent_posts_of_one_patient_create_one_patient() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let before = app.stats().await;
        let doc = full_enrollment("CONC-1");
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let client = app.client.clone();
            let url = app.url("/care/eRxApi");
            let body = doc.to_string();
            tasks.push(tokio::spawn(async move {
                let r = client
                    .post(url)
                    .bearer_auth(STAFF)
                    .body(body)
                    .send()
                    .await
                    .expect("send");
                (r.status(), r.text().await.unwrap_or_default())
            }));
        }
        let mut created_plans = 0;
        for t in tasks {
            let (status, text) = t.await.expect("task");
            assert_eq!(status, StatusCode::OK, "{backend:?}: {text}");
            let body: Value = serde_json::from_str(&text).expect("json");
            if body["records"][0]["result"] == "created" {
                created_plans += 1;
            }
        }
        assert_eq!(
            created_plans, 1,
            "{backend:?}: exactly one post creates the care plan"
        );
        let after = app.stats().await;
        let grew = |t: &str| after[t].as_i64().unwrap() - before[t].as_i64().unwrap();
        assert_eq!(grew("care_plan"), 1, "{backend:?}");
        assert_eq!(grew("account"), 6, "{backend:?}");
        assert_eq!(grew("contact_point"), 7, "{backend:?}");
        assert_eq!(grew("erx_request"), 8, "{backend:?}");
        app.finish().await;
    }
}

#[tokio::test]
async fn a_failed_enrollment_leaves_no_domain_record_but_keeps_its_request_record() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let before = app.stats().await;
        let mut doc = full_enrollment("FAIL-1");
        // Everything is valid except the last prescription.
        set(&mut doc, "/prescriptions/1/drugNdc", json!("UNKNOWN"));
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let after = app.stats().await;
        assert_eq!(domain_counts(&before), domain_counts(&after), "{backend:?}");
        assert_eq!(
            after["erx_request"].as_i64().unwrap(),
            before["erx_request"].as_i64().unwrap() + 1
        );
        let _ = body;
        app.finish().await;
    }
}

#[tokio::test]
async fn the_request_record_of_a_failed_enrollment_holds_its_errors() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let url = app.url("/care/eRxApi");
        let r = app
            .client
            .post(url)
            .bearer_auth(STAFF)
            .body("{\"vendorName\": 1}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let id = r.headers()["x-erx-request-id"].to_str().unwrap().to_owned();
        let (status, audit) = app.admin_get(&format!("/erx-requests/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{audit}");
        assert_eq!(audit["outcome"], "rejected");
        let codes: HashSet<&str> = audit["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["errorCode"].as_str())
            .collect();
        assert!(
            codes.contains("INVALID_TYPE") && codes.contains("REQUIRED_FIELD_MISSING"),
            "{audit}"
        );
        assert_eq!(audit["payload"], "{\"vendorName\": 1}");
        app.finish().await;
    }
}

#[tokio::test]
async fn enrollment_needs_a_token_and_create_and_edit_access() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let doc = full_enrollment("AUTH-1");
        let (status, body) = app
            .send(
                reqwest::Method::POST,
                "/care/eRxApi",
                None,
                Some(doc.to_string()),
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        let (status, _) = app.enroll("no-such-token", &doc).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // A caller the token does not name is told 401 whatever the body, and nothing is
        // written, not even an eRX request record.
        let before = app.stats().await;
        for body in ["not json", "{}"] {
            let (status, reply) = app.enroll_raw("no-such-token", body).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}: {reply}");
        }
        assert_eq!(before, app.stats().await);

        // The restricted user may not write the patient's date of birth.
        let before = app.stats().await;
        let (status, body) = app.enroll(RESTRICTED, &doc).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(
            crate::support::error_paths(&body),
            ["patient.dateOfBirth", "caregiver.dateOfBirth"],
            "{body}"
        );
        assert_eq!(domain_counts(&before), domain_counts(&app.stats().await));
        let mut without = doc.clone();
        without["patient"]
            .as_object_mut()
            .unwrap()
            .remove("dateOfBirth");
        without["caregiver"]
            .as_object_mut()
            .unwrap()
            .remove("dateOfBirth");
        let (status, body) = app.enroll(RESTRICTED, &without).await;
        assert_eq!(status, StatusCode::OK, "{body}");

        // A user without any permission gets 403 naming the objects.
        let (status, user) = app.admin_post("/users", &json!({ "name": "nobody" })).await;
        assert_eq!(status, StatusCode::CREATED, "{user}");
        let (status, body) = app.enroll(user["token"].as_str().unwrap(), &doc).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body[0]["errorCode"], "INSUFFICIENT_ACCESS");
        app.finish().await;
    }
}

/// Contact `type` and `gender` match their configured lists regardless of case and are
/// stored in the configured spelling: the canonical document sent afterwards changes nothing.
#[tokio::test]
async fn allowed_values_match_regardless_of_case_and_are_stored_canonically() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let canonical = full_enrollment("CASE-1");
        let mut shouted = canonical.clone();
        set(&mut shouted, "/patient/gender", json!("f"));
        set(&mut shouted, "/physician/gender", json!("m"));
        set(&mut shouted, "/patient/addresses/0/type", json!("Home"));
        set(&mut shouted, "/patient/phones/0/type", json!("MOBILE"));
        set(&mut shouted, "/patient/emails/0/type", json!("hOmE"));
        set(&mut shouted, "/patient/faxes/0/type", json!("Work"));
        let (status, body) = app.enroll(STAFF, &shouted).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let plan = body["carePlanExternalId"].as_str().unwrap().to_owned();
        let (_, stored) = app.admin_get(&format!("/care-plans/{plan}")).await;
        assert_eq!(stored["patient"]["gender"], "F", "{stored}");

        let (status, body) = app.enroll(STAFF, &canonical).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            results(&body).iter().all(|(_, r)| r == "unchanged"),
            "{backend:?}: {body}"
        );
        app.finish().await;
    }
}
