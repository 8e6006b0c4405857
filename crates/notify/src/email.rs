//! The e-mail channel: SMTP submission with STARTTLS required (never a clear-text session),
//! signed in when the channel has a user name, trusting the system's certificates and the
//! channel's own when it gives one.

use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use slipway_api::notifications::Notification;

use crate::channel::EmailConfig;
use crate::error::DeliveryError;
use crate::message;

/// How long the mail server has for each step of the session.
pub const TIMEOUT: Duration = Duration::from_secs(15);

fn settings(e: impl std::fmt::Display) -> DeliveryError {
    DeliveryError::Settings(e.to_string())
}

/// Sends the event as a plain-text e-mail to every recipient.
pub async fn send(config: &EmailConfig, n: &Notification) -> Result<(), DeliveryError> {
    let mut builder = Message::builder()
        .from(config.from.parse().map_err(settings)?)
        .subject(message::subject(n))
        .header(ContentType::TEXT_PLAIN);
    for to in &config.to {
        builder = builder.to(to.parse().map_err(settings)?);
    }
    let mail = builder.body(message::text(n)).map_err(settings)?;
    let mut tls = TlsParameters::builder(config.host.clone());
    if let Some(pem) = &config.ca_certificate {
        tls = tls.add_root_certificate(Certificate::from_pem(pem.as_bytes()).map_err(settings)?);
    }
    let tls = tls.build_native().map_err(settings)?;
    let mut transport =
        AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(config.host.as_str())
            .port(config.port)
            .tls(Tls::Required(tls))
            .timeout(Some(TIMEOUT));
    if let (Some(user), Some(password)) = (&config.username, &config.password) {
        transport = transport.credentials(Credentials::new(user.clone(), password.clone()));
    }
    transport
        .build()
        .send(mail)
        .await
        .map(|_| ())
        .map_err(|e| DeliveryError::Smtp {
            host: config.host.clone(),
            reason: words(&e),
        })
}

/// The error and its causes, in one line.
fn words(e: &lettre::transport::smtp::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}
