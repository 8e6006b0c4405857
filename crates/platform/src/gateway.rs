//! The gateway: a second listener that routes plain HTTP by `Host` to the current instance
//! of a service. `<service>.<app>.localhost[:port]` (or `.<public domain>` when one is
//! configured) goes to that service, `<app>.localhost[:port]` to the app's primary service (its first service with a public
//! endpoint). A known app with nothing running answers 502; an unknown host 404. Requests and
//! responses are streamed, never buffered.

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::deploy::Deployer;

/// The domain every gateway host ends with (`*.localhost` resolves to loopback).
pub const DOMAIN: &str = "localhost";

/// Headers that concern one connection and are not forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
];

/// The gateway's router.
pub fn router(deployer: Deployer) -> Router {
    Router::new().fallback(proxy).with_state(deployer)
}

/// `(app, service)` of a gateway host under `localhost` or `domain`, or `None` when the
/// host is not one.
pub fn parse_host(host: &str, domain: Option<&str>) -> Option<(String, Option<String>)> {
    let host = host.trim().to_ascii_lowercase();
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name.to_owned(),
        _ => host,
    };
    let name = name.trim_end_matches('.');
    let under = |suffix: &str| name.strip_suffix(suffix)?.strip_suffix('.');
    let labels = under(DOMAIN).or_else(|| under(&domain?.to_ascii_lowercase()))?;
    let parts: Vec<&str> = labels.split('.').collect();
    let valid = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    match parts.as_slice() {
        [app] if valid(app) => Some(((*app).to_owned(), None)),
        [service, app] if valid(app) && valid(service) => {
            Some(((*app).to_owned(), Some((*service).to_owned())))
        }
        _ => None,
    }
}

fn plain(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{message}\n"),
    )
        .into_response()
}

async fn proxy(State(deployer): State<Deployer>, mut request: Request) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().host().map(str::to_owned));
    let domain = match deployer.url_scheme() {
        crate::deploy::UrlScheme::Domain(d) => Some(d.as_str()),
        _ => None,
    };
    let Some((app, service)) = host.as_deref().and_then(|h| parse_host(h, domain)) else {
        return plain(StatusCode::NOT_FOUND, "unknown host");
    };
    let Some(port) = deployer.route(&app, service.as_deref()) else {
        return if deployer.app_exists(&app).await {
            plain(
                StatusCode::BAD_GATEWAY,
                "the app has no running instance of this service",
            )
        } else {
            plain(StatusCode::NOT_FOUND, "unknown host")
        };
    };
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let Ok(uri) = format!("http://127.0.0.1:{port}{path}").parse::<Uri>() else {
        return plain(StatusCode::BAD_REQUEST, "bad request target");
    };
    *request.uri_mut() = uri;
    let headers = request.headers_mut();
    for name in HOP_BY_HOP {
        headers.remove(*name);
    }
    if let Some(h) = host.as_deref().and_then(|h| HeaderValue::from_str(h).ok()) {
        headers.insert(HeaderName::from_static("x-forwarded-host"), h);
    }
    headers.insert(
        HeaderName::from_static("x-forwarded-proto"),
        HeaderValue::from_static("http"),
    );
    match deployer.client().request(request).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            for name in HOP_BY_HOP {
                parts.headers.remove(*name);
            }
            Response::from_parts(parts, Body::new(body))
        }
        Err(e) => {
            tracing::warn!(app = %app, error = %e, "gateway could not reach the service");
            plain(StatusCode::BAD_GATEWAY, "the service did not answer")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_map_to_app_and_service() {
        assert_eq!(
            parse_host("shop.localhost:8080", None),
            Some(("shop".into(), None))
        );
        assert_eq!(
            parse_host("Web.Shop.localhost:8080", None),
            Some(("shop".into(), Some("web".into())))
        );
        assert_eq!(
            parse_host("shop.localhost", None),
            Some(("shop".into(), None))
        );
        assert_eq!(
            parse_host("web.shop.apps.example.org", Some("apps.example.org")),
            Some(("shop".into(), Some("web".into())))
        );
        assert_eq!(parse_host("web.shop.apps.example.org", None), None);
        for bad in [
            "localhost:8080",
            "127.0.0.1:8080",
            "a.b.shop.localhost",
            "shop.example.com",
            "sh_op.localhost",
            ".localhost",
        ] {
            assert_eq!(parse_host(bad, Some("apps.example.org")), None, "{bad}");
        }
    }
}
