//! What the gateway needs from the deployer: the URL scheme of apps and services, the
//! variables naming a dependency's URL, and the routes of the deployments serving now.

use super::*;

/// The gateway URL of an app (`service` None: its primary service).
pub fn gateway_url(https: bool, port: u16, app: &str, service: Option<&str>) -> String {
    let scheme = if https { "https" } else { "http" };
    match service {
        Some(s) => format!("{scheme}://{s}.{app}.localhost:{port}"),
        None => format!("{scheme}://{app}.localhost:{port}"),
    }
}

/// The environment variable naming a dependency's base URL: upper case, `-` → `_`, `_URL`.
pub fn dependency_variable(service: &str) -> String {
    format!("{}_URL", service.to_uppercase().replace('-', "_"))
}

/// Where the gateway sends an app's traffic.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// Public service → port of its current instance.
    pub services: HashMap<String, u16>,
    /// The service `<app>.localhost` goes to (the first with a public endpoint).
    pub primary: Option<String>,
}

impl Deployer {
    /// The port serving `service` of app `app_name` (its primary service when `None`).
    pub fn route(&self, app_name: &str, service: Option<&str>) -> Option<u16> {
        let routes = self.inner.routes.read().ok()?;
        let app = routes.get(app_name)?;
        let service = match service {
            Some(s) => s.to_owned(),
            None => app.primary.clone()?,
        };
        app.services.get(&service).copied()
    }

    /// Whether an app is called `name`.
    pub async fn app_exists(&self, name: &str) -> bool {
        async {
            let mut tx = self.inner.db.begin_read().await?;
            let found = apps::name_exists(&mut tx, name).await?;
            tx.commit().await?;
            Ok::<bool, sqlx::Error>(found)
        }
        .await
        .unwrap_or(false)
    }
}
