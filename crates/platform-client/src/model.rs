//! The platform's answers that more than one tool passes on: an app, its status and a build.
//! The tools' result types embed these, so a result's JSON Schema (the registry's
//! `output_schema`) names every field. The status and the build are `slipway-api`'s, the
//! types the platform itself serialises; the app is the tools' view of the platform's answer,
//! which names the id `app_id` where the platform says `id`, and the toolkit's tests read it
//! from a real platform.

use serde::{Deserialize, Serialize};
pub use slipway_api::{
    AppDetails, AppListing, AppState, AppStatus, Build, BuildStatus, Limits, ServiceState,
    ServiceStatus,
};
use slipway_server::token::Token;

/// An app as `GET /v1/apps/{app_id}` and `POST /v1/apps` answer it. The platform calls the
/// id `id`; the tools call it `app_id`, as every other tool argument and result does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct App {
    /// The app's UUID.
    #[serde(rename(serialize = "app_id", deserialize = "id"), alias = "app_id")]
    pub app_id: String,
    /// Everything else, as the platform writes it.
    #[serde(flatten)]
    pub details: AppDetails,
}

impl App {
    /// The data that goes with the app when it is deleted, in words: one line per backing
    /// resource and volume (the delete confirmations and `delete_app`'s answer show these).
    pub fn data(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .details
            .resources
            .iter()
            .map(|r| format!("{} {} ({}, {})", r.kind, r.name, r.engine, r.state))
            .collect();
        out.extend(self.details.volumes.iter().map(|v| {
            format!(
                "volume {} ({} used{})",
                v.name,
                human_bytes(v.used_bytes),
                v.size
                    .as_deref()
                    .map(|s| format!(" of {s}"))
                    .unwrap_or_default()
            )
        }));
        out
    }
}

/// `1536` → `1.5 KiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A secret the platform shows once (a new token, an invite's code): in clear in JSON, and
/// a [`Token`] in Rust, whose `Debug` hides it.
pub(crate) mod secret {
    use super::Token;

    /// Writes the token in clear.
    pub(crate) fn serialize<S: serde::Serializer>(token: &Token, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(token.expose())
    }

    /// Reads a token written in clear.
    pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Token, D::Error> {
        <String as serde::Deserialize>::deserialize(d).map(Token::from_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(5 << 30), "5.0 GiB");
    }
    use serde_json::json;

    #[test]
    fn an_app_reads_the_platforms_id_and_shows_app_id() {
        let platform = json!({"id": "a", "name": "n", "display_name": "N", "description": "",
            "status": "RUNNING", "url": null, "devfile": null, "enabled": true,
            "created_at": "t", "updated_at": "t"});
        let app: App = serde_json::from_value(platform).unwrap();
        assert_eq!(app.details.listing.status, AppStatus::Running);
        let shown = serde_json::to_value(&app).unwrap();
        assert_eq!(shown["app_id"], "a");
        assert!(shown.get("id").is_none());
        assert_eq!(serde_json::from_value::<App>(shown).unwrap(), app);
        assert_eq!(BuildStatus::InProgress.to_string(), "in_progress");
    }
}
