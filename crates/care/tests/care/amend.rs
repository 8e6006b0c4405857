//! Correcting a submitted answer (`…/amend`, `…/answer`): within the window by the person who
//! answered or a care admin; the POST's field rules; the records, the history, the
//! `QuestionnaireResponse` and the Task showing it; nothing changed by a refusal.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{
    ACTIVE, ADMIN, DEMO_PLAN, RESTRICTED, STAFF, TestApp, backends, spawn_app, spawn_app_with,
};

const F_DOB: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f01";
const F_WEIGHT: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f02";
const F_TIME: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f03";
const F_SMS: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f04";

fn body(dob: &str, weight: &str) -> Value {
    json!([
        { "uuid": F_DOB, "value": dob },
        { "uuid": F_WEIGHT, "value": weight },
        { "uuid": F_TIME, "value": "Evening" },
        { "uuid": F_SMS, "value": "true" },
    ])
}

async fn amend(app: &TestApp, token: &str, body: &Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/care/missingInformationRequest/{ACTIVE}/amend"),
        Some(token),
        Some(body.to_string()),
    )
    .await
}

async fn answer(app: &TestApp, token: &str) -> (StatusCode, Value) {
    app.send(
        Method::GET,
        &format!("/care/missingInformationRequest/{ACTIVE}/answer"),
        Some(token),
        None,
    )
    .await
}

async fn plan(app: &TestApp) -> Value {
    app.admin_get(&format!("/care-plans/{DEMO_PLAN}")).await.1
}

#[tokio::test]
async fn the_answerer_corrects_a_value_and_history_and_fhir_show_it() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        // Nothing to correct before an answer.
        let (status, refused) = amend(&app, STAFF, &body("1980-05-06", "72.5")).await;
        assert_eq!(status, StatusCode::CONFLICT, "{refused}");
        assert_eq!(refused[0]["errorCode"], "REQUEST_NOT_ANSWERED");

        let (status, posted) = app
            .mi_post(STAFF, ACTIVE, &body("1980-05-06", "72.5"))
            .await;
        assert_eq!(status, StatusCode::OK, "{posted}");
        let (status, before) = answer(&app, STAFF).await;
        assert_eq!(status, StatusCode::OK, "{before}");
        assert_eq!(before["amendable"], true, "{before}");
        assert_eq!(before["amended"], false);
        let (_, me) = app.send(Method::GET, "/care/me", Some(STAFF), None).await;
        assert_eq!(before["answeredBy"]["id"], me["id"], "{me}");
        assert_eq!(before["fields"][1]["value"], "72.5");
        assert_eq!(before["fields"][1]["label"], "Weight (kg)");

        // The typo: 72.5 should have been 27.5.
        let (status, done) = amend(&app, STAFF, &body("1980-05-06", "27.5")).await;
        assert_eq!(status, StatusCode::OK, "{done}");
        assert_eq!(done["amended"], true);
        assert_eq!(done["changedFields"], json!([F_WEIGHT]));
        assert_eq!(done["updatedFields"].as_array().unwrap().len(), 4);
        let p = plan(&app).await;
        assert_eq!(p["patient"]["additionalFields"]["weightKg"], "27.5", "{p}");
        assert_eq!(p["patient"]["dateOfBirth"], "1980-05-06");

        let (_, after) = answer(&app, STAFF).await;
        assert_eq!(after["amended"], true, "{after}");
        assert_eq!(after["fields"][1]["value"], "27.5");
        assert_eq!(after["amendments"][0]["by"]["id"], me["id"]);
        assert_eq!(after["amendments"][0]["fields"], json!(["Weight (kg)"]));
        // The labels, never the values, in what the answer's history shows.
        assert!(!after["amendments"].to_string().contains("72.5"), "{after}");

        // The history names the call; the admin's view keeps the previous value.
        let history = app.history(ACTIVE).await;
        let last = history
            .iter()
            .rev()
            .find(|h| h["method"] == "AMEND")
            .unwrap();
        assert_eq!(last["statusCode"], 200);
        let (_, admin_view) = app.admin_get(&format!("/data-requests/{ACTIVE}")).await;
        assert_eq!(
            admin_view["amendments"][0]["changes"][0]["previous"], "72.5",
            "{admin_view}"
        );

        // FHIR: the response is amended, the Task says so and notes who changed what.
        let ((status, bundle), _) = app.mi_get_fhir(Some(STAFF), ACTIVE).await;
        assert_eq!(status, StatusCode::OK, "{bundle}");
        let task = &bundle["entry"][1]["resource"];
        let response = &bundle["entry"][2]["resource"];
        assert_eq!(response["status"], "amended");
        assert_eq!(response["item"][1]["answer"][0]["valueDecimal"], 27.5);
        assert_eq!(task["status"], "completed");
        assert_eq!(task["businessStatus"]["text"], "amended");
        let note = task["note"][0]["text"].as_str().unwrap();
        assert_eq!(note, "Answer amended: Weight (kg)");
        let (_, listed) = app
            .send(
                Method::GET,
                &format!("/fhir/Task/{ACTIVE}"),
                Some(STAFF),
                None,
            )
            .await;
        assert_eq!(listed["businessStatus"]["text"], "amended", "{listed}");

        // The same values again change nothing and record no amendment.
        let (status, same) = amend(&app, STAFF, &body("1980-05-06", "27.5")).await;
        assert_eq!(status, StatusCode::OK, "{same}");
        assert_eq!(same["amended"], false);
        let (_, again) = answer(&app, STAFF).await;
        assert_eq!(again["amendments"].as_array().unwrap().len(), 1);

        // A care admin may correct it too; the spec's calls still answer 409.
        let (status, by_admin) = amend(&app, ADMIN, &body("1980-05-07", "27.5")).await;
        assert_eq!(status, StatusCode::OK, "{by_admin}");
        assert_eq!(plan(&app).await["patient"]["dateOfBirth"], "1980-05-07");
        let (status, _) = app.mi_get(STAFF, ACTIVE).await;
        assert_eq!(status, StatusCode::CONFLICT);
        let (status, _) = app.mi_post(STAFF, ACTIVE, &body("1980-05-06", "1")).await;
        assert_eq!(status, StatusCode::CONFLICT);
        app.finish().await;
    }
}

#[tokio::test]
async fn refused_amendments_change_nothing() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, _) = app
            .mi_post(STAFF, ACTIVE, &body("1980-05-06", "72.5"))
            .await;
        assert_eq!(status, StatusCode::OK);
        let before = plan(&app).await;

        // Another person without the care admin role.
        let (status, refused) = amend(&app, RESTRICTED, &body("1980-05-06", "27.5")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
        assert_eq!(refused[0]["errorCode"], "NOT_THE_ANSWERER");
        let (_, seen) = answer(&app, RESTRICTED).await;
        assert_ne!(seen["amendable"], true, "{seen}");

        // Bad values: 412 naming the field, as the POST.
        let (status, refused) = amend(&app, STAFF, &body("1980-05-06", "72.55")).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{refused}");
        assert_eq!(refused[0]["errorCode"], "INVALID_VALUE");
        assert_eq!(refused[0]["fields"], json!(["[1].value"]));
        let (status, refused) = amend(
            &app,
            STAFF,
            &json!([{ "uuid": F_DOB, "value": "1980-05-06" }]),
        )
        .await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{refused}");
        // Malformed: 400.
        let (status, _) = app
            .send(
                Method::POST,
                &format!("/care/missingInformationRequest/{ACTIVE}/amend"),
                Some(STAFF),
                Some("{".into()),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);

        assert_eq!(plan(&app).await, before);
        let (_, seen) = answer(&app, STAFF).await;
        assert_eq!(seen["amended"], false, "{seen}");
        let history = app.history(ACTIVE).await;
        let amends: Vec<_> = history.iter().filter(|h| h["method"] == "AMEND").collect();
        assert_eq!(amends.len(), 4, "{history:?}");
        assert!(amends.iter().all(|h| h["statusCode"] != 200));
        app.finish().await;
    }
}

#[tokio::test]
async fn after_the_window_nobody_can_amend() {
    for backend in backends() {
        let app = spawn_app_with(backend, |c| c.amend_window = Duration::from_secs(1)).await;
        let (status, _) = app
            .mi_post(STAFF, ACTIVE, &body("1980-05-06", "72.5"))
            .await;
        assert_eq!(status, StatusCode::OK);
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let before = plan(&app).await;
        for token in [STAFF, ADMIN] {
            let (status, refused) = amend(&app, token, &body("1980-05-06", "27.5")).await;
            assert_eq!(status, StatusCode::CONFLICT, "{refused}");
            assert_eq!(refused[0]["errorCode"], "AMEND_WINDOW_CLOSED");
            let message = refused[0]["message"].as_str().unwrap();
            assert!(message.contains("for 1 second after"), "{message}");
        }
        assert_eq!(plan(&app).await, before);
        let (_, seen) = answer(&app, STAFF).await;
        assert_eq!(seen["amendable"], false, "{seen}");
        app.finish().await;
    }
}
