//! Care commands: thin mappings onto the toolkit's care client (requests) and slipway-care
//! (the embedded service and the enrollment rules). Failures reach the UI as
//! `slipway_care_client::Failure` (which screen, every error, messages by field path).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use slipway_care::embedded::{Lazy, tokens};
use slipway_care_client::{self as care, Client, Endpoint, Failure};
use slipway_platform_client::credentials;

use super::selection::Selection;

/// Which token a call presents.
#[derive(Debug, Clone, Copy)]
pub enum Role {
    /// Care staff (enrollment, missing information).
    Staff,
    /// Care admin (users and permissions).
    Admin,
}

/// Where care calls go: a configured service, or the embedded one (started on first use,
/// stopped on exit); and where the desktop keeps its own files (the welcome marker).
#[derive(Debug)]
pub struct Care {
    embedded: Lazy,
    configured: Option<Service>,
    selection: Arc<Selection>,
    data_dir: PathBuf,
}

use credentials::CareService as Service;

impl Care {
    /// Care on the remote environment `selection` names, else on the process environment's
    /// configured service, else on an embedded one on `care_dir`.
    pub fn new(care_dir: PathBuf, data_dir: PathBuf, selection: Arc<Selection>) -> Self {
        Self {
            embedded: Lazy::new(care_dir),
            configured: care::configured(),
            selection,
            data_dir,
        }
    }

    /// Whether a care service is configured (rather than embedded).
    pub fn is_configured(&self) -> bool {
        self.configured.is_some()
    }

    /// The service calls go to, and how its tokens are named in messages: the remote
    /// environment's, the configured one, or `None` for the embedded one.
    fn service(&self) -> Result<Option<(Service, String)>, Failure> {
        if let Some(name) = self.selection.current() {
            return match credentials::saved_care(&name) {
                Ok(Some(service)) => Ok(Some((service, format!("environment {name:?}")))),
                Ok(None) => Err(Failure::unavailable(format!(
                    "environment {name:?} has no care services: sign in to it again with their URL, or switch to this computer"
                ))),
                Err(e) => Err(Failure::unavailable(e.to_string())),
            };
        }
        Ok(self
            .configured
            .clone()
            .map(|s| (s, "the environment variables".to_owned())))
    }

    /// The embedded service's data directory.
    pub fn embedded_dir(&self) -> PathBuf {
        self.embedded.data_dir().to_path_buf()
    }

    /// The desktop's own data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone()
    }

    /// Who calls care as staff: the remote environment's or the configured token, or the
    /// demo staff user.
    pub fn staff_name(&self) -> String {
        match self.service() {
            Ok(Some(((url, _, staff, admin), _))) => {
                let tokens = [
                    staff.as_ref().map(|_| "staff"),
                    admin.as_ref().map(|_| "admin"),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>();
                if tokens.is_empty() {
                    format!("no token for {url}")
                } else {
                    format!("{} token for {url}", tokens.join(" and "))
                }
            }
            Ok(None) => "Demo Staff (demo-staff)".to_owned(),
            // The care views say why when they are opened.
            Err(_) => "none in this environment".to_owned(),
        }
    }

    fn client(&self, role: Role) -> Result<Client, Failure> {
        let endpoint = match self.service()? {
            Some(((url, ns, staff, admin), source)) => {
                let (token, what) = match role {
                    Role::Staff => (staff, format!("a care staff token ({})", care::ENV_TOKEN)),
                    Role::Admin => (
                        admin,
                        format!("a care admin token ({})", care::ENV_ADMIN_TOKEN),
                    ),
                };
                let token = token.ok_or_else(|| {
                    Failure::unavailable(format!(
                        "no {what} is set in {source} for the care service at {url}"
                    ))
                })?;
                Endpoint::new(url.as_str(), ns.as_str(), token)
            }
            None => {
                let (url, ns) = self.embedded.endpoint().map_err(Failure::unavailable)?;
                let token = match role {
                    Role::Staff => tokens::STAFF,
                    Role::Admin => tokens::ADMIN,
                };
                Endpoint::new(url, ns, token)
            }
        };
        Client::new(endpoint)
    }

    /// A client presenting the staff token: the worklist's commands and its event
    /// subscription (commands/worklist.rs).
    pub fn staff_client(&self) -> Result<Client, Failure> {
        self.client(Role::Staff)
    }

    /// Stops the embedded service, if it was started.
    pub fn shutdown(&self) {
        self.embedded.shutdown();
    }
}

/// Runs blocking care work off the UI thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| Failure::unavailable(format!("the care call stopped unexpectedly: {e}")))?
}

fn with_client<T: Send + 'static>(
    care: &Arc<Care>,
    role: Role,
    work: impl FnOnce(Client) -> Result<T, Failure> + Send + 'static,
) -> impl std::future::Future<Output = Result<T, Failure>> {
    let care = Arc::clone(care);
    blocking(move || work(care.client(role)?))
}

/// The fields a missing-information request asks for.
#[tauri::command]
pub async fn care_missing_info(
    care: tauri::State<'_, Arc<Care>>,
    uuid: String,
) -> Result<Value, Failure> {
    with_client(&care, Role::Staff, move |c| c.missing_info(&uuid)).await
}

/// Submits the requested fields with their values.
#[tauri::command]
pub async fn care_submit_missing_info(
    care: tauri::State<'_, Arc<Care>>,
    uuid: String,
    fields: Vec<Value>,
) -> Result<Value, Failure> {
    with_client(&care, Role::Staff, move |c| {
        c.submit_missing_info(&uuid, &fields)
    })
    .await
}

/// What an answered request holds, and whether this person may correct it.
#[tauri::command]
pub async fn care_answer(
    care: tauri::State<'_, Arc<Care>>,
    uuid: String,
) -> Result<Value, Failure> {
    with_client(&care, Role::Staff, move |c| c.answer(&uuid)).await
}

/// Corrects an answered request's fields.
#[tauri::command]
pub async fn care_amend_missing_info(
    care: tauri::State<'_, Arc<Care>>,
    uuid: String,
    fields: Vec<Value>,
) -> Result<Value, Failure> {
    with_client(&care, Role::Staff, move |c| {
        c.amend_missing_info(&uuid, &fields)
    })
    .await
}

/// The enrollment form's choices (genders, contact types).
#[tauri::command]
pub fn care_enrollment_options() -> slipway_care::check::EnrollmentOptions {
    slipway_care::check::enrollment_options()
}

/// The result of checking a document with the service's rules.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// No rule broken (references and access are checked on submission).
    pub valid: bool,
    /// Every broken rule.
    pub errors: Vec<slipway_care::check::Issue>,
    /// Messages by field path.
    pub field_errors: std::collections::BTreeMap<String, Vec<String>>,
}

/// Checks an enrollment document as the user types, with the service's own validator.
#[tauri::command]
pub fn care_check_enrollment(document: Value) -> Checked {
    let errors = slipway_care::check::check_enrollment(&care::prune(&document));
    let mut field_errors = std::collections::BTreeMap::<String, Vec<String>>::new();
    for e in &errors {
        let paths = if e.fields.is_empty() {
            vec![String::new()]
        } else {
            e.fields.clone()
        };
        for p in paths {
            field_errors.entry(p).or_default().push(e.message.clone());
        }
    }
    Checked {
        valid: errors.is_empty(),
        errors,
        field_errors,
    }
}

/// Submits an enrollment document.
#[tauri::command]
pub async fn care_enroll(
    care: tauri::State<'_, Arc<Care>>,
    document: Value,
) -> Result<Value, Failure> {
    with_client(&care, Role::Staff, move |c| c.enroll(&document)).await
}

/// Care users with their permissions (admin).
#[tauri::command]
pub async fn care_users(care: tauri::State<'_, Arc<Care>>) -> Result<Value, Failure> {
    with_client(&care, Role::Admin, |c| c.users()).await
}

/// Creates a care user `{name, admin, permissions}`; the answer holds its token, once.
#[tauri::command]
pub async fn care_create_user(
    care: tauri::State<'_, Arc<Care>>,
    user: Value,
) -> Result<Value, Failure> {
    with_client(&care, Role::Admin, move |c| c.create_user(&user)).await
}

/// Replaces a care user's permissions.
#[tauri::command]
pub async fn care_set_permissions(
    care: tauri::State<'_, Arc<Care>>,
    id: String,
    permissions: Value,
) -> Result<Value, Failure> {
    with_client(&care, Role::Admin, move |c| {
        c.set_permissions(&id, &permissions)
    })
    .await
}

/// Deletes a care user.
#[tauri::command]
pub async fn care_delete_user(
    care: tauri::State<'_, Arc<Care>>,
    id: String,
) -> Result<Value, Failure> {
    with_client(&care, Role::Admin, move |c| c.delete_user(&id)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_places_errors_on_paths() {
        let checked = care_check_enrollment(serde_json::json!({
            "vendorName": "DemoRx", "programName": "DemoCareProgram", "enrollmentDate": "2026-01-15",
            "patient": {"id": "P-1", "lastName": "", "gender": "X"},
        }));
        assert!(!checked.valid);
        assert!(checked.field_errors.contains_key("patient.lastName"));
        assert!(checked.field_errors.contains_key("patient.gender"));
    }
}
