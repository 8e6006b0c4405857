//! The gateway: listeners that route plain HTTP by `Host` to the current instance of a
//! service. `<service>.<app>.localhost[:port]` (or `.<public domain>` when one is
//! configured) goes to that service, `<app>.localhost[:port]` to the app's primary service (its first service with a public
//! endpoint), and a custom domain (docs/domains.md) where the app's owner pointed it. A known
//! app with nothing running answers 502; an unknown host 404. Requests and responses are
//! streamed, never buffered; WebSockets (any HTTP/1 upgrade) are passed through; the service
//! is told who asked (`X-Forwarded-For`, `-Proto`, `-Host`).
//!
//! Three listeners share the one handler: the gateway (`--gateway-listen`, its scheme the
//! API's), and for custom domains plain HTTP (`--gateway-http-listen`: HTTP-01 answers, then
//! a redirect to HTTPS once the name has a certificate) and HTTPS (`--gateway-https-listen`:
//! certificates by SNI, HTTP/2 and HTTP/1.1).

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;

use crate::deploy::Deployer;
use crate::domains::{Domains, Route};

/// The domain every gateway host ends with (`*.localhost` resolves to loopback).
pub const DOMAIN: &str = crate::model::GATEWAY_DOMAIN;

/// Headers that concern one connection and are not forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
];

/// Which listener a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// `--gateway-listen` (HTTPS when the API is).
    Gateway {
        /// Whether it serves TLS.
        tls: bool,
    },
    /// `--gateway-http-listen`.
    PublicHttp,
    /// `--gateway-https-listen`.
    PublicHttps,
}

impl Listener {
    fn proto(self) -> &'static str {
        match self {
            Self::Gateway { tls: true } | Self::PublicHttps => "https",
            Self::Gateway { tls: false } | Self::PublicHttp => "http",
        }
    }
}

/// The client's address, as the gateway's listeners (plain and TLS) give it.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

impl
    axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, tokio::net::TcpListener>>
    for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, tokio::net::TcpListener>) -> Self {
        Self(*stream.remote_addr())
    }
}

impl
    axum::extract::connect_info::Connected<
        axum::serve::IncomingStream<'_, slipway_server::tls::TlsListener>,
    > for Peer
{
    fn connect_info(
        stream: axum::serve::IncomingStream<'_, slipway_server::tls::TlsListener>,
    ) -> Self {
        Self(*stream.remote_addr())
    }
}

#[derive(Clone)]
struct Gateway {
    deployer: Deployer,
    domains: Domains,
    listener: Listener,
}

/// The router of one gateway listener.
pub fn router(deployer: Deployer, domains: Domains, listener: Listener) -> Router {
    Router::new().fallback(proxy).with_state(Gateway {
        deployer,
        domains,
        listener,
    })
}

/// Serves a gateway listener until `shutdown`: plain, or TLS with `tls` (whose resolver
/// picks each name's certificate), with the peer's address for `X-Forwarded-For`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    tls: Option<std::sync::Arc<slipway_acme::rustls::ServerConfig>>,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    match tls {
        None => {
            axum::serve(
                listener,
                router.into_make_service_with_connect_info::<Peer>(),
            )
            .with_graceful_shutdown(shutdown)
            .await
        }
        Some(config) => {
            let listener = slipway_server::tls::TlsListener::with_config(listener, config)?;
            axum::serve(
                listener,
                router.into_make_service_with_connect_info::<Peer>(),
            )
            .with_graceful_shutdown(shutdown)
            .await
        }
    }
}

/// `(app, service)` of a gateway host under `localhost` or `domain`, or `None` when the
/// host is not one.
pub fn parse_host(host: &str, domain: Option<&str>) -> Option<(String, Option<String>)> {
    parse_name(&crate::domains::host_name(host), domain)
}

/// [`parse_host`] of a host already made a [`crate::domains::host_name`].
fn parse_name(name: &str, domain: Option<&str>) -> Option<(String, Option<String>)> {
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

fn redirect(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(value) => (StatusCode::PERMANENT_REDIRECT, [(header::LOCATION, value)]).into_response(),
        Err(_) => plain(StatusCode::BAD_REQUEST, "bad request target"),
    }
}

async fn proxy(State(gateway): State<Gateway>, request: Request) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<Peer>>()
        .map(|ConnectInfo(Peer(addr))| *addr);
    // HTTP/2 carries the host in the URI (`:authority`), HTTP/1.1 in `Host`.
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()));
    let Some(host) = host else {
        return plain(StatusCode::NOT_FOUND, "unknown host");
    };
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let domains = &gateway.domains;
    if gateway.listener == Listener::PublicHttp
        && let Some(answer) = domains.challenges().answer(request.uri().path())
    {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/octet-stream")],
            answer,
        )
            .into_response();
    }
    let name = crate::domains::host_name(&host);
    let (app, service) = match domains.route(&name) {
        Some(route) => {
            let https_port = domains.https_port();
            if gateway.listener == Listener::PublicHttp
                && https_port.is_some()
                && domains.has_certificate(&name)
            {
                return redirect(&format!(
                    "{}{path}",
                    crate::domains::origin("https", &name, https_port)
                ));
            }
            match route {
                Route::Redirect(target) => {
                    let (scheme, port) = match gateway.listener {
                        Listener::PublicHttps => ("https", https_port),
                        _ => ("http", domains.http_port()),
                    };
                    return redirect(&format!(
                        "{}{path}",
                        crate::domains::origin(scheme, &target, port)
                    ));
                }
                Route::App { app, service } => (app, service),
            }
        }
        None => {
            let domain = match gateway.deployer.url_scheme() {
                crate::deploy::UrlScheme::Domain(d) => Some(d.as_str()),
                _ => None,
            };
            let Some(parsed) = parse_name(&name, domain) else {
                return plain(StatusCode::NOT_FOUND, "unknown host");
            };
            parsed
        }
    };
    let Some(port) = gateway.deployer.route(&app, service.as_deref()) else {
        return if gateway.deployer.app_exists(&app).await {
            plain(
                StatusCode::BAD_GATEWAY,
                "the app has no running instance of this service",
            )
        } else {
            plain(StatusCode::NOT_FOUND, "unknown host")
        };
    };
    let forwarded = Forwarded {
        host,
        proto: gateway.listener.proto(),
        peer,
    };
    forward(&gateway.deployer, &app, port, &path, forwarded, request).await
}

/// Who asked, told to the service.
struct Forwarded {
    host: String,
    proto: &'static str,
    peer: Option<SocketAddr>,
}

/// Whether the request asks to switch protocols (a WebSocket handshake).
fn wants_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE)
        && headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| {
                v.split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
            })
}

async fn forward(
    deployer: &Deployer,
    app: &str,
    port: u16,
    path: &str,
    forwarded: Forwarded,
    mut request: Request,
) -> Response {
    let Ok(uri) = format!("http://127.0.0.1:{port}{path}").parse::<Uri>() else {
        return plain(StatusCode::BAD_REQUEST, "bad request target");
    };
    let upgrade = wants_upgrade(request.headers());
    let upgrade_protocol = request.headers().get(header::UPGRADE).cloned();
    // The client's side of an upgrade, taken before the request is sent on.
    let client_side = upgrade.then(|| hyper::upgrade::on(&mut request));
    *request.uri_mut() = uri;
    // The service speaks HTTP/1.1 whatever the client spoke.
    *request.version_mut() = axum::http::Version::HTTP_11;
    let headers = request.headers_mut();
    for name in HOP_BY_HOP {
        headers.remove(*name);
    }
    if upgrade && let Some(protocol) = upgrade_protocol {
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, protocol);
    }
    if let Ok(h) = HeaderValue::from_str(&forwarded.host) {
        headers.insert(HeaderName::from_static("x-forwarded-host"), h.clone());
        if !headers.contains_key(header::HOST) {
            headers.insert(header::HOST, h);
        }
    }
    headers.insert(
        HeaderName::from_static("x-forwarded-proto"),
        HeaderValue::from_static(forwarded.proto),
    );
    // The gateway is the edge: what a client claims in X-Forwarded-For is replaced by its
    // address, so a service can trust the header.
    headers.remove("x-forwarded-for");
    if let Some(peer) = forwarded.peer
        && let Ok(v) = HeaderValue::from_str(&peer.ip().to_string())
    {
        headers.insert(HeaderName::from_static("x-forwarded-for"), v);
    }
    match deployer.client().request(request).await {
        Ok(mut response) => {
            if response.status() == StatusCode::SWITCHING_PROTOCOLS
                && let Some(client_side) = client_side
            {
                let service_side = hyper::upgrade::on(&mut response);
                let app = app.to_owned();
                tokio::spawn(async move {
                    match tokio::try_join!(client_side, service_side) {
                        Ok((client, service)) => {
                            let _ = tokio::io::copy_bidirectional(
                                &mut TokioIo::new(client),
                                &mut TokioIo::new(service),
                            )
                            .await;
                        }
                        Err(e) => {
                            tracing::debug!(app = %app, error = %e, "an upgrade did not complete")
                        }
                    }
                });
                let (parts, body) = response.into_parts();
                return Response::from_parts(parts, Body::new(body));
            }
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
