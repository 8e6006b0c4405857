//! The certificate worker: one loop over the domains that are due. For each: the operator's
//! certificate when it covers the name; else the reachability probe, then the CA. Issued
//! certificates are due again at renewal (a third of their lifetime before expiry); a
//! failure is due again after a backoff, and a renewal that fails keeps the certificate in
//! use, so a failed renewal never stops a domain being served.

use std::time::Duration;

use slipway_acme::{DomainName, Issuer};

use super::Domains;
use crate::db::now_millis;
use crate::error::PlatformError;
use crate::store::domains::{self as store, Attempt, Certificate, DomainRow};

/// The longest the worker sleeps without looking (an operator's certificate is looked at
/// again at least this often).
const MAX_SLEEP: Duration = Duration::from_secs(300);
/// How often an operator's certificate covering a domain is read again (it is renewed by
/// whoever provides it; the domain shows the new expiry).
const OPERATOR_RECHECK_MS: i64 = 3_600_000;

impl Domains {
    /// Starts the worker; it runs until [`Domains::stop_worker`].
    pub fn start_worker(&self) {
        let domains = self.clone();
        let task = tokio::spawn(async move {
            loop {
                let sleep = match domains.pass().await {
                    Ok(sleep) => sleep,
                    Err(e) => {
                        tracing::warn!(error = %e, "the domain worker could not read its work");
                        Duration::from_secs(10)
                    }
                };
                tokio::select! {
                    () = tokio::time::sleep(sleep) => {}
                    () = domains.inner.wake.notified() => {}
                }
            }
        });
        let old = self
            .inner
            .worker
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(task);
        if let Some(old) = old {
            old.abort();
        }
    }

    /// Stops the worker (the server is stopping: its pool is about to close).
    pub fn stop_worker(&self) {
        if let Some(task) = self
            .inner
            .worker
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            task.abort();
        }
    }

    /// Looks at every due domain; returns how long to sleep until the next one.
    async fn pass(&self) -> Result<Duration, PlatformError> {
        let mut tx = self.inner.db.begin_read().await?;
        let due = store::due(&mut tx, now_millis()).await?;
        tx.commit().await?;
        for name in due {
            if let Err(e) = self.attempt(&name).await {
                tracing::warn!(domain = %name, error = %e, "a domain could not be looked at");
            }
        }
        let mut tx = self.inner.db.begin_read().await?;
        let next = store::next_due(&mut tx).await?;
        tx.commit().await?;
        let wait = next.map_or(MAX_SLEEP, |at| {
            Duration::from_millis(u64::try_from(at - now_millis()).unwrap_or(0))
        });
        Ok(wait.min(MAX_SLEEP))
    }

    async fn attempt(&self, name: &str) -> Result<(), PlatformError> {
        let mut tx = self.inner.db.begin_read().await?;
        let row = store::get(&mut tx, name).await?;
        tx.commit().await?;
        let Some(row) = row else { return Ok(()) };
        if let Some(info) = self.operator_covering(name) {
            let now = now_millis();
            return self
                .write_certificate(
                    name,
                    &Certificate {
                        source: store::SOURCE_OPERATOR,
                        cert_pem: None,
                        issuer: &info.issuer,
                        serial: &info.serial,
                        not_before: info.not_before,
                        not_after: info.not_after,
                        renew_at: Some(now + OPERATOR_RECHECK_MS),
                    },
                )
                .await;
        }
        let Ok(domain) = DomainName::parse(name) else {
            return Ok(());
        };
        let Some(port) = self.http_port() else {
            return self
                .record(
                    name,
                    &Attempt {
                        state: store::PENDING,
                        reason: Some(
                            "certificates are proven over HTTP-01: start the platform with \
                             --gateway-http-listen (port 80 of this host)",
                        ),
                        failures: row.failures,
                        next_attempt_at: None,
                    },
                )
                .await;
        };
        if let Err(e) =
            super::probe::reaches_here(&self.inner.resolver, &self.inner.challenges, &domain, port)
                .await
        {
            return self.failed(&row, store::PENDING, &e.to_string()).await;
        }
        let issuer = match self.issuer().await {
            Ok(issuer) => issuer,
            Err(e) => return self.failed(&row, store::FAILED, &e).await,
        };
        let during = if row.cert_pem.is_some() {
            store::RENEWING
        } else {
            store::PENDING
        };
        self.record(
            name,
            &Attempt {
                state: during,
                reason: Some("the CA is validating the name"),
                failures: row.failures,
                next_attempt_at: row.next_attempt_at,
            },
        )
        .await?;
        match issuer.issue(&domain).await {
            Ok(issued) => self.issued(name, &issued).await,
            Err(e) => {
                tracing::warn!(domain = %name, error = %e, "certificate not issued");
                self.failed(&row, store::FAILED, &e.to_string()).await
            }
        }
    }

    /// Keeps a new certificate and serves it from the next handshake on.
    async fn issued(&self, name: &str, issued: &slipway_acme::Issued) -> Result<(), PlatformError> {
        let id = store::domain_secret_id(name);
        let sealed = self
            .inner
            .vault
            .seal_tls(&id, issued.key_pem.as_bytes())
            .map_err(|e| PlatformError::Config(e.to_string()))?;
        let info = &issued.info;
        let mut tx = self.inner.db.begin_write().await?;
        if store::get(&mut tx, name).await?.is_none() {
            // Removed while the CA was asked: nothing to keep.
            return Ok(());
        }
        store::put_secret(&mut tx, &id, &sealed).await?;
        store::set_certificate(
            &mut tx,
            name,
            &Certificate {
                source: store::SOURCE_ACME,
                cert_pem: Some(&issued.chain_pem),
                issuer: &info.issuer,
                serial: &info.serial,
                not_before: info.not_before,
                not_after: info.not_after,
                renew_at: Some(info.renew_at().saturating_mul(1000)),
            },
        )
        .await?;
        tx.commit().await?;
        if let Err(e) = self
            .inner
            .certificates
            .install(name, &issued.chain_pem, &issued.key_pem)
        {
            tracing::error!(domain = %name, error = %e, "an issued certificate cannot be served");
        }
        tracing::info!(domain = %name, issuer = %info.issuer, not_after = info.not_after, "certificate issued");
        Ok(())
    }

    /// Records a failed attempt: due again after the backoff. A domain that has a
    /// certificate keeps it and shows `renewing` with the reason.
    async fn failed(
        &self,
        row: &DomainRow,
        state: &str,
        reason: &str,
    ) -> Result<(), PlatformError> {
        let failures = row.failures.saturating_add(1);
        let wait = slipway_acme::certificate::backoff(u32::try_from(failures).unwrap_or(u32::MAX));
        let state = if row.cert_pem.is_some() {
            store::RENEWING
        } else {
            state
        };
        self.record(
            &row.name,
            &Attempt {
                state,
                reason: Some(reason),
                failures,
                next_attempt_at: Some(
                    now_millis()
                        .saturating_add(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX)),
                ),
            },
        )
        .await
    }

    async fn record(&self, name: &str, attempt: &Attempt<'_>) -> Result<(), PlatformError> {
        let mut tx = self.inner.db.begin_write().await?;
        store::set_state(&mut tx, name, attempt).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn write_certificate(
        &self,
        name: &str,
        c: &Certificate<'_>,
    ) -> Result<(), PlatformError> {
        let mut tx = self.inner.db.begin_write().await?;
        store::set_certificate(&mut tx, name, c).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The ACME account: opened once (created on first use, its credentials sealed and kept
    /// per CA directory, so the key is generated once).
    async fn issuer(&self) -> Result<Issuer, String> {
        let mut slot = self.inner.issuer.lock().await;
        if let Some(issuer) = slot.as_ref() {
            return Ok(issuer.clone());
        }
        let acme = &self.inner.settings.acme;
        let id = store::account_secret_id(&acme.directory);
        let stored = async {
            let mut tx = self.inner.db.begin_read().await?;
            let sealed = store::get_secret(&mut tx, &id).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(sealed)
        }
        .await
        .map_err(|e| format!("the ACME account cannot be read: {e}"))?;
        let stored = match stored {
            Some(sealed) => Some(
                self.inner
                    .vault
                    .open_tls(&id, &sealed)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .map_err(|e| format!("the ACME account cannot be opened: {e}"))?,
            ),
            None => None,
        };
        let (issuer, created) =
            Issuer::open(acme, stored.as_deref(), self.inner.challenges.clone())
                .await
                .map_err(|e| e.to_string())?;
        if let Some(credentials) = created {
            let sealed = self
                .inner
                .vault
                .seal_tls(&id, credentials.as_bytes())
                .map_err(|e| e.to_string())?;
            async {
                let mut tx = self.inner.db.begin_write().await?;
                store::put_secret(&mut tx, &id, &sealed).await?;
                tx.commit().await
            }
            .await
            .map_err(|e| format!("the ACME account cannot be kept: {e}"))?;
        }
        *slot = Some(issuer.clone());
        Ok(issuer)
    }
}
