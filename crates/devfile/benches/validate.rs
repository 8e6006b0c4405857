//! Validation time for a small devfile and a 1 MB devfile (2,000+ services).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const SMALL: &str = include_str!("../tests/devfile/small.yaml");

/// A devfile of at least `bytes` bytes: many services, each with an image, endpoints, env and
/// a dependency on the previous one, so every rule (graph included) does real work.
fn large(bytes: usize) -> String {
    let mut text = String::from(
        "schemaVersion: 2.2.0\nmetadata:\n  name: big\n  displayName: Big\n  platform:\n    fabrics: [a]\n    permissions: [b]\ncomponents:\n",
    );
    let mut i = 0;
    while text.len() < bytes {
        let dep = if i > 0 {
            format!("      dependsOn: [s{}]\n", i - 1)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "  - name: s{i}-image\n    image:\n      imageName: s{i}\n      dockerfile:\n        uri: s{i}/Dockerfile\n        buildContext: .\n  - name: s{i}\n    attributes:\n      healthPath: /health\n{dep}    container:\n      image: s{i}\n      memoryLimit: 256Mi\n      env:\n        - name: MODE\n          value: production\n      endpoints:\n        - name: e{i}\n          targetPort: {port}\n          exposure: public\n          protocol: http\n",
            port = 1024 + (i % 60000)
        ));
        i += 1;
    }
    text
}

fn bench(c: &mut Criterion) {
    assert!(slipway_devfile::validate(SMALL, None).valid());
    let big = large(1 << 20);
    assert!(
        slipway_devfile::validate(&big, None).valid(),
        "{:?}",
        slipway_devfile::validate(&big, None).errors().first()
    );
    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Bytes(SMALL.len() as u64));
    group.bench_function("small", |b| {
        b.iter(|| slipway_devfile::validate(black_box(SMALL), None))
    });
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.sample_size(10);
    group.bench_function("1mb", |b| {
        b.iter(|| slipway_devfile::validate(black_box(&big), None))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
