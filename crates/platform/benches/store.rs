//! Throughput of the two data paths every build takes, next to `tar | zstd` on the same tree:
//! uploading a build context over real HTTP (loopback) and packing a directory into the
//! content-addressed image store.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use slipway_image::oci::pack_layer;
use slipway_image::store::ImageStore;

const DEVFILE: &str = "schemaVersion: 2.2.0\nmetadata:\n  name: bench\n  displayName: Bench\ncomponents:\n  - name: api-image\n    image:\n      imageName: api\n      dockerfile:\n        uri: Dockerfile\n        buildContext: .\n  - name: api\n    container:\n      image: api\n      endpoints:\n        - name: http\n          targetPort: 8000\ncommands:\n  - id: build\n    exec:\n      component: api\n      commandLine: exit 1\n      group: { kind: build, isDefault: true }\n  - id: run\n    exec:\n      component: api\n      commandLine: exit 1\n      group: { kind: run, isDefault: true }\n";

/// A source-tree-like directory of about 48 MB: 2,000 small text files and 8 large files of
/// semi-compressible lines. Returns its size in bytes.
fn make_tree(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut seed = 0x2545_f491_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    std::fs::write(dir.join("devfile.yaml"), DEVFILE).unwrap();
    std::fs::write(dir.join("Dockerfile"), "FROM scratch\nEXPOSE 8000\n").unwrap();
    for i in 0..2000 {
        let sub = dir.join(format!("src/m{}", i % 40));
        std::fs::create_dir_all(&sub).unwrap();
        let mut text = String::new();
        while text.len() < 8 * 1024 {
            text.push_str(&format!(
                "def f_{}(x):\n    return x * {} + {}\n",
                next() % 1000,
                next() % 97,
                next() % 13
            ));
        }
        total += text.len() as u64;
        std::fs::write(sub.join(format!("f{i}.py")), text).unwrap();
    }
    for i in 0..8 {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(dir.join(format!("data{i}.bin"))).unwrap(),
        );
        for _ in 0..(4 << 20) / 64 {
            let line = format!(
                "{:016x}{:016x}{:016x}{:015x}\n",
                next(),
                next() % 4096,
                next() % 16,
                next() % 2
            );
            f.write_all(line.as_bytes()).unwrap();
            total += line.len() as u64;
        }
    }
    total
}

fn tar_gz(dir: &Path) -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    tar.append_dir_all(".", dir).unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

fn bench(c: &mut Criterion) {
    let tree = tempfile::tempdir().unwrap();
    let bytes = make_tree(tree.path());
    let mut group = c.benchmark_group("build-data");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);

    let store_dir = tempfile::tempdir().unwrap();
    let store = ImageStore::open(store_dir.path()).unwrap();
    group.bench_function("image store: pack directory as layer", |b| {
        b.iter(|| black_box(pack_layer(&store, tree.path()).unwrap()))
    });

    if Command::new("zstd").arg("--version").output().is_ok() {
        let cmd = format!(
            "tar -cf - -C {} . | zstd -q -1 -c > /dev/null",
            tree.path().display()
        );
        group.bench_function("baseline: tar | zstd -1", |b| {
            b.iter(|| {
                assert!(
                    Command::new("sh")
                        .arg("-c")
                        .arg(&cmd)
                        .status()
                        .unwrap()
                        .success()
                )
            })
        });
    } else {
        eprintln!("zstd is not installed: the tar | zstd baseline row is skipped");
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (base, token) = rt.block_on(async {
        let mut config =
            slipway_platform::PlatformConfig::new("127.0.0.1:0".parse().unwrap(), data.path());
        config.gateway_listen = None;
        config.builder = slipway_platform::BuilderKind::Native;
        let state = slipway_platform::prepare(&config).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(slipway_platform::spawn(
            listener,
            state,
            std::future::pending(),
        ));
        let token = std::fs::read_to_string(data.path().join("bootstrap-token")).unwrap();
        (format!("http://{addr}"), token.trim().to_owned())
    });
    let http = reqwest::Client::new();
    let app: serde_json::Value = rt.block_on(async {
        http.post(format!("{base}/v1/apps"))
            .bearer_auth(&token)
            .json(&serde_json::json!({"name": "bench", "display_name": "Bench"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    let app_id = app["id"].as_str().unwrap().to_owned();
    let context = tar_gz(tree.path());
    group.bench_function("context upload over HTTP (tar.gz, loopback)", |b| {
        b.iter(|| {
            rt.block_on(async {
                let res = http
                    .post(format!("{base}/v1/apps/{app_id}/builds"))
                    .bearer_auth(&token)
                    .header("content-type", "application/gzip")
                    .body(context.clone())
                    .send()
                    .await
                    .unwrap();
                let status = res.status();
                let body: serde_json::Value = res.json().await.unwrap();
                assert_eq!(status, 202, "{body}");
                for id in body["build_ids"].as_array().unwrap() {
                    let _ = http
                        .post(format!("{base}/v1/builds/{}/cancel", id.as_str().unwrap()))
                        .bearer_auth(&token)
                        .send()
                        .await;
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
