//! An app's custom domains and their certificates, as `GET|POST /v1/apps/{app_id}/domains`
//! and `GET|DELETE …/domains/{name}` answer them.

use serde::{Deserialize, Serialize};

/// Where a domain's certificate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DomainState {
    /// No certificate yet: the name does not point here, or the CA is being asked
    /// (`reason` says which).
    Pending,
    /// A certificate is served.
    Issued,
    /// A certificate is served and its successor is being issued (`reason` says why the last
    /// attempt failed, if it did).
    Renewing,
    /// The CA refused (`reason` holds its message); tried again after a backoff.
    Failed,
}

impl DomainState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Issued => "issued",
            Self::Renewing => "renewing",
            Self::Failed => "failed",
        }
    }
}

/// The certificate served for a domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DomainCertificate {
    /// `acme` (issued and renewed by the platform) or `operator` (the platform's
    /// `--tls-cert` covers the name; its owner renews it).
    pub source: String,
    /// Who issued it.
    pub issuer: String,
    /// Its serial number, hex.
    pub serial: String,
    /// Valid from (RFC 3339).
    pub not_before: String,
    /// Valid until (RFC 3339).
    pub expires_at: String,
    /// When the platform renews it (RFC 3339); absent for an operator's certificate.
    pub renews_at: Option<String>,
}

/// One custom domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Domain {
    /// The name, lowercase.
    pub name: String,
    /// The app it serves.
    pub app_id: String,
    /// The service it serves; absent: the app's primary service (or a redirect).
    pub service: Option<String>,
    /// Another domain of the app this one redirects to (`www.` → apex).
    pub redirect_to: Option<String>,
    /// Where its certificate stands.
    pub state: DomainState,
    /// Why it is pending or failed, in words.
    pub reason: Option<String>,
    /// The certificate served, once there is one.
    pub certificate: Option<DomainCertificate>,
    /// The address people use.
    pub url: String,
    /// When the platform next tries (RFC 3339), while pending or failed.
    pub next_attempt_at: Option<String>,
    /// Who added it.
    pub created_by: String,
    /// When (RFC 3339).
    pub created_at: String,
}

/// `GET /v1/apps/{app_id}/domains`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DomainList {
    /// The domains, by name.
    pub domains: Vec<Domain>,
}

/// `POST /v1/apps/{app_id}/domains`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NewDomain {
    /// The name (a DNS name of at least two labels, not a wildcard).
    pub name: String,
    /// The service to serve (default: the app's primary service).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Redirect to this other domain of the app instead of serving it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_to: Option<String>,
}
