//! `domain` and `tls_secret`: the apps' custom domains with their certificates' state, and the
//! sealed private keys (each domain's, the ACME account's) (migration 0010).

use sqlx::Row;

use crate::db::{Tx, now_millis};
use crate::model::Sealed;

/// A domain as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainRow {
    /// The name (lowercase, no final dot).
    pub name: String,
    /// The app it serves.
    pub app_id: String,
    /// The service it serves (`None`: the app's primary service).
    pub service: Option<String>,
    /// Another domain of the app it redirects to.
    pub redirect_to: Option<String>,
    /// pending, issued, renewing, failed.
    pub state: String,
    /// Why it is pending or failed.
    pub reason: Option<String>,
    /// acme or operator.
    pub source: String,
    /// The certificate chain, PEM (public).
    pub cert_pem: Option<String>,
    /// Its issuer.
    pub issuer: Option<String>,
    /// Its serial, hex.
    pub serial: Option<String>,
    /// Valid from (epoch s).
    pub not_before: Option<i64>,
    /// Valid until (epoch s).
    pub not_after: Option<i64>,
    /// Failed attempts in a row.
    pub failures: i64,
    /// When the worker next looks at it (epoch ms).
    pub next_attempt_at: Option<i64>,
    /// Who added it.
    pub created_by: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub updated_at: i64,
}

/// Waiting for DNS or for the CA.
pub const PENDING: &str = "pending";
/// A certificate is served.
pub const ISSUED: &str = "issued";
/// A certificate is served and its successor is being issued.
pub const RENEWING: &str = "renewing";
/// The CA refused; tried again after a backoff.
pub const FAILED: &str = "failed";

/// Issued by the platform's ACME account.
pub const SOURCE_ACME: &str = "acme";
/// Covered by the operator's `--tls-cert`.
pub const SOURCE_OPERATOR: &str = "operator";

macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT name, app_id, service, redirect_to, state, reason, source, cert_pem, issuer, \
             serial, not_before, not_after, failures, next_attempt_at, created_by, created_at, \
             updated_at FROM domain ",
            $rest
        )
    };
}

fn row(r: &sqlx::any::AnyRow) -> Result<DomainRow, sqlx::Error> {
    Ok(DomainRow {
        name: r.try_get(0)?,
        app_id: r.try_get(1)?,
        service: r.try_get(2)?,
        redirect_to: r.try_get(3)?,
        state: r.try_get(4)?,
        reason: r.try_get(5)?,
        source: r.try_get(6)?,
        cert_pem: r.try_get(7)?,
        issuer: r.try_get(8)?,
        serial: r.try_get(9)?,
        not_before: r.try_get(10)?,
        not_after: r.try_get(11)?,
        failures: r.try_get(12)?,
        next_attempt_at: r.try_get(13)?,
        created_by: r.try_get(14)?,
        created_at: r.try_get(15)?,
        updated_at: r.try_get(16)?,
    })
}

/// A new domain, due at once. A name another app (or this one) has is a unique violation.
pub async fn insert(
    tx: &mut Tx,
    name: &str,
    app_id: &str,
    service: Option<&str>,
    redirect_to: Option<&str>,
    source: &str,
    created_by: &str,
) -> Result<DomainRow, sqlx::Error> {
    let now = now_millis();
    sqlx::query(
        "INSERT INTO domain (name, app_id, service, redirect_to, state, source, failures, \
         next_attempt_at, created_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $7, $7)",
    )
    .bind(name.to_owned())
    .bind(app_id.to_owned())
    .bind(service.map(str::to_owned))
    .bind(redirect_to.map(str::to_owned))
    .bind(PENDING)
    .bind(source.to_owned())
    .bind(now)
    .bind(created_by.to_owned())
    .execute(&mut **tx)
    .await?;
    get(tx, name).await?.ok_or(sqlx::Error::RowNotFound)
}

/// One domain.
pub async fn get(tx: &mut Tx, name: &str) -> Result<Option<DomainRow>, sqlx::Error> {
    sqlx::query(select!("WHERE name = $1"))
        .bind(name.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// An app's domains, by name.
pub async fn of_app(tx: &mut Tx, app_id: &str) -> Result<Vec<DomainRow>, sqlx::Error> {
    let rows = sqlx::query(select!("WHERE app_id = $1 ORDER BY name"))
        .bind(app_id.to_owned())
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(row).collect()
}

/// Every domain (the gateway's routes at start).
pub async fn all(tx: &mut Tx) -> Result<Vec<DomainRow>, sqlx::Error> {
    let rows = sqlx::query(select!("ORDER BY name"))
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(row).collect()
}

/// The names due at `now` (epoch ms), earliest first.
pub async fn due(tx: &mut Tx, now: i64) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT name FROM domain WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $1 \
         ORDER BY next_attempt_at, name",
    )
    .bind(now)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}

/// The earliest time anything is due (epoch ms).
pub async fn next_due(tx: &mut Tx) -> Result<Option<i64>, sqlx::Error> {
    let r = sqlx::query("SELECT MIN(next_attempt_at) FROM domain")
        .fetch_one(&mut **tx)
        .await?;
    r.try_get(0)
}

/// What an attempt left: the state, why, and when to look again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt<'a> {
    /// The new state.
    pub state: &'a str,
    /// Why (pending, failed).
    pub reason: Option<&'a str>,
    /// Failed attempts in a row now.
    pub failures: i64,
    /// When to look again (epoch ms).
    pub next_attempt_at: Option<i64>,
}

/// Records an attempt's outcome, keeping the certificate.
pub async fn set_state(tx: &mut Tx, name: &str, a: &Attempt<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE domain SET state = $1, reason = $2, failures = $3, next_attempt_at = $4, \
         updated_at = $5 WHERE name = $6",
    )
    .bind(a.state.to_owned())
    .bind(a.reason.map(str::to_owned))
    .bind(a.failures)
    .bind(a.next_attempt_at)
    .bind(now_millis())
    .bind(name.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A certificate now served for the domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate<'a> {
    /// acme or operator.
    pub source: &'a str,
    /// The chain, PEM.
    pub cert_pem: Option<&'a str>,
    /// Its issuer.
    pub issuer: &'a str,
    /// Its serial.
    pub serial: &'a str,
    /// Valid from (epoch s).
    pub not_before: i64,
    /// Valid until (epoch s).
    pub not_after: i64,
    /// When to renew (epoch ms); `None` for an operator's certificate (renewed by them).
    pub renew_at: Option<i64>,
}

/// Records an issued certificate: state issued, no failures, due again at renewal.
pub async fn set_certificate(
    tx: &mut Tx,
    name: &str,
    c: &Certificate<'_>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE domain SET state = $1, reason = NULL, source = $2, cert_pem = $3, issuer = $4, \
         serial = $5, not_before = $6, not_after = $7, failures = 0, next_attempt_at = $8, \
         updated_at = $9 WHERE name = $10",
    )
    .bind(ISSUED)
    .bind(c.source.to_owned())
    .bind(c.cert_pem.map(str::to_owned))
    .bind(c.issuer.to_owned())
    .bind(c.serial.to_owned())
    .bind(c.not_before)
    .bind(c.not_after)
    .bind(c.renew_at)
    .bind(now_millis())
    .bind(name.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Removes a domain and its key. Returns whether it existed.
pub async fn delete(tx: &mut Tx, name: &str) -> Result<bool, sqlx::Error> {
    delete_secret(tx, &domain_secret_id(name)).await?;
    let done = sqlx::query("DELETE FROM domain WHERE name = $1")
        .bind(name.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Removes an app's domains and their keys (the app is deleted). Returns their names.
pub async fn delete_for_app(tx: &mut Tx, app_id: &str) -> Result<Vec<String>, sqlx::Error> {
    let names: Vec<String> = of_app(tx, app_id)
        .await?
        .into_iter()
        .map(|d| d.name)
        .collect();
    for name in &names {
        delete(tx, name).await?;
    }
    Ok(names)
}

/// The `tls_secret` id of a domain's private key.
pub fn domain_secret_id(name: &str) -> String {
    format!("domain/{name}")
}

/// The `tls_secret` id of the ACME account for a directory.
pub fn account_secret_id(directory: &str) -> String {
    format!("acme-account/{directory}")
}

/// Stores (or replaces) a sealed key.
pub async fn put_secret(tx: &mut Tx, id: &str, sealed: &Sealed) -> Result<(), sqlx::Error> {
    delete_secret(tx, id).await?;
    sqlx::query(
        "INSERT INTO tls_secret (id, key_id, nonce, ciphertext, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id.to_owned())
    .bind(sealed.key_id.clone())
    .bind(sealed.nonce.clone())
    .bind(sealed.ciphertext.clone())
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A sealed key.
pub async fn get_secret(tx: &mut Tx, id: &str) -> Result<Option<Sealed>, sqlx::Error> {
    sqlx::query("SELECT key_id, nonce, ciphertext FROM tls_secret WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .as_ref()
        .map(|r| super::sealed(r, 0))
        .transpose()
}

async fn delete_secret(tx: &mut Tx, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM tls_secret WHERE id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Every sealed key (key rotation).
pub async fn all_sealed(tx: &mut Tx) -> Result<Vec<(String, Sealed)>, sqlx::Error> {
    let rows = sqlx::query("SELECT id, key_id, nonce, ciphertext FROM tls_secret ORDER BY id")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, super::sealed(r, 1)?)))
        .collect()
}

/// Replaces a sealed key in place (key rotation).
pub async fn reseal(tx: &mut Tx, id: &str, sealed: &Sealed) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE tls_secret SET key_id = $1, nonce = $2, ciphertext = $3 WHERE id = $4")
        .bind(sealed.key_id.clone())
        .bind(sealed.nonce.clone())
        .bind(sealed.ciphertext.clone())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The master key ids the keys were sealed with.
pub async fn key_ids_in_use(tx: &mut Tx) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT DISTINCT key_id FROM tls_secret")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}
