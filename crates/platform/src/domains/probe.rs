//! Whether a domain points here, asked before the CA is: the name is resolved (with the
//! system's resolver, or `--dns-resolver`), and each address is asked over plain HTTP for a
//! one-time token this platform's gateway serves on the HTTP-01 path. The answer coming back
//! proves what the CA will need (the name reaches this gateway's HTTP listener), whatever
//! NAT or load balancer sits between; a CA is never asked about a name that would fail,
//! which spares the account's failed-validation rate limit.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, header};
use http_body_util::BodyExt as _;
use slipway_acme::{Challenges, DomainName};

/// Longest one address may take to answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// How names are resolved.
#[derive(Clone)]
pub enum Resolver {
    /// The system's resolver (getaddrinfo: `/etc/hosts`, then DNS).
    System,
    /// One DNS server (`--dns-resolver`).
    Server(Box<hickory_resolver::TokioResolver>),
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::System => f.write_str("System"),
            Self::Server(_) => f.write_str("Server"),
        }
    }
}

impl Resolver {
    /// The system's resolver, or the DNS server at `server`.
    pub fn new(server: Option<SocketAddr>) -> Result<Self, String> {
        let Some(server) = server else {
            return Ok(Self::System);
        };
        use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig};
        let mut udp = ConnectionConfig::udp();
        udp.port = server.port();
        let mut tcp = ConnectionConfig::tcp();
        tcp.port = server.port();
        let config = ResolverConfig::from_name_servers(vec![NameServerConfig::new(
            server.ip(),
            true,
            vec![udp, tcp],
        )]);
        let resolver = hickory_resolver::Resolver::builder_with_config(
            config,
            hickory_resolver::net::runtime::TokioRuntimeProvider::default(),
        )
        .build()
        .map_err(|e| format!("--dns-resolver {server}: {e}"))?;
        Ok(Self::Server(Box::new(resolver)))
    }

    async fn addresses(&self, name: &str) -> Result<Vec<IpAddr>, String> {
        match self {
            Self::System => tokio::net::lookup_host((name, 80))
                .await
                .map(|addrs| addrs.map(|a| a.ip()).collect())
                .map_err(|e| e.to_string()),
            Self::Server(resolver) => resolver
                .lookup_ip(format!("{name}."))
                .await
                .map(|found| found.iter().collect())
                .map_err(|e| e.to_string()),
        }
    }
}

/// Why a domain does not reach this platform, in words for the person who owns its DNS.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotHere {
    /// No address.
    #[error(
        "DNS not pointing here: {name} does not resolve ({why}); add an A or AAAA record for it with this platform's address"
    )]
    Unresolved {
        /// The name.
        name: String,
        /// What the resolver said.
        why: String,
    },
    /// Addresses, none of which answered as this platform.
    #[error(
        "DNS not pointing here: {name} resolves to {addresses}, which {what}; point it at this platform (port {port} must reach its HTTP gateway)"
    )]
    Elsewhere {
        /// The name.
        name: String,
        /// The addresses found.
        addresses: String,
        /// What they did.
        what: String,
        /// The port asked.
        port: u16,
    },
}

/// Asks whether `name` reaches this platform's HTTP gateway on `port`.
pub async fn reaches_here(
    resolver: &Resolver,
    challenges: &Challenges,
    name: &DomainName,
    port: u16,
) -> Result<(), NotHere> {
    let addresses = resolver
        .addresses(name.as_str())
        .await
        .map_err(|why| NotHere::Unresolved {
            name: name.to_string(),
            why,
        })?;
    if addresses.is_empty() {
        return Err(NotHere::Unresolved {
            name: name.to_string(),
            why: "no address".into(),
        });
    }
    let token = format!("slipway-probe-{}", uuid::Uuid::new_v4().simple());
    let expected = format!("{token}.{}", uuid::Uuid::new_v4().simple());
    let _served = challenges.serve(&token, expected.clone());
    let client = slipway_runtime::health::client();
    let mut what = Vec::new();
    for ip in &addresses {
        let target = SocketAddr::new(*ip, port);
        let Ok(request) = Request::get(format!(
            "http://{target}{}{token}",
            slipway_acme::challenges::PATH_PREFIX
        ))
        .header(header::HOST, name.as_str())
        .header(header::USER_AGENT, "slipway-domain-probe")
        .body(Body::empty()) else {
            continue;
        };
        let answer = tokio::time::timeout(PROBE_TIMEOUT, async {
            let response = client.request(request).await.map_err(|e| e.to_string())?;
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            Ok::<_, String>((status, body))
        })
        .await;
        match answer {
            Ok(Ok((status, body))) if status.is_success() && body == expected.as_bytes() => {
                return Ok(());
            }
            Ok(Ok((status, _))) => what.push(format!(
                "{ip} answered {status} without this platform's token"
            )),
            Ok(Err(e)) => what.push(format!("{ip} did not answer ({e})")),
            Err(_) => what.push(format!(
                "{ip} did not answer within {}s",
                PROBE_TIMEOUT.as_secs()
            )),
        }
    }
    Err(NotHere::Elsewhere {
        name: name.to_string(),
        addresses: addresses
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        what: what.join("; "),
        port,
    })
}
