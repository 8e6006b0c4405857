//! One message to any channel.

use slipway_api::notifications::Notification;

use crate::channel::ChannelConfig;
use crate::error::DeliveryError;
use crate::{email, webhook};

/// Sends messages; holds the HTTP client (its connection pool) for every HTTP channel.
#[derive(Debug, Clone)]
pub struct Sender {
    http: reqwest::Client,
}

impl Default for Sender {
    fn default() -> Self {
        Self::new()
    }
}

impl Sender {
    /// A sender with its own HTTP client (no redirects: a receiver answers, it does not
    /// send the signed body elsewhere).
    pub fn new() -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self { http }
    }

    /// Sends `n` once over `channel` as delivery `delivery_id`, at `now` (unix seconds,
    /// signed into a webhook's request).
    pub async fn send(
        &self,
        channel: &ChannelConfig,
        delivery_id: &str,
        n: &Notification,
        now: i64,
    ) -> Result<(), DeliveryError> {
        match channel {
            ChannelConfig::Webhook { url, secret } => {
                webhook::send_signed(&self.http, url, secret, delivery_id, n, now).await
            }
            ChannelConfig::Slack { url } => webhook::send_slack(&self.http, url, n).await,
            ChannelConfig::Email(config) => email::send(config, n).await,
        }
    }
}
