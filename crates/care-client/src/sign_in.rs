//! The care half of a desktop sign-in: the care URL and tokens are checked against the care
//! service before anything is saved, so that a mistyped token is refused on its field then,
//! not on the first form a care worker opens hours later.
//!
//! The spec gives the care services no "who am I" call, so each check asks for something that
//! decides the caller and changes nothing, and reads the error code of the answer as well as
//! its status, so that another server's 400 or 401 is not taken for the care service's:
//! - a staff token: `GET {ns}/missingInformationRequest/-`. The service decides the caller
//!   before it reads the path (an unknown token is 401 `UNAUTHORIZED` whatever the UUID), and
//!   a malformed UUID is 400 `INVALID_UUID` with nothing read or written, not even a history
//!   record. So that 400 means the token is known.
//! - an admin token: `GET admin/stats` (row counts only): 200 for an admin, 403 for a token
//!   the service knows that is not an admin's, 401 for an unknown one.
//! - no token at all: the staff call without one, which the service answers 401.
//!
//! Redirects are not followed: an HTTP client drops the token when a redirect changes the
//! host or port, which would blame a good token for a URL that should be written differently.

use std::time::Duration;

use reqwest::blocking::Client as Http;
use reqwest::redirect::Policy;
use serde_json::Value;

use slipway_platform_client::ToolError;
use slipway_platform_client::credentials::RemoteEnvironment;

/// A path UUID no request can have: the service answers 400 for it once the caller is known.
const NO_REQUEST: &str = "-";

/// Checks `env`'s care URL and tokens (an environment that passed
/// [`RemoteEnvironment::checked`]) against the care service. `Ok` when it has no care URL.
/// A refusal is a [`ToolError::InvalidArgument`] on the field to fix: `care_url` (nothing, or
/// not a care service, answers there), `care_namespace` (a care service answers, but not
/// under that namespace), `care_token` or `care_admin_token`.
pub fn check(env: &RemoteEnvironment) -> Result<(), ToolError> {
    let Some(url) = env.care_url.as_deref() else {
        return Ok(());
    };
    let namespace = env.care_namespace.as_deref().unwrap_or("care");
    let probe = Probe::new(url)?;

    let staff = env.care_token.as_deref();
    let path = format!("{namespace}/missingInformationRequest/{NO_REQUEST}");
    let answer = probe.get(&path, staff)?;
    match (answer.status, answer.code.as_deref(), staff) {
        (400, Some("INVALID_UUID"), Some(_)) | (401, Some("UNAUTHORIZED"), None) => {}
        (401, Some("UNAUTHORIZED"), Some(_)) => return Err(unknown_token("care_token", url)),
        (404, ..) if env.care_namespace.is_some() && probe.is_care_service() => {
            return Err(ToolError::invalid(
                "care_namespace",
                format!("the care service at {url} has no services under /{namespace} (404)"),
            ));
        }
        _ => return Err(probe.not_care(&answer)),
    }

    if let Some(admin) = env.care_admin_token.as_deref() {
        let answer = probe.get("admin/stats", Some(admin))?;
        match (answer.status, answer.code.as_deref()) {
            (200, _) => {}
            (401, Some("UNAUTHORIZED")) => return Err(unknown_token("care_admin_token", url)),
            (403, _) => {
                return Err(ToolError::invalid(
                    "care_admin_token",
                    "the care service knows this token, but it is not an admin's (403)",
                ));
            }
            _ => return Err(probe.not_care(&answer)),
        }
    }
    Ok(())
}

/// A token the care service at `url` does not know, as a refusal on `field`.
fn unknown_token(field: &str, url: &str) -> ToolError {
    ToolError::invalid(
        field,
        format!(
            "the care service at {url} does not know this token (401): check that it was \
             copied whole"
        ),
    )
}

/// What a check call was answered: its status, the first `errorCode` of an error body and,
/// for a redirect, where to.
struct Answer {
    status: u16,
    code: Option<String>,
    location: Option<String>,
}

/// GETs against one care base URL, without following redirects.
struct Probe<'a> {
    url: &'a str,
    http: Http,
}

impl<'a> Probe<'a> {
    fn new(url: &'a str) -> Result<Self, ToolError> {
        let http = slipway_platform_client::trust::client_builder(url)?
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .redirect(Policy::none())
            .build()
            .map_err(|e| ToolError::invalid("care_url", format!("HTTP client: {e}")))?;
        Ok(Self { url, http })
    }

    /// `GET {url}/{path}` with `token` (none: no `Authorization` header). No answer at all
    /// is a refusal on `care_url` that says why (refused connection, name, TLS).
    fn get(&self, path: &str, token: Option<&str>) -> Result<Answer, ToolError> {
        let mut req = self.http.get(format!("{}/{path}", self.url));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let response = req.send().map_err(|e| {
            if slipway_platform_client::trust::is_untrusted_certificate(&e) {
                return ToolError::invalid(
                    "care_url",
                    slipway_platform_client::trust::describe_send_error(self.url, &e),
                );
            }
            // The innermost cause says what the user can act on (refused connection, unknown
            // name, certificate); the layers above it only say a request failed.
            let e = e.without_url();
            let mut why: &dyn std::error::Error = &e;
            while let Some(inner) = why.source() {
                why = inner;
            }
            ToolError::invalid(
                "care_url",
                format!("no care service answered at {}: {why}", self.url),
            )
        })?;
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(str::to_owned);
        let body: Option<Value> = response.json().ok();
        let code = crate::client::issues_in(body.as_ref())
            .into_iter()
            .next()
            .map(|issue| issue.code);
        Ok(Answer {
            status,
            code,
            location,
        })
    }

    /// Whether a care service answers its health check at the base URL (so a 404 under the
    /// namespace is the namespace's, not the URL's).
    fn is_care_service(&self) -> bool {
        self.get("health", None).is_ok_and(|a| a.status == 200)
    }

    /// An answer no care service gives there, as a refusal on `care_url`.
    fn not_care(&self, answer: &Answer) -> ToolError {
        let url = self.url;
        let status = answer.status;
        let why = match (status, &answer.location) {
            (300..=399, Some(to)) => format!("{url} redirects to {to} ({status}): use that URL"),
            (500..=599, _) => format!(
                "the server at {url} is failing ({status}); try again later, or check the URL"
            ),
            _ => format!("{url} answered {status}, not as a care service does: check the URL"),
        };
        ToolError::invalid("care_url", why)
    }
}
