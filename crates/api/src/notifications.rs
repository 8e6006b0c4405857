//! Notifications: the events a team can be told about, the channels that carry them
//! (`/v1/account/notifications/channels`), who subscribed to what
//! (`…/subscriptions`), each delivery with its attempts (`…/deliveries`), and the message a
//! webhook receives. docs/notifications.md tells the whole story.

use serde::{Deserialize, Serialize};

spelled_enum! {
    /// Something that went wrong (or right again) that a subscription can ask to hear about.
    pub enum EventKind {
        /// A deployment did not go live (it failed to start or never became healthy).
        DeploymentFailed = "deployment.failed",
        /// A deployment went live after the app had FAILED: the app serves again.
        DeploymentRecovered = "deployment.recovered",
        /// A RUNNING service kept crashing or failing its health check; the app is FAILED.
        CrashLooping = "app.crash_looping",
        /// A scheduled job's run failed.
        JobFailed = "job.failed",
        /// A scheduled job was due while the platform was down.
        JobMissed = "job.missed",
        /// A platform backup failed.
        BackupFailed = "backup.failed",
        /// The platform's TLS certificate expires soon.
        CertificateExpiring = "certificate.expiring",
        /// A backing server an app relies on (its database, bucket, queue…) went down.
        ServiceDown = "service.down",
        /// A message sent with "send a test" (nobody subscribes to it).
        Test = "test",
    }
}

impl EventKind {
    /// One line for people choosing what to subscribe to.
    pub fn describe(self) -> &'static str {
        match self {
            EventKind::DeploymentFailed => "a deployment failed",
            EventKind::DeploymentRecovered => "an app serves again after it failed",
            EventKind::CrashLooping => "a running app keeps crashing or failing its health check",
            EventKind::JobFailed => "a scheduled job's run failed",
            EventKind::JobMissed => "a scheduled job was missed while the platform was down",
            EventKind::BackupFailed => "a platform backup failed",
            EventKind::CertificateExpiring => "the platform's TLS certificate expires soon",
            EventKind::ServiceDown => "a backing server (database, bucket, queue…) went down",
            EventKind::Test => "a test message, sent by \"send a test\"",
        }
    }

    /// Whether the event is about one app (else it is about the whole platform, and only
    /// subscriptions for the whole account hear it).
    pub fn is_about_an_app(self) -> bool {
        !matches!(
            self,
            EventKind::BackupFailed | EventKind::CertificateExpiring | EventKind::Test
        )
    }
}

/// The app an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventApp {
    /// Its UUID.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// One event, as a webhook receives it (the JSON body) and as every message is written from.
/// It never holds a secret, a log line or an app's data: only what happened, to which app,
/// and the platform's own one-line reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Notification {
    /// `evt_…`: the same for every channel the event went to (receivers deduplicate on it).
    pub id: String,
    /// What happened.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// When (RFC 3339).
    pub occurred_at: String,
    /// The app it is about, when it is about one.
    pub app: Option<EventApp>,
    /// One sentence: what happened.
    pub summary: String,
    /// The platform's one-line reason, when there is one (never log lines).
    pub reason: Option<String>,
    /// Whether this is a "send a test" message.
    #[serde(default)]
    pub test: bool,
}

/// A channel: where notifications go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Channel {
    /// `chn_…`.
    pub id: String,
    /// Its name, unique in the account.
    pub name: String,
    /// `webhook`, `slack` or `email`.
    pub kind: String,
    /// Where it delivers, without its secrets (a URL's scheme and host, or the addresses).
    pub target: String,
    /// RFC 3339.
    pub created_at: String,
    /// Whether its newest delivery failed (`null` before any).
    pub last_delivery_failed: Option<bool>,
}

/// `POST /v1/account/notifications/channels`: the channel, and a generic webhook's signing
/// secret, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NewChannel {
    /// The channel.
    pub channel: Channel,
    /// The HMAC-SHA256 key of the `Slipway-Signature` header (webhook channels).
    pub signing_secret: Option<String>,
}

/// `GET /v1/account/notifications/channels`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChannelList {
    /// By name.
    pub channels: Vec<Channel>,
}

/// A subscription: a channel hears some events, of one app or of the whole account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Subscription {
    /// `sub_…`.
    pub id: String,
    /// The channel.
    pub channel_id: String,
    /// The channel's name.
    pub channel_name: String,
    /// The app, or `null` for every app of the account (and the platform's own events).
    pub app_id: Option<String>,
    /// The app's name.
    pub app_name: Option<String>,
    /// The events it hears.
    pub events: Vec<EventKind>,
    /// RFC 3339.
    pub created_at: String,
}

/// `GET /v1/account/notifications/subscriptions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SubscriptionList {
    /// Newest first.
    pub subscriptions: Vec<Subscription>,
}

/// One attempt at a delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attempt {
    /// 1 for the first.
    pub attempt: i64,
    /// RFC 3339.
    pub at: String,
    /// Why it failed; `null` when it was delivered.
    pub error: Option<String>,
}

/// One event on its way to one channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Delivery {
    /// `dlv_…`.
    pub id: String,
    /// The channel.
    pub channel_id: String,
    /// The channel's name.
    pub channel_name: String,
    /// The event.
    pub event: Notification,
    /// `pending` (to be tried, or retried at `next_attempt_at`), `delivered` or `failed`
    /// (every attempt failed).
    pub status: String,
    /// The attempts so far, oldest first.
    pub attempts: Vec<Attempt>,
    /// When it is tried next (RFC 3339), while pending.
    pub next_attempt_at: Option<String>,
    /// RFC 3339.
    pub delivered_at: Option<String>,
}

/// `GET /v1/account/notifications/deliveries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeliveryList {
    /// Newest first.
    pub deliveries: Vec<Delivery>,
}

/// `POST /v1/account/notifications/channels/{id}/test`: whether a test message arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TestResult {
    /// Whether the receiver took it.
    pub delivered: bool,
    /// Why not.
    pub error: Option<String>,
}
