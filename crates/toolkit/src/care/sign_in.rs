//! The care half of a desktop sign-in: the care URL and tokens are checked against the care
//! service before anything is saved, so that a mistyped token is refused on its field then,
//! not on the first form a care worker opens hours later.
//!
//! The spec gives the care services no "who am I" call, so each check asks for something that
//! decides the caller and changes nothing:
//! - a staff token: `GET {ns}/missingInformationRequest/-`. The service decides the caller
//!   before it reads the path (an unknown token is 401 whatever the UUID), and a malformed
//!   UUID is 400 with nothing read or written, not even a history record. So 400 means the
//!   token is known; 401 means it is not.
//! - an admin token: `GET admin/stats` (row counts only): 200 for an admin, 403 for a token
//!   the service knows that is not an admin's, 401 for an unknown one.
//! - no token at all: the staff call without one, which a care service answers 401.

use reqwest::Method;

use super::{Client, Endpoint, Failure};
use crate::error::ToolError;
use crate::platform::credentials::RemoteEnvironment;

/// A path UUID no request can have: the service answers 400 for it once the caller is known.
const NO_REQUEST: &str = "-";

/// Checks `env`'s care URL and tokens (an environment that passed
/// [`RemoteEnvironment::checked`]) against the care service. `Ok` when it has no care URL.
/// A refusal is a [`ToolError::InvalidArgument`] on the field to fix: `care_url` (nothing
/// answers there), `care_namespace` (something answers, but not the care services under
/// that namespace), `care_token` or `care_admin_token`.
pub fn check(env: &RemoteEnvironment) -> Result<(), ToolError> {
    let Some(url) = env.care_url.as_deref() else {
        return Ok(());
    };
    let namespace = env.care_namespace.as_deref().unwrap_or("care");
    let client = |token: &str| {
        Client::new(Endpoint::new(url, namespace, token))
            .map_err(|e| ToolError::invalid("care_url", e.message))
    };
    let unreachable = |e: Failure| {
        ToolError::invalid(
            "care_url",
            format!("no care service answered at {url}: {}", e.message),
        )
    };

    let staff = env.care_token.as_deref();
    let status = client(staff.unwrap_or_default())?
        .token_status()
        .map_err(unreachable)?;
    match (status, staff) {
        (400, Some(_)) | (401, None) => {}
        (401, Some(_)) => {
            return Err(ToolError::invalid(
                "care_token",
                format!("the care service at {url} refused this token (401)"),
            ));
        }
        (404, _) => {
            return Err(ToolError::invalid(
                if env.care_namespace.is_some() {
                    "care_namespace"
                } else {
                    "care_url"
                },
                format!("no care services answer under {url}/{namespace} (404)"),
            ));
        }
        (status, _) => {
            return Err(ToolError::invalid(
                "care_url",
                format!("{url} answered {status}, not as a care service does"),
            ));
        }
    }

    if let Some(admin) = env.care_admin_token.as_deref() {
        match client(admin)?.admin_status().map_err(unreachable)? {
            200 => {}
            401 => {
                return Err(ToolError::invalid(
                    "care_admin_token",
                    format!("the care service at {url} refused this token (401)"),
                ));
            }
            403 => {
                return Err(ToolError::invalid(
                    "care_admin_token",
                    "the care service knows this token, but it is not an admin's (403)",
                ));
            }
            status => {
                return Err(ToolError::invalid(
                    "care_url",
                    format!("{url} answered {status} to the admin API, not as a care service does"),
                ));
            }
        }
    }
    Ok(())
}

impl Client {
    /// The status of `GET {ns}/missingInformationRequest/-` with this client's token (none
    /// when it is empty): 400 for a known token, 401 for an unknown one or none.
    fn token_status(&self) -> Result<u16, Failure> {
        let url = self.service(&format!("missingInformationRequest/{NO_REQUEST}"));
        self.status_of(&url)
    }

    /// The status of `GET admin/stats` with this client's token.
    fn admin_status(&self) -> Result<u16, Failure> {
        self.status_of(&self.admin("stats"))
    }

    fn status_of(&self, url: &str) -> Result<u16, Failure> {
        let mut req = self.http.request(Method::GET, url);
        if !self.endpoint.token.is_empty() {
            req = req.bearer_auth(&self.endpoint.token);
        }
        req.send()
            .map(|r| r.status().as_u16())
            .map_err(|e| Failure::unavailable(e.to_string()))
    }
}
