//! Issuing a certificate by ACME (RFC 8555) over HTTP-01, with instant-acme: one account per
//! CA directory (its key made once and kept by the caller), one order per name, the answers
//! served from [`Challenges`] while the CA validates.

use std::path::PathBuf;
use std::time::Duration;

use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, ChallengeType, Identifier, NewAccount,
    NewOrder, OrderStatus, RetryPolicy,
};

use crate::certificate::{CertError, CertInfo};
use crate::challenges::{Challenges, Served};
use crate::name::DomainName;

/// Let's Encrypt's production directory, the default CA.
pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";

/// How long one order may take from validation to certificate.
const ORDER_TIMEOUT: Duration = Duration::from_secs(120);

/// Which CA, and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcmeConfig {
    /// The CA's directory URL (`--acme-directory`).
    pub directory: String,
    /// The account's contact (`--acme-email`), for the CA's expiry warnings.
    pub email: Option<String>,
    /// A PEM root that alone is trusted for the CA's HTTPS (`--acme-ca-file`), for a private
    /// CA such as step-ca; without it the system's roots are.
    pub ca_file: Option<PathBuf>,
}

impl Default for AcmeConfig {
    fn default() -> Self {
        Self {
            directory: LETS_ENCRYPT.to_owned(),
            email: None,
            ca_file: None,
        }
    }
}

/// Why a certificate was not issued. Each says what the CA said, or why it was not reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcmeError {
    /// The CA answered with a problem document (a refused name, a rate limit, a bad account).
    #[error("the CA refused: {detail}")]
    Refused {
        /// The problem type (`urn:ietf:params:acme:error:rejectedIdentifier`, …).
        kind: Option<String>,
        /// What the CA said.
        detail: String,
    },
    /// The CA could not validate the name (its message says what it found).
    #[error("the CA could not validate {name}: {detail}")]
    Challenge {
        /// The name.
        name: String,
        /// What the CA said.
        detail: String,
    },
    /// The CA was not reached, or answered nothing usable.
    #[error("the CA at {directory} was not reached: {message}")]
    Unreachable {
        /// Its directory URL.
        directory: String,
        /// What failed.
        message: String,
    },
    /// The certificate it issued cannot be read.
    #[error(transparent)]
    Certificate(#[from] CertError),
    /// The CA offers no HTTP-01 challenge for the name.
    #[error("the CA offers no HTTP-01 challenge for {0}")]
    NoHttp01(String),
}

/// A certificate issued for one name.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The chain, leaf first, PEM.
    pub chain_pem: String,
    /// Its private key, PKCS#8 PEM (generated for this certificate only).
    pub key_pem: String,
    /// What the leaf says.
    pub info: CertInfo,
}

/// An ACME account ready to order certificates.
#[derive(Clone)]
pub struct Issuer {
    account: Account,
    directory: String,
    challenges: Challenges,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer")
            .field("directory", &self.directory)
            .field("account", &self.account.id())
            .finish()
    }
}

impl Issuer {
    /// The account `stored` describes (credentials a previous [`Issuer::open`] returned), or a
    /// new one. Returns the credentials to keep when the account is new: they hold its
    /// private key, so the caller keeps them sealed.
    pub async fn open(
        config: &AcmeConfig,
        stored: Option<&str>,
        challenges: Challenges,
    ) -> Result<(Self, Option<String>), AcmeError> {
        let unreachable = |e: instant_acme::Error| from_acme(&config.directory, e);
        let builder = || match &config.ca_file {
            Some(file) => Account::builder_with_root(file),
            None => Account::builder(),
        };
        if let Some(stored) = stored
            && let Ok(credentials) = serde_json::from_str::<AccountCredentials>(stored)
        {
            let account = builder()
                .map_err(unreachable)?
                .from_credentials(credentials)
                .await
                .map_err(unreachable)?;
            return Ok((
                Self {
                    account,
                    directory: config.directory.clone(),
                    challenges,
                },
                None,
            ));
        }
        let contact = config.email.as_ref().map(|e| format!("mailto:{e}"));
        let contacts: Vec<&str> = contact.iter().map(String::as_str).collect();
        let (account, credentials) = builder()
            .map_err(unreachable)?
            .create(
                &NewAccount {
                    contact: &contacts,
                    terms_of_service_agreed: true,
                    only_return_existing: false,
                },
                config.directory.clone(),
                None,
            )
            .await
            .map_err(unreachable)?;
        let kept = serde_json::to_string(&credentials).map_err(|e| AcmeError::Unreachable {
            directory: config.directory.clone(),
            message: format!("the account's credentials cannot be kept: {e}"),
        })?;
        tracing::info!(directory = %config.directory, "ACME account created");
        Ok((
            Self {
                account,
                directory: config.directory.clone(),
                challenges,
            },
            Some(kept),
        ))
    }

    /// The answers this issuer serves while a CA validates.
    pub fn challenges(&self) -> &Challenges {
        &self.challenges
    }

    /// Orders, proves and fetches a certificate for `name`.
    pub async fn issue(&self, name: &DomainName) -> Result<Issued, AcmeError> {
        let err = |e| from_acme(&self.directory, e);
        let identifiers = [Identifier::Dns(name.to_string())];
        let mut order = self
            .account
            .new_order(&NewOrder::new(&identifiers))
            .await
            .map_err(err)?;
        let _served = self.answer_challenges(&mut order, name).await?;
        let retries = RetryPolicy::new()
            .initial_delay(Duration::from_millis(250))
            .timeout(ORDER_TIMEOUT);
        let status = match order.poll_ready(&retries).await {
            Ok(status) => status,
            Err(instant_acme::Error::Api(problem)) => {
                return Err(AcmeError::Challenge {
                    name: name.to_string(),
                    detail: problem_text(&problem),
                });
            }
            Err(e) => return Err(err(e)),
        };
        if status != OrderStatus::Ready {
            let detail = challenge_error(&mut order)
                .await
                .unwrap_or_else(|| format!("the order is {status:?}"));
            return Err(AcmeError::Challenge {
                name: name.to_string(),
                detail,
            });
        }
        let key_pem = order.finalize().await.map_err(err)?;
        let chain_pem = order.poll_certificate(&retries).await.map_err(err)?;
        let info = CertInfo::from_pem(&chain_pem)?;
        Ok(Issued {
            chain_pem,
            key_pem,
            info,
        })
    }

    /// Serves each pending authorization's HTTP-01 answer and tells the CA to validate;
    /// the answers are served until the returned guards drop.
    async fn answer_challenges(
        &self,
        order: &mut instant_acme::Order,
        name: &DomainName,
    ) -> Result<Vec<Served>, AcmeError> {
        let mut served = Vec::new();
        let mut authorizations = order.authorizations();
        while let Some(authorization) = authorizations.next().await {
            let mut authorization = authorization.map_err(|e| from_acme(&self.directory, e))?;
            match authorization.status {
                AuthorizationStatus::Pending => {}
                AuthorizationStatus::Valid => continue,
                other => {
                    return Err(AcmeError::Challenge {
                        name: name.to_string(),
                        detail: format!("the authorization is {other:?}"),
                    });
                }
            }
            let mut challenge = authorization
                .challenge(ChallengeType::Http01)
                .ok_or_else(|| AcmeError::NoHttp01(name.to_string()))?;
            served.push(self.challenges.serve(
                &challenge.token,
                challenge.key_authorization().as_str().to_owned(),
            ));
            challenge
                .set_ready()
                .await
                .map_err(|e| from_acme(&self.directory, e))?;
        }
        Ok(served)
    }
}

/// The first challenge error the order's authorizations carry.
async fn challenge_error(order: &mut instant_acme::Order) -> Option<String> {
    let mut authorizations = order.authorizations();
    while let Some(Ok(mut authorization)) = authorizations.next().await {
        let Ok(state) = authorization.refresh().await else {
            continue;
        };
        if let Some(problem) = state.challenges.iter().find_map(|c| c.error.as_ref()) {
            return Some(problem_text(problem));
        }
    }
    None
}

/// A problem's detail, with its subproblems' (the per-name reasons).
fn problem_text(problem: &instant_acme::Problem) -> String {
    let mut text = problem
        .detail
        .clone()
        .unwrap_or_else(|| problem.r#type.clone().unwrap_or_else(|| "no detail".into()));
    for sub in &problem.subproblems {
        if let Some(detail) = &sub.detail {
            text.push_str("; ");
            text.push_str(detail);
        }
    }
    text
}

fn from_acme(directory: &str, e: instant_acme::Error) -> AcmeError {
    match e {
        instant_acme::Error::Api(problem) => AcmeError::Refused {
            kind: problem.r#type.clone(),
            detail: problem_text(&problem),
        },
        other => AcmeError::Unreachable {
            directory: directory.to_owned(),
            message: other.to_string(),
        },
    }
}
