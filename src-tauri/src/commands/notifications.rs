//! Notification commands (docs/notifications.md): the account's channels (admins add, test and
//! remove them), subscriptions (an app's owners to its events, admins to the whole
//! account's), the deliveries with their attempts, and the events there are; each one call
//! into `slipway_platform_client::notifications`. The platform decides who may do what; a
//! refusal is a result naming its field, as the tools' are.

use serde_json::Value;
use slipway_platform_client::notifications as api;

use super::run::with_client;
use super::tools::{CommandError, Tools};

/// The events a subscription can name: `{events: [{name, description, about_an_app}]}`.
#[tauri::command]
pub async fn notify_events(tools: tauri::State<'_, Tools>) -> Result<Value, CommandError> {
    with_client(tools.runner(), api::list_events).await
}

/// The account's channels, without their secrets: `{channels: [...]}`.
#[tauri::command]
pub async fn notify_channels(tools: tauri::State<'_, Tools>) -> Result<Value, CommandError> {
    with_client(tools.runner(), api::list_channels).await
}

/// Adds a channel (admins); `settings` is the form: `name`, `kind` and the kind's fields.
/// The answer holds a made webhook secret, shown once.
#[tauri::command]
pub async fn notify_add_channel(
    tools: tauri::State<'_, Tools>,
    settings: Value,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| api::add_channel(c, &settings)).await
}

/// Sends a test message over a channel now: `{delivered, error}`.
#[tauri::command]
pub async fn notify_test_channel(
    tools: tauri::State<'_, Tools>,
    channel: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| api::test_channel(c, &channel)).await
}

/// Removes a channel with its subscriptions and deliveries (admins).
#[tauri::command]
pub async fn notify_remove_channel(
    tools: tauri::State<'_, Tools>,
    channel: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| api::delete_channel(c, &channel)).await
}

/// The subscriptions the signed-in person can see: `{subscriptions: [...]}`.
#[tauri::command]
pub async fn notify_subscriptions(tools: tauri::State<'_, Tools>) -> Result<Value, CommandError> {
    with_client(tools.runner(), api::list_subscriptions).await
}

/// Subscribes `channel` to `events` of the app `app_id`, or of the whole account without one.
#[tauri::command]
pub async fn notify_subscribe(
    tools: tauri::State<'_, Tools>,
    channel: String,
    app_id: Option<String>,
    events: Vec<String>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        api::subscribe(c, &channel, app_id.as_deref(), &events)
    })
    .await
}

/// Ends a subscription.
#[tauri::command]
pub async fn notify_unsubscribe(
    tools: tauri::State<'_, Tools>,
    id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| api::unsubscribe(c, &id)).await
}

/// The newest deliveries, each with its attempts: about one app, or all (admins).
#[tauri::command]
pub async fn notify_deliveries(
    tools: tauri::State<'_, Tools>,
    app_id: Option<String>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        api::list_deliveries(c, app_id.as_deref(), None, Some(20))
    })
    .await
}
