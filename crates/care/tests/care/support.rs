//! Test harness: `spawn_app()` starts the real server on 127.0.0.1:0 over an isolated
//! database (a temporary SQLite file, or a fresh PostgreSQL database) loaded with the demo
//! set, and returns typed helpers per endpoint.

use reqwest::StatusCode;
use serde_json::{Value, json};
use slipway_care::{Backend, CareConfig};
use slipway_server::testing::TestDatabase;

pub const STAFF: &str = "demo-staff";
pub const ADMIN: &str = "demo-admin";
pub const RESTRICTED: &str = "demo-restricted";
pub const ACTIVE: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";
pub const ENDED: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e02";
pub const EXPIRED: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e03";
pub const DEMO_PLAN: &str = "DemoRx:DemoCareProgram:DEMO-PATIENT-1:2026-01-15";

/// The backends every test runs on (PostgreSQL required under CI, skipped loudly otherwise).
pub fn backends() -> Vec<Backend> {
    slipway_server::testing::backends("care")
}

/// A running server and its database.
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
    /// Dropped with the app, also when a test panics.
    pg_database: Option<TestDatabase>,
    _dir: Option<tempfile::TempDir>,
}

pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, |_| {}).await
}

/// Starts a server; `configure` may change the configuration (base path, namespace, …).
pub async fn spawn_app_with(backend: Backend, configure: impl FnOnce(&mut CareConfig)) -> TestApp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut config = CareConfig::new(addr);
    config.demo = true;
    let mut dir = None;
    let mut pg_database = None;
    match backend {
        Backend::Sqlite => {
            let d = tempfile::tempdir().expect("tempdir");
            config.data_dir = d.path().to_path_buf();
            dir = Some(d);
        }
        Backend::Postgres => {
            let database = TestDatabase::create("care_test").await;
            config.database_url = Some(database.url().to_owned());
            pg_database = Some(database);
        }
    }
    configure(&mut config);
    let prefix = format!("http://{addr}{}", config.base_path);
    let state = slipway_care::prepare(&config)
        .await
        .expect("prepare the care service");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        slipway_care::spawn(listener, state, async {
            let _ = rx.await;
        })
        .await
        .expect("serve");
    });
    TestApp {
        base: prefix,
        client: reqwest::Client::new(),
        shutdown: Some(tx),
        server: Some(server),
        pg_database,
        _dir: dir,
    }
}

/// A status and a JSON body (Null when the body is not JSON).
pub type Reply = (StatusCode, Value);

async fn reply(r: reqwest::Response) -> Reply {
    let status = r.status();
    let text = r.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

impl TestApp {
    /// Stops the server and drops a PostgreSQL test database.
    pub async fn finish(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.server.take() {
            let _ = h.await;
        }
        drop(self.pg_database.take());
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<String>,
    ) -> Reply {
        let mut req = self.client.request(method, self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        reply(req.send().await.expect("request")).await
    }

    pub async fn enroll(&self, token: &str, doc: &Value) -> Reply {
        self.send(
            reqwest::Method::POST,
            "/care/eRxApi",
            Some(token),
            Some(doc.to_string()),
        )
        .await
    }

    pub async fn enroll_raw(&self, token: &str, body: &str) -> Reply {
        self.send(
            reqwest::Method::POST,
            "/care/eRxApi",
            Some(token),
            Some(body.to_owned()),
        )
        .await
    }

    pub async fn mi_get(&self, token: &str, uuid: &str) -> Reply {
        self.send(
            reqwest::Method::GET,
            &format!("/care/missingInformationRequest/{uuid}"),
            Some(token),
            None,
        )
        .await
    }

    pub async fn mi_post(&self, token: &str, uuid: &str, body: &Value) -> Reply {
        self.mi_post_raw(token, uuid, &body.to_string()).await
    }

    pub async fn mi_post_raw(&self, token: &str, uuid: &str, body: &str) -> Reply {
        self.send(
            reqwest::Method::POST,
            &format!("/care/missingInformationRequest/{uuid}"),
            Some(token),
            Some(body.to_owned()),
        )
        .await
    }

    /// `GET …/missingInformationRequest/{uuid}/fhir`, with the response's content type.
    pub async fn mi_get_fhir(&self, token: Option<&str>, uuid: &str) -> (Reply, String) {
        let mut req = self
            .client
            .get(self.url(&format!("/care/missingInformationRequest/{uuid}/fhir")));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.expect("request");
        let content_type = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (reply(r).await, content_type)
    }

    /// POST of a FHIR resource (`Content-Type: application/fhir+json`).
    pub async fn mi_post_fhir(&self, token: &str, uuid: &str, body: &Value) -> Reply {
        let r = self
            .client
            .post(self.url(&format!("/care/missingInformationRequest/{uuid}")))
            .bearer_auth(token)
            .header("content-type", "application/fhir+json; fhirVersion=4.0")
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        reply(r).await
    }

    pub async fn admin_get(&self, path: &str) -> Reply {
        self.send(
            reqwest::Method::GET,
            &format!("/admin{path}"),
            Some(ADMIN),
            None,
        )
        .await
    }

    pub async fn admin_put(&self, path: &str, body: &Value) -> Reply {
        self.send(
            reqwest::Method::PUT,
            &format!("/admin{path}"),
            Some(ADMIN),
            Some(body.to_string()),
        )
        .await
    }

    pub async fn admin_post(&self, path: &str, body: &Value) -> Reply {
        self.send(
            reqwest::Method::POST,
            &format!("/admin{path}"),
            Some(ADMIN),
            Some(body.to_string()),
        )
        .await
    }

    pub async fn admin_delete(&self, path: &str) -> Reply {
        self.send(
            reqwest::Method::DELETE,
            &format!("/admin{path}"),
            Some(ADMIN),
            None,
        )
        .await
    }

    /// Row counts per table.
    pub async fn stats(&self) -> Value {
        let (status, body) = self.admin_get("/stats").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// History records of a data request.
    pub async fn history(&self, uuid: &str) -> Vec<Value> {
        let (status, body) = self.admin_get(&format!("/data-requests/{uuid}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["history"].as_array().cloned().unwrap_or_default()
    }
}

/// Counts of domain records (everything an enrollment upserts).
pub fn domain_counts(stats: &Value) -> Vec<(String, i64)> {
    [
        "care_plan",
        "account",
        "contact_point",
        "consent",
        "member_plan",
        "prescription",
        "additional_record",
        "record_field",
    ]
    .iter()
    .map(|t| ((*t).to_owned(), stats[*t].as_i64().unwrap_or(-1)))
    .collect()
}

/// A full enrollment: all six parties, every contact kind, consents, insurances,
/// prescriptions and an additional object, valid against the demo data set.
pub fn full_enrollment(patient_id: &str) -> Value {
    json!({
        "vendorName": "DemoRx",
        "programName": "DemoCareProgram",
        "enrollmentDate": "2026-02-01",
        "patient": {
            "id": patient_id,
            "firstName": "Ann",
            "middleName": "Q",
            "lastName": "Lee",
            "gender": "F",
            "dateOfBirth": "1980-05-06",
            "addresses": [{
                "id": format!("{patient_id}-A1"), "addressLine1": "1 Main St", "addressLine2": "Apt 2",
                "city": "Springfld", "state": "IL", "postalCode": "62701", "country": "US",
                "type": "home", "primary": true
            }],
            "phones": [
                { "id": format!("{patient_id}-PH1"), "countryCode": "+1", "phoneNumber": "5550101", "ext": "12", "type": "mobile", "primary": true },
                { "id": format!("{patient_id}-PH2"), "countryCode": "+1", "phoneNumber": "5550103", "type": "work" }
            ],
            "emails": [{ "id": format!("{patient_id}-E1"), "emailAddress": "ann@example.com", "type": "home" }],
            "faxes": [{ "id": format!("{patient_id}-F1"), "countryCode": "+1", "faxNumber": "5550102", "ext": "1", "type": "work" }]
        },
        "physician": {
            "id": "DR-1", "firstName": "Bo", "lastName": "Kim", "gender": "M", "specialty": "Oncology",
            "suffix": "MD", "npi": "1234567890",
            "phones": [{ "id": "DR-1-PH", "countryCode": "+1", "phoneNumber": "5550200", "type": "work" }]
        },
        "staff": { "id": "ST-1", "firstName": "Sam", "lastName": "Staff" },
        "caregiver": { "id": "CG-1", "firstName": "Cy", "lastName": "Carer", "dateOfBirth": "1975-01-31" },
        "pharmacy": {
            "id": "PHARM-1", "name": "Corner Pharmacy", "npi": "999",
            "addresses": [{ "id": "PHARM-1-A", "addressLine1": "2 High St", "city": "Springfld", "state": "IL", "postalCode": "62702", "country": "US", "type": "work" }]
        },
        "organization": { "id": "ORG-1", "name": "Clinic", "npi": "888" },
        "consents": [
            { "id": format!("{patient_id}-C1"), "name": "DUP-TREATMENT consent", "effectiveDate": "2026-01-01", "expirationDate": "2027-01-01" },
            { "id": format!("{patient_id}-C2"), "name": "DUP-MARKETING" }
        ],
        "insurances": [
            { "id": format!("{patient_id}-I1"), "relationshipToMember": "Self", "effectiveDate": "2026-01-01",
              "expirationDate": "2026-12-31", "companyName": "Acme Health", "groupName": "G1", "memberNumber": "M1",
              "policyHolderFirstName": "Ann", "policyHolderLastName": "Lee" },
            { "companyName": "Backup Insurer", "memberNumber": "M2" }
        ],
        "prescriptions": [
            { "id": format!("{patient_id}-RX1"), "drugNdc": "NDC PROD-1001", "quantity": "30", "numberOfRefills": 3 },
            { "id": format!("{patient_id}-RX2"), "drugNdc": "PROD-1002", "numberOfRefills": 0 }
        ],
        "additionalObjects": [{
            "objectName": "AdverseEvent",
            "records": [
                { "recordType": "Serious", "additionalFields": { "description": "rash", "onsetDate": "2026-01-20" } },
                { "recordType": "NonSerious", "additionalFields": { "description": "headache" } }
            ]
        }]
    })
}

/// Sets the value at a JSON pointer (the parent must exist).
pub fn set(doc: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let target = doc
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no parent for {pointer}"));
    match target {
        Value::Object(m) => {
            m.insert(key.to_owned(), value);
        }
        Value::Array(a) => {
            let i: usize = key.parse().expect("index");
            if i < a.len() {
                a[i] = value;
            } else {
                a.push(value);
            }
        }
        _ => panic!("{parent} is not a container"),
    }
}

/// Removes the value at a JSON pointer.
pub fn remove(doc: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(key)
                .unwrap_or_else(|| panic!("nothing at {pointer}"));
        }
        _ => panic!("no object at {parent}"),
    }
}

/// The field paths of every error entry.
pub fn error_paths(body: &Value) -> Vec<String> {
    body.as_array()
        .into_iter()
        .flatten()
        .flat_map(|e| e["fields"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect()
}
