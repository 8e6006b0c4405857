//! The FHIR R4 form of the missing-information service: the bundle of `GET …/{uuid}/fhir`
//! (Questionnaire + SDC Task), and a `QuestionnaireResponse` POST that fulfils the request
//! with the same rules and status codes as the plain body.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{ACTIVE, DEMO_PLAN, ENDED, EXPIRED, RESTRICTED, STAFF, backends, spawn_app};

const F_DOB: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f01";
const F_WEIGHT: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f02";
const F_TIME: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f03";
const F_SMS: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f04";
const SDC: &str = "http://hl7.org/fhir/uv/sdc/CodeSystem/temp";

/// A QuestionnaireResponse answering the demo group.
fn response(answers: &[(&str, Value)]) -> Value {
    json!({
        "resourceType": "QuestionnaireResponse",
        "questionnaire": format!("urn:uuid:{ACTIVE}"),
        "status": "completed",
        "item": answers
            .iter()
            .map(|(link, answer)| json!({ "linkId": link, "answer": [answer] }))
            .collect::<Vec<_>>(),
    })
}

fn good() -> Value {
    response(&[
        (F_DOB, json!({ "valueDate": "1980-05-06" })),
        (F_WEIGHT, json!({ "valueDecimal": 72.5 })),
        (
            F_TIME,
            json!({ "valueCoding": { "code": "Evening", "display": "Evening" } }),
        ),
        (F_SMS, json!({ "valueBoolean": true })),
    ])
}

#[tokio::test]
async fn fhir_get_is_a_collection_bundle_of_a_questionnaire_and_an_sdc_task() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let ((status, bundle), content_type) = app.mi_get_fhir(Some(STAFF), ACTIVE).await;
        assert_eq!(status, StatusCode::OK, "{bundle}");
        assert!(
            content_type.starts_with("application/fhir+json"),
            "{content_type}"
        );
        assert_eq!(bundle["resourceType"], "Bundle");
        assert_eq!(bundle["type"], "collection");
        let q = &bundle["entry"][0]["resource"];
        let task = &bundle["entry"][1]["resource"];
        assert_eq!(q["resourceType"], "Questionnaire");
        assert_eq!(q["status"], "active");
        assert_eq!(q["url"], format!("urn:uuid:{ACTIVE}"));
        assert_eq!(bundle["entry"][0]["fullUrl"], q["url"]);
        let items = q["item"].as_array().unwrap();
        let shape: Vec<(&str, &str, &str)> = items
            .iter()
            .map(|i| {
                (
                    i["linkId"].as_str().unwrap(),
                    i["type"].as_str().unwrap(),
                    i["text"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (F_DOB, "date", "Date of birth"),
                (F_WEIGHT, "decimal", "Weight (kg)"),
                (F_TIME, "choice", "Preferred contact time"),
                (F_SMS, "boolean", "Consent to text messages"),
            ]
        );
        assert!(items.iter().all(|i| i["required"] == true));
        assert_eq!(items[1]["extension"][0]["valueInteger"], 1);
        assert_eq!(items[1]["code"][0]["code"], "DOUBLE");
        let options: Vec<&str> = items[2]["answerOption"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["valueCoding"]["code"].as_str().unwrap())
            .collect();
        assert_eq!(options, ["Morning", "Afternoon", "Evening"]);

        assert_eq!(task["resourceType"], "Task");
        assert_eq!(task["status"], "requested");
        assert_eq!(task["intent"], "order");
        assert_eq!(
            task["code"]["coding"][0],
            json!({ "system": SDC, "code": "complete-questionnaire" })
        );
        assert_eq!(task["for"]["type"], "Patient");
        assert_eq!(
            task["for"]["identifier"]["value"],
            "DemoRx:patient:DEMO-PATIENT-1"
        );
        assert_eq!(task["restriction"]["period"]["end"], "2099-12-31");
        assert_eq!(
            task["input"][0]["type"]["coding"][0]["code"],
            "questionnaire"
        );
        assert_eq!(task["input"][0]["valueCanonical"], q["url"]);

        // The same history record as the plain GET.
        let history = app.history(ACTIVE).await;
        let last = history.last().unwrap();
        assert_eq!(last["method"], "GET");
        assert_eq!(last["statusCode"], 200);
        app.finish().await;
    }
}

#[tokio::test]
async fn fhir_get_answers_the_status_codes_of_the_plain_get() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let unknown = uuid::Uuid::new_v4().to_string();
        for (token, uuid, status, code) in [
            (None, ACTIVE, StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
            (
                Some(STAFF),
                "not-a-uuid",
                StatusCode::BAD_REQUEST,
                "INVALID_UUID",
            ),
            (
                Some(STAFF),
                unknown.as_str(),
                StatusCode::NOT_FOUND,
                "REQUEST_NOT_FOUND",
            ),
            (
                Some(STAFF),
                ENDED,
                StatusCode::CONFLICT,
                "REQUEST_NOT_ACTIVE",
            ),
            (
                Some(STAFF),
                EXPIRED,
                StatusCode::CONFLICT,
                "REQUEST_EXPIRED",
            ),
            (
                Some(RESTRICTED),
                ACTIVE,
                StatusCode::FORBIDDEN,
                "INSUFFICIENT_ACCESS",
            ),
        ] {
            let ((got, body), _) = app.mi_get_fhir(token, uuid).await;
            assert_eq!(got, status, "{uuid}: {body}");
            assert_eq!(body[0]["errorCode"], code, "{uuid}: {body}");
            if let Some(token) = token {
                let plain = app.mi_get(token, uuid).await;
                assert_eq!(plain.0, got, "{uuid}");
            }
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn a_questionnaire_response_fulfils_the_request_once() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        // Refused like the plain POST: no edit access to Account.dateOfBirth.
        let (status, body) = app.mi_post_fhir(RESTRICTED, ACTIVE, &good()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

        let (status, body) = app.mi_post_fhir(STAFF, ACTIVE, &good()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "Completed");
        assert_eq!(body["updatedFields"].as_array().unwrap().len(), 4);
        let (_, plan) = app.admin_get(&format!("/care-plans/{DEMO_PLAN}")).await;
        assert_eq!(plan["patient"]["dateOfBirth"], "1980-05-06", "{plan}");
        assert_eq!(plan["patient"]["additionalFields"]["weightKg"], "72.5");
        assert_eq!(
            plan["additionalFields"]["preferredContactTime"], "Evening",
            "{plan}"
        );
        assert_eq!(plan["additionalFields"]["smsConsent"], true, "{plan}");
        let history = app.history(ACTIVE).await;
        let last = history.last().unwrap();
        assert_eq!(last["method"], "POST");
        assert_eq!(last["statusCode"], 200);
        assert_eq!(
            last["submittedFields"],
            json!([F_DOB, F_WEIGHT, F_TIME, F_SMS])
        );

        // Reuse is refused as for the plain POST.
        let (status, body) = app.mi_post_fhir(STAFF, ACTIVE, &good()).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body[0]["errorCode"], "REQUEST_NOT_ACTIVE");
        // What was submitted stays readable: the bundle now carries the answer.
        let ((status, bundle), content_type) = app.mi_get_fhir(Some(STAFF), ACTIVE).await;
        assert_eq!(status, StatusCode::OK, "{bundle}");
        assert!(content_type.starts_with("application/fhir+json"));
        let response = &bundle["entry"][2]["resource"];
        assert_eq!(
            response["resourceType"], "QuestionnaireResponse",
            "{bundle}"
        );
        assert_eq!(response["status"], "completed");
        let (_, me) = app
            .send(reqwest::Method::GET, "/care/me", Some(STAFF), None)
            .await;
        assert_eq!(response["author"]["identifier"]["value"], me["id"], "{me}");
        assert_eq!(response["item"][0]["answer"][0]["valueDate"], "1980-05-06");
        assert_eq!(response["item"][1]["answer"][0]["valueDecimal"], 72.5);
        assert_eq!(
            response["item"][2]["answer"][0]["valueCoding"]["code"],
            "Evening"
        );
        assert_eq!(response["item"][3]["answer"][0]["valueBoolean"], true);
        assert_eq!(bundle["entry"][1]["resource"]["status"], "completed");
        // Someone without read access to its fields still cannot read it.
        let ((status, body), _) = app.mi_get_fhir(Some(RESTRICTED), ACTIVE).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        app.finish().await;
    }
}

#[tokio::test]
async fn questionnaire_responses_go_through_the_rules_of_the_plain_body() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let unknown = uuid::Uuid::new_v4().to_string();
        let (status, body) = app.mi_post_fhir(STAFF, &unknown, &good()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, body) = app.mi_post_fhir(STAFF, ENDED, &good()).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");

        let cases: Vec<(Value, StatusCode, &str, &str)> = vec![
            (
                json!({ "resourceType": "Patient" }),
                StatusCode::BAD_REQUEST,
                "INVALID_BODY",
                "resourceType",
            ),
            (
                response(&[(F_DOB, json!({ "valueDate": 19800506 }))]),
                StatusCode::BAD_REQUEST,
                "INVALID_BODY",
                "item[0].answer[0].valueDate",
            ),
            (
                response(&[
                    (F_DOB, json!({ "valueDate": "1980-02-30" })),
                    (F_WEIGHT, json!({ "valueDecimal": 72.5 })),
                    (F_TIME, json!({ "valueCoding": { "code": "Evening" } })),
                    (F_SMS, json!({ "valueBoolean": true })),
                ]),
                StatusCode::PRECONDITION_FAILED,
                "INVALID_VALUE",
                "item[0].answer",
            ),
            (
                response(&[
                    (F_DOB, json!({ "valueDate": "1980-05-06" })),
                    (F_WEIGHT, json!({ "valueDecimal": 72.5 })),
                    (F_TIME, json!({ "valueCoding": { "code": "Night" } })),
                    (F_SMS, json!({ "valueBoolean": true })),
                ]),
                StatusCode::PRECONDITION_FAILED,
                "INVALID_VALUE",
                "item[2].answer",
            ),
            (
                response(&[(F_DOB, json!({ "valueDate": "1980-05-06" }))]),
                StatusCode::PRECONDITION_FAILED,
                "FIELD_MISSING",
                F_WEIGHT,
            ),
        ];
        for (doc, status, code, path) in cases {
            let (got, body) = app.mi_post_fhir(STAFF, ACTIVE, &doc).await;
            assert_eq!(got, status, "{doc}: {body}");
            assert_eq!(body[0]["errorCode"], code, "{doc}: {body}");
            assert_eq!(body[0]["fields"][0], path, "{doc}: {body}");
        }
        // Still active: nothing was written.
        assert_eq!(app.mi_get(STAFF, ACTIVE).await.0, StatusCode::OK);
        app.finish().await;
    }
}
