//! HTTPS end to end with a private CA made here: `platform serve --tls-cert --tls-key` (API
//! and gateway), the CLI refusing the certificate until it is told about the CA
//! (`SLIPWAY_CA_FILE`, `slipway login --ca-file`), and `care serve` replacing its certificate
//! on a file change and on SIGHUP without dropping a connection.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use super::daily::{Server, free_port, slipway};

/// A certificate authority of the test's own.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new() -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "Slipway test CA");
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let pem = params.self_signed(&key).unwrap().pem();
        Self {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A server certificate for 127.0.0.1 and localhost: (certificate PEM, key PEM, DER).
    fn leaf(&self, name: &str) -> (String, String, Vec<u8>) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem(), cert.der().to_vec())
    }
}

fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server never listened");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// An HTTPS client trusting `ca`, reporting the peer certificate of each answer.
fn client(ca: &str) -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .tls_info(true)
        .build()
        .unwrap()
}

/// `GET url` with `client`: the status and the DER of the certificate the server showed.
fn peer(client: &reqwest::blocking::Client, url: &str) -> (u16, Vec<u8>) {
    let response = client.get(url).send().unwrap();
    let der = response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|i| i.peer_certificate())
        .unwrap()
        .to_vec();
    (response.status().as_u16(), der)
}

#[test]
fn the_platform_over_https_is_refused_until_the_cli_trusts_its_ca() {
    let work = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    let (cert, key, _) = ca.leaf("platform");
    let files = |name: &str, text: &str| -> PathBuf {
        let path = work.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let (cert_file, key_file, ca_file) = (
        files("server.crt", &cert),
        files("server.key", &key),
        files("ca.pem", &ca.pem),
    );
    let data = work.path().join("platform");
    let (port, gateway) = (free_port(), free_port());
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_slipway"))
            .args(["platform", "serve", "--builder", "native", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--gateway-listen")
            .arg(format!("127.0.0.1:{gateway}"))
            .arg("--data-dir")
            .arg(&data)
            .arg("--tls-cert")
            .arg(&cert_file)
            .arg("--tls-key")
            .arg(&key_file)
            .env("RUST_LOG", "error")
            .spawn()
            .unwrap(),
    );
    wait_listening(port);
    let token_file = data.join("bootstrap-token");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !token_file.exists() {
        assert!(Instant::now() < deadline, "no bootstrap token");
        std::thread::sleep(Duration::from_millis(100));
    }
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_owned();
    let url = format!("https://127.0.0.1:{port}");
    let config = work.path().join("config");
    let base = [
        ("SLIPWAY_PLATFORM_URL", url.clone()),
        ("SLIPWAY_TOKEN", token),
        ("SLIPWAY_CONFIG_DIR", config.display().to_string()),
        ("SLIPWAY_TOKEN_STORE", "file".to_owned()),
    ];

    // Without the CA: refused, and the error says it is about trust and how to fix it.
    let out = slipway(work.path(), &base, &["call", "list_apps", "{}"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("not trusted") && said.contains("SLIPWAY_CA_FILE"),
        "{said}"
    );

    // With SLIPWAY_CA_FILE: the same call works.
    let mut trusted = base.to_vec();
    trusted.push(("SLIPWAY_CA_FILE", ca_file.display().to_string()));
    let out = slipway(work.path(), &trusted, &["call", "list_apps", "{}"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // `slipway login --ca-file` saves the CA with the environment; later commands trust it
    // without the variable.
    let store = &base[2..];
    let out = slipway(
        work.path(),
        store,
        &[
            "login",
            "--url",
            &url,
            "--token-file",
            token_file.to_str().unwrap(),
            "--environment",
            "secure",
            "--ca-file",
            ca_file.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("certificate authority"));
    let out = slipway(work.path(), store, &["whoami", "--environment", "secure"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A CA file that holds no certificate is refused before anything is saved.
    let out = slipway(
        work.path(),
        store,
        &[
            "login",
            "--url",
            &url,
            "--token-file",
            token_file.to_str().unwrap(),
            "--environment",
            "other",
            "--ca-file",
            key_file.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ca_file"));
    let out = slipway(work.path(), store, &["whoami", "--environment", "other"]);
    assert!(!out.status.success(), "the refused login saved nothing");

    // The gateway listens over TLS too, with the same certificate.
    let (status, _) = peer(&client(&ca.pem), &format!("https://127.0.0.1:{gateway}/"));
    assert!((400..500).contains(&status), "gateway answered {status}");
}

#[test]
fn care_replaces_its_certificate_on_change_and_on_sighup_keeping_connections() {
    let work = tempfile::tempdir().unwrap();
    let ca = Ca::new();
    // The files as a Kubernetes secret volume holds them: `tls.crt` and `tls.key` are links
    // through `..data`, a link to a directory of this version; an update writes a new
    // directory and swaps `..data`, so no event ever names `tls.crt`.
    let live = work.path().join("live");
    let write_version = |name: &str, cert: &str, key: &str| {
        let dir = live.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tls.crt"), cert).unwrap();
        std::fs::write(dir.join("tls.key"), key).unwrap();
    };
    let (cert_a, key_a, der_a) = ca.leaf("first");
    write_version("..v1", &cert_a, &key_a);
    std::os::unix::fs::symlink("..v1", live.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/tls.crt", live.join("tls.crt")).unwrap();
    std::os::unix::fs::symlink("..data/tls.key", live.join("tls.key")).unwrap();
    let port = free_port();
    let server = Server(
        Command::new(env!("CARGO_BIN_EXE_slipway"))
            .args(["care", "serve", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data-dir")
            .arg(work.path().join("care"))
            .arg("--tls-cert")
            .arg(live.join("tls.crt"))
            .arg("--tls-key")
            .arg(live.join("tls.key"))
            .env("RUST_LOG", "error")
            .spawn()
            .unwrap(),
    );
    wait_listening(port);
    let health = format!("https://127.0.0.1:{port}/health");
    let kept = client(&ca.pem);
    assert_eq!(peer(&kept, &health), (200, der_a.clone()));

    // An update of the secret: a new version directory, then `..data` swapped by rename.
    let (cert_b, key_b, der_b) = ca.leaf("second");
    write_version("..v2", &cert_b, &key_b);
    replace_link(&live.join("..data"), Path::new("..v2"));
    let deadline = Instant::now() + Duration::from_secs(15);
    while peer(&client(&ca.pem), &health).1 != der_b {
        assert!(
            Instant::now() < deadline,
            "a new connection never saw the new certificate"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The connection made before the change is still open, with the certificate it began with.
    assert_eq!(peer(&kept, &health), (200, der_a));

    // Files rewritten inside the version directory: no event where the server looks, so
    // only SIGHUP makes it read them.
    let (cert_c, key_c, der_c) = ca.leaf("third");
    std::fs::write(live.join("..v2/tls.key"), &key_c).unwrap();
    std::fs::write(live.join("..v2/tls.crt"), &cert_c).unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(peer(&client(&ca.pem), &health).1, der_b);
    let status = Command::new("kill")
        .args(["-HUP", &server.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    while peer(&client(&ca.pem), &health).1 != der_c {
        assert!(Instant::now() < deadline, "SIGHUP did not reload");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
}

/// Points the link `link` at `target` by renaming a new link over it.
fn replace_link(link: &Path, target: &Path) {
    let tmp = link.with_file_name("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}
