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

/// A channel's name: a letter or digit, then letters, digits, `.`, `_` or `-`; 64 at most.
pub const NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

/// An IPv4 address's octet, without leading zeros.
macro_rules! octet {
    () => {
        "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
    };
}

/// A character of an atom of an address's local part (RFC 5322's `atext`).
macro_rules! atom {
    () => {
        "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
    };
}

/// A host label of letters, digits and inner hyphens (63 at most).
macro_rules! label {
    () => {
        "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    };
}

/// A receiver's URL: `http://` or `https://`, a host name (whose last label starts with a
/// letter, so it is never read as a number) or an IPv4 address, a port 1–65535 without
/// leading zeros, and a path of printable ASCII. 2000 characters at most
/// ([`URL_MAX`]).
pub const URL_PATTERN: &str = concat!(
    "^https?://(",
    "(",
    octet!(),
    "\\.){3}",
    octet!(),
    "|(",
    label!(),
    "\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?",
    ")(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?",
    "(/[!-~]*)?$"
);

/// The longest URL.
pub const URL_MAX: usize = 2000;

/// A mail server: a host name or address of letters, digits, dots and hyphens, starting and
/// ending with a letter or digit, 253 characters at most.
pub const HOST_PATTERN: &str = "^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$";

/// An e-mail address as SMTP takes it: a local part, `@`, and a domain of labels (254
/// characters at most, [`ADDRESS_MAX`]). The local part is a dot-atom (atoms joined by single
/// dots: no dot first, last or twice, which lettre refuses too) of at most 64 characters, as
/// RFC 5321 and lettre require; without look-ahead a pattern cannot count characters across
/// dots, so it says: one atom of up to 64 characters, or up to 32 atom characters with single
/// dots between them (at most 63 in all). The server checks this pattern, then lettre.
pub const ADDRESS_PATTERN: &str = concat!(
    "^(",
    atom!(),
    "{1,64}|",
    atom!(),
    "(\\.?",
    atom!(),
    "){0,31})@",
    label!(),
    "(\\.",
    label!(),
    ")*$"
);

/// The longest address.
pub const ADDRESS_MAX: usize = 254;

/// What a CA certificate must contain.
pub const PEM_MARKER: &str = "-----BEGIN CERTIFICATE-----";

/// The longest CA certificate, in characters.
pub const PEM_MAX: usize = 20_000;

fn matches(pattern: &str, value: &str) -> bool {
    regex::Regex::new(pattern).is_ok_and(|re| re.is_match(value))
}

/// Whether `name` is a valid channel name ([`NAME_PATTERN`]).
pub fn valid_name(name: &str) -> bool {
    matches(NAME_PATTERN, name)
}

/// Every setting a channel may take, as the API names them: a webhook's first two, a Slack
/// webhook's first, an e-mail channel's from `host` on ([`Draft::check`] refuses a setting
/// of another kind, so a typo is not ignored).
pub const SETTINGS: &[&str] = &[
    "url",
    "secret",
    "host",
    "port",
    "username",
    "password",
    "from",
    "to",
    "ca_certificate",
];
const WEBHOOK_FIELDS: &[&str] = SETTINGS.split_at(2).0;
const SLACK_FIELDS: &[&str] = SETTINGS.split_at(1).0;
const EMAIL_FIELDS: &[&str] = SETTINGS.split_at(2).1;

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
            .ok_or_else(|| invalid("host", "is required: the mail server's name"))?;
        if !matches(HOST_PATTERN, &host) {
            return Err(invalid(
                "host",
                "must be a host name or address: letters, digits, '.' and '-', 253 at most",
            ));
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
            && (pem.chars().count() > PEM_MAX || !pem.contains(PEM_MARKER))
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
            from,
            to: self.to,
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

/// An e-mail address: [`ADDRESS_PATTERN`] (what the API documents), then lettre (what sends).
fn address(field: &'static str, raw: &str) -> Result<(), Invalid> {
    if raw.len() > ADDRESS_MAX || !matches(ADDRESS_PATTERN, raw) {
        return Err(invalid(
            field,
            format!(
                "{raw:?} is not an e-mail address (a local part of at most 64 characters, '@', a domain; 254 at most)"
            ),
        ));
    }
    raw.parse::<lettre::Address>()
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
    fn the_patterns_accept_what_receivers_and_mail_servers_take() {
        for url in [
            "http://127.0.0.1:8080/hook",
            "https://hooks.slack.com/services/T/B/x?y=1",
            "http://localhost",
        ] {
            assert!(matches(URL_PATTERN, url), "{url}");
            assert!(url::Url::parse(url).is_ok(), "{url}");
        }
        for url in [
            "ftp://x",
            "http://1.2.3.256/",
            "http://a:0",
            "http://a:65536",
            "http://u:p@x/",
            "http://x y/",
            "http://9/",
        ] {
            assert!(!matches(URL_PATTERN, url), "{url}");
        }
        for a in [
            "ops@example.com",
            "a.b+tag@mail-1.example.org",
            "yd|N3iV@ub.Xd2Rm.t.b",
            "_H|rL.Z@hr",
            "2g@0.1Efc7ihkUHyGzak4J0C.XY.A57p1hdz-2btIGEP0lfQHGFV",
        ] {
            assert!(matches(ADDRESS_PATTERN, a), "{a}");
            assert!(a.parse::<lettre::Address>().is_ok(), "{a}");
        }
        // What lettre refuses, the pattern refuses too (found by schemathesis: a leading dot).
        for a in [
            "nope", "a@", "@b", "a b@c", "a@-b", ".a@b", "a.@b", "a..b@c",
        ] {
            assert!(!matches(ADDRESS_PATTERN, a), "{a}");
            assert!(a.parse::<lettre::Address>().is_err(), "{a}");
        }
        // A local part over 64 characters (found by schemathesis: lettre refuses it).
        let long = format!("{}.{}@example.org", "a".repeat(40), "b".repeat(30));
        assert!(long.parse::<lettre::Address>().is_err());
        assert!(!matches(ADDRESS_PATTERN, &long));
        assert!(matches(
            ADDRESS_PATTERN,
            &format!("{}@example.org", "a".repeat(64))
        ));
        assert!(!matches(
            ADDRESS_PATTERN,
            &format!("{}@example.org", "a".repeat(65))
        ));
        assert!(valid_name("ops-hook") && !valid_name(" ops") && !valid_name(&"a".repeat(65)));
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
