//! Notifications: the events, the account's channels (admins add, test and delete them),
//! subscriptions (an app's owners for its events, admins for the whole account's) and the
//! deliveries with their attempts. `slipway notify`, the desktop and the MCP server call these.

use reqwest::Method;
use serde_json::{Value, json};
pub use slipway_api::notifications::{
    Channel, ChannelList, Delivery, DeliveryList, EventKind, NewChannel, Subscription,
    SubscriptionList, TestResult,
};

use crate::apps::uuid_arg;
use crate::client::Client;
use crate::error::ToolError;
use crate::people::segment;

const CHANNELS: &str = "/v1/account/notifications/channels";
const SUBSCRIPTIONS: &str = "/v1/account/notifications/subscriptions";

/// The events a subscription can name, with what each means.
pub fn list_events(client: &Client) -> Result<Value, ToolError> {
    client.typed(Method::GET, "/v1/notifications/events", None)
}

/// The account's channels.
pub fn list_channels(client: &Client) -> Result<ChannelList, ToolError> {
    client.typed(Method::GET, CHANNELS, None)
}

/// Adds a channel; `settings` is the request body (`name`, `kind` and the kind's fields, as
/// docs/notifications.md lists them).
pub fn add_channel(client: &Client, settings: &Value) -> Result<NewChannel, ToolError> {
    client.typed(Method::POST, CHANNELS, Some(settings))
}

/// Deletes a channel (by id or name) with its subscriptions and deliveries.
pub fn delete_channel(client: &Client, channel: &str) -> Result<Value, ToolError> {
    client.typed(
        Method::DELETE,
        &format!("{CHANNELS}/{}", segment("channel", channel)?),
        None,
    )
}

/// Sends a test message over a channel now.
pub fn test_channel(client: &Client, channel: &str) -> Result<TestResult, ToolError> {
    client.typed(
        Method::POST,
        &format!("{CHANNELS}/{}/test", segment("channel", channel)?),
        None,
    )
}

/// The subscriptions the caller may see.
pub fn list_subscriptions(client: &Client) -> Result<SubscriptionList, ToolError> {
    client.typed(Method::GET, SUBSCRIPTIONS, None)
}

/// Subscribes `channel` to `events` (names, or `all`) of the app `app_id`, or of the whole
/// account with `None`.
pub fn subscribe(
    client: &Client,
    channel: &str,
    app_id: Option<&str>,
    events: &[String],
) -> Result<Subscription, ToolError> {
    let mut body = json!({"channel": channel, "events": events});
    if let Some(app) = app_id {
        body["app_id"] = json!(uuid_arg("app_id", app)?);
    }
    client.typed(Method::POST, SUBSCRIPTIONS, Some(&body))
}

/// Ends a subscription.
pub fn unsubscribe(client: &Client, id: &str) -> Result<Value, ToolError> {
    client.typed(
        Method::DELETE,
        &format!("{SUBSCRIPTIONS}/{}", segment("id", id)?),
        None,
    )
}

/// The newest deliveries: about one app, of one channel, or all (admins).
pub fn list_deliveries(
    client: &Client,
    app_id: Option<&str>,
    channel: Option<&str>,
    limit: Option<u32>,
) -> Result<DeliveryList, ToolError> {
    let mut query = Vec::new();
    if let Some(app) = app_id {
        query.push(format!("app_id={}", uuid_arg("app_id", app)?));
    }
    if let Some(c) = channel {
        query.push(format!("channel={}", segment("channel", c)?));
    }
    if let Some(n) = limit {
        query.push(format!("limit={n}"));
    }
    let path = if query.is_empty() {
        "/v1/account/notifications/deliveries".to_owned()
    } else {
        format!("/v1/account/notifications/deliveries?{}", query.join("&"))
    };
    client.typed(Method::GET, &path, None)
}
