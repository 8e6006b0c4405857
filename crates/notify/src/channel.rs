//! A channel's settings: what an admin gives ([`Draft`]), checked into what the platform
//! seals and sends with ([`ChannelConfig`]). A bad setting is refused naming the field and
//! the rule ([`Invalid`]).

use serde::{Deserialize, Serialize};

/// How a channel delivers, secrets included: the platform keeps it sealed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ChannelConfig {
    /// A JSON POST of the event, signed with HMAC-SHA256 (`Slipway-Signature`).
    Webhook {
        /// Where to POST.
        url: String,
        /// The signing key.
        secret: String,
    },
    /// A Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat): `{"text": …}`.
    Slack {
        /// The incoming webhook's URL (its path is the secret).
        url: String,
    },
    /// E-mail over SMTP, STARTTLS required.
    Email(EmailConfig),
}

/// An e-mail channel's settings.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailConfig {
    /// The mail server.
    pub host: String,
    /// Its submission port (587 unless given).
    pub port: u16,
    /// The sign-in, when the server wants one.
    pub username: Option<String>,
    /// Its password.
    pub password: Option<String>,
    /// The sender address.
    pub from: String,
    /// The recipients.
    pub to: Vec<String>,
    /// A PEM certificate to trust besides the system's (a private CA of the mail server).
    pub ca_certificate: Option<String>,
}

/// The secrets stay out of debug output (and so out of any log line).
impl std::fmt::Debug for ChannelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChannelConfig({} to {})", self.kind(), self.target())
    }
}

impl ChannelConfig {
    /// `webhook`, `slack` or `email`.
    pub fn kind(&self) -> &'static str {
        match self {
            ChannelConfig::Webhook { .. } => "webhook",
            ChannelConfig::Slack { .. } => "slack",
            ChannelConfig::Email(_) => "email",
        }
    }

    /// Where it delivers, without secrets: a URL's scheme, host and port (a Slack URL's path
    /// is its token), or the mail server and the recipients.
    pub fn target(&self) -> String {
        match self {
            ChannelConfig::Webhook { url, .. } | ChannelConfig::Slack { url } => origin(url),
            ChannelConfig::Email(e) => {
                format!("smtp://{}:{} to {}", e.host, e.port, e.to.join(", "))
            }
        }
    }
}

/// A URL's scheme, host and port ("…" marks a path left out).
fn origin(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(u) => {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            let more = if u.path().len() > 1 { "/…" } else { "" };
            format!(
                "{}://{}{port}{more}",
                u.scheme(),
                u.host_str().unwrap_or("")
            )
        }
        Err(_) => "(an unreadable URL)".to_owned(),
    }
}

/// A setting that breaks a rule: the field and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {rule}")]
pub struct Invalid {
    /// The field, as the API names it.
    pub field: &'static str,
    /// The rule it breaks.
    pub rule: String,
}

fn invalid(field: &'static str, rule: impl Into<String>) -> Invalid {
    Invalid {
        field,
        rule: rule.into(),
    }
}

/// What an admin gives for a new channel, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    /// `webhook`, `slack` or `email`.
    pub kind: String,
    /// A webhook's URL.
    pub url: Option<String>,
    /// A webhook's signing secret (one is made when none is given).
    pub secret: Option<String>,
    /// The mail server.
    pub host: Option<String>,
    /// Its port.
    pub port: Option<i64>,
    /// The sign-in.
    pub username: Option<String>,
    /// Its password.
    pub password: Option<String>,
    /// The sender.
    pub from: Option<String>,
    /// The recipients.
    pub to: Vec<String>,
    /// A PEM certificate to trust.
    pub ca_certificate: Option<String>,
}

/// The fields each kind takes (any other given is refused, so a typo is not ignored).
const WEBHOOK_FIELDS: &[&str] = &["url", "secret"];
const SLACK_FIELDS: &[&str] = &["url"];
const EMAIL_FIELDS: &[&str] = &[
    "host",
    "port",
    "username",
    "password",
    "from",
    "to",
    "ca_certificate",
];

impl Draft {
    /// Checks every field; `new_secret` makes a webhook's signing secret when none is given.
    pub fn check(self, new_secret: impl FnOnce() -> String) -> Result<ChannelConfig, Invalid> {
        let allowed = match self.kind.as_str() {
            "webhook" => WEBHOOK_FIELDS,
            "slack" => SLACK_FIELDS,
            "email" => EMAIL_FIELDS,
            _ => return Err(invalid("kind", "must be webhook, slack or email")),
        };
        for (field, given) in self.given() {
            if given && !allowed.contains(&field) {
                return Err(invalid(
                    field,
                    format!("is not a setting of a {} channel", self.kind),
                ));
            }
        }
        match self.kind.as_str() {
            "webhook" => {
                let secret = match self.secret {
                    Some(s) if !(16..=200).contains(&s.chars().count()) => {
                        return Err(invalid("secret", "must be 16 to 200 characters"));
                    }
                    Some(s) => s,
                    None => new_secret(),
                };
                Ok(ChannelConfig::Webhook {
                    url: http_url(self.url)?,
                    secret,
                })
            }
            "slack" => Ok(ChannelConfig::Slack {
                url: http_url(self.url)?,
            }),
            _ => self.email(),
        }
    }

    fn given(&self) -> [(&'static str, bool); 9] {
        [
            ("url", self.url.is_some()),
            ("secret", self.secret.is_some()),
            ("host", self.host.is_some()),
            ("port", self.port.is_some()),
            ("username", self.username.is_some()),
            ("password", self.password.is_some()),
            ("from", self.from.is_some()),
            ("to", !self.to.is_empty()),
            ("ca_certificate", self.ca_certificate.is_some()),
        ]
    }

    fn email(self) -> Result<ChannelConfig, Invalid> {
        let host = self
            .host
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .ok_or_else(|| invalid("host", "is required: the mail server's name"))?;
        if host.len() > 253 || host.contains(|c: char| c.is_whitespace() || c == '/' || c == ':') {
            return Err(invalid("host", "must be a host name or address"));
        }
        let port = match self.port {
            None => 587,
            Some(p) => u16::try_from(p)
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| invalid("port", "must be 1 to 65535"))?,
        };
        if self.username.is_some() != self.password.is_some() {
            return Err(invalid(
                if self.username.is_some() {
                    "password"
                } else {
                    "username"
                },
                "username and password go together",
            ));
        }
        let from = self
            .from
            .ok_or_else(|| invalid("from", "is required: the sender's address"))?;
        address("from", &from)?;
        if self.to.is_empty() || self.to.len() > 20 {
            return Err(invalid("to", "must list 1 to 20 addresses"));
        }
        for to in &self.to {
            address("to", to)?;
        }
        if let Some(pem) = &self.ca_certificate
            && (pem.len() > 20_000 || !pem.contains("-----BEGIN CERTIFICATE-----"))
        {
            return Err(invalid(
                "ca_certificate",
                "must be a PEM certificate (-----BEGIN CERTIFICATE-----), at most 20000 bytes",
            ));
        }
        Ok(ChannelConfig::Email(EmailConfig {
            host,
            port,
            username: self.username,
            password: self.password,
            from: from.trim().to_owned(),
            to: self.to.iter().map(|t| t.trim().to_owned()).collect(),
            ca_certificate: self.ca_certificate,
        }))
    }
}

/// An absolute http(s) URL with a host and no user part, at most 2000 bytes.
fn http_url(raw: Option<String>) -> Result<String, Invalid> {
    let raw = raw.ok_or_else(|| invalid("url", "is required"))?;
    let raw = raw.trim();
    let parsed =
        url::Url::parse(raw).map_err(|e| invalid("url", format!("must be a URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid(
            "url",
            "must be an http:// or https:// URL with a host",
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(invalid("url", "must not hold a user name or password"));
    }
    if raw.len() > 2000 {
        return Err(invalid("url", "must be at most 2000 bytes"));
    }
    Ok(raw.to_owned())
}

/// An e-mail address lettre accepts.
fn address(field: &'static str, raw: &str) -> Result<(), Invalid> {
    raw.trim()
        .parse::<lettre::Address>()
        .map(|_| ())
        .map_err(|_| invalid(field, format!("{raw:?} is not an e-mail address")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret() -> String {
        "s".repeat(32)
    }

    #[test]
    fn a_webhook_gets_a_made_secret_and_shows_only_its_origin() {
        let made = Draft {
            kind: "webhook".into(),
            url: Some("https://hooks.example.com/T000/secret-path".into()),
            ..Draft::default()
        }
        .check(secret)
        .unwrap();
        assert_eq!(made.target(), "https://hooks.example.com/…");
        assert!(!format!("{made:?}").contains("secret-path"));
        let ChannelConfig::Webhook { secret: s, .. } = made else {
            panic!("a webhook")
        };
        assert_eq!(s, secret());
    }

    #[test]
    fn bad_settings_name_the_field_and_the_rule() {
        let cases = [
            (
                Draft {
                    kind: "pager".into(),
                    ..Draft::default()
                },
                "kind",
            ),
            (
                Draft {
                    kind: "slack".into(),
                    url: Some("ftp://x".into()),
                    ..Draft::default()
                },
                "url",
            ),
            (
                Draft {
                    kind: "slack".into(),
                    url: Some("https://x/y".into()),
                    host: Some("h".into()),
                    ..Draft::default()
                },
                "host",
            ),
            (
                Draft {
                    kind: "webhook".into(),
                    url: Some("https://x".into()),
                    secret: Some("short".into()),
                    ..Draft::default()
                },
                "secret",
            ),
            (
                Draft {
                    kind: "email".into(),
                    host: Some("mail".into()),
                    from: Some("a@b.c".into()),
                    ..Draft::default()
                },
                "to",
            ),
            (
                Draft {
                    kind: "email".into(),
                    host: Some("mail".into()),
                    from: Some("a@b.c".into()),
                    to: vec!["not an address".into()],
                    ..Draft::default()
                },
                "to",
            ),
            (
                Draft {
                    kind: "email".into(),
                    host: Some("mail".into()),
                    port: Some(70000),
                    from: Some("a@b.c".into()),
                    to: vec!["x@y.z".into()],
                    ..Draft::default()
                },
                "port",
            ),
        ];
        for (draft, field) in cases {
            let err = draft.clone().check(secret).unwrap_err();
            assert_eq!(err.field, field, "{draft:?}: {err}");
        }
    }

    #[test]
    fn an_email_channel_defaults_to_the_submission_port() {
        let made = Draft {
            kind: "email".into(),
            host: Some("mail.example.com".into()),
            from: Some("slipway@example.com".into()),
            to: vec!["ops@example.com".into()],
            ..Draft::default()
        }
        .check(secret)
        .unwrap();
        assert_eq!(
            made.target(),
            "smtp://mail.example.com:587 to ops@example.com"
        );
    }
}
