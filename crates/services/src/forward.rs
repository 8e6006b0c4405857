//! The backing servers as containers see them. A container's loopback is its own, so a
//! server listening on the host's loopback is out of its reach; the servers must not listen
//! on a public address either. Each app's container network has a gateway address on this
//! host: the platform listens on `gateway:port` for each of the app's resources and relays
//! every connection to the server on `127.0.0.1:port`.
//!
//! The listening socket is bound with `IP_FREEBIND`: the gateway address exists only while a
//! container is attached to the network (podman brings the bridge up with the first), and
//! the relay must be listening before the app's first container starts.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::error::ServiceError;

/// A relay, and the app it was opened for.
#[derive(Debug)]
struct Relay {
    app_id: String,
    task: JoinHandle<()>,
}

impl Relay {
    /// Stops accepting and waits until the listening socket is closed, so its address can
    /// be bound again at once (the connections it relayed go on).
    async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

/// The relays of one platform, keyed by the address they listen on.
#[derive(Debug, Default)]
pub(crate) struct Relays {
    running: Mutex<HashMap<SocketAddr, Relay>>,
}

impl Relays {
    /// Relays `on:port` to `127.0.0.1:port` for `app_id`, unless that relay runs already.
    pub async fn open(&self, app_id: &str, on: IpAddr, port: u16) -> Result<(), ServiceError> {
        let addr = SocketAddr::new(on, port);
        let mut running = self.running.lock().await;
        if let Some(relay) = running.get(&addr)
            && relay.app_id == app_id
            && !relay.task.is_finished()
        {
            return Ok(());
        }
        if let Some(other) = running.remove(&addr) {
            other.stop().await;
        }
        let listener = listen(addr)?;
        tracing::debug!(%addr, app_id, "relaying to a backing server");
        running.insert(
            addr,
            Relay {
                app_id: app_id.to_owned(),
                task: tokio::spawn(accept(listener, port)),
            },
        );
        Ok(())
    }

    /// Stops the relays of `app_id` that listen anywhere but `on` (all of them for `None`):
    /// its network is gone, or was made again with another gateway.
    pub async fn keep_only(&self, app_id: &str, on: Option<IpAddr>) {
        let mut running = self.running.lock().await;
        let gone: Vec<SocketAddr> = running
            .iter()
            .filter(|(addr, relay)| relay.app_id == app_id && Some(addr.ip()) != on)
            .map(|(addr, _)| *addr)
            .collect();
        for addr in gone {
            if let Some(relay) = running.remove(&addr) {
                relay.stop().await;
            }
        }
    }

    /// Stops every relay.
    pub async fn close_all(&self) {
        let all: Vec<Relay> = self.running.lock().await.drain().map(|(_, r)| r).collect();
        for relay in all {
            relay.stop().await;
        }
    }

    /// The addresses relayed now.
    #[cfg(test)]
    pub async fn addresses(&self) -> Vec<SocketAddr> {
        let mut out: Vec<SocketAddr> = self.running.lock().await.keys().copied().collect();
        out.sort();
        out
    }
}

/// A listening socket on `addr`, which need not be this host's address yet.
fn listen(addr: SocketAddr) -> Result<TcpListener, ServiceError> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv4() {
        socket.set_freebind_v4(true)?;
    } else {
        socket.set_freebind_v6(true)?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(128)?;
    Ok(TcpListener::from_std(socket.into())?)
}

/// Accepts connections until aborted, each relayed on a task of its own.
async fn accept(listener: TcpListener, port: u16) {
    loop {
        let (mut inbound, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, port, "a relay to a backing server cannot accept");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            match TcpStream::connect(("127.0.0.1", port)).await {
                Ok(mut outbound) => {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
                Err(e) => {
                    tracing::debug!(%peer, port, error = %e, "the backing server refused a relayed connection");
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[tokio::test]
    async fn a_relay_listens_before_its_address_exists_and_carries_both_ways() {
        // An echo server on loopback, as a backing server would be.
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = server.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut s, _) = server.accept().await.unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).await.unwrap();
            s.write_all(&buf).await.unwrap();
        });
        let relays = Relays::default();
        // 192.0.2.0/24 is TEST-NET-1: never this host's; the bind still succeeds.
        let test_net: IpAddr = "192.0.2.77".parse().unwrap();
        relays.open("a", test_net, port).await.expect("a free bind");
        // The same relay again is a no-op.
        relays.open("a", test_net, port).await.unwrap();
        // A relay on loopback's other address reaches the server through it.
        let other_loopback: IpAddr = "127.0.0.2".parse().unwrap();
        relays.open("b", other_loopback, port).await.unwrap();
        let mut client = TcpStream::connect(("127.0.0.2", port)).await.unwrap();
        client.write_all(b"hello").await.unwrap();
        let mut back = [0u8; 5];
        client.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"hello");
        assert_eq!(relays.addresses().await.len(), 2);
        // App a's network moved: its relay on the old gateway goes, b's stays.
        relays.keep_only("a", Some(other_loopback)).await;
        assert_eq!(
            relays.addresses().await,
            vec![SocketAddr::new(other_loopback, port)]
        );
        relays.keep_only("b", None).await;
        assert!(relays.addresses().await.is_empty());
        relays.open("b", other_loopback, port).await.unwrap();
        relays.close_all().await;
        assert!(relays.addresses().await.is_empty());
    }
}
